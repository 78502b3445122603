"""What the SDK raises: one class per kind of failure, each carrying the server's own `error` text."""

from __future__ import annotations


class BrainError(Exception):
    """The server refused a request (`status_code` set) or could not be reached (`status_code` None).

    `error` is the server's `{"error": "..."}` text (it names the offending field); `request_id` is the
    response's `x-request-id`, to find the request in the server's logs.
    """

    def __init__(
        self,
        error: str,
        *,
        status_code: int | None = None,
        request_id: str | None = None,
        response_body: str | None = None,
    ) -> None:
        super().__init__(f"HTTP {status_code}: {error}" if status_code is not None else error)
        self.error = error
        self.status_code = status_code
        self.request_id = request_id
        self.response_body = response_body


class InvalidRequestError(BrainError):
    """400: the message names the field."""


class AuthenticationError(BrainError):
    """401: missing or wrong API key."""


class ForbiddenError(BrainError):
    """403: e.g. an import without operator_approved."""


class NotFoundError(BrainError):
    """404: no such memory, entity, client or job."""


class ConflictError(BrainError):
    """409: conflicting state (a deleted memory, a consolidation already running...)."""


class RateLimitError(BrainError):
    """429 after the retries ran out (or when the wait would be longer than the client accepts)."""

    def __init__(
        self,
        error: str,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        response_body: str | None = None,
    ) -> None:
        super().__init__(error, status_code=429, request_id=request_id, response_body=response_body)
        self.retry_after = retry_after


class ServiceUnavailableError(BrainError):
    """502/503: the LLM provider failed, a feature is switched off, or the index is unreachable."""


class BrainConnectionError(BrainError):
    """The server could not be reached (refused, DNS, timeout) even after the retries."""


ERRORS_BY_STATUS: dict[int, type[BrainError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    502: ServiceUnavailableError,
    503: ServiceUnavailableError,
}
