"""`python -m bench.soak`: a long mixed load on a seeded store over HTTP, then a check that nothing drifted.

Writers (POST /memory, and now and then PATCH or DELETE one of their own memories) and searchers run at once
against `zengram serve` on a scratch copy of a seeded store — thread-100k by default, above the thresholds of
both in-memory indexes, so their maintainer threads follow every write. Then:

- every request must have answered below 500, and the server must have logged no error;
- the same searches are asked of the soaked server (its HNSW graph and keyword postings, maintained through the
  load) and of a fresh server on the same files with both structures off (the exact scan and FTS5, which they
  are derived from). The keyword postings must rank as FTS5 does and the graph is approximate, so the check is
  the top-`k` overlap of the two answers, not identity.

Not part of `make test`: it takes minutes. The keyword tokenizer bug fixed in 00dff9d (docs/performance.md) is
the kind of fault it exists to catch: it took a few thousand writes to appear.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.corpus import Corpus
from bench.server import ServerProcess, client
from bench.stats import format_load, load_average
from bench.stores import DATA, drafts_of, ensure_stores, store_path, working_copy

MIN_OVERLAP = 0.98  # mean top-k overlap with the exact scan and FTS5 (the graph's recall is ~0.995)
SEARCH_LIMIT = 10
DERIVED_STRUCTURES_OFF = {"vector_ann_min_rows": "-1", "keyword_memory_min_rows": "-1"}
# A line the server logs for a failure: a traceback, or a record at ERROR or CRITICAL level.
_FAILURE_LINE = re.compile(r"^Traceback |\b(ERROR|CRITICAL)\b")


@dataclass
class SoakLoad:
    """What the writers and searchers did, and every answer of 500 or more."""

    answers: Counter[tuple[str, int]] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, method: str, response: Any) -> None:
        with self.lock:
            self.answers[(method, response.status_code)] += 1
            if response.status_code >= 500:
                self.failures.append(f"{method} {response.status_code}: {response.text[:200]}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="seeded store size")
    parser.add_argument("--kind", choices=("thread", "store"), default="thread", help="seeded store kind")
    parser.add_argument("--writes", type=int, default=4_000, help="POST /memory in all")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--searchers", type=int, default=2)
    parser.add_argument("--change-share", type=float, default=0.2,
                        help="share of writes followed by a PATCH or a DELETE (half each) of a memory of the writer")
    parser.add_argument("--queries", type=int, default=200, help="searches compared after the load")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    corpus = Corpus()
    ensure_stores(DATA, [args.size], corpus, kind=args.kind)
    work = working_copy(store_path(DATA, args.size, args.kind), DATA / "work-soak")
    bodies = [d.model_dump(mode="json", exclude_none=True)
              for d in drafts_of(args.kind, corpus, args.writes, start=200_000)]
    queries = [query.text for query in corpus.queries(args.queries)]
    try:
        print(f"soak: {args.writes} writes from {args.writers} writers beside {args.searchers} searchers into "
              f"{args.kind}-{args.size} (load {format_load(load_average())})", flush=True)
        with ServerProcess(work) as soaked:
            soaked.settle()
            began = time.perf_counter()
            load = run_load(soaked.url, bodies, queries, args.writers, args.searchers, args.change_share)
            took = time.perf_counter() - began
            soaked.settle()
            maintained = ask(soaked.url, queries, load)
            log = soaked.log_path
        errors = failure_lines(log.read_text(errors="replace"))
        with ServerProcess(work, **DERIVED_STRUCTURES_OFF) as reference:
            exact = ask(reference.url, queries, load)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    overlap = mean_overlap(maintained, exact)
    print(f"  {took:.0f} s: " + ", ".join(f"{method} {status} ×{count}" for (method, status), count
                                          in sorted(load.answers.items())))
    print(f"  answers of 500 or more: {len(load.failures)}; server log failures: {len(errors)}")
    for line in [*load.failures, *errors][:5]:
        print(f"    {line}")
    print(f"  top-{SEARCH_LIMIT} overlap with the exact scan and FTS5 over {len(queries)} searches: {overlap:.4f} "
          f"(at least {MIN_OVERLAP}); identical answers: {sum(a == b for a, b in zip(maintained, exact, strict=True))}")
    passed = not load.failures and not errors and overlap >= MIN_OVERLAP
    print("soak: " + ("passed" if passed else "FAILED") + f" (load {format_load(load_average())})")
    return 0 if passed else 1


def run_load(url: str, bodies: Sequence[dict[str, Any]], queries: Sequence[str], writers: int, searchers: int,
             change_share: float) -> SoakLoad:
    load = SoakLoad()
    writing_done = threading.Event()

    def write(number: int) -> None:
        chance = random.Random(number)
        mine: list[str] = []
        with client(url) as http:
            for body in bodies[number::writers]:
                response = http.post("/memory", json=body)
                load.record("POST", response)
                if response.status_code == 201:
                    mine.append(response.json()["id"])
                roll = chance.random()
                if mine and roll < change_share / 2:
                    patch = {"content": f"{body['content']} (revised {chance.randrange(10**6)})"}
                    load.record("PATCH", http.patch(f"/memory/{chance.choice(mine[-50:])}", json=patch))
                elif mine and roll < change_share:
                    load.record("DELETE", http.delete(f"/memory/{mine.pop(chance.randrange(len(mine)))}"))

    def search(number: int) -> None:
        chance = random.Random(10_000 + number)
        with client(url) as http:
            while not writing_done.is_set():
                load.record("SEARCH", http.get("/memory/search", params={"q": chance.choice(queries),
                                                                         "limit": SEARCH_LIMIT}))

    searching = [threading.Thread(target=search, args=(n,)) for n in range(searchers)]
    writing = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in [*searching, *writing]:
        thread.start()
    for thread in writing:
        thread.join()
    writing_done.set()
    for thread in searching:
        thread.join()
    return load


def ask(url: str, queries: Sequence[str], load: SoakLoad) -> list[list[str]]:
    """Each query's hit ids, in order (not counted as accesses, so asking changes nothing); a search that fails
    is recorded in `load` and answers nothing."""
    with client(url) as http:
        answers = []
        for query in queries:
            response = http.get("/memory/search", params={"q": query, "limit": SEARCH_LIMIT, "track_access": "false"})
            load.record("SEARCH", response)
            answers.append([hit["id"] for hit in response.json()["results"]] if response.status_code == 200 else [])
        return answers


def mean_overlap(answers: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> float:
    """The mean share of each reference answer's hits that the answer also has (1.0 when both are empty)."""
    shares = [len(set(answer) & set(reference)) / len(reference) if reference else float(not answer)
              for answer, reference in zip(answers, references, strict=True)]
    return sum(shares) / len(shares) if shares else 1.0


def failure_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if _FAILURE_LINE.search(line)]


if __name__ == "__main__":
    raise SystemExit(main())
