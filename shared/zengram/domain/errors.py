"""Domain errors. The API's single error mapper turns each into a status code."""

from __future__ import annotations


class ZengramError(Exception):
    """Base class for every error the service raises on purpose."""

    status_code = 500


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


class EmbeddingMismatch(ZengramError):
    """The search index was built with another embedding model than the one configured."""


class IndexUnavailable(ZengramError):
    """The search index could not be reached; the record store still holds the truth."""

    status_code = 503
