"""`AsyncBrainClient`: the asyncio SDK, method for method the same as `BrainClient` (see sync.py)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
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


class AsyncBrainClient:
    """Asynchronous client for the Zengram API.

        async with AsyncBrainClient(url="http://127.0.0.1:8084", api_key=key, source_agent="my-agent") as brain:
            await brain.store(type="fact", content="The sky is blue", key="sky-color")
            hits = (await brain.search("sky color")).results

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
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._config = ClientConfig.build(url, api_key, timeout, max_retries, source_agent, slow_timeout, retry,
                                          request_id)
        self._http = httpx.AsyncClient(base_url=self._config.url, transport=transport)
        self._owns_http = True
        self._sleep = sleep
        self.last_request_id: str | None = None

    @property
    def url(self) -> str:
        return self._config.url

    def with_request_id(self, request_id: str) -> AsyncBrainClient:
        """A view of this client that sends `x-request-id: request_id` (same connection pool)."""
        view = copy.copy(self)
        view._config = dataclasses.replace(self._config, request_id=request_id)
        view._owns_http = False
        return view

    async def close(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncBrainClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            try:
                response = await self._http.request(call.method, call.path, params=call.params, json=call.body,
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
            await self._sleep(delay)
            attempt += 1

    # -- memory -------------------------------------------------------------------------------------------

    async def health(self) -> HealthBody:
        return await self._send(calls.health())

    async def store(self, type: str, content: str, source_agent: str | None = None,
              **options: Unpack[StoreOptions]) -> StoreBody:
        return await self._send(calls.store(type, content, self._config.agent(source_agent), options))

    async def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchBody:
        return await self._send(calls.search(query, options))

    async def query(self, type: str, **options: Unpack[QueryOptions]) -> QueryBody:
        return await self._send(calls.query(type, options))

    async def get(self, memory_id: str) -> Memory:
        return await self._send(calls.get(memory_id))

    async def update(self, memory_id: str, **fields: Unpack[UpdateOptions]) -> UpdateBody:
        return await self._send(calls.update(memory_id, fields))

    async def delete(self, memory_id: str, *, reason: str | None = None,
                     source_agent: str | None = None) -> DeleteBody:
        return await self._send(calls.delete(memory_id, reason, source_agent or self._config.source_agent))

    async def restore(self, memory_id: str) -> RestoreBody:
        return await self._send(calls.restore(memory_id))

    # -- knowledge views ----------------------------------------------------------------------------------

    async def briefing(self, since: Timestamp, **options: Unpack[BriefingOptions]) -> BriefingBody:
        return await self._send(calls.briefing(since, options))

    async def stats(self) -> StatsBody:
        return await self._send(calls.stats())

    async def export(self, **options: Unpack[ExportOptions]) -> ExportBody:
        return await self._send(calls.export(options))

    async def export_all(self, **options: Unpack[ExportOptions]) -> AsyncIterator[ExportBody]:
        """Every export page in turn (oldest first, so paging is stable while memories arrive), from `offset` on,
        until `has_more` is false."""
        page_options: ExportOptions = {"limit": EXPORT_PAGE, "offset": 0, "order": "oldest", **options}
        while True:
            page = await self.export(**page_options)
            yield page
            if not page.has_more or not page.memories:
                return
            page_options["offset"] = page.offset + page.count

    async def import_(self, data: Sequence[Mapping[str, Any]], *, operator_approved: bool = False) -> ImportBody:
        """POST /export/import (at most 500 records). The server refuses (403) without `operator_approved`."""
        return await self._send(calls.import_(data, operator_approved))

    async def import_memories(self, data: Sequence[Mapping[str, Any]], *,
                              operator_approved: bool = False) -> ImportBody:
        return await self.import_(data, operator_approved=operator_approved)

    # -- entities -----------------------------------------------------------------------------------------

    async def entities(self, action: EntityAction = "list", *, name: str | None = None, type: str | None = None,
                 limit: int | None = None, offset: int | None = None, client_id: str | None = None) -> JsonObject:
        return await self._send(calls.entities(action, name, type, limit, offset, client_id))

    async def list_entities(self, *, type: str | None = None, limit: int | None = None,
                      offset: int | None = None) -> EntityListBody:
        return await self._send(calls.list_entities(type, limit, offset))

    async def entity(self, name: str) -> EntityDetailBody:
        return await self._send(calls.entity(name))

    async def entity_memories(self, name: str, *, limit: int | None = None,
                              client_id: str | None = None) -> EntityMemoriesBody:
        return await self._send(calls.entity_memories(name, limit, client_id))

    async def entity_stats(self) -> EntityStatsBody:
        return await self._send(calls.entity_stats())

    async def reclassify(self, reclassifications: Sequence[Mapping[str, str]], *,
                         dry_run: bool = True) -> ReclassifyBody:
        return await self._send(calls.reclassify(reclassifications, dry_run))

    # -- LLM features -------------------------------------------------------------------------------------

    async def consolidate(self, *, sync: bool = False) -> ConsolidationStarted | JobBody:
        return await self._send(calls.consolidate(sync))

    async def consolidation_status(self) -> ConsolidationStatusBody:
        return await self._send(calls.consolidation_status())

    async def consolidation_job(self, job_id: str) -> JobBody:
        return await self._send(calls.consolidation_job(job_id))

    async def reflect(self, topic: str, *, client_id: str | None = None, limit: int | None = None) -> ReflectResult:
        return await self._send(calls.reflect(topic, client_id, limit))

    async def docs_query(self, query: str, **fields: Any) -> QueryResponse:
        """Searches the document knowledge base (`POST /kb/query`); `fields` as its request: mode, top_k,
        similarity_threshold, alpha, traversal_depth, include_relationships, source_types, languages, file_paths."""
        return await self._send(calls.docs_query(DocumentQuery(query=query, **fields)))

    async def research(self, topic: str, *, client_id: str | None = None,
                 max_iterations: int | None = None) -> ResearchBody:
        return await self._send(calls.research(topic, client_id, max_iterations))

    # -- client fingerprints ------------------------------------------------------------------------------

    async def put_client(self, client_id: str, **fingerprint: Unpack[ClientOptions]) -> ClientBody:
        return await self._send(calls.put_client(client_id, fingerprint))

    async def get_client(self, client_id: str) -> ClientBody:
        return await self._send(calls.get_client(client_id))

    async def list_clients(self) -> ClientListBody:
        return await self._send(calls.list_clients())

    async def delete_client(self, client_id: str) -> ClientDeletedBody:
        return await self._send(calls.delete_client(client_id))

    # -- scoped API keys (an admin key's calls) ----------------------------------------------------------

    async def create_key(self, name: str, role: str, clients: Sequence[str] | str | None = None) -> CreatedKeyBody:
        """A key for `clients` (client_ids, or "all"); the answer's `key` is the only time it is shown."""
        return await self._send(calls.create_key(name, role, clients))

    async def list_keys(self) -> ApiKeyListBody:
        return await self._send(calls.list_keys())

    async def revoke_key(self, key_id: str) -> RevokedKeyBody:
        return await self._send(calls.revoke_key(key_id))
