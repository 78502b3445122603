"""The SDK core the sync and the async client share: connection state, the retry decisions, and `endpoint`, which
turns one method written once (it returns the `Call` to make) into a method of each client (it sends the call:
`BrainClient` waits for the answer, `AsyncBrainClient` awaits it). Only `_send` differs between the two."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

import httpx

from zengram.client.base import ClientConfig
from zengram.client.calls import Call

P = ParamSpec("P")
T = TypeVar("T")


class ClientCore:
    """What both clients hold and do, whatever the way they send."""

    _config: ClientConfig
    _owns_http: bool
    last_request_id: str | None

    def __init__(self, config: ClientConfig) -> None:
        self._config = config
        self._owns_http = True
        self.last_request_id = None

    @property
    def url(self) -> str:
        return self._config.url

    def with_request_id(self, request_id: str) -> Self:
        """A view of this client that sends `x-request-id: request_id` (same connection pool)."""
        view = copy.copy(self)
        view._config = dataclasses.replace(self._config, request_id=request_id)
        view._owns_http = False
        return view

    def _request_options(self, call: Call[Any]) -> dict[str, Any]:
        """The keyword arguments of `httpx.Client.request` (and `AsyncClient.request`) after method and path."""
        return {"params": call.params, "json": call.body, "headers": self._config.headers(),
                "timeout": self._config.timeout_for(call)}

    def _delay_after_error(self, call: Call[Any], error: httpx.TransportError, attempt: int) -> float:
        """How long to wait before trying again; `BrainConnectionError` when the retries are spent."""
        delay = self._config.retry.delay_after_error(error, call.method, attempt)
        if delay is None:
            raise self._config.connection_error(call, error) from error
        return delay

    def _delay_after_response(self, response: httpx.Response, attempt: int) -> float | None:
        """How long to wait before trying again (a 429 or 503 with retries left), or None: read this answer."""
        self.last_request_id = response.headers.get("x-request-id")
        return self._config.retry.delay_after_response(response, attempt)


class SyncCore(ClientCore):
    """A client whose `_send` returns the answer; each `endpoint` of its class becomes a plain method."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _install(cls, _sync_method)

    def _send(self, call: Call[T]) -> T:
        raise NotImplementedError


class AsyncCore(ClientCore):
    """A client whose `_send` is a coroutine; each `endpoint` of its class becomes an `async def` method."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _install(cls, _async_method)

    async def _send(self, call: Call[T]) -> T:
        raise NotImplementedError


class Endpoint(Generic[P, T]):
    """One public method of both clients (see `endpoint`). Read on a `SyncCore` it is a method returning `T`, on an
    `AsyncCore` a coroutine method returning `T`; the clients hold those methods themselves (`_install`)."""

    def __init__(self, build: Callable[Concatenate[Any, P], Call[T]]) -> None:
        self.build = build

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Self: ...
    @overload
    def __get__(self, client: SyncCore, owner: type[Any]) -> Callable[P, T]: ...
    @overload
    def __get__(self, client: AsyncCore, owner: type[Any]) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, client: ClientCore | None, owner: type[Any]) -> Any:
        if client is None:
            return self
        raise TypeError(f"{owner.__name__} sends nothing: a client class derives from SyncCore or AsyncCore")


def endpoint(build: Callable[Concatenate[Any, P], Call[T]]) -> Endpoint[P, T]:
    """Marks a method that builds the `Call` of one endpoint: its signature and docstring are the clients'."""
    return Endpoint(build)


def _install(cls: type[ClientCore], method: Callable[[Endpoint[..., Any], str, type], Callable[..., Any]]) -> None:
    """Gives `cls` each endpoint of its bases as a method of its own, as if written in its body."""
    for name in dir(cls):
        if name not in vars(cls) and isinstance(found := inspect.getattr_static(cls, name), Endpoint):
            setattr(cls, name, method(found, name, cls))


def _sync_method(found: Endpoint[..., Any], name: str, cls: type) -> Callable[..., Any]:
    build = found.build

    def method(self: SyncCore, *args: Any, **kwargs: Any) -> Any:
        return self._send(build(self, *args, **kwargs))

    return _dressed(method, build, name, cls)


def _async_method(found: Endpoint[..., Any], name: str, cls: type) -> Callable[..., Any]:
    build = found.build

    async def method(self: AsyncCore, *args: Any, **kwargs: Any) -> Any:
        return await self._send(build(self, *args, **kwargs))

    return _dressed(method, build, name, cls)


def _dressed(method: Callable[..., Any], build: Callable[..., Any], name: str, cls: type) -> Callable[..., Any]:
    """`method` with the name, docstring and signature of `build`, answering what the `Call` reads."""
    answer = _answer(build.__annotations__.get("return"))
    method.__name__ = name
    method.__qualname__ = f"{cls.__qualname__}.{name}"
    method.__module__ = cls.__module__
    method.__doc__ = build.__doc__
    method.__annotations__ = {**build.__annotations__, "return": answer}
    method.__signature__ = inspect.signature(build).replace(return_annotation=answer)  # type: ignore[attr-defined]
    return method


def _answer(annotation: object) -> object:
    """`Call[StoreBody]` -> `StoreBody` (annotations are strings here: `from __future__ import annotations`)."""
    if isinstance(annotation, str) and annotation.startswith("Call[") and annotation.endswith("]"):
        return annotation[len("Call["):-1]
    return annotation
