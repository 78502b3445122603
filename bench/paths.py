"""Where the benchmarks keep what they build: `bench/.data/` (git-ignored), or `$ZENGRAM_BENCH_DATA`.

`python -m bench.smoke` points `ZENGRAM_BENCH_DATA` at a temporary folder, so a smoke seeds its tiny stores from
nothing, as a fresh clone does, and leaves the cached full-size stores alone. The built MiniLM graphs are a build
cache of the model, not benchmark data: every run shares them under `bench/.data/models/` (or
`$ZENGRAM_BENCH_MODELS`), so a smoke does not spend ~20 s building the int8 graph again.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV, MODELS_ENV = "ZENGRAM_BENCH_DATA", "ZENGRAM_BENCH_MODELS"
BENCH = Path(__file__).resolve().parent
DATA = Path(os.environ.get(DATA_ENV) or BENCH / ".data")
MODEL_CACHE = Path(os.environ.get(MODELS_ENV) or BENCH / ".data" / "models")
