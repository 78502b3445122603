"""`BrainClient`: the synchronous SDK. Its methods are `BrainApi`'s (api.py), each sending its call and waiting."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TypeVar, Unpack

import httpx

from zengram.client import calls
from zengram.client.api import BrainApi, first_export_page, next_export_page
from zengram.client.base import DEFAULT_TIMEOUT, SLOW_TIMEOUT, ClientConfig
from zengram.client.bodies import ExportBody
from zengram.client.calls import Call, ExportOptions
from zengram.client.core import SyncCore
from zengram.client.retry import RetryPolicy

T = TypeVar("T")


class BrainClient(BrainApi, SyncCore):
    """Synchronous client for the Zengram API.

        with BrainClient(url="http://127.0.0.1:8084", api_key=key, source_agent="my-agent") as brain:
            brain.store(type="fact", content="The sky is blue", key="sky-color")
            hits = brain.search("sky color").results

    `url`/`api_key` default to `BRAIN_API_URL`/`BRAIN_API_KEY`. 429s wait for `Retry-After` and connection
    failures back off, up to `max_retries` times; then a `BrainError` subclass carries the server's text.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        source_agent: str | None = None,
        *,
        slow_timeout: float = SLOW_TIMEOUT,
        retry: RetryPolicy | None = None,
        request_id: str | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(ClientConfig.build(url, api_key, timeout, max_retries, source_agent, slow_timeout, retry,
                                            request_id))
        self._http = httpx.Client(base_url=self._config.url, transport=transport)
        self._sleep = sleep

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> BrainClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        attempt = 0
        delay: float | None
        while True:
            try:
                response = self._http.request(call.method, call.path, **self._request_options(call))
            except httpx.TransportError as error:
                delay = self._delay_after_error(call, error, attempt)
            else:
                delay = self._delay_after_response(response, attempt)
                if delay is None:
                    return calls.read_response(call, response)
            self._sleep(delay)
            attempt += 1

    def export_all(self, **options: Unpack[ExportOptions]) -> Iterator[ExportBody]:
        """Every export page in turn (oldest first, so paging is stable while memories arrive), from `offset` on,
        until `has_more` is false."""
        page_options: ExportOptions | None = first_export_page(options)
        while page_options is not None:
            page = self.export(**page_options)
            yield page
            page_options = next_export_page(page_options, page)
