"""When to try a request again, and how long to wait: shared by the sync and the async client."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

# A request that failed with one of these may have reached the server; only idempotent methods retry them.
_MAYBE_SENT = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadTimeout)
# These fail before the server saw anything, so every method may retry them.
_NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE"})


@dataclass(frozen=True)
class RetryPolicy:
    """`max_retries` more attempts after the first. A 429 waits what its `Retry-After` says (a backoff step
    when it says nothing usable), but gives up at once when that is longer than `max_retry_after`: a
    heavy endpoint may ask for an hour, and no caller wants to block that long. Connection errors back off
    exponentially: `backoff`, 2×, 4×… capped at `max_backoff` seconds."""

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0

    def backoff_delay(self, attempt: int) -> float:
        return float(min(self.max_backoff, self.backoff * (2**attempt)))

    def delay_after_response(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before trying again, or None to stop here (success, a refusal, or no retries left)."""
        if response.status_code != 429 or attempt >= self.max_retries:
            return None
        wait = retry_after_seconds(response)
        if wait is None:
            return self.backoff_delay(attempt)
        return wait if wait <= self.max_retry_after else None

    def delay_after_error(self, error: httpx.TransportError, method: str, attempt: int) -> float | None:
        if attempt >= self.max_retries:
            return None
        if isinstance(error, _NEVER_SENT) or (isinstance(error, _MAYBE_SENT) and method.upper() in _IDEMPOTENT):
            return self.backoff_delay(attempt)
        return None


def retry_after_seconds(response: httpx.Response) -> float | None:
    """`Retry-After` as seconds: delta-seconds or an HTTP date (RFC 9110); None when absent or unreadable."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (moment - datetime.now(UTC)).total_seconds())
