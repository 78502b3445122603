"""The ports: what the services need from the outside world, with the contract every adapter keeps.

Each adapter of a port runs the same contract suite in `tests/contract/`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from zengram.domain.clients import ClientFingerprint
from zengram.domain.models import ImportOutcome, Memory, MemoryChanges, RecordQuery, WriteOutcome
from zengram.domain.search import IndexAttributes, IndexDocument, IndexHit, SearchFilters

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
class RecordStore(Protocol):
    """The source of truth for memories.

    Contract:
    - `create_or_corroborate` is atomic. Among *active* memories with the same
      `(client_id, type, content_hash)`: none → the memory is inserted (kind CREATED); one from the same
      `source_agent` (or one already observed by it) → nothing changes (DEDUPLICATED); one from another
      agent → that agent is appended to `observed_by` (at most `max_observers` names),
      `observation_count` grows by one and `last_observed_at` is set (CORROBORATED).
      On CREATED, a fact with a `key` (or a status with a `subject`) supersedes the active memory of the
      same type and key/subject in the same `client_id` in the same transaction: the old one gets
      `active=False`, `superseded_by`, `superseded_at=valid_to=now`; the new one `supersedes`.
      Under any number of concurrent callers: one memory per hash, at most one active per key/subject.
    - Every write bumps `revision` and marks the memories it touched as awaiting indexing
      (`pending_index`) in the same transaction; `mark_indexed` clears the mark once the search index
      holds that revision. Corroboration and access counting touch no indexed field and mark nothing.
    - `record_access` adds exactly one to `access_count` per id occurrence and sets `last_accessed_at`,
      without losing increments under concurrent callers.
    - `query` returns newest first (`created_at` descending, then id), or oldest first (ascending, then id)
      with `oldest_first`; deleted memories only with `include_deleted`, inactive ones only with
      `include_inactive`.
    - `import_memory` writes a memory exactly as given (its id, every field, `revision` included) and marks
      it awaiting indexing, atomically, or changes nothing: an existing id → DUPLICATE_ID; for an *active*
      memory, another active memory with the same `(client_id, type, content_hash)` → DUPLICATE_CONTENT, or
      with the same fact key / status subject in the same `client_id` → LABEL_HELD (nothing is superseded);
      `existing_id` names the memory in the way. An inactive memory (superseded or deleted) never clashes
      with anything but its id.
    - Reads never return a half-written memory.
    """

    def create_or_corroborate(self, memory: Memory, *, max_observers: int) -> WriteOutcome: ...

    def import_memory(self, memory: Memory) -> ImportOutcome: ...

    def get(self, memory_id: str) -> Memory | None: ...

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, Memory]: ...

    def find_active_duplicate(self, client_id: str, type_: str, content_hash: str) -> Memory | None: ...

    def update(self, memory_id: str, changes: MemoryChanges, at: datetime) -> Memory:
        """Applies `changes`; raises NotFound, or Conflict when new content duplicates an active memory."""
        ...

    def soft_delete(self, memory_id: str, by: str, reason: str | None, at: datetime) -> Memory:
        """Sets active=False and deleted_*; idempotent on an already deleted memory. Raises NotFound."""
        ...

    def restore(self, memory_id: str, at: datetime) -> list[Memory]:
        """Makes a superseded memory active again, atomically superseding whichever memory now holds its
        key/subject. Returns every memory changed (the restored one first). Raises NotFound, or Conflict
        for a deleted memory or one whose content is active elsewhere."""
        ...

    def record_access(self, memory_ids: Sequence[str], at: datetime) -> None: ...

    def query(self, query: RecordQuery) -> list[Memory]: ...

    def iter_all(self, *, include_deleted: bool = False, batch_size: int = 500) -> Iterator[Memory]: ...

    def pending_index(self, limit: int) -> list[Memory]:
        """Memories whose last change has not reached the search index yet (deleted ones included)."""
        ...

    def mark_indexed(self, revisions: dict[str, int]) -> None:
        """Clears the pending mark of each memory still at `revision == revisions[id]`, so a change
        that raced the indexing stays pending."""
        ...

    def count(self) -> int: ...


@runtime_checkable
class SearchIndex(Protocol):
    """Derived search over memories: a vector path and a keyword path, both filtered in the index.

    Contract:
    - `upsert` replaces documents by id; `set_attributes` replaces only the filter fields of existing
      documents (unknown ids are ignored); `delete` of an unknown id is a no-op.
    - `vector_search` scores by cosine similarity in [-1, 1]; `keyword_search` by BM25 (> 0). Both return
      at most `k` hits, best first, ties broken by id, after applying every filter in `SearchFilters`.
    - A keyword query with no searchable words returns no hits (never an error).
    - `model_id` is the embedder the index was built with (None while empty and never used);
      `bind_model` records it.
    - Everything here can be rebuilt from the record store (`clear` then `upsert`).
    """

    @property
    def model_id(self) -> str | None: ...

    def bind_model(self, model_id: str, dimension: int) -> None: ...

    def upsert(self, documents: Sequence[IndexDocument]) -> None: ...

    def set_attributes(self, updates: dict[str, IndexAttributes]) -> None: ...

    def delete(self, memory_ids: Sequence[str]) -> None: ...

    def vector_search(self, vector: npt.NDArray[np.float32], filters: SearchFilters, k: int) -> list[IndexHit]: ...

    def keyword_search(self, text: str, filters: SearchFilters, k: int) -> list[IndexHit]: ...

    def count(self) -> int: ...

    def clear(self) -> None: ...


@runtime_checkable
class LanguageModel(Protocol):
    """A chat model that answers in JSON (an OpenAI-compatible chat-completions endpoint, or a test script).

    Contract:
    - `complete_json(system, user, schema)` returns the answer validated as `schema`. An answer that is not
      valid JSON for `schema` is asked for once more; a second bad answer raises `LLMInvalidResponse` (502).
    - No provider configured, or the provider unreachable / timing out, raises `LLMUnavailable` (503).
    - `provider` and `model` name what answered, for the `llm` field of responses.
    """

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    def complete_json(self, system: str, user: str, schema: type[JsonModel]) -> JsonModel: ...


@runtime_checkable
class ClientStore(Protocol):
    """Client fingerprints, kept in the record store's backend (a table in SQLite, items in DynamoDB).

    Contract:
    - `put` creates or replaces the fingerprint of `client_id` and returns what is stored (revision bumped
      on replace, `created_at` kept); `get` of an unknown id is None; `delete` returns whether one existed.
    - `list_all` returns every fingerprint ordered by `client_id`.
    """

    def put(self, fingerprint: ClientFingerprint) -> ClientFingerprint: ...

    def get(self, client_id: str) -> ClientFingerprint | None: ...

    def delete(self, client_id: str) -> bool: ...

    def list_all(self) -> list[ClientFingerprint]: ...
