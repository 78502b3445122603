"""The ports every context shares: time, embeddings, the search index over memories and chat memories, a JSON
language model. Each has the contract every adapter keeps (tests/contract/)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from zengram.kernel.search import IndexAttributes, IndexDocument, IndexHit, SearchFilters

if TYPE_CHECKING:  # numpy only for annotations here: a function that never embeds never imports it
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

JsonModel = TypeVar("JsonModel", bound=BaseModel)


@runtime_checkable
class Clock(Protocol):
    """Tells the time. Always timezone-aware UTC."""

    def now(self) -> datetime: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors.

    Contract:
    - `embed(texts)` returns a float32 array of shape `(len(texts), dimension)`, each row L2-normalised
      (so a dot product is the cosine). An empty `texts` gives shape `(0, dimension)`.
    - The same text gives the same vector (deterministic), whatever batch it is in.
    - `model_id` names model and dimension, e.g. `"minilm:all-MiniLM-L6-v2"`; an index built with one
      `model_id` is never queried with vectors of another.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class SearchIndex(Protocol):
    """Derived search over memories: a vector path and a keyword path, both filtered in the index.

    Contract:
    - `upsert` replaces documents by id; `set_attributes` replaces only the filter fields of existing
      documents and `set_texts` only their keyword text, keeping vector and filter fields; a document so
      changed ranks exactly as if upserted with the new text (both ignore unknown ids); `delete` of an
      unknown id is a no-op.
    - `vector_search` scores by cosine similarity in [-1, 1]; `keyword_search` by BM25 (> 0). Both return
      at most `k` hits, best first, ties broken by id, after applying every filter in `SearchFilters`.
    - A keyword query with no searchable words returns no hits (never an error).
    - Every document is in one `scope` (`IndexAttributes.scope`); a search returns documents of the scopes its
      filters name only (`SearchFilters.scopes`, by default Zengram memories), on both paths.
    - `model_id` is the embedder the index was built with (None while empty and never used);
      `bind_model` records it.
    - Everything here can be rebuilt from the record store (`clear` then `upsert`).
    - `close` releases its connections (or files); the index is not used after it.
    """

    @property
    def model_id(self) -> str | None: ...

    def bind_model(self, model_id: str, dimension: int) -> None: ...

    def upsert(self, documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
        """Adds or replaces `documents`; `texts`: also replaces those documents' keyword texts, as `set_texts`
        would, in the same write where the backend can (one transaction instead of two)."""

    def set_attributes(self, updates: dict[str, IndexAttributes]) -> None: ...

    def set_texts(self, texts: dict[str, str]) -> None: ...

    def delete(self, memory_ids: Sequence[str]) -> None: ...

    def vector_search(self, vector: npt.NDArray[np.float32], filters: SearchFilters, k: int) -> list[IndexHit]: ...

    def keyword_search(self, text: str, filters: SearchFilters, k: int) -> list[IndexHit]: ...

    def count(self) -> int: ...

    def clear(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class LanguageModel(Protocol):
    """A chat model that answers in JSON (an OpenAI-compatible chat-completions endpoint, or a test script).

    Contract:
    - `complete_json(system, user, schema)` returns the answer validated as `schema`. An answer that is not
      valid JSON for `schema` is asked for once more; a second bad answer raises `LLMInvalidResponse`.
    - No provider configured, or the provider unreachable / timing out, raises `LLMUnavailable`.
    - `provider` and `model` name what answered, for the `llm` field of responses.
    """

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    def complete_json(self, system: str, user: str, schema: type[JsonModel]) -> JsonModel: ...


@runtime_checkable
class RateLimiter(Protocol):
    """Counts requests per (key, bucket) in fixed windows, kept in the record store's backend so every
    process (every Lambda instance) shares the counts.

    Contract:
    - `hit(key, bucket, limit, window_seconds)` counts one request in the current window of `window_seconds`
      (windows start at whole multiples of it since the epoch, by the limiter's clock) and returns None when
      it is among the first `limit` of that window; otherwise the whole seconds (at least 1) until the window
      ends. A bucket is always used with the same `window_seconds`.
    - Atomic: under any number of concurrent callers exactly `limit` hits per window are allowed.
    - Keys and buckets are opaque text; distinct (key, bucket) pairs never share a count.
    - `refund(key, bucket, window_seconds)` takes one hit back from the current window (for a request that was
      counted and then failed); it never takes the count below 0 and does nothing once the window is over.
      Atomic like `hit`.
    """

    def hit(self, key: str, bucket: str, limit: int, window_seconds: int) -> int | None: ...

    def refund(self, key: str, bucket: str, window_seconds: int) -> None: ...
