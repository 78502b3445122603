"""Seeded data folders: built once with batch embedding (`store_many`), cached under bench/.data/.

Two kinds, each in sizes that grow from one another (a 100k store continues a copy of the 10k one):
- `store-N`: the corpus as it comes, spread over its clients, agents and types (search and writes);
- `thread-N`: the same texts as the events of one conversation thread (one client and agent), the case in
  which a write's conversation context used to read a page of the thread.
Both embed the same texts, so seeding keeps each text's vector in a cache (`vectors-<runtime>.sqlite3`) and
embeds it once for both.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
from zengram.adapters.factories import build_embedder
from zengram.adapters.minilm import resolve_runtime
from zengram.assembly.containers import Container, build_container
from zengram.kernel.ports import Embedder
from zengram.memory.domain.models import Memory, MemoryType, WriteKind
from zengram.memory.domain.requests import MemoryDraft
from zengram.settings import Settings

from bench.corpus import CORPUS_VERSION, Corpus
from bench.paths import MODEL_CACHE
from bench.pooled import PooledEmbedder, pool_size_from_env
from bench.stats import format_duration
from bench.wrapping import InFrontOf

API_KEY = "bench-key"
SEED_BATCH = 256
MARKER = "complete.json"
PROGRESS_EVERY_SECONDS = 15.0
# DATA: the stores; MODEL_CACHE: built MiniLM graphs, shared by every store (not copied with them, not counted
# in their size on disk). Both in bench/paths.py.
THREAD_CLIENT, THREAD_AGENT = "thread-bench", "chat"
# Bump when the stores' contents change in a way the corpus version does not (e.g. the thread kind's drafts).
STORES_VERSION = 2

Kind = Literal["store", "thread"]


@dataclass(frozen=True)
class SeedReport:
    size: int
    path: str
    reused: bool  # True: the cached folder was complete and nothing was embedded this run
    seeded_at: str
    seconds: float  # wall time of the seeding run that built (or finished) the folder
    embedded: int  # memories stored by that run
    rate_per_s: float
    disk_mb: float
    kind: str = "store"


def settings_for(path: Path) -> Settings:
    return Settings(data_dir=path, api_key=API_KEY, embedder="minilm", rate_limit_enabled=False,
                    minilm_cache_dir=MODEL_CACHE)


def open_container(path: Path, embedder: Embedder | None = None) -> Container:
    return build_container(settings_for(path), embedder=embedder)


def wait_for_vector_graph(container: Container, timeout: float = 900.0) -> bool:
    """Waits until the embedded index's HNSW graph (above `vector_ann_min_rows`) is built, so a benchmark measures
    the searches a long-running server answers; False when the store has no graph (exact scans)."""
    index = getattr(container.index, "inner", container.index)  # the circuit breaker wraps it
    wait = getattr(index, "wait_for_graph", None)
    return bool(wait(timeout)) if wait is not None else False


def wait_for_keyword_postings(container: Container, timeout: float = 900.0) -> bool:
    """Waits until the embedded index's in-memory keyword postings (above `keyword_memory_min_rows`) are built;
    False when the store keeps keyword searches on FTS5."""
    index = getattr(container.index, "inner", container.index)
    wait = getattr(index, "wait_for_keywords", None)
    return bool(wait(timeout)) if wait is not None else False


def settled_pending_index(container: Container, limit: int = 1) -> list[Memory]:
    """The records the index has not taken once the index writes queued behind `store_many`'s answers are applied.

    The embedded host answers a write before its index write (`IndexWriteBehind`), with the record pending in the
    outbox until that index write lands; the outbox itself does not wait for them, any call on the index does.
    Read straight after seeding, the outbox holds the last batches still being indexed: not a failure."""
    container.index.count()  # the guarded index drains the write-behind queue before every call
    return container.outbox.pending_index(limit)


def store_path(data_dir: Path, size: int, kind: Kind = "store") -> Path:
    return data_dir / f"{kind}-{size}"


def thread_draft(draft: MemoryDraft) -> MemoryDraft:
    """A corpus memory as the next turn of the benchmark's one thread: an event whose text is the memory's whole
    index text (content, then its key, subject and status lines), so both kinds embed the same texts."""
    text = "\n".join(part for part in (draft.content, draft.key, draft.subject, draft.status_value) if part)
    return MemoryDraft(type=MemoryType.EVENT, content=text, source_agent=THREAD_AGENT, client_id=THREAD_CLIENT)


def drafts_of(kind: Kind, corpus: Corpus, count: int, start: int = 0) -> list[MemoryDraft]:
    drafts = corpus.drafts(count, start=start)
    return drafts if kind == "store" else [thread_draft(draft) for draft in drafts]


def ensure_stores(data_dir: Path, sizes: Sequence[int], corpus: Corpus, kind: Kind = "store",
                  log: Callable[[str], None] = print) -> list[SeedReport]:
    """`ensure_store` for each size, smallest first, each bigger one continuing a copy of the one before."""
    data_dir.mkdir(parents=True, exist_ok=True)  # a fresh clone has none: it is git-ignored
    reports: list[SeedReport] = []
    previous: Path | None = None
    for size in sorted(sizes):
        reports.append(ensure_store(data_dir, size, corpus, kind, log, start_from=previous))
        previous = store_path(data_dir, size, kind)
    return reports


def ensure_store(data_dir: Path, size: int, corpus: Corpus, kind: Kind = "store",
                 log: Callable[[str], None] = print, *, start_from: Path | None = None) -> SeedReport:
    """The folder holding the first `size` memories of `kind`: reused when complete, else (re)seeded, from a
    copy of the complete smaller store `start_from` when given.

    An interrupted seeding resumes: the store's record count says where to pick up (the partly
    stored last batch is deduplicated by the service itself, and its index entries are repaired).
    """
    path = store_path(data_dir, size, kind)
    marker = path / MARKER
    name = path.name
    if marker.exists():
        recorded = json.loads(marker.read_text(encoding="utf-8"))
        if _is_current(recorded, size):
            log(f"  {name}: reusing cached {path} (seeded {recorded['seeded_at']})")
            return SeedReport(size=size, path=str(path), reused=True, seeded_at=recorded["seeded_at"],
                              seconds=recorded["seconds"], embedded=recorded["embedded"],
                              rate_per_s=recorded["rate_per_s"], disk_mb=_disk_mb(path), kind=kind)
        log(f"  {name}: cached folder is from another corpus version; re-seeding")
        shutil.rmtree(path)
    if not path.exists() and start_from is not None and (start_from / MARKER).exists():
        log(f"  {name}: continuing a copy of {start_from.name}")
        shutil.copytree(start_from, path, ignore=shutil.ignore_patterns(MARKER))

    drafts = drafts_of(kind, corpus, size)
    runtime = resolve_runtime(Settings().minilm_runtime)
    vectors = VectorCache(data_dir / f"vectors-{runtime}.sqlite3", build_embedder(settings_for(path)))
    pool = pool_size_from_env()  # bench/pooled.py: derived vectors past a pool of real ones, for 100k-1M stores
    embedder = PooledEmbedder(vectors, [d.content for d in drafts_of(kind, corpus, pool)]) if pool else vectors
    if pool:
        log(f"  {name}: pooled vectors: {pool:,} texts embedded, every other vector derived (bench/pooled.py)")
    container = open_container(path, embedder)
    try:
        already = container.records.count()
        start = min(already // SEED_BATCH * SEED_BATCH, size)
        if already:
            log(f"  {name}: resuming at {start:,} ({already:,} records present)")
            # An interrupted seeding loses the index writes still queued behind its last answers: their records wait
            # in the outbox, as a server's would until its start-up repair sweep, which this container runs now.
            repaired = container.memory.index_sync.repair_until_clean(lambda: True)
            if repaired.indexed:
                log(f"  {name}: {repaired.indexed:,} records the interrupted run left unindexed, indexed now")
        log(f"  {name}: seeding {size - start:,} memories in batches of {SEED_BATCH} …")
        began = last_report = time.perf_counter()
        created = 0
        for offset in range(start, size, SEED_BATCH):
            results = container.memory.store_many(drafts[offset:offset + SEED_BATCH])
            created += sum(result.kind is WriteKind.CREATED for result in results)
            now = time.perf_counter()
            done = min(offset + SEED_BATCH, size) - start
            if now - last_report >= PROGRESS_EVERY_SECONDS or done == size - start:
                rate = done / (now - began)
                eta = (size - start - done) / rate if rate else 0.0
                log(f"    {start + done:>7,}/{size:,}  {rate:6.1f} memories/s  elapsed {format_duration(now - began)}"
                    f"  ETA {format_duration(eta)}  ({vectors.hits:,} cached vectors used)")
                last_report = now
        count = container.records.count()
        unindexed = len(settled_pending_index(container))
        seconds = time.perf_counter() - began  # the index writes behind the last batches included
    finally:
        container.close()
        vectors.close()
    if count != size:
        raise RuntimeError(f"{name} holds {count} records after seeding, expected {size}")
    if unindexed:  # a benchmark over it would measure the repair sweep indexing them in the background
        raise RuntimeError(f"{name} holds records the index did not take (see the warnings above); not cached")
    report = SeedReport(size=size, path=str(path), reused=False,
                        seeded_at=datetime.now(UTC).isoformat(timespec="seconds"), seconds=round(seconds, 2),
                        embedded=size - start, rate_per_s=round((size - start) / seconds, 1) if seconds else 0.0,
                        disk_mb=_disk_mb(path), kind=kind)
    log(f"  {name}: {created:,} created in {format_duration(seconds)} ({report.rate_per_s} memories/s)")
    marker.write_text(json.dumps({
        "size": size, "corpus_version": CORPUS_VERSION, "stores_version": STORES_VERSION,
        "seeded_at": report.seeded_at, "seconds": report.seconds, "embedded": report.embedded,
        "rate_per_s": report.rate_per_s, "pooled_vectors": pool,
    }, indent=2), encoding="utf-8")
    return report


def _is_current(recorded: dict[str, object], size: int) -> bool:
    return (recorded.get("corpus_version") == CORPUS_VERSION and recorded.get("stores_version") == STORES_VERSION
            and recorded.get("size") == size and recorded.get("pooled_vectors", 0) == pool_size_from_env())


class VectorCache(InFrontOf):
    """The `Embedder` port over the configured one, keeping every vector it made in a SQLite file by text (for
    seeding only: the stores' texts repeat across kinds and sizes, their vectors need computing once)."""

    def __init__(self, path: Path, inner: Embedder) -> None:
        super().__init__(inner)
        # Called from the write service's embedding thread (the embedding runs beside the record writes).
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (digest TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self.hits = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self._lock:
            return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        digests = [hashlib.sha256(text.encode()).hexdigest() for text in texts]
        found = dict(self._db.execute(f"SELECT digest, vector FROM vectors WHERE digest IN "
                                      f"({', '.join('?' for _ in digests)})", digests).fetchall()) if digests else {}
        missing = [i for i, digest in enumerate(digests) if digest not in found]
        fresh = self._inner.embed([texts[i] for i in missing]) if missing else None
        if fresh is not None:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                     [(digests[i], fresh[row].tobytes()) for row, i in enumerate(missing)])
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        for row, digest in enumerate(digests):
            if digest in found:
                vectors[row] = np.frombuffer(found[digest], dtype=np.float32)
        if fresh is not None:
            vectors[missing] = fresh
        self.hits += len(texts) - len(missing)
        return vectors

    def close(self) -> None:
        self._db.close()


def working_copy(source: Path, target: Path) -> Path:
    """A scratch copy of a cached store, so write benchmarks leave the cache untouched."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(MARKER))
    return target


def _disk_mb(path: Path) -> float:
    return round(sum(file.stat().st_size for file in path.rglob("*") if file.is_file()) / 1e6, 1)
