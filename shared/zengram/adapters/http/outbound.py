"""The chat layer's `OutboundHttp` (chat/ports.py) over httpx: integrations' calls and webhook deliveries.

Only URLs the operator allowed are called (zengram/chat/domain/outbound.py). The check is made where the socket is
opened: a network backend resolves the host, checks every address and connects to a checked one, so a name that
resolves to a public address when checked and to a private one when connecting (DNS rebinding) gains nothing.
Redirects are followed here (at most `MAX_REDIRECTS`), each target checked against the allow-list again; proxies
from the environment are ignored (a proxy would connect for us, unchecked). Answers are read up to `MAX_BODY`.
"""

from __future__ import annotations

import contextvars
import socket
import time
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from zengram.chat.domain.outbound import OutboundPolicy, OutboundRequest, OutboundResponse, literal_address

MAX_REDIRECTS = 3
MAX_BODY = 1_000_000
_FIELD: contextvars.ContextVar[str] = contextvars.ContextVar("outbound_field", default="url")


def _addresses(host: str, port: int) -> list[str]:
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise httpcore.ConnectError(f"{host} does not resolve ({error.strerror})") from None
    return list(dict.fromkeys(str(info[4][0]) for info in found))


class _CheckedBackend(httpcore.NetworkBackend):
    """Connects only to addresses the policy allows: the host is resolved once, here, and each address checked."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self._policy = policy
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        field = _FIELD.get()
        addresses = _addresses(host, port)
        for address in addresses:
            parsed = literal_address(address.split("%", 1)[0])
            if parsed is not None:
                self._policy.check_address(host, parsed, field)  # raises InvalidInput: nothing is connected
        return self._inner.connect_tcp(addresses[0], port, timeout=timeout, local_address=local_address,
                                       socket_options=socket_options)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not outbound destinations")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _CheckedTransport(httpx.HTTPTransport):
    def __init__(self, policy: OutboundPolicy) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(trust_env=False),
                                             network_backend=_CheckedBackend(policy), max_connections=20)


class HttpxOutbound:
    def __init__(self, policy: OutboundPolicy, *, user_agent: str = "zengram-integrations") -> None:
        self._policy = policy
        self._client = httpx.Client(transport=_CheckedTransport(policy), trust_env=False, follow_redirects=False,
                                    headers={"user-agent": user_agent})

    def close(self) -> None:
        self._client.close()

    def send(self, request: OutboundRequest) -> OutboundResponse:
        started = time.monotonic()
        token = _FIELD.set(request.field)
        try:
            return self._follow(request, started)
        except httpx.HTTPError as error:
            return OutboundResponse(0, b"", _elapsed(started), error=_reason(error))
        finally:
            _FIELD.reset(token)

    def _follow(self, request: OutboundRequest, started: float) -> OutboundResponse:
        url, method, body = request.url, request.method, request.body
        for _ in range(MAX_REDIRECTS + 1):
            self._policy.check_url(url, request.field)
            sent = self._client.build_request(method, url, headers=dict(request.headers),
                                              params=dict(request.params or {}) or None,
                                              content=body.encode("utf-8") if body is not None else None,
                                              timeout=request.timeout)
            response = self._client.send(sent, stream=True)
            try:
                if response.is_redirect and "location" in response.headers:
                    url = str(response.url.join(response.headers["location"]))
                    if response.status_code in (301, 302, 303) and method != "GET":
                        method, body = "GET", None
                    continue
                return OutboundResponse(response.status_code, _read(response), _elapsed(started))
            finally:
                response.close()
        return OutboundResponse(0, b"", _elapsed(started), error=f"more than {MAX_REDIRECTS} redirects")


def _read(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_BODY:
            break
    return b"".join(chunks)[:MAX_BODY]


def _elapsed(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _reason(error: httpx.HTTPError) -> str:
    if isinstance(error, httpx.TimeoutException):
        return "timed out"
    text = str(error) or type(error).__name__
    return text[:300]
