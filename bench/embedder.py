"""`python -m bench.embedder`: MiniLM throughput per runtime (numpy, ONNX fp32, ONNX int8), in process.

For each runtime: texts/s one text per call (what POST /memory and a search pay), in batches of 8 and 32
(imports), and from concurrent callers through the CoalescingEmbedder the server uses (merged passes);
plus the CPU time per text (process time, which a busy machine inflates far less than wall time) and the
lowest cosine to the sentence-transformers reference vectors. Rounds interleave the runtimes, so load that
drifts during the run hits each alike; each figure is the median over rounds. Prints the load average and
the date; writes bench/.data/embedder-<date>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from zengram.adapters.minilm import Runtime, build_minilm_embedder
from zengram.adapters.minilm.model_files import find_model_dir, load_tokenizer
from zengram.adapters.system.coalescing_embedder import CoalescingEmbedder
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from bench.corpus import Corpus, word_count
from bench.stats import format_load, load_average

DATA_DIR = Path(__file__).resolve().parent / ".data"
REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "all-MiniLM-L6-v2.reference.json"
RUNTIMES: tuple[Runtime, ...] = ("numpy", "onnx", "onnx-int8")
BATCH_SIZES = (8, 32)


@dataclass
class Series:
    """One way of calling the embedder: texts/s (wall) and CPU ms per text, one value per round."""

    texts_per_s: list[float] = field(default_factory=list)
    cpu_ms_per_text: list[float] = field(default_factory=list)
    texts_per_pass: list[float] = field(default_factory=list)  # concurrent series only


@dataclass
class RuntimeFigures:
    runtime: str
    load_seconds: float
    min_reference_cosine: float
    series: dict[str, Series] = field(default_factory=dict)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=192, help="memory texts per series and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--callers", type=int, default=4, help="threads in the concurrent series")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES))
    args = parser.parse_args(argv)
    runtimes: list[Runtime] = [name.strip() for name in args.runtimes.split(",")]  # type: ignore[misc]

    started = _now()
    load_before = load_average()
    texts = [draft.content for draft in Corpus().drafts(args.texts)]
    tokenizer = load_tokenizer(find_model_dir())
    tokens = [len(tokenizer.encode(text).ids) for text in texts]
    print(f"{len(texts)} memory texts: mean {np.mean([word_count(t) for t in texts]):.1f} words, "
          f"{np.mean(tokens):.1f} tokens (max {max(tokens)}); load {format_load(load_before)}")

    settings = Settings()
    parallel_passes = settings.minilm_parallel_passes
    embedders: dict[str, Embedder] = {}
    one_thread: dict[str, Embedder] = {}  # the same runtime with every pass on one thread, for comparison
    figures: dict[str, RuntimeFigures] = {}
    for runtime in runtimes:
        embedder = build_minilm_embedder(runtime, cache_dir=DATA_DIR / "models",
                                         lone_pass_threads=settings.minilm_lone_pass_threads)
        began = time.perf_counter()
        embedder.load()
        embedders[runtime] = embedder
        load_seconds = round(time.perf_counter() - began, 2)
        one_thread[runtime] = build_minilm_embedder(runtime, cache_dir=DATA_DIR / "models")
        one_thread[runtime].embed(texts[:8])  # loaded and warm, outside the load time above
        figures[runtime] = RuntimeFigures(runtime, load_seconds, _min_reference_cosine(embedder))
        embedder.embed(texts[:32])  # warm-up: first-run allocations

    for round_number in range(1, args.rounds + 1):
        print(f"round {round_number}/{args.rounds} (load {format_load(load_average())})", flush=True)
        for runtime in runtimes:
            embedder = embedders[runtime]
            series = figures[runtime].series
            _measure(series.setdefault("single", Series()), texts, 1, embedder.embed)
            _measure(series.setdefault("single 1 thr", Series()), texts, 1, one_thread[runtime].embed)
            for size in BATCH_SIZES:
                _measure(series.setdefault(f"batch {size}", Series()), texts, size, embedder.embed)
            _measure_concurrent(series.setdefault(f"{args.callers} callers", Series()), texts,
                                CoalescingEmbedder(embedder, max_parallel_passes=parallel_passes), args.callers)

    load_after = load_average()
    print(render(figures, started, load_before, load_after, args, settings))
    DATA_DIR.mkdir(exist_ok=True)
    out = DATA_DIR / f"embedder-{started[:10]}.json"
    out.write_text(json.dumps({"started_at": started, "load_before": load_before, "load_after": load_after,
                               "texts": len(texts), "mean_tokens": float(np.mean(tokens)), "rounds": args.rounds,
                               "figures": {k: asdict(v) for k, v in figures.items()}}, indent=2), encoding="utf-8")
    print(f"JSON: {out}")
    return 0


def _measure(series: Series, texts: Sequence[str], size: int, embed: Callable[[list[str]], Any]) -> None:
    batches = [list(texts[i:i + size]) for i in range(0, len(texts), size)]
    wall, cpu = time.perf_counter(), time.process_time()
    for batch in batches:
        embed(batch)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    series.texts_per_s.append(len(texts) / wall)
    series.cpu_ms_per_text.append(cpu * 1000 / len(texts))


def _measure_concurrent(series: Series, texts: Sequence[str], embedder: CoalescingEmbedder, callers: int) -> None:
    """`callers` threads, each embedding one text per call, as concurrent POST /memory requests do."""
    wall, cpu = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(max_workers=callers) as pool:
        list(pool.map(lambda text: embedder.embed([text]), texts))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    series.texts_per_s.append(len(texts) / wall)
    series.cpu_ms_per_text.append(cpu * 1000 / len(texts))
    series.texts_per_pass.append(len(texts) / embedder.passes)


def _min_reference_cosine(embedder: Embedder) -> float:
    cases = json.loads(REFERENCE.read_text(encoding="utf-8"))["cases"]
    reference = np.asarray([case["embedding"] for case in cases], dtype=np.float64)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    vectors = np.stack([embedder.embed([case["text"]])[0] for case in cases])
    return round(float(np.min(np.sum(vectors * reference, axis=1))), 5)


def render(figures: dict[str, RuntimeFigures], started: str, load_before: tuple[float, float, float],
           load_after: tuple[float, float, float], args: argparse.Namespace, settings: Settings) -> str:
    names = list(next(iter(figures.values())).series)
    lines = [
        "",
        f"MiniLM embedder  {started} → {_now()}   load average (1/5/15 min) {format_load(load_before)} → "
        f"{format_load(load_after)}",
        f"texts/s (wall) [CPU ms per text], median of {args.rounds} rounds of {args.texts} texts. "
        f"'{args.callers} callers': one text per call from {args.callers} threads through CoalescingEmbedder "
        f"(minilm_parallel_passes={settings.minilm_parallel_passes}). 'single': one text per call, a lone pass on "
        f"up to minilm_lone_pass_threads={settings.minilm_lone_pass_threads} threads (ONNX); 'single 1 thr': on one.",
        f"{'runtime':<10} {'load s':>6} {'min cos':>8}  " + "  ".join(f"{name:>15}" for name in names)
        + "  texts/pass",
    ]
    for runtime in figures.values():
        cells = [f"{_median(s.texts_per_s):6.1f} [{_median(s.cpu_ms_per_text):5.1f}]" for s in runtime.series.values()]
        per_pass = _median(runtime.series[names[-1]].texts_per_pass)
        lines.append(f"{runtime.runtime:<10} {runtime.load_seconds:>6.2f} {runtime.min_reference_cosine:>8.5f}  "
                     + "  ".join(f"{cell:>15}" for cell in cells) + f"  {per_pass:>10.1f}")
    if "numpy" in figures:
        numpy_cpu = _median(figures["numpy"].series["single"].cpu_ms_per_text)
        for runtime in figures.values():
            if runtime.runtime != "numpy":
                ratio = numpy_cpu / _median(runtime.series["single"].cpu_ms_per_text)
                lines.append(f"{runtime.runtime}: one text costs {ratio:.1f}x less CPU than numpy")
    return "\n".join(lines)


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else 0.0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


if __name__ == "__main__":
    raise SystemExit(main())
