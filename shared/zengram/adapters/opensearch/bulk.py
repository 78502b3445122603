"""`_bulk` requests: the NDJSON lines we send and how each item of the answer is judged."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from zengram.adapters.opensearch.queries import moment, vector_values
from zengram.kernel.errors import IndexRejected, IndexUnavailable
from zengram.kernel.search import MEMORY_SCOPE, IndexAttributes, IndexDocument

# 429: rejected (queue full, indexing pressure); 402: Serverless at its OCU limit; 502-504: a node away.
RETRYABLE_ITEM_STATUSES = frozenset({402, 429, 502, 503, 504})
MAX_ACTIONS_PER_REQUEST = 200
ActionKind = Literal["index", "update", "delete"]


class OpenSearchIndexError(IndexUnavailable):
    """The OpenSearch search index could not do what was asked (the API answers 503; the records are intact)."""


class BulkWriteError(IndexRejected):
    """OpenSearch refused some documents; their ids stay pending in the record store for repair. The index is up,
    so this is the port's `IndexRejected`, not an `OpenSearchIndexError` (which makes the index unavailable)."""

    def __init__(self, failures: dict[str, str]) -> None:
        shown = "; ".join(f"{memory_id}: {reason}" for memory_id, reason in list(failures.items())[:5])
        more = f" (and {len(failures) - 5} more)" if len(failures) > 5 else ""
        super().__init__(f"OpenSearch rejected {len(failures)} document(s): {shown}{more}", failures)

    @property
    def failed_ids(self) -> list[str]:
        return list(self.failures)


class Outcome(Enum):
    DONE = "done"
    RETRY = "retry"
    INDEX_MISSING = "index_missing"
    FAILED = "failed"


@dataclass(frozen=True)
class BulkAction:
    """One bulk operation. `doc_id` None lets the server assign `_id` (Serverless vector collections)."""

    kind: ActionKind
    memory_id: str
    doc_id: str | None
    source: dict[str, Any] | None = None

    def lines(self) -> list[str]:
        header = {self.kind: {"_id": self.doc_id} if self.doc_id is not None else {}}
        rows = [json.dumps(header, separators=(",", ":"))]
        if self.source is not None:
            rows.append(json.dumps(self.source, separators=(",", ":"), ensure_ascii=False))
        return rows


def attribute_fields(attributes: IndexAttributes) -> dict[str, Any]:
    """The filter fields as stored; a Zengram memory (the empty scope) has no `scope` field, as before scopes."""
    scope = {"scope": attributes.scope} if attributes.scope != MEMORY_SCOPE else {}
    return {**scope,
        "type": attributes.type,
        "source_agent": attributes.source_agent,
        "client_id": attributes.client_id,
        "category": attributes.category,
        "knowledge_category": attributes.knowledge_category,
        "active": attributes.active,
        "valid_from": moment(attributes.valid_from),
        "valid_to": moment(attributes.valid_to) if attributes.valid_to is not None else None,
        "created_at": moment(attributes.created_at),
        "entities": list(attributes.entities),
    }


def document_source(document: IndexDocument) -> dict[str, Any]:
    return {"id": document.id, "text": document.text, "vector": vector_values(document.vector),
            **attribute_fields(document.attributes)}


def index_action(document: IndexDocument, *, server_ids: bool) -> BulkAction:
    return BulkAction("index", document.id, None if server_ids else document.id, document_source(document))


def update_action(memory_id: str, attributes: IndexAttributes, doc_id: str) -> BulkAction:
    return BulkAction("update", memory_id, doc_id, {"doc": attribute_fields(attributes)})


def text_update_action(memory_id: str, text: str, doc_id: str) -> BulkAction:
    """A partial update of the keyword text: OpenSearch keeps the other fields (the vector included)."""
    return BulkAction("update", memory_id, doc_id, {"doc": {"text": text}})


def delete_action(memory_id: str, doc_id: str) -> BulkAction:
    return BulkAction("delete", memory_id, doc_id)


def ndjson(actions: Sequence[BulkAction]) -> str:
    return "".join(line + "\n" for action in actions for line in action.lines())


def judge(action: BulkAction, item: dict[str, Any]) -> tuple[Outcome, str]:
    """What one item of a bulk answer means for us, with a reason for the error message."""
    result: dict[str, Any] = item.get(action.kind) or next(iter(item.values()), {})
    status = int(result.get("status", 500))
    error = result.get("error")
    error_type = error.get("type", "") if isinstance(error, dict) else str(error or "")
    detail = error.get("reason", "") if isinstance(error, dict) else ""
    reason = f"{status} {error_type}: {detail}"[:300]
    if status < 300:
        return Outcome.DONE, ""
    if status == 404 and error_type == "index_not_found_exception":
        # Nothing to update or delete in a missing index; a document to index needs the index back.
        return (Outcome.INDEX_MISSING if action.kind == "index" else Outcome.DONE), reason
    if status == 404 and (action.kind == "delete" or error_type == "document_missing_exception"):
        return Outcome.DONE, ""
    if status in RETRYABLE_ITEM_STATUSES:
        return Outcome.RETRY, reason
    return Outcome.FAILED, reason


def chunks(actions: Sequence[BulkAction], size: int = MAX_ACTIONS_PER_REQUEST) -> list[list[BulkAction]]:
    return [list(actions[start : start + size]) for start in range(0, len(actions), size)]
