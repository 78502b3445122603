"""A local HTTP server that speaks just enough of the OpenSearch REST API for request-level tests: the ones
that inject faults or inspect requests (behaviour is tested on a real engine, tests/opensearch_node.py).

It records every request (method, path, query, headers, body) and answers like OpenSearch 2.x does:
indices with aliases, `_mapping` with `_meta`, `_bulk` with per-item statuses, `_search`, `_count`, and
OpenSearch's error bodies. Tests script failures: whole responses (`script`) or bulk items (`fail_item`).
Only test code uses this; the shapes follow docs.opensearch.org (Bulk, Search, Create index, Alias APIs).
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

SHARDS = {"total": 2, "successful": 1, "failed": 0}


def error_body(status: int, error_type: str, reason: str, **extra: Any) -> dict[str, Any]:
    cause = {"type": error_type, "reason": reason, **extra}
    return {"error": {"root_cause": [cause], **cause}, "status": status}


def index_not_found(name: str, reason: str | None = None) -> dict[str, Any]:
    return error_body(404, "index_not_found_exception", reason or f"no such index [{name}]", index=name,
                      **{"resource.id": name, "resource.type": "index_or_alias"}, index_uuid="_na_")


def rejected() -> dict[str, Any]:
    """What a node under indexing pressure answers (HTTP 429)."""
    return error_body(429, "rejected_execution_exception",
                      "rejected execution of coordinating operation [node_coordinating_and_primary_bytes=0, "
                      "node_replica_bytes=0, node_all_bytes=0, node_operation_bytes=1024]")


def unavailable() -> dict[str, Any]:
    return error_body(503, "cluster_block_exception", "blocked by: [SERVICE_UNAVAILABLE/1/state not recovered];")


def internal_error() -> dict[str, Any]:
    return error_body(500, "exception", "java.lang.IllegalStateException: something broke")


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def ndjson(self) -> list[Any]:
        return [json.loads(line) for line in self.body.decode().splitlines() if line.strip()]


@dataclass
class FakeIndex:
    name: str
    body: dict[str, Any]
    docs: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def mappings(self) -> dict[str, Any]:
        mappings: dict[str, Any] = self.body.get("mappings", {})
        return mappings


@dataclass
class _Scripted:
    method: str
    path: re.Pattern[str]
    status: int
    body: Any


class FakeOpenSearch:
    """Start with `with FakeOpenSearch() as fake:`; point the adapter at `fake.url`."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.indices: dict[str, FakeIndex] = {}
        self.aliases: dict[str, str] = {}
        self.search_hits: list[tuple[str, float]] = []
        self._scripted: list[_Scripted] = []
        self._item_failures: dict[str, list[tuple[int, str]]] = {}
        # Set `outage` to (status, body) and every request gets that answer until it is cleared (a cluster that is
        # down); `refused` maps document ids to the (status, error type) their bulk items always get.
        self.outage: tuple[int, Any] | None = None
        self.refused: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def __enter__(self) -> FakeOpenSearch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- scripting -----------------------------------------------------------------------------------

    def script(self, method: str, path: str, *responses: tuple[int, Any]) -> None:
        """The next requests matching `method` and the `path` regex get these answers, one each, in order."""
        for status, body in responses:
            self._scripted.append(_Scripted(method, re.compile(path), status, body))

    def fail_item(self, doc_id: str, *failures: tuple[int, str]) -> None:
        """The next bulk items for `doc_id` fail with these (status, error type), one per attempt."""
        self._item_failures.setdefault(doc_id, []).extend(failures)

    def add_index(self, name: str, alias: str | None, body: dict[str, Any]) -> FakeIndex:
        self.indices[name] = FakeIndex(name, body)
        if alias:
            self.aliases[alias] = name
        return self.indices[name]

    def requests_to(self, method: str, path_pattern: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and re.search(path_pattern, r.path)]

    # -- answering -----------------------------------------------------------------------------------

    def answer(self, request: Recorded) -> tuple[int, Any]:
        with self._lock:
            self.requests.append(request)
            if self.outage is not None:
                return self.outage
            for scripted in self._scripted:
                if scripted.method == request.method and scripted.path.search(request.path):
                    self._scripted.remove(scripted)
                    return scripted.status, scripted.body
            return self._route(request)

    def _route(self, request: Recorded) -> tuple[int, Any]:
        parts = [unquote(part) for part in request.path.strip("/").split("/")]
        method = request.method
        if parts[0] == "_alias" and len(parts) == 2:
            return self._alias_info(parts[1])
        if len(parts) == 1 and method == "PUT":
            return self._create(parts[0], request.json())
        if len(parts) == 1 and method == "DELETE":
            return self._delete(parts[0].split(","))
        if len(parts) == 3 and parts[1] == "_alias" and method == "PUT":
            return self._put_alias(parts[0], parts[2])
        handlers = {"_mapping": self._mapping, "_bulk": self._bulk, "_search": self._search, "_count": self._count}
        if len(parts) == 2 and parts[1] in handlers:
            return handlers[parts[1]](parts[0], request)
        return 400, error_body(400, "illegal_argument_exception", f"no handler for {method} {request.path}")

    def _resolve(self, target: str) -> FakeIndex | None:
        return self.indices.get(self.aliases.get(target, target))

    def _alias_info(self, alias: str) -> tuple[int, Any]:
        if alias not in self.aliases:
            return 404, {"error": f"alias [{alias}] missing", "status": 404}
        return 200, {self.aliases[alias]: {"aliases": {alias: {}}}}

    def _create(self, name: str, body: dict[str, Any]) -> tuple[int, Any]:
        if name in self.indices:
            return 400, error_body(400, "resource_already_exists_exception", f"index [{name}/abc123] already exists",
                                   index=name, index_uuid="abc123")
        aliases = body.pop("aliases", {})
        self.add_index(name, next(iter(aliases), None), body)
        return 200, {"acknowledged": True, "shards_acknowledged": True, "index": name}

    def _put_alias(self, name: str, alias: str) -> tuple[int, Any]:
        if name not in self.indices:
            return 404, index_not_found(name)
        self.aliases[alias] = name
        return 200, {"acknowledged": True}

    def _delete(self, names: list[str]) -> tuple[int, Any]:
        for name in names:
            if name not in self.indices:
                return 404, index_not_found(name)
        for name in names:
            del self.indices[name]
            for alias in [a for a, target in self.aliases.items() if target == name]:
                del self.aliases[alias]
        return 200, {"acknowledged": True}

    def _mapping(self, target: str, request: Recorded) -> tuple[int, Any]:
        index = self._resolve(target)
        if index is None:
            return 404, index_not_found(target)
        if request.method == "PUT":
            index.mappings.update(request.json())
            return 200, {"acknowledged": True}
        return 200, {index.name: {"mappings": index.mappings}}

    def _count(self, target: str, _: Recorded) -> tuple[int, Any]:
        index = self._resolve(target)
        if index is None:
            return 404, index_not_found(target)
        return 200, {"count": len(index.docs), "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0}}

    def _search(self, target: str, request: Recorded) -> tuple[int, Any]:
        index = self._resolve(target)
        if index is None:
            return 404, index_not_found(target)
        wanted = request.json().get("query", {}).get("terms", {}).get("id")
        if wanted is not None:  # an id lookup: answer from the stored documents
            hits = [(doc_id, source["id"], 1.0) for doc_id, source in index.docs.items() if source.get("id") in wanted]
        else:
            hits = [(memory_id, memory_id, score) for memory_id, score in self.search_hits]
        return 200, _search_response(index.name, hits)

    def _bulk(self, target: str, request: Recorded) -> tuple[int, Any]:
        lines = request.ndjson()
        items: list[dict[str, Any]] = []
        while lines:
            header = lines.pop(0)
            kind, meta = next(iter(header.items()))
            source = lines.pop(0) if kind in ("index", "create", "update") else None
            items.append({kind: self._bulk_item(target, request, kind, meta.get("_id"), source)})
        errors = any(next(iter(item.values()))["status"] >= 300 for item in items)
        return 200, {"took": 7, "errors": errors, "items": items}

    def _bulk_item(self, target: str, request: Recorded, kind: str, doc_id: str | None,
                   source: dict[str, Any] | None) -> dict[str, Any]:
        index = self._resolve(target)
        if request.query.get("require_alias") == "true" and target not in self.aliases:
            reason = (f"no such index [{target}] and [require_alias] request flag is [true] "
                      f"and [{target}] is not an alias")
            return {"_index": target, "_id": doc_id, "status": 404, "error": index_not_found(target, reason)["error"]}
        if index is None:
            return {"_index": target, "_id": doc_id, "status": 404, "error": index_not_found(target)["error"]}
        scripted = self._item_failures.get(doc_id or "") or self._item_failures.get(str((source or {}).get("id")))
        failure = scripted.pop(0) if scripted else self.refused.get(doc_id or "")
        if failure is not None:
            status, error_type = failure
            error = {"type": error_type, "reason": f"scripted {error_type}", "index": index.name}
            return {"_index": index.name, "_id": doc_id, "status": status, "error": error}
        return _apply(index, kind, doc_id, source)


def _apply(index: FakeIndex, kind: str, doc_id: str | None, source: dict[str, Any] | None) -> dict[str, Any]:
    done = {"_index": index.name, "_version": 1, "_shards": SHARDS, "_seq_no": 0, "_primary_term": 1}
    if kind == "index":
        doc_id = doc_id or uuid.uuid4().hex[:20]
        created = doc_id not in index.docs
        index.docs[doc_id] = source or {}
        return {**done, "_id": doc_id, "result": "created" if created else "updated", "status": 201 if created else 200}
    assert doc_id is not None
    if kind == "update":
        if doc_id not in index.docs:
            error = {"type": "document_missing_exception", "reason": f"[{doc_id}]: document missing",
                     "index": index.name, "shard": "0", "index_uuid": "abc123"}
            return {"_index": index.name, "_id": doc_id, "status": 404, "error": error}
        index.docs[doc_id].update((source or {}).get("doc", {}))
        return {**done, "_id": doc_id, "result": "updated", "status": 200}
    found = index.docs.pop(doc_id, None) is not None
    return {**done, "_id": doc_id, "result": "deleted" if found else "not_found", "status": 200 if found else 404}


def _search_response(index: str, hits: list[tuple[str, str, float]]) -> dict[str, Any]:
    return {
        "took": 3, "timed_out": False,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {
            "total": {"value": len(hits), "relation": "eq"},
            "max_score": max((score for *_, score in hits), default=None),
            "hits": [{"_index": index, "_id": doc_id, "_score": score, "_source": {"id": memory_id},
                      "sort": [score, memory_id]} for doc_id, memory_id, score in hits],
        },
    }


def _handler_for(fake: FakeOpenSearch) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # One write per answer, sent at once: without these every request waits out a delayed ACK.
        wbufsize = 1 << 16
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            split = urlsplit(self.path)
            recorded = Recorded(self.command, split.path, dict(parse_qsl(split.query)),
                                {name.lower(): value for name, value in self.headers.items()}, body)
            status, answer = fake.answer(recorded)
            payload = b"" if self.command == "HEAD" else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json; charset=UTF-8")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_DELETE = _serve

        def do_HEAD(self) -> None:
            self._serve()

        def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
            return

    return Handler


def iter_bulk(recorded: Recorded) -> Iterator[tuple[str, dict[str, Any], dict[str, Any] | None]]:
    """(action, header, source) triples of a recorded bulk body."""
    lines = recorded.ndjson()
    while lines:
        header = lines.pop(0)
        kind, meta = next(iter(header.items()))
        yield kind, meta, lines.pop(0) if kind in ("index", "create", "update") else None
