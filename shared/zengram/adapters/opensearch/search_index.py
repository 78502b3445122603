"""The `SearchIndex` port on OpenSearch: k-NN (HNSW, cosine) and BM25 over one index behind an alias.

Writes and reads go through the alias (`zengram-memories`) to a versioned concrete index
(`zengram-memories-v2-384d`) created from `mappings/memories.v2.json`. Filters are applied inside the
index on both paths; fusion of the two rankings stays in the domain.
"""

from __future__ import annotations

import functools
import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Literal, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt

from zengram.adapters.opensearch.aliased_index import AliasedIndex
from zengram.adapters.opensearch.bulk import (
    BulkAction,
    BulkWriteError,
    OpenSearchIndexError,
    delete_action,
    index_action,
    text_update_action,
    update_action,
)
from zengram.adapters.opensearch.client import (
    ClientOptions,
    OpenSearchUnavailable,
    RetryPolicy,
    build_client,
    refused_request,
)
from zengram.adapters.opensearch.mapping import (
    SCOPE_FIELD,
    Binding,
    Engine,
    binding_from_mapping,
    concrete_index_name,
    index_body,
    lacks_scope,
    meta,
)
from zengram.adapters.opensearch.queries import bm25_query, knn_query, parse_hits
from zengram.kernel.search import IndexAttributes, IndexDocument, IndexHit, SearchFilters
from zengram.kernel.text import search_terms

logger = logging.getLogger(__name__)
Refresh = bool | Literal["true", "false", "wait_for"]
_LOOKUP_BATCH = 500
_FORBIDDEN_NAME_CHARS = ' ,*?"<>|/\\#:'
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _refusals_as_index_rejected(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """A public operation: an answer refusing the request itself leaves as the port's `IndexRejected` (the cluster
    is up); every other failure as it is (the caller's circuit breaker counts those as the index failing)."""

    @functools.wraps(method)
    def operation(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except Exception as error:
            rejected = refused_request(error)
            if rejected is None:
                raise
            raise rejected from error

    return operation


class OpenSearchIndex(AliasedIndex):
    """OpenSearch (self-hosted, Amazon OpenSearch Service, or Serverless with `aws_service="aoss"`).

    `refresh` is sent with every bulk write: False (the default) lets writes appear within the index's
    refresh interval; "wait_for" or True give read-after-write, as the contract tests need.
    A Serverless vector collection differs: it assigns document ids itself, has no refresh parameter and
    no lucene engine, so there documents carry their memory id in a field that writes look up, and the
    engine defaults to faiss (`server_generated_ids` and `engine` override the defaults).
    `options` tell how to reach the cluster (unless a `client` is given), `retry` how to retry transient failures.
    """

    def __init__(
        self,
        options: ClientOptions,
        *,
        alias: str = "zengram-memories",
        refresh: Refresh = False,
        retry: RetryPolicy | None = None,
        engine: Engine | None = None,
        server_generated_ids: bool | None = None,
        client: Any | None = None,
    ) -> None:
        _check_name(alias)
        serverless = options.aws_service == "aoss"
        refresh_param = _refresh_param(refresh)
        if serverless and refresh_param:
            logger.warning("OpenSearch Serverless has no refresh parameter; writes become searchable on its own "
                           "schedule (about a minute for vector collections)")
        super().__init__(
            alias=alias,
            client=client if client is not None else build_client(options),
            owns_client=client is None,
            retry=retry if retry is not None else RetryPolicy(),
            refresh=None if serverless else refresh_param,
            require_alias=not serverless,  # Serverless has no require_alias
        )
        self._engine: Engine = engine or ("faiss" if serverless else "lucene")
        self._server_ids = serverless if server_generated_ids is None else server_generated_ids
        self._index_ready = False

    @property
    def alias(self) -> str:
        return self._alias

    # -- the index and its model ---------------------------------------------------------------------

    @property
    @_refusals_as_index_rejected
    def model_id(self) -> str | None:
        binding = self._read_binding()
        return binding.model_id if binding else None

    @_refusals_as_index_rejected
    def bind_model(self, model_id: str, dimension: int) -> None:
        """Creates the index for this model's dimension when there is none, else records the model."""
        if dimension < 1:
            raise ValueError("dimension must be positive")
        wanted = Binding(model_id, dimension)
        current = self._read_binding()
        if current is None:
            self._create_index(wanted)
        elif current.dimension != dimension:
            raise OpenSearchIndexError(
                f"the index behind '{self._alias}' holds {current.dimension}-dimensional vectors, not {dimension}; "
                f"clear it (`zengram reindex`) before binding '{model_id}'"
            )
        elif current.model_id != model_id:
            self._request("put mapping", lambda: self._client.indices.put_mapping(
                index=self._alias, body={"_meta": meta(wanted)}))
        self._binding = wanted
        self._index_ready = True

    def ensure_index(self) -> None:
        """Creates the concrete index and its alias for the bound model when missing; else a no-op."""
        if self._request("alias check", lambda: self._client.indices.exists_alias(name=self._alias)):
            self._index_ready = True
            return
        if self._binding is None:
            raise OpenSearchIndexError(
                f"no index behind the alias '{self._alias}' and no embedding model bound: call bind_model() first"
            )
        self._create_index(self._binding)

    @_refusals_as_index_rejected
    def clear(self) -> None:
        """Drops the concrete index and with it the alias, so any model (and dimension) can be bound next."""
        self._drop_concrete_indices()
        self._index_ready = False

    @_refusals_as_index_rejected
    def count(self) -> int:
        return self._count()

    # -- writes --------------------------------------------------------------------------------------

    @_refusals_as_index_rejected
    def upsert(self, documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
        if documents:
            if self._server_ids:
                self._upsert_with_server_ids(documents)
            else:
                self._write([index_action(document, server_ids=False) for document in documents])
        if texts:
            self.set_texts(texts)

    @_refusals_as_index_rejected
    def set_attributes(self, updates: dict[str, IndexAttributes]) -> None:
        if not updates:
            return
        targets = self._doc_ids(list(updates))
        self._write([update_action(memory_id, attributes, doc_id)
                     for memory_id, attributes in updates.items() for doc_id in targets.get(memory_id, [])])

    @_refusals_as_index_rejected
    def set_texts(self, texts: dict[str, str]) -> None:
        if not texts:
            return
        targets = self._doc_ids(list(texts))
        self._write([text_update_action(memory_id, text, doc_id)
                     for memory_id, text in texts.items() for doc_id in targets.get(memory_id, [])])

    @_refusals_as_index_rejected
    def delete(self, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        targets = self._doc_ids(list(dict.fromkeys(memory_ids)))
        self._write([delete_action(memory_id, doc_id) for memory_id, doc_ids in targets.items() for doc_id in doc_ids])

    # -- searches ------------------------------------------------------------------------------------

    @_refusals_as_index_rejected
    def vector_search(self, vector: npt.NDArray[np.float32], filters: SearchFilters, k: int) -> list[IndexHit]:
        if k <= 0:
            return []
        return parse_hits(self._search("k-NN search", knn_query(vector, filters, k)), k, cosine=True)

    @_refusals_as_index_rejected
    def keyword_search(self, text: str, filters: SearchFilters, k: int) -> list[IndexHit]:
        if k <= 0 or not search_terms(text):
            return []
        return parse_hits(self._search("keyword search", bm25_query(text, filters, k)), k, cosine=False)

    # -- helpers -------------------------------------------------------------------------------------

    def _recreate_missing_index(self) -> bool:
        self.ensure_index()
        return True

    def _read_binding(self) -> Binding | None:
        mappings = self._mappings()
        if mappings is None:
            return None
        if lacks_scope(mappings):  # a v2 index: documents of the chat layer need the field (dynamic: strict)
            self._request("put mapping", lambda: self._client.indices.put_mapping(
                index=self._alias, body={"properties": SCOPE_FIELD}))
        self._binding = binding_from_mapping(mappings)
        return self._binding

    def _create_index(self, binding: Binding) -> None:
        self._create_concrete_index(concrete_index_name(self._alias, binding.dimension),
                                    index_body(self._alias, binding, self._engine))
        self._index_ready = True

    def _doc_ids(self, memory_ids: list[str]) -> dict[str, list[str]]:
        """The `_id`s holding each memory: the memory id itself, or looked up when the server assigns ids."""
        if not self._server_ids:
            return {memory_id: [memory_id] for memory_id in memory_ids}
        found: dict[str, list[str]] = defaultdict(list)
        for start in range(0, len(memory_ids), _LOOKUP_BATCH):
            batch = memory_ids[start : start + _LOOKUP_BATCH]
            # A memory briefly has two copies after a re-upsert, hence the headroom.
            body = {"size": 4 * len(batch), "_source": ["id"], "query": {"terms": {"id": batch}}}
            for hit in self._search("id lookup", body).get("hits", {}).get("hits", []):
                found[str(hit["_source"]["id"])].append(str(hit["_id"]))
        return dict(found)

    def _upsert_with_server_ids(self, documents: Sequence[IndexDocument]) -> None:
        """Adds the new copies first, then removes the old ones: a failure never leaves a memory absent."""
        previous = self._doc_ids([document.id for document in documents])
        self._write([index_action(document, server_ids=True) for document in documents])
        self._write([delete_action(memory_id, doc_id) for memory_id, doc_ids in previous.items() for doc_id in doc_ids])

    def _write(self, actions: Sequence[BulkAction]) -> None:
        if not actions:
            return
        if not self._require_alias and not self._index_ready:
            self.ensure_index()  # without require_alias, a write to a missing alias would create a bare index
        refused, overloaded = self._write_all(actions)
        if refused:
            raise BulkWriteError({**refused, **overloaded})
        if overloaded:  # no document was refused: the cluster kept pushing back on all of them
            shown = ", ".join(list(overloaded)[:5])
            raise OpenSearchUnavailable(f"OpenSearch kept rejecting {len(overloaded)} document(s) as overloaded "
                                        f"({shown}): {next(iter(overloaded.values()))}")



def _check_name(alias: str) -> None:
    if not alias or alias != alias.lower() or any(char in alias for char in _FORBIDDEN_NAME_CHARS):
        raise ValueError(f"invalid alias {alias!r}: use lower case, without blanks or any of {_FORBIDDEN_NAME_CHARS}")


def _refresh_param(refresh: Refresh) -> str | None:
    if refresh is True or refresh == "true":
        return "true"
    if refresh is False or refresh == "false":
        return None
    if refresh == "wait_for":
        return "wait_for"
    raise ValueError(f"refresh must be True, False, 'true', 'false' or 'wait_for', not {refresh!r}")
