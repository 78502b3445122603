"""Every benchmark's tiny-size mode runs end to end from nothing (`python -m bench.smoke <name>`), so none can rot.

Each smoke seeds its own stores in a fresh temporary data folder from a tiny LoCoMo-shaped file, as a fresh clone
would, and must print its figures and, where the benchmark judges any, its targets. Timings are never asserted:
tiny stores on a shared machine say nothing about speed (bench/ measures that at full size).

The smokes run one after another on one xdist worker (each starts servers and loads the model in child
processes). On 2026-12-07 the eight took 418 s of wall time at a load average of 13-19 on 2 cores, but only 71 CPU
seconds (every child included): most of the wall time was waiting for a core, a server start alone taking 15 s.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench.recall.data import load
from bench.smoke import SMOKES, run_smoke, tiny_locomo

# What each smoke must print: its figures, and the targets of the benchmarks that judge any.
EXPECTED = {
    "run": [r"store-100: 100 created", r"Search over HTTP", r"\b100\s+none\s+8\s", r"batches of 16 memory texts",
            r"Targets \(#18\)", r"single-client writes \(store-100; see bench.writes\)\s+≥ 100/s\s+\d"],
    "writes": [r"raw embedder \(onnx-int8|raw embedder \(numpy", r"store-60\s+1\s+6\s", r"store-60\s+2\s+6\s",
               r"import: 40 records in batches of 20", r"Targets \(#18\)",
               r"single-client writes \(store-60\)\s+≥ 100/s", r"import \(batches of 20\)\s+≥ 300/s"],
    "soak": [r"thread-60: 60 created", r"POST 201 ×30", r"answers of 500 or more: 0; server log failures: 0",
             r"top-10 overlap with the exact scan and FTS5 over 10 searches: [\d.]+ \(at least 0.98\)",
             r"soak: passed"],
    "embedder": [r"16 memory texts", r"^numpy\s+[\d.]+\s+1\.0000", r"^onnx-int8\s+[\d.]+\s+0\.9",
                 r"onnx-int8: one text costs [\d.]+x less CPU than numpy"],
    "documents": [r"indexing: 3 files \(3 indexed\), [1-9]\d* chunks", r"^hybrid\s+[\d.]+\s+[\d.]+",
                  r"^bm25\s+[\d.]+"],
    "recall": [r"smoke \(as-is\) — .* settings: defaults", r"smoke \(read-only\) — .* settings: defaults",
               r"\| cat 1-4 \| 6 \| [\d.]+ \|", r"stored smoke-2: 24 turns"],
    "peers": [r"\| floor \| 48 \| [\d.]+ \| 6 \|", r"\| ours \| 48 \| [\d.]+ \| 6 \|", r"\| ours ÷ floor \|"],
    "coldstart": [r"init \(import of the handler module\).*target <= 1.3x", r"bare FastAPI \+ Mangum\s+[\d.]+\s+1.00",
                  r"functions/health\s+[\d.]+\s+[\d.]+\s+(OK|over)", r"on-demand init\s+primed \(snap-start\)"],
    "startup": [r"start-up of store-100 \(", r"first start \(graph built\): open [\d.]+s .* RSS [\d,]+ MB",
                r"second start \(graph saved at the clean close, loaded\): open [\d.]+s"],
}


def test_every_smoke_has_its_expectations() -> None:
    assert set(EXPECTED) == set(SMOKES)


def test_the_tiny_locomo_file_reads_as_locomo(tmp_path: Path) -> None:
    """The smokes' data file has LoCoMo's shape: every question keeps its evidence turn."""
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny_locomo()), encoding="utf-8")
    conversations = load(path)
    assert [len(c.turns) for c in conversations] == [24, 24]
    assert [len(c.questions) for c in conversations] == [3, 3]
    assert all(len(q.evidence) == 1 for c in conversations for q in c.questions)


@pytest.mark.slow
@pytest.mark.xdist_group("bench-smokes")
@pytest.mark.parametrize("name", list(SMOKES))
def test_smoke_completes_and_prints_its_figures(name: str) -> None:
    result = run_smoke(name)
    assert result.returncode == 0, f"python -m {SMOKES[name]} --smoke exited {result.returncode}:\n{result.output}"
    missing = [pattern for pattern in EXPECTED[name] if not re.search(pattern, result.output, re.MULTILINE)]
    assert not missing, f"{name} smoke did not print {missing}:\n{result.output}"
