"""Domain errors. The API's single error mapper turns each into a status code."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any


class ZengramError(Exception):
    """Base class for every error the service raises on purpose. `details` are extra fields of the error body."""

    status_code = 500
    details: Mapping[str, Any] = MappingProxyType({})


class InvalidInput(ZengramError):
    """The caller sent something the service refuses (400)."""

    status_code = 400

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class NotFound(ZengramError):
    status_code = 404


class Conflict(ZengramError):
    status_code = 409


class StaleRevision(Conflict):
    """A write conditioned on the revision its caller read found the memory changed since: nothing was
    written; re-read, re-apply the change, and try again."""


class EmbeddingMismatch(ZengramError):
    """The search index was built with another embedding model than the one configured: searching it is refused
    (503) until `zengram reindex` rebuilds it; writes are still stored and wait for the rebuild."""

    status_code = 503


class IndexUnavailable(ZengramError):
    """The search index could not be reached (or failed as a whole); the record store still holds the truth."""

    status_code = 503

    def __init__(self, message: str, *, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        if details:
            self.details = dict(details)


class IndexRejected(ZengramError):
    """The search index answered, and refused the request or some of its documents (the index itself is up).
    `failures` names each refused memory id with the reason, when the index said which."""

    status_code = 502

    def __init__(self, message: str, failures: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.failures = dict(failures or {})


class Forbidden(ZengramError):
    """The caller may not do this without an explicit approval (e.g. import without operator_approved)."""

    status_code = 403


class RateLimited(ZengramError):
    """Too many requests of one kind for one API key; retry after `retry_after` seconds (429)."""

    status_code = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = max(1, retry_after)


class FeatureUnavailable(ZengramError):
    """A feature that is switched off, or whose provider is not configured (503)."""

    status_code = 503


class LLMUnavailable(FeatureUnavailable):
    """No LLM provider is configured, or it could not be reached."""

    def __init__(self, message: str = "LLM provider unavailable") -> None:
        super().__init__(message)


class LLMInvalidResponse(ZengramError):
    """The LLM answered, twice, with something that is not the expected JSON (502)."""

    status_code = 502


class ResearchFailed(ZengramError):
    """The research workflow itself failed (e.g. a Step Functions execution timed out or was aborted) (502)."""

    status_code = 502


class ResearchTimedOut(ResearchFailed):
    """The research run did not finish in the time a request may take, and was stopped (504)."""

    status_code = 504
