"""`BrainApi`: every public method of the SDK, written once. Each builds the `Call` it makes (method, path, query,
body, how to read the answer); `BrainClient` and `AsyncBrainClient` derive from it and only differ in how they send
(see core.py). Method names and arguments follow Zengram's Python `BrainClient`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Unpack

from zengram.client.base import EXPORT_PAGE
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
    json_body,
    json_object,
    model,
    query_params,
    segment,
)
from zengram.client.core import ClientCore, endpoint
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


class BrainApi(ClientCore):
    """The endpoints of the Zengram API, one method each (see the module docstring)."""

    # -- memory -------------------------------------------------------------------------------------------

    @endpoint
    def health(self) -> Call[HealthBody]:
        return Call("GET", "/health", model(HealthBody))

    @endpoint
    def store(self, type: str, content: str, source_agent: str | None = None,
              **options: Unpack[StoreOptions]) -> Call[StoreBody]:
        body = json_body({"type": type, "content": content, "source_agent": self._config.agent(source_agent),
                          **options})
        return Call("POST", "/memory", model(StoreBody), body=body)

    @endpoint
    def search(self, query: str, **options: Unpack[SearchOptions]) -> Call[SearchBody]:
        return Call("GET", "/memory/search", model(SearchBody), params=query_params({"q": query, **options}))

    @endpoint
    def query(self, type: str, **options: Unpack[QueryOptions]) -> Call[QueryBody]:
        return Call("GET", "/memory/query", model(QueryBody), params=query_params({"type": type, **options}))

    @endpoint
    def get(self, memory_id: str) -> Call[Memory]:
        return Call("GET", f"/memory/{segment(memory_id)}", model(Memory))

    @endpoint
    def update(self, memory_id: str, **fields: Unpack[UpdateOptions]) -> Call[UpdateBody]:
        body = json_body(dict(fields))
        if not body:
            raise ValueError("Must provide at least one field to update (content, importance, knowledge_category, "
                             "metadata)")
        return Call("PATCH", f"/memory/{segment(memory_id)}", model(UpdateBody), body=body)

    @endpoint
    def delete(self, memory_id: str, *, reason: str | None = None,
               source_agent: str | None = None) -> Call[DeleteBody]:
        body = json_body({"reason": reason, "source_agent": source_agent or self._config.source_agent})
        return Call("DELETE", f"/memory/{segment(memory_id)}", model(DeleteBody), body=body)

    @endpoint
    def restore(self, memory_id: str) -> Call[RestoreBody]:
        return Call("POST", f"/memory/{segment(memory_id)}/restore", model(RestoreBody))

    # -- knowledge views ----------------------------------------------------------------------------------

    @endpoint
    def briefing(self, since: Timestamp, **options: Unpack[BriefingOptions]) -> Call[BriefingBody]:
        return Call("GET", "/briefing", model(BriefingBody), params=query_params({"since": since, **options}))

    @endpoint
    def stats(self) -> Call[StatsBody]:
        return Call("GET", "/stats", model(StatsBody))

    @endpoint
    def export(self, **options: Unpack[ExportOptions]) -> Call[ExportBody]:
        return Call("GET", "/export", model(ExportBody), params=query_params(dict(options)))

    @endpoint
    def import_(self, data: Sequence[Mapping[str, Any]], *, operator_approved: bool = False) -> Call[ImportBody]:
        """POST /export/import (at most 500 records). The server refuses (403) without `operator_approved`."""
        body = {"data": [dict(record) for record in data], "operator_approved": operator_approved}
        return Call("POST", "/export/import", model(ImportBody), body=body)

    @endpoint
    def import_memories(self, data: Sequence[Mapping[str, Any]], *,
                        operator_approved: bool = False) -> Call[ImportBody]:
        return BrainApi.import_.build(self, data, operator_approved=operator_approved)

    # -- entities -----------------------------------------------------------------------------------------

    @endpoint
    def entities(self, action: EntityAction = "list", *, name: str | None = None, type: str | None = None,
                 limit: int | None = None, offset: int | None = None,
                 client_id: str | None = None) -> Call[JsonObject]:
        """Zengram's `brain_entities` dispatch (list, get, memories or stats), answered as plain JSON."""
        if action == "stats":
            return Call("GET", "/entities/stats", json_object)
        if action in ("get", "memories"):
            if not name:
                raise ValueError(f"name is required for action={action!r}")
            if action == "get":
                return Call("GET", _entity_path(name), json_object)
            return Call("GET", f"{_entity_path(name)}/memories", json_object,
                        params=query_params({"limit": limit, "client_id": client_id}))
        if action != "list":
            raise ValueError(f"action must be one of list, get, memories, stats (got {action!r})")
        return Call("GET", "/entities", json_object,
                    params=query_params({"type": type, "limit": limit, "offset": offset}))

    @endpoint
    def list_entities(self, *, type: str | None = None, limit: int | None = None,
                      offset: int | None = None) -> Call[EntityListBody]:
        return Call("GET", "/entities", model(EntityListBody),
                    params=query_params({"type": type, "limit": limit, "offset": offset}))

    @endpoint
    def entity(self, name: str) -> Call[EntityDetailBody]:
        return Call("GET", _entity_path(name), model(EntityDetailBody))

    @endpoint
    def entity_memories(self, name: str, *, limit: int | None = None,
                        client_id: str | None = None) -> Call[EntityMemoriesBody]:
        return Call("GET", f"{_entity_path(name)}/memories", model(EntityMemoriesBody),
                    params=query_params({"limit": limit, "client_id": client_id}))

    @endpoint
    def entity_stats(self) -> Call[EntityStatsBody]:
        return Call("GET", "/entities/stats", model(EntityStatsBody))

    @endpoint
    def reclassify(self, reclassifications: Sequence[Mapping[str, str]], *,
                   dry_run: bool = True) -> Call[ReclassifyBody]:
        body = {"reclassifications": [dict(item) for item in reclassifications], "dry_run": dry_run}
        return Call("POST", "/entities/reclassify", model(ReclassifyBody), body=body)

    # -- LLM features -------------------------------------------------------------------------------------

    @endpoint
    def consolidate(self, *, sync: bool = False) -> Call[ConsolidationStarted | JobBody]:
        """202 with a job id; with `sync` the finished job."""
        read = model(JobBody) if sync else model(ConsolidationStarted)
        return Call("POST", "/consolidate", read, params=query_params({"sync": True} if sync else {}), slow=sync)

    @endpoint
    def consolidation_status(self) -> Call[ConsolidationStatusBody]:
        return Call("GET", "/consolidate/status", model(ConsolidationStatusBody))

    @endpoint
    def consolidation_job(self, job_id: str) -> Call[JobBody]:
        return Call("GET", f"/consolidate/job/{segment(job_id)}", model(JobBody))

    @endpoint
    def reflect(self, topic: str, *, client_id: str | None = None,
                limit: int | None = None) -> Call[ReflectResult]:
        body = json_body({"topic": topic, "client_id": client_id, "limit": limit})
        return Call("POST", "/reflect", model(ReflectResult), body=body, slow=True)

    @endpoint
    def docs_query(self, /, query: str, **fields: Any) -> Call[QueryResponse]:
        """Searches the document knowledge base (`POST /kb/query`); `fields` as its request: mode, top_k,
        similarity_threshold, alpha, traversal_depth, include_relationships, source_types, languages, file_paths."""
        body = DocumentQuery(query=query, **fields).model_dump(mode="json", exclude_none=True)
        return Call("POST", "/kb/query", model(QueryResponse), body=body)

    @endpoint
    def docs_status(self) -> Call[JsonObject]:
        """Indexing status of the document base (`GET /kb/health/status`): documents, chunks, folders, job."""
        return Call("GET", "/kb/health/status", json_object)

    @endpoint
    def docs_index(self, /, folder_path: str, *, add: bool = False, **fields: Any) -> Call[JsonObject]:
        """Queues a folder for indexing (`POST /kb/index`, or `/kb/index/add` with `add=True`); `fields` as the
        request's: chunk_size, chunk_overlap, recursive, include_code, include_patterns, force, watch_mode…"""
        body = json_body({"folder_path": folder_path, **fields})
        return Call("POST", "/kb/index/add" if add else "/kb/index", json_object, body=body)

    @endpoint
    def docs_jobs(self, *, limit: int | None = None, offset: int | None = None) -> Call[JsonObject]:
        return Call("GET", "/kb/index/jobs", json_object, params=query_params({"limit": limit, "offset": offset}))

    @endpoint
    def docs_job(self, job_id: str) -> Call[JsonObject]:
        return Call("GET", f"/kb/index/jobs/{segment(job_id)}", json_object)

    @endpoint
    def docs_cancel_job(self, job_id: str) -> Call[JsonObject]:
        return Call("DELETE", f"/kb/index/jobs/{segment(job_id)}", json_object)

    @endpoint
    def docs_folders(self) -> Call[JsonObject]:
        return Call("GET", "/kb/index/folders", json_object)

    @endpoint
    def docs_remove_folder(self, folder_path: str) -> Call[JsonObject]:
        """Removes one indexed folder's files and chunks (`DELETE /kb/index/folders`)."""
        return Call("DELETE", "/kb/index/folders", json_object, body={"folder_path": folder_path})

    @endpoint
    def docs_chunk(self, chunk_id: str) -> Call[JsonObject]:
        """One indexed chunk by the id a query answered (`GET /kb/query/chunk/{id}`)."""
        return Call("GET", f"/kb/query/chunk/{segment(chunk_id)}", json_object)

    @endpoint
    def docs_cache(self, *, clear: bool = False) -> Call[JsonObject]:
        """The embedding cache's entries, size and hit counts (`GET /kb/index/cache`); `clear=True` empties it."""
        return Call("DELETE" if clear else "GET", "/kb/index/cache", json_object)

    @endpoint
    def research(self, topic: str, *, client_id: str | None = None,
                 max_iterations: int | None = None) -> Call[ResearchBody]:
        body = json_body({"topic": topic, "client_id": client_id, "max_iterations": max_iterations})
        return Call("POST", "/research", model(ResearchBody), body=body, slow=True)

    # -- client fingerprints ------------------------------------------------------------------------------

    @endpoint
    def put_client(self, client_id: str, **fingerprint: Unpack[ClientOptions]) -> Call[ClientBody]:
        return Call("PUT", f"/clients/{segment(client_id)}", model(ClientBody), body=json_body(dict(fingerprint)))

    @endpoint
    def get_client(self, client_id: str) -> Call[ClientBody]:
        return Call("GET", f"/clients/{segment(client_id)}", model(ClientBody))

    @endpoint
    def list_clients(self) -> Call[ClientListBody]:
        return Call("GET", "/clients", model(ClientListBody))

    @endpoint
    def delete_client(self, client_id: str) -> Call[ClientDeletedBody]:
        return Call("DELETE", f"/clients/{segment(client_id)}", model(ClientDeletedBody))

    # -- scoped API keys (an admin key's calls) ----------------------------------------------------------

    @endpoint
    def create_key(self, name: str, role: str, clients: Sequence[str] | str | None = None) -> Call[CreatedKeyBody]:
        """A key for `clients` (client_ids, or "all"); the answer's `key` is the only time it is shown."""
        body = json_body({"name": name, "role": role,
                          "clients": list(clients) if isinstance(clients, list | tuple) else clients})
        return Call("POST", "/admin/keys", model(CreatedKeyBody), body=body)

    @endpoint
    def list_keys(self) -> Call[ApiKeyListBody]:
        return Call("GET", "/admin/keys", model(ApiKeyListBody))

    @endpoint
    def revoke_key(self, key_id: str) -> Call[RevokedKeyBody]:
        return Call("DELETE", f"/admin/keys/{segment(key_id)}", model(RevokedKeyBody))


def _entity_path(name: str) -> str:
    return f"/entities/{segment(name)}"


def first_export_page(options: ExportOptions) -> ExportOptions:
    """`export_all`'s first page: oldest first (so paging is stable while memories arrive), from `offset` on."""
    return {"limit": EXPORT_PAGE, "offset": 0, "order": "oldest", **options}


def next_export_page(options: ExportOptions, page: ExportBody) -> ExportOptions | None:
    """The page after `page`, or None once the server says there is no more."""
    if not page.has_more or not page.memories:
        return None
    return {**options, "offset": page.offset + page.count}
