"""The SDK core (zengram/client/core.py): each `BrainApi` endpoint, written once, becomes a method of each client
with the endpoint's own name, docstring and arguments, answering what its call reads."""

from __future__ import annotations

import inspect

import pytest
from zengram.client import AsyncBrainClient, BrainClient
from zengram.client.api import BrainApi


def test_each_client_holds_every_endpoint_as_its_own_method() -> None:
    for client in (BrainClient, AsyncBrainClient):
        method = vars(client)["reflect"]
        assert method.__qualname__ == f"{client.__name__}.reflect"
        assert method.__doc__ == BrainApi.reflect.build.__doc__
        signature = inspect.signature(method)
        assert list(signature.parameters) == ["self", "topic", "client_id", "limit"]
        assert signature.return_annotation == "ReflectResult"
    assert not inspect.iscoroutinefunction(BrainClient.reflect)
    assert inspect.iscoroutinefunction(AsyncBrainClient.reflect)


def test_a_subclass_keeps_the_methods_it_overrides() -> None:
    class Quiet(BrainClient):
        def health(self) -> str:  # type: ignore[override]
            return "quiet"

    with Quiet(url="http://127.0.0.1:9", api_key="k") as quiet:
        assert quiet.health() == "quiet"


def test_an_api_without_a_way_to_send_says_so() -> None:
    api = object.__new__(BrainApi)
    with pytest.raises(TypeError, match="sends nothing"):
        api.health()  # type: ignore[call-overload]
