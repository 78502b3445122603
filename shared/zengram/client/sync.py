"""`BrainClient`: the synchronous SDK. Method names and arguments follow Zengram's Python `BrainClient`."""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, Unpack

import httpx

from zengram.client import calls
from zengram.client.base import DEFAULT_TIMEOUT, EXPORT_PAGE, SLOW_TIMEOUT, ClientConfig
from zengram.client.bodies import (
    BriefingBody,
    EntityMemoriesBody,
    ExportBody,
    JobBody,
    QueryBody,
    SearchBody,
    StoreBody,
)
from zengram.client.calls import (
    BriefingOptions,
    Call,
    ClientOptions,
    EntityAction,
    ExportOptions,
    JsonObject,
    QueryOptions,
    SearchOptions,
    StoreOptions,
    Timestamp,
    UpdateOptions,
)
from zengram.client.retry import RetryPolicy
from zengram.documents.domain.query import DocumentQuery, QueryResponse
from zengram.memory.api.schemas.clients import ClientBody, ClientDeletedBody, ClientListBody
from zengram.memory.api.schemas.consolidation import ConsolidationStarted, ConsolidationStatusBody
from zengram.memory.api.schemas.entities import EntityDetailBody, EntityListBody, EntityStatsBody, ReclassifyBody
from zengram.memory.api.schemas.export import ImportBody
from zengram.memory.api.schemas.health import HealthBody
from zengram.memory.api.schemas.keys import ApiKeyListBody, CreatedKeyBody, RevokedKeyBody
from zengram.memory.api.schemas.memory import DeleteBody, RestoreBody, UpdateBody
from zengram.memory.api.schemas.research import ResearchBody
from zengram.memory.api.schemas.stats import StatsBody
from zengram.memory.domain.models import Memory
from zengram.memory.domain.reflect import ReflectResult

T = TypeVar("T")


class BrainClient:
    """Synchronous client for the Zengram API.

        with BrainClient(url="http://127.0.0.1:8084", api_key=key, source_agent="my-agent") as brain:
            brain.store(type="fact", content="The sky is blue", key="sky-color")
            hits = brain.search("sky color").results

    `url`/`api_key` default to `BRAIN_API_URL`/`BRAIN_API_KEY`. 429s wait for `Retry-After` and connection
    failures back off, up to `max_retries` times; then a `BrainError` subclass carries the server's text.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        source_agent: str | None = None,
        *,
        slow_timeout: float = SLOW_TIMEOUT,
        retry: RetryPolicy | None = None,
        request_id: str | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._config = ClientConfig.build(url, api_key, timeout, max_retries, source_agent, slow_timeout, retry,
                                          request_id)
        self._http = httpx.Client(base_url=self._config.url, transport=transport)
        self._owns_http = True
        self._sleep = sleep
        self.last_request_id: str | None = None

    @property
    def url(self) -> str:
        return self._config.url

    def with_request_id(self, request_id: str) -> BrainClient:
        """A view of this client that sends `x-request-id: request_id` (same connection pool)."""
        view = copy.copy(self)
        view._config = dataclasses.replace(self._config, request_id=request_id)
        view._owns_http = False
        return view

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> BrainClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            try:
                response = self._http.request(call.method, call.path, params=call.params, json=call.body,
                                              headers=self._config.headers(),
                                              timeout=self._config.timeout_for(call))
            except httpx.TransportError as error:
                delay = self._config.retry.delay_after_error(error, call.method, attempt)
                if delay is None:
                    raise self._config.connection_error(call, error) from error
            else:
                self.last_request_id = response.headers.get("x-request-id")
                delay = self._config.retry.delay_after_response(response, attempt)
                if delay is None:
                    return calls.read_response(call, response)
            self._sleep(delay)
            attempt += 1

    # -- memory -------------------------------------------------------------------------------------------

    def health(self) -> HealthBody:
        return self._send(calls.health())

    def store(self, type: str, content: str, source_agent: str | None = None,
              **options: Unpack[StoreOptions]) -> StoreBody:
        return self._send(calls.store(type, content, self._config.agent(source_agent), options))

    def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchBody:
        return self._send(calls.search(query, options))

    def query(self, type: str, **options: Unpack[QueryOptions]) -> QueryBody:
        return self._send(calls.query(type, options))

    def get(self, memory_id: str) -> Memory:
        return self._send(calls.get(memory_id))

    def update(self, memory_id: str, **fields: Unpack[UpdateOptions]) -> UpdateBody:
        return self._send(calls.update(memory_id, fields))

    def delete(self, memory_id: str, *, reason: str | None = None, source_agent: str | None = None) -> DeleteBody:
        return self._send(calls.delete(memory_id, reason, source_agent or self._config.source_agent))

    def restore(self, memory_id: str) -> RestoreBody:
        return self._send(calls.restore(memory_id))

    # -- knowledge views ----------------------------------------------------------------------------------

    def briefing(self, since: Timestamp, **options: Unpack[BriefingOptions]) -> BriefingBody:
        return self._send(calls.briefing(since, options))

    def stats(self) -> StatsBody:
        return self._send(calls.stats())

    def export(self, **options: Unpack[ExportOptions]) -> ExportBody:
        return self._send(calls.export(options))

    def export_all(self, **options: Unpack[ExportOptions]) -> Iterator[ExportBody]:
        """Every export page in turn (oldest first, so paging is stable while memories arrive), from `offset` on,
        until `has_more` is false."""
        page_options: ExportOptions = {"limit": EXPORT_PAGE, "offset": 0, "order": "oldest", **options}
        while True:
            page = self.export(**page_options)
            yield page
            if not page.has_more or not page.memories:
                return
            page_options["offset"] = page.offset + page.count

    def import_(self, data: Sequence[Mapping[str, Any]], *, operator_approved: bool = False) -> ImportBody:
        """POST /export/import (at most 500 records). The server refuses (403) without `operator_approved`."""
        return self._send(calls.import_(data, operator_approved))

    def import_memories(self, data: Sequence[Mapping[str, Any]], *, operator_approved: bool = False) -> ImportBody:
        return self.import_(data, operator_approved=operator_approved)

    # -- entities -----------------------------------------------------------------------------------------

    def entities(self, action: EntityAction = "list", *, name: str | None = None, type: str | None = None,
                 limit: int | None = None, offset: int | None = None, client_id: str | None = None) -> JsonObject:
        return self._send(calls.entities(action, name, type, limit, offset, client_id))

    def list_entities(self, *, type: str | None = None, limit: int | None = None,
                      offset: int | None = None) -> EntityListBody:
        return self._send(calls.list_entities(type, limit, offset))

    def entity(self, name: str) -> EntityDetailBody:
        return self._send(calls.entity(name))

    def entity_memories(self, name: str, *, limit: int | None = None,
                        client_id: str | None = None) -> EntityMemoriesBody:
        return self._send(calls.entity_memories(name, limit, client_id))

    def entity_stats(self) -> EntityStatsBody:
        return self._send(calls.entity_stats())

    def reclassify(self, reclassifications: Sequence[Mapping[str, str]], *, dry_run: bool = True) -> ReclassifyBody:
        return self._send(calls.reclassify(reclassifications, dry_run))

    # -- LLM features -------------------------------------------------------------------------------------

    def consolidate(self, *, sync: bool = False) -> ConsolidationStarted | JobBody:
        return self._send(calls.consolidate(sync))

    def consolidation_status(self) -> ConsolidationStatusBody:
        return self._send(calls.consolidation_status())

    def consolidation_job(self, job_id: str) -> JobBody:
        return self._send(calls.consolidation_job(job_id))

    def reflect(self, topic: str, *, client_id: str | None = None, limit: int | None = None) -> ReflectResult:
        return self._send(calls.reflect(topic, client_id, limit))

    def docs_query(self, query: str, **fields: Any) -> QueryResponse:
        """Searches the document knowledge base (`POST /kb/query`); `fields` as its request: mode, top_k,
        similarity_threshold, alpha, traversal_depth, include_relationships, source_types, languages, file_paths."""
        return self._send(calls.docs_query(DocumentQuery(query=query, **fields)))

    def research(self, topic: str, *, client_id: str | None = None,
                 max_iterations: int | None = None) -> ResearchBody:
        return self._send(calls.research(topic, client_id, max_iterations))

    # -- client fingerprints ------------------------------------------------------------------------------

    def put_client(self, client_id: str, **fingerprint: Unpack[ClientOptions]) -> ClientBody:
        return self._send(calls.put_client(client_id, fingerprint))

    def get_client(self, client_id: str) -> ClientBody:
        return self._send(calls.get_client(client_id))

    def list_clients(self) -> ClientListBody:
        return self._send(calls.list_clients())

    def delete_client(self, client_id: str) -> ClientDeletedBody:
        return self._send(calls.delete_client(client_id))

    # -- scoped API keys (an admin key's calls) ----------------------------------------------------------

    def create_key(self, name: str, role: str, clients: Sequence[str] | str | None = None) -> CreatedKeyBody:
        """A key for `clients` (client_ids, or "all"); the answer's `key` is the only time it is shown."""
        return self._send(calls.create_key(name, role, clients))

    def list_keys(self) -> ApiKeyListBody:
        return self._send(calls.list_keys())

    def revoke_key(self, key_id: str) -> RevokedKeyBody:
        return self._send(calls.revoke_key(key_id))
