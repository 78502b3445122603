"""`python -m bench.documents_quality` (`make bench-documents-quality`): whether the document knowledge base's scores
mean what the default `similarity_threshold` (0.7) says, measured on a labelled question set.

The corpus is the project's own docs/ and the code of shared/zengram/{documents,kernel}, copied into
bench/.data/quality/corpus under the same relative paths; bench/documents_queries.json holds the questions and the
file(s) that answer each. Indexing runs one job through the service in process with the real MiniLM embedder (a
second run re-indexes only changed files). Then every question is asked in every mode at the API's defaults
(`top_k` 5, threshold 0.7) and reported: hit@1, hit@5 (a result among the first 1 / 5 comes from an expected file),
how many answered nothing, and how many of the unrelated questions answered something (both should be 0).
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zengram.assembly.containers import build_documents_container
from zengram.documents.domain.files import kind_of
from zengram.documents.domain.models import IndexJobStatus, IndexOperation, IndexOptions
from zengram.documents.domain.query import DocumentQuery, QueryMode
from zengram.settings import Settings

from bench.documents import embedder_for

ROOT = Path(__file__).resolve().parents[1]
QUERIES = Path(__file__).resolve().parent / "documents_queries.json"
WORK = Path(__file__).resolve().parent / ".data" / "quality"


@dataclass
class ModeFigures:
    questions: int
    hit_at_1: int
    hit_at_5: int
    empty: int
    unrelated_answered: int
    mean_top_score: float


def build_corpus(target: Path, folders: list[str]) -> int:
    """Copies the indexable files of `folders` (relative to the repository) into `target`, same relative paths;
    files already there and unchanged are left alone, so the next index job re-embeds nothing."""
    wanted: set[Path] = set()
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and kind_of(str(path)) is not None:
                relative = path.relative_to(ROOT)
                wanted.add(relative)
                destination = target / relative
                content = path.read_bytes()
                if not destination.exists() or destination.read_bytes() != content:
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    destination.write_bytes(content)
    for path in list(target.rglob("*")):
        if path.is_file() and path.relative_to(target) not in wanted:
            path.unlink()
    return len(wanted)


def answered(results: list[Any], expected: list[str], within: int) -> bool:
    return any(result.source.endswith(tuple(f"/{path}" for path in expected)) for result in results[:within])


def measure(container: Any, spec: dict[str, Any], mode: QueryMode, threshold: float) -> ModeFigures:
    hit1 = hit5 = empty = 0
    tops: list[float] = []
    for item in spec["questions"]:
        results = container.queries.query(DocumentQuery(query=item["question"], mode=mode,
                                                        similarity_threshold=threshold)).results
        hit1 += answered(results, item["expected"], 1)
        hit5 += answered(results, item["expected"], 5)
        empty += not results
        tops.extend(results[0].score for _ in (1,) if results)
    unrelated = sum(bool(container.queries.query(DocumentQuery(query=question, mode=mode,
                                                               similarity_threshold=threshold)).results)
                    for question in spec.get("unrelated", []))
    return ModeFigures(questions=len(spec["questions"]), hit_at_1=hit1, hit_at_5=hit5, empty=empty,
                       unrelated_answered=unrelated, mean_top_score=round(sum(tops) / max(1, len(tops)), 3))


def index(container: Any, corpus: Path) -> float:
    started = time.perf_counter()
    queued = container.indexing.enqueue(str(corpus), IndexOperation.INDEX, IndexOptions())
    while not (job := container.indexing.job(queued.job.id)).status.finished:
        time.sleep(0.2)
    if job.status is not IndexJobStatus.DONE:
        raise RuntimeError(f"indexing ended {job.status.value}: {job.error}")
    return time.perf_counter() - started


def run(arguments: argparse.Namespace) -> dict[str, Any]:
    spec = json.loads(QUERIES.read_text())
    corpus = WORK / "corpus"
    files = build_corpus(corpus, spec["corpus"])
    settings = Settings(data_dir=WORK / "data", documents_allowed_roots=[str(corpus)], api_key="bench")
    container = build_documents_container(settings, embedder=embedder_for(arguments.embedder))
    try:
        seconds = index(container, corpus)
        chunks = container.queries.status().counts.chunks
        modes = {mode.value: asdict(measure(container, spec, mode, arguments.threshold)) for mode in QueryMode}
    finally:
        container.close()
    return {"date": datetime.now(UTC).isoformat(timespec="seconds"), "embedder": arguments.embedder,
            "threshold": arguments.threshold, "files": files, "chunks": chunks,
            "indexing_seconds": round(seconds, 1), "modes": modes}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.documents_quality", description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--threshold", type=float, default=0.7, help="similarity_threshold asked (default 0.7)")
    parser.add_argument("--fresh", action="store_true", help="drop the previous run's index first")
    arguments = parser.parse_args()
    if arguments.fresh:
        shutil.rmtree(WORK / "data", ignore_errors=True)
    results = run(arguments)
    out = WORK / f"quality-{results['date'][:10]}-{arguments.embedder}.json"
    out.write_text(json.dumps(results, indent=2))
    print(f"{results['date']}  embedder {results['embedder']}  threshold {results['threshold']}  "
          f"{results['files']} files, {results['chunks']} chunks (indexing {results['indexing_seconds']} s)")
    print(f"{'mode':8} {'hit@1':>6} {'hit@5':>6} {'empty':>6} {'unrelated answered':>19} {'mean top score':>15}")
    for mode, figures in results["modes"].items():
        total = figures["questions"]
        print(f"{mode:8} {figures['hit_at_1']:>3}/{total} {figures['hit_at_5']:>3}/{total} {figures['empty']:>6} "
              f"{figures['unrelated_answered']:>15}/{len(json.loads(QUERIES.read_text())['unrelated'])} "
              f"{figures['mean_top_score']:>15}")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
