"""Embeddings from OpenAI, or any server that speaks its `/v1/embeddings` API, through the official SDK.

The `openai` package is an optional dependency (`pip install 'zengram[openai]'`), imported only when an
`OpenAIEmbedder` is built, so that importing zengram never needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from openai import OpenAI

__all__ = ["MAX_INPUTS_PER_REQUEST", "OpenAIEmbedder"]

MAX_INPUTS_PER_REQUEST = 256
# The API rejects an empty string; a single space embeds as (nearly) nothing, which is what "" means.
_EMPTY_TEXT_STAND_IN = " "


class OpenAIEmbedder:
    """The `Embedder` port on an OpenAI-compatible embeddings endpoint.

    `dimensions` is what the index stores; it is sent with each request (models such as
    text-embedding-3-* shorten their vectors to it) unless `send_dimensions` is False, for models and
    servers that do not accept the parameter. Either way a vector of another length is an error.
    The SDK's client is thread-safe, so one embedder can serve concurrent callers.
    """

    def __init__(
        self,
        base_url: str | None,
        api_key: str,
        model: str,
        dimensions: int,
        timeout: float = 30.0,
        *,
        send_dimensions: bool = True,
        max_retries: int = 2,
    ) -> None:
        if dimensions < 1:
            raise ValueError("dimensions must be positive")
        from openai import OpenAI

        self._client: OpenAI = OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
        )
        self._model = model
        self._dimensions = dimensions
        self._send_dimensions = send_dimensions

    @property
    def model_id(self) -> str:
        return f"openai:{self._model}:{self._dimensions}"

    @property
    def dimension(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = np.empty((len(texts), self._dimensions), dtype=np.float32)
        for start in range(0, len(texts), MAX_INPUTS_PER_REQUEST):
            batch = [text or _EMPTY_TEXT_STAND_IN for text in texts[start : start + MAX_INPUTS_PER_REQUEST]]
            vectors[start : start + len(batch)] = self._embed_batch(batch)
        return _l2_normalised(vectors)

    def _embed_batch(self, batch: list[str]) -> npt.NDArray[np.float32]:
        """One request; rows in the order of `batch` (the API may list them in any order)."""
        if self._send_dimensions:
            response = self._client.embeddings.create(
                model=self._model, input=batch, dimensions=self._dimensions, encoding_format="float"
            )
        else:
            response = self._client.embeddings.create(model=self._model, input=batch, encoding_format="float")
        items = sorted(response.data, key=lambda item: item.index)
        indexes = [item.index for item in items]
        if indexes != list(range(len(batch))):
            raise ValueError(
                f"{self.model_id}: sent {len(batch)} inputs, got embeddings for indexes {indexes}"
            )
        lengths = {len(item.embedding) for item in items}
        if lengths != {self._dimensions}:
            raise ValueError(
                f"{self.model_id}: the model returned vectors of length {sorted(lengths)}, not the "
                f"configured {self._dimensions}; set embedding_dimensions to the model's size "
                "(or to one it supports)"
            )
        return np.asarray([item.embedding for item in items], dtype=np.float32)


def _l2_normalised(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    # OpenAI's vectors come normalised, but other compatible servers' may not.
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    normalised: npt.NDArray[np.float32] = vectors / np.maximum(norms, np.float32(1e-12))
    return normalised
