"""Seeded data folders: built once with batch embedding (`store_many`), cached under bench/.data/."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from zengram.bootstrap import Container, build_container
from zengram.domain.models import WriteKind
from zengram.settings import Settings

from bench.corpus import CORPUS_VERSION, Corpus
from bench.stats import format_duration

API_KEY = "bench-key"
SEED_BATCH = 256
MARKER = "complete.json"
PROGRESS_EVERY_SECONDS = 15.0
# Built MiniLM graphs, shared by every store (not copied with them, not counted in their size on disk).
MODEL_CACHE = Path(__file__).resolve().parent / ".data" / "models"


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


def settings_for(path: Path) -> Settings:
    return Settings(data_dir=path, api_key=API_KEY, embedder="minilm", rate_limit_enabled=False,
                    minilm_cache_dir=MODEL_CACHE)


def open_container(path: Path) -> Container:
    return build_container(settings_for(path))


def store_path(data_dir: Path, size: int) -> Path:
    return data_dir / f"store-{size}"


def ensure_store(data_dir: Path, size: int, corpus: Corpus, log: Callable[[str], None] = print) -> SeedReport:
    """The folder holding the first `size` corpus memories: reused when complete, else (re)seeded.

    An interrupted seeding resumes: the store's record count says where to pick up (the partly
    stored last batch is deduplicated by the service itself, and its index entries are repaired).
    """
    path = store_path(data_dir, size)
    marker = path / MARKER
    if marker.exists():
        recorded = json.loads(marker.read_text(encoding="utf-8"))
        if recorded.get("corpus_version") == CORPUS_VERSION and recorded.get("size") == size:
            log(f"  store-{size}: reusing cached {path} (seeded {recorded['seeded_at']})")
            return SeedReport(size=size, path=str(path), reused=True, seeded_at=recorded["seeded_at"],
                              seconds=recorded["seconds"], embedded=recorded["embedded"],
                              rate_per_s=recorded["rate_per_s"], disk_mb=_disk_mb(path))
        log(f"  store-{size}: cached folder is from another corpus version; re-seeding")
        shutil.rmtree(path)

    drafts = corpus.drafts(size)
    container = open_container(path)
    try:
        already = container.records.count()
        start = min(already // SEED_BATCH * SEED_BATCH, size)
        if already:
            log(f"  store-{size}: resuming an interrupted seeding at {start:,} ({already:,} records present)")
        log(f"  store-{size}: seeding {size - start:,} memories in batches of {SEED_BATCH} …")
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
                    f"  ETA {format_duration(eta)}")
                last_report = now
        seconds = time.perf_counter() - began
        count = container.records.count()
    finally:
        container.close()
    if count != size:
        raise RuntimeError(f"store-{size} holds {count} records after seeding, expected {size}")
    report = SeedReport(size=size, path=str(path), reused=False,
                        seeded_at=datetime.now(UTC).isoformat(timespec="seconds"), seconds=round(seconds, 2),
                        embedded=size - start, rate_per_s=round((size - start) / seconds, 1) if seconds else 0.0,
                        disk_mb=_disk_mb(path))
    log(f"  store-{size}: {created:,} created in {format_duration(seconds)} ({report.rate_per_s} memories/s)")
    marker.write_text(json.dumps({
        "size": size, "corpus_version": CORPUS_VERSION, "seeded_at": report.seeded_at, "seconds": report.seconds,
        "embedded": report.embedded, "rate_per_s": report.rate_per_s,
    }, indent=2), encoding="utf-8")
    return report


def working_copy(source: Path, target: Path) -> Path:
    """A scratch copy of a cached store, so write benchmarks leave the cache untouched."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(MARKER))
    return target


def _disk_mb(path: Path) -> float:
    return round(sum(file.stat().st_size for file in path.rglob("*") if file.is_file()) / 1e6, 1)
