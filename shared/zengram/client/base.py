"""Connection settings shared by the sync and the async client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

import httpx

from zengram.client.calls import Call
from zengram.client.errors import BrainConnectionError
from zengram.client.local import resolve_connection
from zengram.client.retry import RetryPolicy

DEFAULT_TIMEOUT = 15.0
SLOW_TIMEOUT = 120.0  # consolidation (sync), reflect, research: several LLM calls
EXPORT_PAGE = 1000


class ClientOptions(TypedDict, total=False):
    """The keyword options both clients take beyond the connection: `slow_timeout` for the calls that run several
    LLM calls, `retry` (a RetryPolicy, instead of `max_retries`), `request_id` (sent as x-request-id)."""

    slow_timeout: float
    retry: RetryPolicy | None
    request_id: str | None


def check_options(options: dict[str, Any], known: frozenset[str]) -> None:
    """A misspelled keyword is a TypeError, as it is for any function."""
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(unknown)}")


@dataclass(frozen=True)
class ClientConfig:
    url: str
    api_key: str
    timeout: float = DEFAULT_TIMEOUT
    slow_timeout: float = SLOW_TIMEOUT
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    source_agent: str | None = None
    request_id: str | None = None

    @classmethod
    def build(cls, url: str | None, api_key: str | None, timeout: float, max_retries: int,
              source_agent: str | None, options: ClientOptions) -> ClientConfig:
        """Arguments win; `BRAIN_API_URL` / `BRAIN_API_KEY` fill what is left out, then the local embedded
        server (`ZENGRAM_HOST`/`ZENGRAM_PORT`) and the key it generated into `<ZENGRAM_DATA_DIR>/api-key`,
        as docs/clients.md promises for all three clients. Read when the client is built, never at import."""
        if not url or api_key is None:
            connection = resolve_connection(url, api_key)
            url, api_key = connection.url, api_key if api_key is not None else connection.api_key
        return cls(url=url.rstrip("/"), api_key=api_key, timeout=timeout,
                   slow_timeout=options.get("slow_timeout", SLOW_TIMEOUT),
                   retry=options.get("retry") or RetryPolicy(max_retries=max_retries), source_agent=source_agent,
                   request_id=options.get("request_id"))

    def headers(self) -> dict[str, str]:
        headers = {"x-api-key": self.api_key, "accept": "application/json", "user-agent": "zengram-python"}
        if self.request_id:
            headers["x-request-id"] = self.request_id
        return headers

    def timeout_for(self, call: Call[Any]) -> float:
        return self.slow_timeout if call.slow else self.timeout

    def agent(self, source_agent: str | None) -> str:
        agent = source_agent or self.source_agent
        if not agent:
            raise ValueError("source_agent is required (pass it here or set source_agent on the client)")
        return agent

    def connection_error(self, call: Call[Any], error: httpx.TransportError) -> BrainConnectionError:
        reason = str(error) or type(error).__name__
        return BrainConnectionError(f"cannot reach {self.url} ({call.method} {call.path}): {reason}",
                                    request_id=self.request_id)
