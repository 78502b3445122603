"""Domain errors. Each carries a `kind` (what went wrong, in the domain's words); the API's one error mapper
(`zengram.web.errors.STATUS_OF_KIND`) turns kinds into status codes. Nothing here knows about HTTP."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Any, ClassVar


class ErrorKind(StrEnum):
    INVALID_INPUT = "invalid_input"  # the caller sent something the service refuses
    FORBIDDEN = "forbidden"  # the caller may not do this (scope, role, or an approval is missing)
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"  # the state of the records does not allow it (now)
    RATE_LIMITED = "rate_limited"
    UPSTREAM_FAILED = "upstream_failed"  # a provider answered, wrongly (LLM JSON, a refused document, a workflow)
    UNAVAILABLE = "unavailable"  # switched off, not configured, or a provider that cannot be reached
    TIMED_OUT = "timed_out"  # a workflow did not finish in the time a request may take, and was stopped
    STORAGE_FULL = "storage_full"  # the store has no room left for a write (nothing written, nothing lost)
    INTERNAL = "internal"


class ZengramError(Exception):
    """Base class for every error the service raises on purpose. `details` are extra fields of the error body."""

    kind: ClassVar[ErrorKind] = ErrorKind.INTERNAL
    details: Mapping[str, Any] = MappingProxyType({})


class InvalidInput(ZengramError):
    """The caller sent something the service refuses."""

    kind = ErrorKind.INVALID_INPUT

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class NotFound(ZengramError):
    kind = ErrorKind.NOT_FOUND


class Conflict(ZengramError):
    kind = ErrorKind.CONFLICT


class StaleRevision(Conflict):
    """A write conditioned on the revision its caller read found the memory changed since: nothing was
    written; re-read, re-apply the change, and try again."""


class EmbeddingMismatch(ZengramError):
    """The search index was built with another embedding model than the one configured: searching it is refused
    until `zengram reindex` rebuilds it; writes are still stored and wait for the rebuild."""

    kind = ErrorKind.UNAVAILABLE


class IndexUnavailable(ZengramError):
    """The search index could not be reached (or failed as a whole); the record store still holds the truth."""

    kind = ErrorKind.UNAVAILABLE

    def __init__(self, message: str, *, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        if details:
            self.details = dict(details)


class IndexRejected(ZengramError):
    """The search index answered, and refused the request or some of its documents (the index itself is up).
    `failures` names each refused memory id with the reason, when the index said which."""

    kind = ErrorKind.UPSTREAM_FAILED

    def __init__(self, message: str, failures: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.failures = dict(failures or {})


class StorageFull(ZengramError):
    """A write found no room in the store (a full disk): it was not made, and what was stored is intact."""

    kind = ErrorKind.STORAGE_FULL


class Forbidden(ZengramError):
    """The caller may not do this without an explicit approval (e.g. import without operator_approved), or outside
    its API key's clients."""

    kind = ErrorKind.FORBIDDEN


class RateLimited(ZengramError):
    """Too many requests of one kind for one API key; retry after `retry_after` seconds."""

    kind = ErrorKind.RATE_LIMITED

    def __init__(self, message: str, retry_after: int, *, limit: int | None = None,
                 window_seconds: int | None = None) -> None:
        # The budget in the body too, as upstream's 429 carries it (`limit`, `window_seconds`).
        super().__init__(message)
        if limit is not None:
            self.details = {"limit": limit, "window_seconds": window_seconds}
        self.retry_after = max(1, retry_after)


class FeatureUnavailable(ZengramError):
    """A feature that is switched off, or whose provider (or key) is not configured."""

    kind = ErrorKind.UNAVAILABLE


class FeatureDisabled(FeatureUnavailable):
    """A feature switched off by setting: upstream's body, the feature's code as `error` and the words as
    `message` (`{"error": "research_disabled", "message": "..."}`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code)
        self.details = {"message": message}


class LLMUnavailable(FeatureUnavailable):
    """No LLM provider is configured, or it could not be reached."""

    def __init__(self, message: str = "LLM provider unavailable") -> None:
        super().__init__(message)

    @classmethod
    def not_configured(cls, feature: str) -> LLMUnavailable:
        """No provider at all: the message names the settings that configure one (issue 37)."""
        return cls(f"LLM provider unavailable: {feature} needs ZENGRAM_LLM_BASE_URL (an OpenAI-compatible "
                   "endpoint, e.g. Ollama) or ZENGRAM_LLM_API_KEY (OpenAI); see docs/settings.md")


class LLMInvalidResponse(ZengramError):
    """The LLM answered, twice, with something that is not the expected JSON."""

    kind = ErrorKind.UPSTREAM_FAILED


class ResearchFailed(ZengramError):
    """The research workflow itself failed (e.g. a Step Functions execution timed out or was aborted)."""

    kind = ErrorKind.UPSTREAM_FAILED


class ResearchTimedOut(ResearchFailed):
    """The research run did not finish in the time a request may take, and was stopped."""

    kind = ErrorKind.TIMED_OUT
