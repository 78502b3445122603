"""Which outside URLs the server may call (docs/chat.md, "Outbound calls"): nothing unless an operator allowed it.

`ZENGRAM_OUTBOUND_ALLOW` lists URL prefixes (`https://api.example.com/v1/`) or hosts (`api.example.com`,
`*.example.com`); a URL is allowed when it is http(s), has no user info, and matches one. Even then every address
its host resolves to must be public: loopback, private, link-local (cloud metadata), shared, reserved, multicast
and unspecified addresses are refused unless `ZENGRAM_OUTBOUND_ALLOW_NETWORKS` names a network holding them. The
adapter resolves the host and checks each address (`check_address`) before connecting, and checks each redirect's
target again. Every refusal is an `InvalidInput` naming the request field the URL came from.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from zengram.kernel.errors import InvalidInput

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Destination:
    scheme: str
    host: str
    port: int


def _split(url: str, field: str) -> Destination:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise InvalidInput(field, "not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput(field, "must be an http(s) URL with a host")
    if parts.username is not None or parts.password is not None:
        raise InvalidInput(field, "must not carry user info (put credentials in auth_secret)")
    return Destination(parts.scheme, parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80))


def _normalized(url: str) -> str:
    parts = urlsplit(url.strip())
    return parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower()).geturl()


def literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def is_public(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not (address.is_private or address.is_loopback or address.is_link_local or address.is_reserved
                or address.is_multicast or address.is_unspecified or not address.is_global)


@dataclass(frozen=True)
class OutboundPolicy:
    allow: tuple[str, ...] = ()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def of(cls, allow: Sequence[str], networks: Sequence[str]) -> OutboundPolicy:
        try:
            parsed = tuple(ipaddress.ip_network(network.strip(), strict=False) for network in networks)
        except ValueError as error:
            raise ValueError(f"ZENGRAM_OUTBOUND_ALLOW_NETWORKS: {error}") from None
        return cls(tuple(entry.strip() for entry in allow if entry.strip()), parsed)

    def _matches(self, url: str, destination: Destination) -> bool:
        normalized = _normalized(url)
        for entry in self.allow:
            if "://" in entry:
                prefix = _normalized(entry)
                bounded = prefix if prefix.endswith(("/", "?", "=")) else prefix + "/"
                if normalized == prefix or normalized.startswith(bounded):
                    return True
            elif entry.startswith("*."):
                if destination.host.endswith(entry[1:].lower()):
                    return True
            elif destination.host == entry.lower().strip("[]"):
                return True
        return False

    def check_url(self, url: str, field: str) -> Destination:
        """The URL's destination when the allow-list admits it (and its host, if an address, is allowed)."""
        destination = _split(url, field)
        if not self._matches(url, destination):
            if not self.allow:
                raise InvalidInput(field, "outbound calls are off: no URL is allowed (an operator lists them in "
                                   "ZENGRAM_OUTBOUND_ALLOW)")
            raise InvalidInput(field, f"{destination.host} is not in the operator's outbound allow-list "
                               "(ZENGRAM_OUTBOUND_ALLOW)")
        literal = literal_address(destination.host)
        if literal is not None:
            self.check_address(destination.host, literal, field)
        return destination

    def check_address(self, host: str, address: IPAddress, field: str) -> None:
        """Refuses an address that is not public, unless an allowed network holds it."""
        if is_public(address) or any(address in network for network in self.networks):
            return
        shown = host if host.strip("[]") == str(address) else f"{host} resolves to {address}, which"
        raise InvalidInput(field, f"{shown} is a loopback, private or reserved address; outbound calls there are "
                           "refused (an operator may allow a network in ZENGRAM_OUTBOUND_ALLOW_NETWORKS)")


@dataclass(frozen=True)
class OutboundRequest:
    """One outside call; `field` names where its URL came from (for refusals)."""

    method: str
    url: str
    field: str
    headers: Mapping[str, str]
    timeout: float
    params: Mapping[str, str] | None = None
    body: str | None = None


@dataclass(frozen=True)
class OutboundResponse:
    """The answer, or `status` 0 with `error` when there was none (unreachable, timed out, too many redirects)."""

    status: int
    body: bytes
    duration_ms: int
    error: str | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300
