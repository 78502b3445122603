"""What the two OpenSearch indexes (memories, document chunks) do alike.

Each lives behind an alias over a versioned concrete index. Requests are retried with backoff and their failures
mapped to the ports' errors; searches and counts treat a missing index as an empty one; bulk writes retry the
items the cluster pushed back and recreate a missing index once. The subclasses own their mapping, their
queries and how a missing index is recreated (`_recreate_missing_index`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from zengram.adapters.opensearch.bulk import BulkAction, OpenSearchIndexError, Outcome, chunks, judge, ndjson
from zengram.adapters.opensearch.client import (
    RetryPolicy,
    error_type_of,
    failure,
    is_index_missing,
    status_of,
)
from zengram.adapters.opensearch.mapping import Binding

logger = logging.getLogger(__name__)
Judged = tuple[BulkAction, Outcome, str]
Failures = dict[str, str]  # memory or chunk id → why it could not be written


class AliasedIndex:
    """The shared half of an OpenSearch index adapter: its client, alias, retry policy and bound model."""

    def __init__(self, *, alias: str, client: Any, owns_client: bool, retry: RetryPolicy,
                 refresh: str | None, require_alias: bool) -> None:
        self._alias = alias
        self._client = client
        self._owns_client = owns_client
        self._retry = retry
        self._refresh = refresh  # sent with every bulk write: None, "true" or "wait_for"
        # require_alias stops a write to a missing alias from auto-creating an unmapped index of that name.
        self._require_alias = require_alias
        self._binding: Binding | None = None

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def _recreate_missing_index(self) -> bool:
        """Creates the concrete index again after a write found it missing; False when it cannot."""
        raise NotImplementedError

    # -- requests ------------------------------------------------------------------------------------

    def _request(self, operation: str, request: Callable[[], Any],
                 handled: Callable[[BaseException], bool] = lambda _: False) -> Any:
        """Runs a request with retries. Errors the caller `handled` reach it as opensearch-py raised them; any other
        client error becomes the port's `IndexRejected` when it refuses this very request (the index is up), else
        an `OpenSearchIndexError` (503 at the API: the index is unusable, the records are intact); never a bare
        client exception (a 500)."""
        from opensearchpy.exceptions import OpenSearchException

        try:
            return self._retry.call(operation, request)
        except OpenSearchException as error:
            if handled(error):
                raise
            raise failure(operation, error) from error

    def _unless_missing(self, operation: str, request: Callable[[], Any], missing: Callable[[BaseException], bool],
                        absent: Any) -> Any:
        """The request's answer, or `absent` when the index (or alias) it reads is not there."""
        try:
            return self._request(operation, request, missing)
        except Exception as error:
            if missing(error):
                return absent
            raise

    def _search(self, operation: str, body: dict[str, Any]) -> dict[str, Any]:
        """A search; a missing index simply holds nothing yet."""
        response: dict[str, Any] = self._unless_missing(
            operation, lambda: self._client.search(index=self._alias, body=body), is_index_missing, {})
        return response

    def _count(self) -> int:
        response = self._unless_missing("count", lambda: self._client.count(index=self._alias), is_index_missing, {})
        return int(response.get("count", 0))

    def _mappings(self) -> dict[str, Any] | None:
        """The mappings of the concrete index behind the alias, or None when there is none."""
        response = self._unless_missing(
            "get mapping", lambda: self._client.indices.get_mapping(index=self._alias), is_index_missing, None)
        if not response:
            return None
        mappings: dict[str, Any] = response[sorted(response)[0]]
        return mappings

    def _concrete_indices(self) -> list[str]:
        response = self._unless_missing("get alias", lambda: self._client.indices.get_alias(name=self._alias),
                                        lambda error: status_of(error) == 404, {})
        return sorted(response)

    def _drop_concrete_indices(self) -> None:
        names = self._concrete_indices()
        if names:
            self._unless_missing("delete index", lambda: self._client.indices.delete(index=",".join(names)),
                                 is_index_missing, None)
        self._binding = None

    def _create_concrete_index(self, name: str, body: dict[str, Any]) -> None:
        try:
            self._request("create index", lambda: self._client.indices.create(index=name, body=body), _already_exists)
        except Exception as error:
            if not _already_exists(error):
                raise
            # Another process (or a timed-out earlier try) created it: make sure the alias points at it.
            self._request("put alias", lambda: self._client.indices.put_alias(index=name, name=self._alias))
        logger.info("created OpenSearch index %s behind alias %s", name, self._alias)

    # -- bulk writes ---------------------------------------------------------------------------------

    def _write_all(self, actions: Sequence[BulkAction]) -> tuple[Failures, Failures]:
        """Writes the actions in bulk requests; returns the ids refused outright and those still pushed back
        (429, 503...) when the attempts ran out."""
        refused: Failures = {}
        overloaded: Failures = {}
        for chunk in chunks(actions):
            chunk_refused, chunk_overloaded = self._bulk(chunk)
            refused.update(chunk_refused)
            overloaded.update(chunk_overloaded)
        return refused, overloaded

    def _bulk(self, actions: list[BulkAction]) -> tuple[Failures, Failures]:
        """Sends the actions, retrying pushed-back items with backoff and recreating a missing index once."""
        refused: Failures = {}
        last_reason: Failures = {}
        pending, recreated = actions, False
        for attempt in range(1, self._retry.attempts + 1):
            judged = self._send(pending)
            missing = not recreated and any(outcome is Outcome.INDEX_MISSING for _, outcome, _ in judged)
            if missing:
                logger.warning("the OpenSearch index behind '%s' is missing; creating it and retrying", self._alias)
                recreated = self._recreate_missing_index()
            pending = []
            for action, outcome, reason in judged:
                if outcome is Outcome.RETRY or (outcome is Outcome.INDEX_MISSING and missing and recreated):
                    pending.append(action)
                    last_reason[action.memory_id] = reason
                elif outcome is not Outcome.DONE:
                    refused[action.memory_id] = reason
            if not pending:
                return refused, {}
            if attempt < self._retry.attempts and not missing:
                logger.info("OpenSearch rejected %d bulk item(s); retrying", len(pending))
                self._retry.pause(attempt)
        attempts = self._retry.attempts
        return refused, {action.memory_id: f"still failing after {attempts} attempts ({last_reason[action.memory_id]})"
                         for action in pending}

    def _send(self, actions: list[BulkAction]) -> list[Judged]:
        params = {"refresh": self._refresh, "require_alias": "true" if self._require_alias else None}
        missing_index = {"items": [{action.kind: {"status": 404, "error": {"type": "index_not_found_exception"}}}
                                   for action in actions]}
        response = self._unless_missing("bulk", lambda: self._client.bulk(
            body=ndjson(actions), index=self._alias, params={k: v for k, v in params.items() if v}),
            is_index_missing, missing_index)
        items = response.get("items", [])
        if len(items) != len(actions):
            raise OpenSearchIndexError(f"OpenSearch answered {len(items)} bulk items for {len(actions)} actions")
        return [(action, *judge(action, item)) for action, item in zip(actions, items, strict=True)]


def _already_exists(error: BaseException) -> bool:
    return error_type_of(error) == "resource_already_exists_exception"
