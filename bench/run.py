"""`python -m bench.run`: search latency, embedding throughput and write throughput of the embedded host.

Every figure is client-side wall time (time.perf_counter) around a real HTTP request to the real app
(uvicorn on loopback, real MiniLM embedder), except the embedding figures, which call the embedder
in-process. Results are printed as a table and dumped to bench/.data/results-<date>.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx
import numpy as np
from zengram.adapters.minilm import build_minilm_embedder
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.memory.domain.requests import MemoryDraft
from zengram.settings import Settings

from bench.corpus import AGENTS, Corpus, Query, word_count
from bench.paths import DATA, MODEL_CACHE
from bench.recall.data import LocomoDataMissing
from bench.stats import Latency, format_duration, format_load, load_average
from bench.stores import (
    API_KEY,
    SeedReport,
    ensure_store,
    open_container,
    settings_for,
    store_path,
    wait_for_keyword_postings,
    wait_for_vector_graph,
    working_copy,
)
from bench.targets import Target, render_targets

DATA_DIR = DATA
SEARCH_P50_TARGET_MS = 15.0
SEARCH_P95_TARGET_MS = 40.0
SEARCH_TARGET_SIZE = 100_000
SEARCH_GROWTH_TARGET = 2.0  # p50 at 100k ÷ p50 at 10k
WRITES_TARGET_PER_S = 100.0  # single client; bench/writes.py measures writes in depth
WRITE_STORE_SIZE = 10_000
EMBED_BATCH = 64
EMBED_BATCHES = 10
WRITE_CONCURRENCY = (1, 4)
HEALTH_PROBES = 100

T = TypeVar("T")


@dataclass
class SearchFigures:
    size: int
    filter: str  # "none" or "client_id"
    latency: Latency
    mean_hits: float
    distinct_queries: int
    cpu_ms_per_search: float  # this process's CPU time (server and client: one process) per measured search
    by_source: dict[str, Latency] = field(default_factory=dict)  # LoCoMo questions vs generated ones


@dataclass
class StoreOpen:
    size: int
    open_seconds: float  # build_container: loads every stored vector into the matrix
    active_memories: int
    health: Latency | None = None  # GET /health on the same server: the HTTP + framework floor
    graph_build_seconds: float | None = None  # the HNSW graph's background build, waited for before measuring
    keyword_build_seconds: float | None = None  # the in-memory keyword postings' background build, likewise
    rss_mb: float | None = None  # this process's resident memory once the searches ran (server and client: #38)
    disk_mb: float | None = None  # the store's files


@dataclass
class EmbeddingFigures:
    runtime: str  # numpy, onnx or onnx-int8
    load_seconds: float
    single_query: Latency
    single_query_mean_words: float
    single_memory: Latency  # what each POST /memory pays: one memory text embedded on its own
    batch_size: int
    batches: int
    batch_latency: Latency
    batch_texts_per_s: float
    batch_mean_words: float


@dataclass
class WriteFigures:
    store_size: int
    clients: int
    writes: int
    wall_seconds: float
    writes_per_s: float
    latency: Latency
    status_counts: dict[str, int]


@dataclass
class Results:
    started_at: str
    finished_at: str = ""
    machine: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    corpus: dict[str, Any] = field(default_factory=dict)
    load: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    seeding: list[SeedReport] = field(default_factory=list)
    embedding: EmbeddingFigures | None = None
    store_opens: list[StoreOpen] = field(default_factory=list)
    search: list[SearchFigures] = field(default_factory=list)
    writes: list[WriteFigures] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="store sizes to search, comma-separated")
    parser.add_argument("--queries", type=int, default=300, help="measured searches per store and filter")
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured searches/writes before each series")
    parser.add_argument("--writes", type=int, default=500, help="measured writes per concurrency level")
    parser.add_argument("--quick", action="store_true", help="smoke run: one 2,000 store, 100 queries, 100 writes")
    parser.add_argument("--smoke", action="store_true",
                        help="seconds-long check that the run works (python -m bench.smoke run): a 100 store, "
                             "8 queries, 8 writes; its figures say nothing about speed")
    parser.add_argument("--seed-only", action="store_true", help="build the cached stores and stop")
    args = parser.parse_args(argv)
    args.embed_batch, args.embed_batches = EMBED_BATCH, EMBED_BATCHES
    if args.quick:
        args.sizes, args.queries, args.writes = "2000", 100, 100
    if args.smoke:
        args.sizes, args.queries, args.warmup, args.writes = "100", 8, 2, 8
        args.embed_batch, args.embed_batches = 16, 2
    args.size_list = sorted({int(size.replace("_", "")) for size in args.sizes.split(",") if size.strip()})
    if not args.size_list or min(args.size_list) <= 0 or args.queries <= 0 or args.writes <= 0:
        parser.error("sizes, queries and writes must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sizes: list[int] = args.size_list
    write_store = WRITE_STORE_SIZE if WRITE_STORE_SIZE in sizes else sizes[0]
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    results = Results(started_at=_now())
    results.machine = {
        "cpus": _cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
        "numpy": np.__version__, "commit": _git_commit(),
    }
    results.config = {"sizes": sizes, "queries": args.queries, "warmup": args.warmup, "writes": args.writes,
                      "search_limit": "default (10)", "write_store_size": write_store,
                      "write_concurrency": list(WRITE_CONCURRENCY)}
    results.load["start"] = load_average()
    print(f"Zengram benchmark · {results.started_at} · {_cpu_count()} CPUs · load {format_load(results.load['start'])}")

    try:
        corpus = Corpus()
    except LocomoDataMissing as missing:  # the corpus mixes in LoCoMo turns
        print(missing, file=sys.stderr)
        return 2
    needed_queries = 2 * (args.warmup + args.queries)
    queries = corpus.queries(needed_queries)
    write_drafts_needed = len(WRITE_CONCURRENCY) * (args.writes + args.warmup)

    print("\n[1/4] Seeding stores (store_many, batch embedding)")
    started = time.perf_counter()
    for size in sizes:
        results.seeding.append(ensure_store(DATA_DIR, size, corpus))
    results.corpus = _describe_corpus(corpus, max(sizes), queries[:needed_queries])
    print(f"  done in {format_duration(time.perf_counter() - started)}")
    if args.seed_only:
        return 0

    embed_texts = args.embed_batch * args.embed_batches
    batch_texts = [d.content for d in corpus.drafts(embed_texts, start=max(sizes))]
    fresh = corpus.drafts(write_drafts_needed, start=max(sizes) + embed_texts)
    # The client shares the server's process: a resident 100k-draft corpus would make each full garbage
    # collection in the server ~150 ms slower (seen as lone search outliers), so drop it before measuring.
    del corpus
    gc.collect()

    print("\n[2/4] Embedding throughput (MiniLM, in-process)")
    results.load["embedding"] = load_average()
    results.embedding = bench_embedding([q.text for q in queries[: args.queries]], batch_texts, args.warmup,
                                        args.embed_batch)

    print("\n[3/4] Search latency over HTTP (GET /memory/search, default limit 10)")
    for size in sizes:
        results.load[f"search-{size}"] = load_average()
        opened, figures = bench_search(size, queries[:needed_queries], args.warmup, args.queries)
        results.store_opens.append(opened)
        results.search.extend(figures)

    print(f"\n[4/4] Write throughput over HTTP (POST /memory into a {write_store:,} store)")
    results.load["writes"] = load_average()
    results.writes = bench_writes(write_store, fresh, args.writes, args.warmup)

    results.load["end"] = load_average()
    results.finished_at = _now()
    results.targets = _targets(results)
    print()
    print(render(results))
    print()
    print(render_targets(results.targets, date=results.started_at,
                         loads=", ".join(f"{k} {format_load(v)}" for k, v in results.load.items())))
    out = DATA_DIR / f"results-{results.started_at[:10]}.json"
    out.write_text(json.dumps(asdict(results), indent=2), encoding="utf-8")
    print(f"\nJSON: {out}")
    return 0


# -- embedding -------------------------------------------------------------------------------------------


def bench_embedding(queries: Sequence[str], memories: Sequence[str], warmup: int,
                    batch_size: int = EMBED_BATCH) -> EmbeddingFigures:
    """The embedder the server runs by default (`minilm_runtime`); `python -m bench.embedder` compares them all."""
    settings = Settings()
    embedder = build_minilm_embedder(settings.minilm_runtime, cache_dir=MODEL_CACHE,
                                     lone_pass_threads=settings.minilm_lone_pass_threads)
    began = time.perf_counter()
    embedder.load()
    load_seconds = time.perf_counter() - began
    for text in queries[:warmup]:
        embedder.embed([text + " (warm-up)"])
    embedder.embed(list(memories[:batch_size]))

    singles = _timed_each(queries, lambda text: embedder.embed([text]))
    single_memories = _timed_each(memories[: len(queries)], lambda text: embedder.embed([text]))
    batches = [list(memories[i:i + batch_size]) for i in range(0, len(memories), batch_size)]
    batch_times = _timed_each(batches, embedder.embed)
    figures = EmbeddingFigures(
        runtime=embedder.runtime,
        load_seconds=round(load_seconds, 3),
        single_query=Latency.of(singles),
        single_query_mean_words=round(float(np.mean([word_count(q) for q in queries])), 1),
        single_memory=Latency.of(single_memories),
        batch_size=batch_size,
        batches=len(batches),
        batch_latency=Latency.of(batch_times),
        batch_texts_per_s=round(sum(map(len, batches)) / sum(batch_times), 1),
        batch_mean_words=round(float(np.mean([word_count(t) for t in memories])), 1),
    )
    print(f"  single query p50 {figures.single_query.p50_ms:.1f} ms · batches of {batch_size}: "
          f"{figures.batch_texts_per_s:.0f} texts/s")
    return figures


# -- search ----------------------------------------------------------------------------------------------


def bench_search(
    size: int, queries: Sequence[Query], warmup: int, measured: int
) -> tuple[StoreOpen, list[SearchFigures]]:
    """Two series on one server: no filter, then a client_id filter; every query text distinct."""
    if len({q.text for q in queries}) != len(queries):
        raise ValueError("search queries must be distinct so that every search embeds its query")
    work = working_copy(store_path(DATA_DIR, size), DATA_DIR / "work-search")
    try:
        began = time.perf_counter()
        container = open_container(work)
        opened = StoreOpen(size=size, open_seconds=round(time.perf_counter() - began, 2),
                           active_memories=_active_count(work))
        print(f"  store-{size}: opened in {opened.open_seconds:.2f}s ({opened.active_memories:,} active memories)")
        began = time.perf_counter()
        if wait_for_vector_graph(container):
            opened.graph_build_seconds = round(time.perf_counter() - began, 1)
            print(f"  store-{size}: HNSW vector graph built in the background in {opened.graph_build_seconds:.1f}s")
        began = time.perf_counter()
        if wait_for_keyword_postings(container):
            opened.keyword_build_seconds = round(time.perf_counter() - began, 1)
            print(f"  store-{size}: keyword postings ready {opened.keyword_build_seconds:.1f}s after the graph")
        app = build_embedded_app(settings_for(work), container)
        series: list[tuple[str, Callable[[Query], dict[str, str]]]] = [
            ("none", lambda q: {"q": q.text}),
            ("client_id", lambda q: {"q": q.text, "client_id": q.client_id}),
        ]
        figures: list[SearchFigures] = []
        with BackgroundServer(app) as server, _client(server.url) as client:
            opened.health = Latency.of(_timed_each(range(HEALTH_PROBES), lambda _: client.get("/health")))
            per_series = warmup + measured
            for number, (name, params) in enumerate(series):
                chunk = queries[number * per_series:(number + 1) * per_series]
                hits: list[int] = []

                def search(query: Query, params: Callable[[Query], dict[str, str]] = params,
                           hits: list[int] = hits) -> None:
                    response = client.get("/memory/search", params=params(query))
                    response.raise_for_status()
                    hits.append(int(response.json()["count"]))

                for query in chunk[:warmup]:
                    search(query)
                hits.clear()
                cpu_began = time.process_time()
                seconds = _timed_each(chunk[warmup:], search)
                cpu_ms = (time.process_time() - cpu_began) / len(seconds) * 1000
                sources = sorted({q.source for q in chunk[warmup:]})
                result = SearchFigures(
                    size=size, filter=name, latency=Latency.of(seconds), mean_hits=round(float(np.mean(hits)), 2),
                    distinct_queries=len({q.text for q in chunk}), cpu_ms_per_search=round(cpu_ms, 2),
                    by_source={source: Latency.of([t for q, t in zip(chunk[warmup:], seconds, strict=True)
                                                   if q.source == source]) for source in sources},
                )
                figures.append(result)
                print(f"  store-{size} filter={name:<9} p50 {result.latency.p50_ms:6.1f} ms  "
                      f"p95 {result.latency.p95_ms:6.1f} ms  p99 {result.latency.p99_ms:6.1f} ms  "
                      f"CPU {cpu_ms:.1f} ms/search  (load {format_load(load_average())})")
        opened.rss_mb, opened.disk_mb = _rss_mb(), _disk_mb(work)
        print(f"  store-{size}: RSS {opened.rss_mb:,.0f} MB (server and client, one process), {opened.disk_mb:,.0f} MB "
              "on disk")
        return opened, figures
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- writes ----------------------------------------------------------------------------------------------


def bench_writes(size: int, drafts: Sequence[MemoryDraft], measured: int, warmup: int) -> list[WriteFigures]:
    """POST /memory with 1 and with N concurrent clients (own connection each), into a copy of the store."""
    bodies = [d.model_dump(mode="json", exclude_none=True) for d in drafts]
    work = working_copy(store_path(DATA_DIR, size), DATA_DIR / "work-writes")
    figures: list[WriteFigures] = []
    try:
        container = open_container(work)
        app = build_embedded_app(settings_for(work), container)
        with BackgroundServer(app) as server:
            offset = 0
            for clients in WRITE_CONCURRENCY:
                warm, batch = bodies[offset:offset + warmup], bodies[offset + warmup:offset + warmup + measured]
                offset += warmup + measured
                with _client(server.url) as client:
                    for body in warm:
                        client.post("/memory", json=body).raise_for_status()
                result = _concurrent_writes(server.url, batch, clients)
                result.store_size = size
                figures.append(result)
                print(f"  {clients} client(s): {result.writes_per_s:6.1f} writes/s  "
                      f"p50 {result.latency.p50_ms:.1f} ms  p95 {result.latency.p95_ms:.1f} ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return figures


def _concurrent_writes(url: str, bodies: Sequence[dict[str, Any]], clients: int) -> WriteFigures:
    shares = [bodies[i::clients] for i in range(clients)]
    latencies: list[list[float]] = [[] for _ in range(clients)]
    statuses: list[list[int]] = [[] for _ in range(clients)]
    barrier = threading.Barrier(clients + 1)
    errors: list[BaseException] = []

    def worker(number: int) -> None:
        try:
            with _client(url) as client:
                client.get("/health")  # open the keep-alive connection before the clock starts
                barrier.wait()
                for body in shares[number]:
                    began = time.perf_counter()
                    response = client.post("/memory", json=body)
                    latencies[number].append(time.perf_counter() - began)
                    statuses[number].append(response.status_code)
        except BaseException as error:
            errors.append(error)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(n,), name=f"bench-writer-{n}") for n in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    if errors:
        raise errors[0]
    codes = [code for per_thread in statuses for code in per_thread]
    counts = {str(code): codes.count(code) for code in sorted(set(codes))}
    if set(counts) != {"201"}:
        raise RuntimeError(f"writes returned {counts}; expected only 201 (distinct texts create new memories)")
    return WriteFigures(store_size=0, clients=clients, writes=len(codes), wall_seconds=round(wall, 3),
                        writes_per_s=round(len(codes) / wall, 1),
                        latency=Latency.of([s for per_thread in latencies for s in per_thread]), status_counts=counts)


# -- report ----------------------------------------------------------------------------------------------


def _targets(results: Results) -> list[Target]:
    """#18's search targets at 100k (with and without `client_id`) and growth 10k → 100k; the single-client
    write figure of this run against #18's 100/s. CPU-time figures: this process's CPU per search, the server's
    work plus the benchmark client's (an upper bound of what the search cost without contention)."""
    found: list[Target] = []
    by_key = {(s.size, s.filter): s for s in results.search}
    for name in ("none", "client_id"):
        big = by_key.get((SEARCH_TARGET_SIZE, name))
        label = "no filter" if name == "none" else "client_id filter"
        if big:
            cpu = big.cpu_ms_per_search
            found.append(Target(f"search p50 at {SEARCH_TARGET_SIZE // 1000}k, {label}",
                                f"≤ {SEARCH_P50_TARGET_MS:.0f} ms", f"{big.latency.p50_ms:.1f} ms",
                                big.latency.p50_ms <= SEARCH_P50_TARGET_MS, f"{cpu:.1f} CPU ms/search (mean)",
                                cpu <= SEARCH_P50_TARGET_MS))
            found.append(Target(f"search p95 at {SEARCH_TARGET_SIZE // 1000}k, {label}",
                                f"≤ {SEARCH_P95_TARGET_MS:.0f} ms", f"{big.latency.p95_ms:.1f} ms",
                                big.latency.p95_ms <= SEARCH_P95_TARGET_MS))
        small = by_key.get((SEARCH_TARGET_SIZE // 10, name))
        if big and small:
            wall = big.latency.p50_ms / small.latency.p50_ms
            cpu_ratio = big.cpu_ms_per_search / small.cpu_ms_per_search
            found.append(Target(f"search cost 10k → 100k, {label}", f"≤ {SEARCH_GROWTH_TARGET:.0f}×",
                                f"p50 {wall:.2f}× ({small.latency.p50_ms:.1f}→{big.latency.p50_ms:.1f})",
                                wall <= SEARCH_GROWTH_TARGET,
                                f"{cpu_ratio:.2f}× ({small.cpu_ms_per_search:.1f}→{big.cpu_ms_per_search:.1f} ms)",
                                cpu_ratio <= SEARCH_GROWTH_TARGET))
    single = [w for w in results.writes if w.clients == 1]
    if single:
        found.append(Target(f"single-client writes (store-{single[0].store_size}; see bench.writes)",
                            f"≥ {WRITES_TARGET_PER_S:.0f}/s", f"{single[0].writes_per_s:.1f} writes/s",
                            single[0].writes_per_s >= WRITES_TARGET_PER_S))
    return found


def render(results: Results) -> str:
    lines: list[str] = []
    add = lines.append
    corpus = results.corpus
    add("=" * 104)
    add(f"Zengram benchmark  {results.started_at} → {results.finished_at}   commit {results.machine['commit']}, "
        f"{results.machine['cpus']} CPUs, Python {results.machine['python']}, numpy {results.machine['numpy']}")
    add("load average (1/5/15 min): " + ", ".join(f"{k} {format_load(v)}" for k, v in results.load.items()))
    add(f"corpus: {corpus['memories']:,} distinct memories ({corpus['locomo_memories']:,} from LoCoMo turns/"
        f"observations, the rest generated agent notes), {corpus['words_min']}-{corpus['words_max']} words "
        f"(mean {corpus['words_mean']}), {corpus['clients']} client_ids, {corpus['agents']} agents, "
        f"types {corpus['types']}")
    add(f"queries: {corpus['queries']} distinct questions per store ({corpus['locomo_queries']} LoCoMo, the rest "
        f"generated), none repeated, so every search embeds its query (query-vector LRU never hits)")
    add("=" * 104)

    add("\nSeeding (MemoryService.store_many, batches of 256, real MiniLM)")
    add(f"  {'store':>9}  {'memories':>9}  {'time':>8}  {'memories/s':>10}  {'on disk':>9}  source")
    for seed in results.seeding:
        source = f"cached, seeded {seed.seeded_at}" if seed.reused else "seeded this run"
        add(f"  {seed.size:>9,}  {seed.embedded:>9,}  {format_duration(seed.seconds):>8}  {seed.rate_per_s:>10.1f}"
            f"  {seed.disk_mb:>7.0f}MB  {source}")
    for opened in results.store_opens:
        add(f"  store-{opened.size}: opening it (loading the vector matrix) took {opened.open_seconds:.2f}s; "
            f"{opened.active_memories:,} active memories")

    if results.embedding:
        emb = results.embedding
        add(f"\nEmbedding (MiniLM, {emb.runtime} runtime, in-process, no HTTP)")
        add(f"  model load {emb.load_seconds:.2f}s")
        add(f"  single short query ({emb.single_query.count} distinct, mean {emb.single_query_mean_words} words): "
            f"p50 {emb.single_query.p50_ms:.1f} ms  p95 {emb.single_query.p95_ms:.1f} ms  "
            f"mean {emb.single_query.mean_ms:.1f} ms")
        add(f"  single memory text ({emb.single_memory.count}, one per call as POST /memory does): "
            f"p50 {emb.single_memory.p50_ms:.1f} ms  p95 {emb.single_memory.p95_ms:.1f} ms  "
            f"mean {emb.single_memory.mean_ms:.1f} ms")
        add(f"  batches of {emb.batch_size} memory texts ({emb.batches} batches, mean {emb.batch_mean_words} words): "
            f"{emb.batch_texts_per_s:.1f} texts/s  (p50 {emb.batch_latency.p50_ms:.0f} ms per batch)")

    add(f"\nSearch over HTTP (GET /memory/search, limit 10, client wall time incl. query embedding)"
        f"   target: p50 ≤ {SEARCH_P50_TARGET_MS:.0f} ms, p95 ≤ {SEARCH_P95_TARGET_MS:.0f} ms at "
        f"{SEARCH_TARGET_SIZE:,}")
    add("  (indented rows split the series above them by query source: LoCoMo questions vs generated ones)")
    add(f"  {'store':>9}  {'filter':<10} {'n':>4}  {'mean':>7}  {'p50':>7}  {'p95':>7}  {'p99':>7}  {'max':>7}  "
        f"{'hits':>5}  target")
    for opened in results.store_opens:
        if opened.health:
            lat = opened.health
            add(f"  {opened.size:>9,}  {'/health':<10} {lat.count:>4}  {lat.mean_ms:>5.1f}ms  {lat.p50_ms:>5.1f}ms  "
                f"{lat.p95_ms:>5.1f}ms  {lat.p99_ms:>5.1f}ms  {lat.max_ms:>5.1f}ms  {'':>5}  (HTTP floor, no search)")
    for s in results.search:
        lat = s.latency
        verdict = ("met" if lat.p95_ms <= SEARCH_P95_TARGET_MS and lat.p50_ms <= SEARCH_P50_TARGET_MS else "MISSED"
                   ) if s.size == SEARCH_TARGET_SIZE else "-"
        add(f"  {s.size:>9,}  {s.filter:<10} {lat.count:>4}  {lat.mean_ms:>5.1f}ms  {lat.p50_ms:>5.1f}ms  "
            f"{lat.p95_ms:>5.1f}ms  {lat.p99_ms:>5.1f}ms  {lat.max_ms:>5.1f}ms  {s.mean_hits:>5.1f}  {verdict}"
            f"  (CPU {s.cpu_ms_per_search:.1f} ms/search)")
        for source, lat in s.by_source.items():
            add(f"  {'':>9}  {source:<10} {lat.count:>4}  {lat.mean_ms:>5.1f}ms  {lat.p50_ms:>5.1f}ms  "
                f"{lat.p95_ms:>5.1f}ms  {lat.p99_ms:>5.1f}ms  {lat.max_ms:>5.1f}ms")

    if results.writes:
        add(f"\nWrites over HTTP (POST /memory, distinct texts, each embedded singly; store of "
            f"{results.writes[0].store_size:,})   target: ≥ {WRITES_TARGET_PER_S:.0f} writes/s")
        add(f"  {'clients':>7}  {'writes':>6}  {'wall':>7}  {'writes/s':>8}  {'p50':>7}  {'p95':>7}  {'p99':>7}  "
            f"{'max':>7}  target")
        for w in results.writes:
            lat = w.latency
            verdict = "met" if w.writes_per_s >= WRITES_TARGET_PER_S else "MISSED"
            add(f"  {w.clients:>7}  {w.writes:>6}  {w.wall_seconds:>6.1f}s  {w.writes_per_s:>8.1f}  "
                f"{lat.p50_ms:>5.1f}ms  {lat.p95_ms:>5.1f}ms  {lat.p99_ms:>5.1f}ms  {lat.max_ms:>5.1f}ms  {verdict}")
    return "\n".join(lines)


# -- helpers ---------------------------------------------------------------------------------------------


def _client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"x-api-key": API_KEY}, timeout=120.0)


def _timed_each(items: Sequence[T], call: Callable[[T], object]) -> list[float]:
    seconds: list[float] = []
    for item in items:
        began = time.perf_counter()
        call(item)
        seconds.append(time.perf_counter() - began)
    return seconds


def _rss_mb() -> float:
    """VmRSS of this process (Linux), in MB; 0.0 where /proc is not there."""
    try:
        status = Path("/proc/self/status").read_text(encoding="utf-8")
    except OSError:
        return 0.0
    line = next((line for line in status.splitlines() if line.startswith("VmRSS:")), "VmRSS: 0 kB")
    return round(int(line.split()[1]) / 1024, 1)


def _disk_mb(path: Path) -> float:
    return round(sum(file.stat().st_size for file in path.rglob("*") if file.is_file()) / 1e6, 1)


def _active_count(path: Path) -> int:
    with sqlite3.connect(f"file:{settings_for(path).records_path}?mode=ro", uri=True) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM memories WHERE active = 1").fetchone()[0])


def _describe_corpus(corpus: Corpus, size: int, queries: Sequence[Query]) -> dict[str, Any]:
    drafts = corpus.drafts(size)
    words = [word_count(d.content) for d in drafts]
    types: dict[str, int] = {}
    for draft in drafts:
        types[draft.type.value] = types.get(draft.type.value, 0) + 1
    return {
        "memories": len(drafts), "distinct_texts": len({d.content for d in drafts}),
        "locomo_memories": corpus.locomo_count(size),
        "words_min": min(words), "words_max": max(words), "words_mean": round(float(np.mean(words)), 1),
        "clients": len({d.client_id for d in drafts}), "agents": len({d.source_agent for d in drafts}),
        "known_agents": len(AGENTS), "types": types,
        "queries": len(queries), "locomo_queries": sum(q.source == "locomo" for q in queries),
    }


def _git_commit() -> str:
    """The checked-out commit, with "+dirty" when shared/ has uncommitted changes (read-only git calls)."""
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "shared"], cwd=root, capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def _cpu_count() -> int:
    return os.cpu_count() or 1


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


if __name__ == "__main__":
    raise SystemExit(main())
