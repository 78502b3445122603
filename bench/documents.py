"""`python -m bench.documents` (`make bench-documents`): the document knowledge base's indexing throughput and
query latency per mode, on a corpus of at least 1,000 real files: the sources of the project's own dependencies in
.venv (copied into bench/.data so the run indexes a fixed folder).

Indexing runs one job through the service in process (the embedded stores, the real MiniLM embedder unless
`--embedder hashing`), timed from enqueue to done: files/s and chunks/s. Queries call the service in process, each
mode over the same questions, timed with time.perf_counter. Results are printed and written to
bench/.data/documents-<date>.json with the date and the load average (the machine is shared: read them with it).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import sysconfig
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zengram.assembly.containers import build_documents_container
from zengram.documents.domain.files import kind_of
from zengram.documents.domain.models import IndexJobStatus, IndexOperation, IndexOptions
from zengram.documents.domain.query import DocumentQuery, QueryMode
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from bench.stats import Latency, format_load, load_average

DATA_DIR = Path(__file__).resolve().parent / ".data"
# Packages of our own install, in this order, until the corpus holds enough indexable files.
PACKAGES = ("starlette", "fastapi", "httpx", "httpcore", "anyio", "click", "typer", "rich", "pydantic",
            "pydantic_settings", "uvicorn", "h11", "idna", "certifi", "sniffio", "annotated_types", "typing_inspection",
            "pygments", "markdown_it", "mdurl", "opensearchpy", "mcp", "werkzeug", "jinja2", "boto3", "moto")
QUESTIONS = [
    "how are request headers parsed", "what calls build_middleware_stack", "retry a request on timeout",
    "validate a model field", "what calls render", "dependency injection of request parameters",
    "how does the router match a path", "what inherits from BaseModel", "stream a response body",
    "what calls get_route_handler", "parse a cookie header", "what imports Console",
    "how are websocket connections accepted", "what calls model_validate", "format a rich table",
    "command line option parsing", "what calls send", "encode json body", "close the connection pool",
    "what extends Exception",
]


@dataclass
class IndexingFigures:
    files: int
    documents: int
    chunks: int
    entities: int
    relationships: int
    seconds: float
    files_per_s: float
    chunks_per_s: float


def build_corpus(target: Path, minimum: int) -> int:
    """Copies dependency sources (and their docs) into `target`: exactly `minimum` indexable files, package by
    package in PACKAGES order."""
    if target.exists():
        shutil.rmtree(target)
    site = Path(sysconfig.get_paths()["purelib"])
    copied = 0
    for package in PACKAGES:
        folder = site / package
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and kind_of(str(path)) is not None:
                destination = target / package / path.relative_to(folder)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, destination)
                copied += 1
                if copied >= minimum:
                    return copied
    return copied


def embedder_for(name: str) -> Embedder:
    if name == "hashing":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.support import HashingEmbedder

        return HashingEmbedder(dimension=384)
    from zengram.adapters.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])
    return embedder


def run(arguments: argparse.Namespace) -> dict[str, Any]:
    work = DATA_DIR / "documents"
    corpus = work / "corpus"
    files = build_corpus(corpus, arguments.files)
    shutil.rmtree(work / "data", ignore_errors=True)
    settings = Settings(data_dir=work / "data", documents_allowed_roots=[str(corpus)], api_key="bench")
    container = build_documents_container(settings, embedder=embedder_for(arguments.embedder))
    load_before, begun_at = load_average(), datetime.now(UTC).isoformat(timespec="seconds")
    try:
        started = time.perf_counter()
        queued = container.indexing.enqueue(str(corpus), IndexOperation.INDEX, IndexOptions())
        last_report = started
        while True:
            job = container.indexing.job(queued.job.id)
            if job.status.finished:
                break
            if time.perf_counter() - last_report > 30:
                print(f"  … {job.progress.files_processed}/{job.progress.files_total} files, "
                      f"{job.progress.chunks_created} chunks", flush=True)
                last_report = time.perf_counter()
            time.sleep(0.2)
        seconds = time.perf_counter() - started
        if job.status is not IndexJobStatus.DONE:
            raise RuntimeError(f"indexing ended {job.status.value}: {job.error}")
        status = container.queries.status()
        indexing = IndexingFigures(
            files=files, documents=job.total_documents, chunks=job.total_chunks, entities=status.counts.entities,
            relationships=status.counts.relationships, seconds=round(seconds, 2),
            files_per_s=round(job.progress.files_processed / seconds, 2),
            chunks_per_s=round(job.total_chunks / seconds, 2))
        queries = {}
        for mode in QueryMode:
            timings = []
            hits = 0
            for _ in range(arguments.rounds):
                for question in QUESTIONS:
                    request = DocumentQuery(query=question, mode=mode, top_k=10, similarity_threshold=0.3)
                    begun = time.perf_counter()
                    hits += len(container.queries.query(request).results)
                    timings.append(time.perf_counter() - begun)
            queries[mode.value] = {"latency": asdict(Latency.of(timings)),
                                   "mean_hits": round(hits / len(timings), 2)}
    finally:
        container.close()
    return {"started": begun_at, "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": platform.platform(),
            "load_average_before": load_before, "load_average_after": load_average(),
            "embedder": arguments.embedder, "indexing": asdict(indexing), "queries": queries}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.documents", description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000, help="least files in the corpus (default 1000)")
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--rounds", type=int, default=3, help="times each question is asked per mode")
    arguments = parser.parse_args()
    results = run(arguments)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    out = DATA_DIR / f"documents-{results['date'][:10]}-{arguments.embedder}.json"
    out.write_text(json.dumps(results, indent=2))
    indexing = results["indexing"]
    print(f"\n{results['started']} → {results['date']}  load {format_load(results['load_average_before'])} → "
          f"{format_load(results['load_average_after'])}  embedder {results['embedder']}")
    print(f"indexing: {indexing['files']} files ({indexing['documents']} indexed), {indexing['chunks']} chunks, "
          f"{indexing['entities']} entities, {indexing['relationships']} relationships in {indexing['seconds']} s "
          f"= {indexing['files_per_s']} files/s, {indexing['chunks_per_s']} chunks/s")
    print(f"{'mode':8} {'p50 ms':>8} {'p95 ms':>8} {'mean hits':>10}")
    for mode, figures in results["queries"].items():
        latency = figures["latency"]
        print(f"{mode:8} {latency['p50_ms']:8.1f} {latency['p95_ms']:8.1f} {figures['mean_hits']:10.1f}")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
