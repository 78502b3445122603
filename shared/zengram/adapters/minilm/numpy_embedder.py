"""all-MiniLM-L6-v2 with a plain numpy forward pass (`bert.py`): the fallback when ONNX Runtime is absent."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from zengram.adapters.minilm.bert import BertConfig, BertWeights, load_weights, mean_pooled
from zengram.adapters.minilm.model_files import (
    DIMENSION,
    MAX_SEQ_LENGTH,
    MODEL_ID,
    ModelFilesNotFound,
    batches_by_length,
    find_model_dir,
    l2_normalised,
    load_tokenizer,
    read_config,
    token_ids,
)


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

    runtime = "numpy"

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
        sequences = token_ids(model.tokenizer, texts)
        for batch in batches_by_length(sequences, self._max_batch_tokens):
            pooled = mean_pooled(model.weights, model.config, [sequences[i] for i in batch])
            vectors[batch] = l2_normalised(pooled)
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
    from safetensors.numpy import load_file  # imported here so that importing zengram stays light

    config = read_config(model_dir / "config.json")
    weights = load_weights(load_file(str(model_dir / "model.safetensors")), config)
    if weights.word_embeddings.shape[1] != DIMENSION:
        raise ModelFilesNotFound(f"{model_dir} holds a model of width {weights.word_embeddings.shape[1]}")
    return _LoadedModel(tokenizer=load_tokenizer(model_dir), config=config, weights=weights)
