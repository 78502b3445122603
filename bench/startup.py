"""`python -m bench.startup --size N`: how long a seeded store takes to serve at full speed after a start (#38).

Opens the cached `store-N` (bench/stores.py; seeded when missing) the way the server does, and times: opening it
(the vector matrix read from the index file), then the HNSW graph and the in-memory keyword postings, which build
in the background while exact scans and FTS5 answer. Then closes it cleanly, which saves the graph beside the index
file (zengram/adapters/sqlite/graph_file.py), and opens it again: the second start loads the graph instead of
building it. Prints both starts, the process's resident memory once everything is built, and the store's size on
disk. `ZENGRAM_BENCH_DATA` / `ZENGRAM_BENCH_POOLED_VECTORS` select pooled-vector stores (bench/pooled.py).
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

from zengram.adapters.sqlite.graph_file import graph_path

from bench.corpus import Corpus
from bench.paths import DATA
from bench.run import _disk_mb, _rss_mb
from bench.stores import ensure_store, open_container, store_path, wait_for_keyword_postings, wait_for_vector_graph


@dataclass(frozen=True)
class Start:
    open_s: float
    graph_s: float
    keywords_s: float
    rss_mb: float

    @property
    def total_s(self) -> float:
        return self.open_s + self.graph_s + self.keywords_s


def start_once(size: int) -> Start:
    began = time.perf_counter()
    container = open_container(store_path(DATA, size))
    try:
        opened = time.perf_counter()
        wait_for_vector_graph(container)
        graph = time.perf_counter()
        wait_for_keyword_postings(container)
        keywords = time.perf_counter()
        return Start(round(opened - began, 2), round(graph - opened, 2), round(keywords - graph, 2), _rss_mb())
    finally:
        container.close()  # a clean close: saves the graph for the next start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--smoke", action="store_true", help="a 100-memory store (python -m bench.smoke startup)")
    parser.add_argument("--saved-graph-only", action="store_true",
                        help="only the start that loads the saved graph (building one at 1M takes many minutes)")
    args = parser.parse_args(argv)
    size = 100 if args.smoke else args.size
    DATA.mkdir(parents=True, exist_ok=True)  # a fresh clone has none
    ensure_store(DATA, size, Corpus())
    print(f"start-up of store-{size} ({_disk_mb(store_path(DATA, size)):,.0f} MB on disk), load "
          f"{os.getloadavg()[0]:.2f}")
    # The seeding's own clean close saved a graph: removed, so the first start builds it as a store without one does.
    labels = ["second start (graph saved at the clean close, loaded)"]
    if not args.saved_graph_only:
        graph_path(store_path(DATA, size) / "index.sqlite3").unlink(missing_ok=True)
        labels.insert(0, "first start (graph built)")
    for label in labels:
        start = start_once(size)
        print(f"  {label}: open {start.open_s:.2f}s + graph {start.graph_s:.2f}s + keyword postings "
              f"{start.keywords_s:.2f}s = {start.total_s:.2f}s; RSS {start.rss_mb:,.0f} MB; load "
              f"{os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
