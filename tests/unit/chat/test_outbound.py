"""The outbound allow-list (zengram/chat/domain/outbound.py) and the httpx adapter that enforces it where sockets are
opened: only operator-allowed URLs, and never a loopback, private or link-local address unless a network is
allowed explicitly, even when an allowed name resolves there."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import pytest
from zengram.adapters.http.outbound import HttpxOutbound
from zengram.chat.domain.outbound import OutboundPolicy, OutboundRequest
from zengram.kernel.errors import InvalidInput

from tests.integration_receiver import IntegrationReceiver


@pytest.fixture
def receiver() -> Iterator[IntegrationReceiver]:
    with IntegrationReceiver() as running:
        running.source = {"ok": True}
        yield running


def refusal(policy: OutboundPolicy, url: str, field: str = "endpoint_url") -> str:
    with pytest.raises(InvalidInput) as refused:
        policy.check_url(url, field)
    return str(refused.value)


def test_nothing_is_allowed_by_default() -> None:
    assert "outbound calls are off" in refusal(OutboundPolicy(), "https://api.example.com/")


@pytest.mark.parametrize("url", [
    "https://api.example.com/v1/x", "https://API.example.com/v1/", "https://hooks.example.org/a",
    "http://deep.hooks.example.org/b"])
def test_prefixes_and_hosts_admit_what_they_name(url: str) -> None:
    policy = OutboundPolicy.of(["https://api.example.com/v1", "*.example.org"], [])
    assert policy.check_url(url, "endpoint_url").host.endswith(("example.com", "example.org"))


@pytest.mark.parametrize("url", [
    "https://api.example.com/v10",  # a prefix ends at a path boundary
    "https://api.example.com.evil.net/v1/", "http://api.example.com/v1/",  # another host, another scheme
    "https://example.org.evil.net/", "ftp://api.example.com/v1/"])
def test_everything_else_is_refused_naming_the_field(url: str) -> None:
    message = refusal(OutboundPolicy.of(["https://api.example.com/v1", "*.example.org"], []), url, "webhook_url")
    assert message.startswith("webhook_url:")


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
                                     "100.64.0.1", "0.0.0.0", "[::1]", "[fe80::1]", "[::ffff:127.0.0.1]"])
def test_private_addresses_are_refused_even_when_listed(address: str) -> None:
    policy = OutboundPolicy.of([address.strip("[]")], [])
    assert "loopback, private or reserved" in refusal(policy, f"http://{address}/")


def test_an_allowed_network_admits_its_private_addresses_only() -> None:
    policy = OutboundPolicy.of(["127.0.0.1", "10.0.0.5"], ["127.0.0.1/32"])
    assert policy.check_url("http://127.0.0.1:9000/x", "endpoint_url").port == 9000
    assert "private" in refusal(policy, "http://10.0.0.5/")
    policy.check_address("h", ipaddress.ip_address("8.8.8.8"), "endpoint_url")  # public: fine


def test_a_name_that_resolves_to_loopback_is_refused_before_connecting(receiver: IntegrationReceiver) -> None:
    port = receiver.base.rsplit(":", 1)[1]
    outbound = HttpxOutbound(OutboundPolicy.of(["localhost"], []))
    try:
        with pytest.raises(InvalidInput) as refused:
            outbound.send(OutboundRequest("GET", f"http://localhost:{port}/source", "endpoint_url", {}, 2.0))
    finally:
        outbound.close()
    assert str(refused.value).startswith("endpoint_url: localhost resolves to")
    assert receiver.received == []  # nothing reached the server


def test_an_allowed_loopback_receiver_is_called_and_redirects_are_checked(receiver: IntegrationReceiver) -> None:
    outbound = HttpxOutbound(OutboundPolicy.of([f"{receiver.base}/"], ["127.0.0.1/32"]))
    try:
        answer = outbound.send(OutboundRequest("GET", receiver.url("/source"), "endpoint_url", {}, 2.0))
        assert (answer.status, answer.body) == (200, b'{"ok": true}')
        hop = receiver.url(f"/redirect?to={receiver.url('/source')}")
        assert outbound.send(OutboundRequest("GET", hop, "endpoint_url", {}, 2.0)).status == 200  # inside: followed
        with pytest.raises(InvalidInput, match=r"^endpoint_url: 169\.254\.169\.254"):
            outbound.send(OutboundRequest("GET", receiver.url("/redirect?to=http://169.254.169.254/"),
                                          "endpoint_url", {}, 2.0))
    finally:
        outbound.close()


def test_no_answer_is_a_status_0_not_an_exception() -> None:
    outbound = HttpxOutbound(OutboundPolicy.of(["http://127.0.0.1:9/"], ["127.0.0.1/32"]))
    try:
        answer = outbound.send(OutboundRequest("GET", "http://127.0.0.1:9/x", "endpoint_url", {}, 1.0))
    finally:
        outbound.close()
    assert answer.status == 0 and answer.error
