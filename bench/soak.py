"""`python -m bench.soak`: a long mixed load on a seeded store over HTTP, then a check that nothing drifted.

Writers (POST /memory, and now and then PATCH or DELETE one of their own memories) and searchers run at once
against `zengram serve` on a scratch copy of a seeded store — thread-100k by default, above the thresholds of
both in-memory indexes, so their maintainer threads follow every write. Then:

- every request must have answered below 500, and the server must have logged no error;
- with `--kill-after S`, the server is killed (SIGKILL) S seconds into the load and started again on the same
  files: every write it acknowledged (201) must be readable, and nothing left pending for the index once it has
  settled (the repair sweep indexes what the kill interrupted);
- the same searches are asked of the soaked server (its HNSW graph and keyword postings, maintained through the
  load) and of a fresh server on the same files with both structures off (the exact scan and FTS5, which they
  are derived from). The keyword postings must rank as FTS5 does and the graph is approximate, so the check is
  the top-`k` overlap of the two answers, not identity.

Not part of `make test`: it takes minutes. The keyword tokenizer bug fixed in 00dff9d
(bench/results/2026-12-04-write-growth.md) is the kind of fault it exists to catch: it took a few thousand writes
to appear.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import httpx

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
    acknowledged: list[str] = field(default_factory=list)  # ids of the memories POST /memory created
    unanswered: int = 0  # requests the server never answered (it was killed)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, method: str, request: Callable[[], httpx.Response]) -> httpx.Response | None:
        """`request()`, its answer recorded; None when the server never answered (it was killed)."""
        try:
            response = request()
        except httpx.TransportError:
            with self.lock:
                self.unanswered += 1
            return None
        self.record(method, response)
        return response

    def record(self, method: str, response: Any) -> None:
        with self.lock:
            self.answers[(method, response.status_code)] += 1
            if response.status_code >= 500:
                self.failures.append(f"{method} {response.status_code}: {response.text[:200]}")
            if method == "POST" and response.status_code == 201:
                self.acknowledged.append(response.json()["id"])


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
    parser.add_argument("--kill-after", type=float, default=0.0,
                        help="seconds into the load to SIGKILL the server, then restart it and look for every "
                             "acknowledged write (0: no kill)")
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
            if args.kill_after:
                threading.Timer(args.kill_after, soaked.kill).start()
            began = time.perf_counter()
            load = run_load(soaked.url, bodies, queries, args.writers, args.searchers, args.change_share)
            took = time.perf_counter() - began
            if not args.kill_after:
                soaked.settle()
                maintained = ask(soaked.url, queries, load)
        errors = failure_lines(soaked.log_path.read_text(errors="replace"))
        missing: list[str] = []
        pending = 0
        if args.kill_after:
            with ServerProcess(work) as restarted:
                restarted.settle()
                missing, pending = unreadable(restarted.url, load.acknowledged), index_pending(restarted.url)
                maintained = ask(restarted.url, queries, load)
            errors += failure_lines(restarted.log_path.read_text(errors="replace"))
        with ServerProcess(work, **DERIVED_STRUCTURES_OFF) as reference:
            exact = ask(reference.url, queries, load)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    overlap = mean_overlap(maintained, exact)
    print(f"  {took:.0f} s: " + ", ".join(f"{method} {status} ×{count}" for (method, status), count
                                          in sorted(load.answers.items())))
    print(f"  answers of 500 or more: {len(load.failures)}; server log failures: {len(errors)}")
    if args.kill_after:
        print(f"  killed after {args.kill_after:g} s ({load.unanswered} requests unanswered); of "
              f"{len(load.acknowledged)} acknowledged writes, unreadable after the restart: {len(missing)}; "
              f"left pending for the index: {pending}")
    for line in [*load.failures, *errors][:5]:
        print(f"    {line}")
    print(f"  top-{SEARCH_LIMIT} overlap with the exact scan and FTS5 over {len(queries)} searches: {overlap:.4f} "
          f"(at least {MIN_OVERLAP}); identical answers: {sum(a == b for a, b in zip(maintained, exact, strict=True))}")
    passed = not load.failures and not errors and overlap >= MIN_OVERLAP and not missing and pending == 0
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
                response = load.send("POST", partial(http.post, "/memory", json=body))
                if response is None:
                    return
                if response.status_code == 201:
                    mine.append(response.json()["id"])
                roll = chance.random()
                if mine and roll < change_share / 2:
                    revised = {"content": f"{body['content']} (revised {chance.randrange(10**6)})"}
                    target = chance.choice(mine[-50:])
                    changed = load.send("PATCH", partial(http.patch, f"/memory/{target}", json=revised))
                elif mine and roll < change_share:
                    target = mine.pop(chance.randrange(len(mine)))
                    changed = load.send("DELETE", partial(http.delete, f"/memory/{target}"))
                else:
                    continue
                if changed is None:
                    return

    def search(number: int) -> None:
        chance = random.Random(10_000 + number)
        with client(url) as http:
            while not writing_done.is_set():
                asked = {"q": chance.choice(queries), "limit": SEARCH_LIMIT}
                if load.send("SEARCH", partial(http.get, "/memory/search", params=asked)) is None:
                    return

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


def unreadable(url: str, memory_ids: Sequence[str]) -> list[str]:
    """The ids GET /memory/{id} does not answer with 200."""
    with client(url) as http:
        return [memory_id for memory_id in memory_ids if http.get(f"/memory/{memory_id}").status_code != 200]


def index_pending(url: str) -> int:
    """Records the index has yet to take (GET /stats: the outbox the repair sweep works through)."""
    with client(url) as http:
        response = http.get("/stats")
        response.raise_for_status()
        return int(response.json()["index_health"]["pending_index"])


def mean_overlap(answers: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> float:
    """The mean share of each reference answer's hits that the answer also has (1.0 when both are empty)."""
    shares = [len(set(answer) & set(reference)) / len(reference) if reference else float(not answer)
              for answer, reference in zip(answers, references, strict=True)]
    return sum(shares) / len(shares) if shares else 1.0


def failure_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if _FAILURE_LINE.search(line)]


if __name__ == "__main__":
    raise SystemExit(main())
