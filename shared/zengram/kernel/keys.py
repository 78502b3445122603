"""API keys: who is calling, what they may do, and which tenants they may see (docs/keys.md).

Pure: minting a key, hashing it, and verifying a presented key against its stored record. The store lookup is
passed in, so the API middleware and the API Gateway authorizer verify keys with the same function (`authenticate`),
and the authorizer hands the verified principal to the functions as claims (`Principal.claims`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Annotated, ClassVar, Literal, Protocol, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from zengram.kernel.errors import Forbidden
from zengram.kernel.identifiers import ClientId
from zengram.kernel.text_rules import NotBlank


class OwnedRecord(Protocol):
    """A record that belongs to one client (a memory)."""

    @property
    def id(self) -> str: ...

    @property
    def client_id(self) -> str: ...


Owned = TypeVar("Owned", bound=OwnedRecord)

# A scoped key reads `zgk_<key id>_<secret>`: the id finds the record in one read, the secret is checked against
# its salted hash. 128 bits of id and 256 bits of secret, both from `secrets`.
KEY_PREFIX = "zgk_"
KEY_ID_PATTERN = r"^[0-9a-f]{32}$"
_PRESENTED_KEY = re.compile(r"^zgk_(?P<key_id>[0-9a-f]{32})_(?P<secret>[A-Za-z0-9_-]{43})$")
HASH_SCHEME = "hmac-sha256"
BOOTSTRAP_KEY_ID = "bootstrap"
ALL_CLIENTS = "all"
MAX_KEY_CLIENTS = 100


class Role(StrEnum):
    """What a key may do; each role includes the ones before it."""

    READ = "read"  # read the memories of its clients
    WRITE = "write"  # also store, change, delete and import them, and manage their fingerprints
    ADMIN = "admin"  # every client, key management, consolidation, reclassification

    def includes(self, needed: Role) -> bool:
        return _RANK[self] >= _RANK[needed]


_RANK = {Role.READ: 0, Role.WRITE: 1, Role.ADMIN: 2}


@dataclass(frozen=True)
class TenantScope:
    """The client_ids a caller may see and change; `clients` None means every client (`global` included).

    `global` is a client_id like any other here: a scoped key sees shared memories only if it lists it."""

    clients: frozenset[str] | None = None

    EVERYONE: ClassVar[TenantScope]

    @classmethod
    def of(cls, clients: Iterable[str] | None) -> TenantScope:
        return cls(None if clients is None else frozenset(clients))

    @property
    def is_restricted(self) -> bool:
        return self.clients is not None

    def allows(self, client_id: str) -> bool:
        return self.clients is None or client_id in self.clients

    def require(self, client_id: str, field: str = "client_id") -> None:
        """Forbidden unless `client_id` is one of this scope's clients."""
        if not self.allows(client_id):
            raise Forbidden(f"{field}: '{client_id}' is not one of this API key's clients")

    def require_memory(self, memory: Owned) -> Owned:
        if not self.allows(memory.client_id):
            raise Forbidden(f"memory {memory.id}: it belongs to a client this API key may not access")
        return memory

    def narrow(self, client_id: str | None) -> ClientFilter:
        """The client filter of a read that asked for `client_id` (None: any): that client when the scope allows
        it (else Forbidden), otherwise the scope's own clients. A read without client_id is limited, not refused."""
        if client_id is not None:
            self.require(client_id)
            return ClientFilter(client_id=client_id)
        return ClientFilter(client_ids=None if self.clients is None else tuple(sorted(self.clients)))

    def sorted_clients(self) -> list[str] | None:
        return None if self.clients is None else sorted(self.clients)


TenantScope.EVERYONE = TenantScope()


@dataclass(frozen=True)
class ClientFilter:
    """How a port filters by tenant: one `client_id`, or any of `client_ids` (None for both: no filter)."""

    client_id: str | None = None
    client_ids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Principal:
    """The caller a request was authenticated as. Never holds the key itself."""

    key_id: str
    name: str
    role: Role
    scope: TenantScope

    def may(self, needed: Role) -> bool:
        return self.role.includes(needed)

    @property
    def budget_key(self) -> str:
        """What the rate limiter counts this caller under: each key has budgets of its own."""
        return f"key:{self.key_id}"

    def claims(self) -> dict[str, str]:
        """The principal as flat strings, the shape an API Gateway authorizer's context carries to the functions.
        `clients` is JSON: a sorted list, or null for every client."""
        return {"key_id": self.key_id, "name": self.name, "role": self.role.value,
                "clients": json.dumps(self.scope.sorted_clients())}

    @classmethod
    def from_claims(cls, claims: Mapping[str, object]) -> Principal | None:
        """The principal `claims` describe, or None when they are not `claims()`'s shape."""
        try:
            key_id, name, role = (claims["key_id"], claims["name"], Role(str(claims["role"])))
            clients = json.loads(str(claims["clients"]))
        except (KeyError, ValueError):
            return None
        listed = isinstance(clients, list) and all(isinstance(client, str) for client in clients)
        if not isinstance(key_id, str) or not isinstance(name, str) or not (clients is None or listed):
            return None
        return cls(key_id, name, role, TenantScope.of(clients))


BOOTSTRAP_PRINCIPAL = Principal(BOOTSTRAP_KEY_ID, "bootstrap admin key (BRAIN_API_KEY)", Role.ADMIN,
                                TenantScope.EVERYONE)

KeyName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), NotBlank()]


class KeyDraft(BaseModel):
    """Body of POST /admin/keys. `clients` is a list of client_ids or "all"; an admin key sees every client
    (its `clients` may be left out), a read or write key must say which it may see."""

    # The schema of `_clients_fit_the_role`, so the OpenAPI document states it.
    model_config = ConfigDict(extra="forbid", defer_build=True, json_schema_extra={"allOf": [{
        "if": {"properties": {"role": {"const": "admin"}}, "required": ["role"]},
        "then": {"properties": {"clients": {"anyOf": [{"const": "all"}, {"type": "null"}]}}},
        "else": {"required": ["clients"], "properties": {"clients": {"not": {"type": "null"}}}},
    }]})

    name: KeyName
    role: Role
    clients: Annotated[list[ClientId], Field(min_length=1, max_length=MAX_KEY_CLIENTS)] | Literal["all"] | None = None

    @model_validator(mode="after")
    def _clients_fit_the_role(self) -> Self:
        if self.role is Role.ADMIN:
            if self.clients not in (None, ALL_CLIENTS):
                raise ValueError('clients: an admin key sees every client; leave clients out or send "all"')
        elif self.clients is None:
            raise ValueError(f'clients: required for a {self.role.value} key: a list of client_ids, or "all"')
        return self

    @property
    def client_set(self) -> frozenset[str] | None:
        return None if self.clients in (None, ALL_CLIENTS) else frozenset(self.clients or ())


class ApiKey(BaseModel):
    """A stored key: everything but the secret, of which only a salted hash is kept."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # built on first use, not at init (#38)

    id: Annotated[str, StringConstraints(pattern=KEY_ID_PATTERN)]
    name: str
    role: Role
    clients: list[str] | None  # sorted; None: every client
    secret_hash: str  # "hmac-sha256$<salt hex>$<digest hex>"
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    @property
    def principal(self) -> Principal:
        return Principal(self.id, self.name, self.role, TenantScope.of(self.clients))


@dataclass(frozen=True)
class MintedKey:
    """A new key: its record, and the key text, which exists only here and in the creation answer."""

    record: ApiKey
    key: str


def mint_key(draft: KeyDraft, created_at: datetime) -> MintedKey:
    key_id = secrets.token_hex(16)
    key = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    clients = draft.client_set
    record = ApiKey(id=key_id, name=draft.name, role=draft.role,
                    clients=None if clients is None else sorted(clients),
                    secret_hash=hash_key(key, secrets.token_bytes(16)), created_at=created_at)
    return MintedKey(record, key)


def hash_key(key: str, salt: bytes) -> str:
    """HMAC-SHA256 of the whole key under a per-key salt. The key carries 256 random bits, so a slow KDF would
    add latency to every request without making a guess any likelier to succeed."""
    digest = hmac.new(salt, key.encode(), hashlib.sha256).hexdigest()
    return f"{HASH_SCHEME}${salt.hex()}${digest}"


def key_matches(key: str, secret_hash: str) -> bool:
    """Whether `key` is the one `secret_hash` was made from; the digests are compared in constant time."""
    scheme, _, rest = secret_hash.partition("$")
    salt_hex, _, digest = rest.partition("$")
    if scheme != HASH_SCHEME or not salt_hex or not digest:
        return False
    try:
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        return False
    expected = hmac.new(salt, key.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), digest.encode())


def is_key_id(text: str) -> bool:
    return re.fullmatch(KEY_ID_PATTERN, text) is not None


def key_id_of(presented: str) -> str | None:
    """The key id of a well-formed scoped key, else None (then it can only be the bootstrap key)."""
    match = _PRESENTED_KEY.match(presented)
    return match["key_id"] if match else None


# A stand-in hash, so an unknown key id costs the same HMAC and compare as a known one.
_NO_SUCH_KEY = hash_key("", b"\0" * 16)


def verify_key(presented: str, lookup: Callable[[str], ApiKey | None]) -> Principal | None:
    """The principal `presented` authenticates as, or None: a scoped key whose record exists, is not revoked
    and whose hash matches. `lookup` reads one record by id (ApiKeyStore.get). Never raises for bad input."""
    key_id = key_id_of(presented)
    if key_id is None:
        return None
    record = lookup(key_id)
    matches = key_matches(presented, record.secret_hash if record is not None else _NO_SUCH_KEY)
    if record is None or not matches or record.is_revoked:
        return None
    return record.principal


def verify_bootstrap_key(presented: str, bootstrap_key: str) -> Principal | None:
    """The bootstrap admin key (BRAIN_API_KEY), compared in constant time."""
    if bootstrap_key and hmac.compare_digest(presented.encode(), bootstrap_key.encode()):
        return BOOTSTRAP_PRINCIPAL
    return None


def authenticate(presented: str, *, scoped: Callable[[str], Principal | None],
                 bootstrap_key: Callable[[], str]) -> Principal | None:
    """The one check of a presented key, for the API middleware and the API Gateway authorizer alike: a scoped key
    (`zgk_…`) by its stored hash (`scoped`: KeyService.authenticate), else the bootstrap admin key. `bootstrap_key`
    is asked only then, and may raise a ZengramError (none configured: 503)."""
    if key_id_of(presented) is not None:
        principal = scoped(presented)
        if principal is not None:
            return principal
    return verify_bootstrap_key(presented, bootstrap_key())


# Where callers put their key: the Zengram API's header, a bearer token (the document base's clients), and the
# chat layer's header (its clients). Header names in lower case, as ASGI and API Gateway (payload 2.0) give them.
KEY_HEADERS = ("x-api-key", "authorization", "x-mnexium-key")


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a request carries, from the first of KEY_HEADERS it has (`Authorization` only as `Bearer <key>`)."""
    for header in KEY_HEADERS:
        value = (headers.get(header) or "").strip()
        key = bearer_token(value) if header == "authorization" else value
        if key:
            return key
    return None


def bearer_token(value: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` value, else None."""
    scheme, _, token = value.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
