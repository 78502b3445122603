"""The key model (zengram.kernel.keys): minting, salted hashes, verification in constant time, tenant scopes."""

from __future__ import annotations

import hmac
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError
from zengram.kernel.errors import Forbidden
from zengram.kernel.keys import (
    BOOTSTRAP_PRINCIPAL,
    ApiKey,
    ClientFilter,
    KeyDraft,
    Principal,
    Role,
    TenantScope,
    authenticate,
    hash_key,
    key_id_of,
    key_matches,
    mint_key,
    presented_key,
    verify_bootstrap_key,
    verify_key,
)
from zengram.memory.domain.models import Memory
from zengram.memory.domain.tenant_entities import EntityTally

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def minted(clients: list[str] | None = None, role: Role = Role.WRITE) -> tuple[ApiKey, str]:
    key = mint_key(KeyDraft(name="agent", role=role, clients=clients or ["acme"]), T0)
    return key.record, key.key


def test_a_minted_key_names_its_record_and_is_stored_as_a_salted_hash() -> None:
    record, key = minted()
    other_record, other_key = minted()

    assert key_id_of(key) == record.id and record.id != other_record.id and key != other_key
    assert record.secret_hash.startswith("hmac-sha256$") and key not in record.secret_hash
    assert key_matches(key, record.secret_hash) and not key_matches(other_key, record.secret_hash)
    # The same key under another salt hashes differently: equal keys are not visible in the store.
    assert hash_key(key, b"1" * 16) != hash_key(key, b"2" * 16)


@pytest.mark.parametrize("stored", ["", "hmac-sha256", "md5$00$00", "hmac-sha256$zz$00", "hmac-sha256$00$"])
def test_a_malformed_stored_hash_matches_nothing(stored: str) -> None:
    _, key = minted()
    assert key_matches(key, stored) is False


@pytest.mark.parametrize("presented", ["", "zgk_", "zgk_" + "0" * 32, "zgk_" + "g" * 32 + "_" + "A" * 43,
                                       "zgk_" + "0" * 32 + "_" + "A" * 42, "ZGK_" + "0" * 32 + "_" + "A" * 43])
def test_only_well_formed_keys_have_an_id(presented: str) -> None:
    assert key_id_of(presented) is None


def test_verify_key_accepts_the_key_and_nothing_else() -> None:
    record, key = minted(["acme", "global"])
    lookup = {record.id: record}.get

    principal = verify_key(key, lookup)

    assert principal is not None and principal.key_id == record.id and principal.role is Role.WRITE
    assert principal.scope == TenantScope(frozenset({"acme", "global"}))
    assert verify_key(key[:-1] + ("B" if key[-1] == "A" else "A"), lookup) is None
    assert verify_key(key, {}.get) is None
    revoked = record.model_copy(update={"revoked_at": T0})
    assert verify_key(key, {record.id: revoked}.get) is None


def test_every_comparison_is_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Known key, wrong secret, unknown id, bootstrap key: each decided by hmac.compare_digest."""
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    record, key = minted()
    verify_key(key, {record.id: record}.get)
    verify_key(key[:-1] + ("B" if key[-1] == "A" else "A"), {record.id: record}.get)
    verify_key(key, {}.get)  # unknown id: a stand-in hash is still compared, so it costs the same
    verify_bootstrap_key("guess", "the-bootstrap-key")
    assert len(calls) == 4


def test_the_bootstrap_key_is_admin_of_every_client() -> None:
    assert verify_bootstrap_key("the-bootstrap-key", "the-bootstrap-key") is BOOTSTRAP_PRINCIPAL
    assert BOOTSTRAP_PRINCIPAL.role is Role.ADMIN and BOOTSTRAP_PRINCIPAL.scope.clients is None
    assert verify_bootstrap_key("the-bootstrap-key", "") is None  # none configured lets no one in
    assert verify_bootstrap_key("the-bootstrap-ke", "the-bootstrap-key") is None


def test_roles_include_the_ones_below() -> None:
    assert Role.ADMIN.includes(Role.WRITE) and Role.WRITE.includes(Role.READ) and Role.READ.includes(Role.READ)
    assert not Role.READ.includes(Role.WRITE) and not Role.WRITE.includes(Role.ADMIN)


def test_a_scope_narrows_reads_and_refuses_other_clients() -> None:
    scope = TenantScope.of(["globex", "acme"])
    assert scope.narrow(None) == ClientFilter(client_ids=("acme", "globex"))
    assert scope.narrow("acme") == ClientFilter(client_id="acme")
    with pytest.raises(Forbidden, match=r"^client_id: 'initech'"):
        scope.narrow("initech")
    assert TenantScope.EVERYONE.narrow(None) == ClientFilter()
    assert TenantScope.EVERYONE.narrow("initech") == ClientFilter(client_id="initech")
    assert not scope.allows("global") and TenantScope.EVERYONE.allows("global")


@pytest.mark.parametrize(("body", "valid"), [
    ({"role": "admin"}, True),
    ({"role": "admin", "clients": "all"}, True),
    ({"role": "admin", "clients": ["acme"]}, False),
    ({"role": "read", "clients": "all"}, True),
    ({"role": "read"}, False),
    ({"role": "write", "clients": []}, False),
    ({"role": "write", "clients": ["acme", "global"]}, True),
    ({"role": "write", "clients": [f"c{n}" for n in range(101)]}, False),
])
def test_a_key_draft_says_which_clients_a_role_sees(body: dict[str, Any], valid: bool) -> None:
    if valid:
        KeyDraft(name="n", **body)
    else:
        with pytest.raises(ValidationError):
            KeyDraft(name="n", **body)


def mem(content: str, entities: list[tuple[str, str]], *, at: datetime = T0, deleted: bool = False) -> Memory:
    return Memory.model_validate({
        "id": content, "type": "event", "content": content, "content_hash": content, "source_agent": "a",
        "client_id": "acme", "created_at": at, "updated_at": at, "deleted_at": at if deleted else None,
        "entities": [{"name": name, "type": type_} for name, type_ in entities]})


def test_an_entity_tally_counts_a_scope_like_the_registry() -> None:
    later = datetime(2026, 3, 5, tzinfo=UTC)
    tally = EntityTally.of([
        mem("a", [("PostgreSQL", "technology"), ("Django", "technology")]),
        mem("b", [("PostgreSQL", "system"), ("Redis", "technology")], at=later),
        mem("c", [("PostgreSQL", "technology"), ("Kafka", "technology")], deleted=True),  # unlinked
    ])
    postgres = tally.get("postgresql")
    assert postgres is not None and postgres.mention_count == 2 and postgres.type.value == "system"  # newest
    assert (postgres.first_seen, postgres.last_seen) == (T0, later)
    assert [record.name for record in tally.records()] == ["PostgreSQL", "Django", "Redis"]
    assert [(edge.name, edge.strength) for edge in tally.related("postgresql", 10)] == [("Django", 1), ("Redis", 1)]
    assert tally.get("kafka") is None
    stats = tally.stats(top=1)
    assert stats.total == 3 and stats.by_type == {"system": 1, "technology": 2}
    assert [record.name for record in stats.top_mentioned] == ["PostgreSQL"]


# ---- one check for every host, claims for the functions behind the authorizer, the headers keys travel in ----

def test_authenticate_asks_the_store_for_scoped_keys_only_and_the_bootstrap_key_only_when_needed() -> None:
    record, key = minted(["acme"])
    asked: list[str] = []

    def bootstrap() -> str:
        asked.append("bootstrap")
        return "the-bootstrap-key"

    def scoped(presented: str) -> Principal | None:
        asked.append("store")
        return verify_key(presented, {record.id: record}.get)

    assert authenticate(key, scoped=scoped, bootstrap_key=bootstrap) == record.principal
    assert asked == ["store"]
    assert authenticate("the-bootstrap-key", scoped=scoped, bootstrap_key=bootstrap) == BOOTSTRAP_PRINCIPAL
    assert asked == ["store", "bootstrap"]  # not a scoped key's shape: no store read
    assert authenticate(key + "x", scoped=scoped, bootstrap_key=bootstrap) is None


@pytest.mark.parametrize("clients", [None, ["acme", "globex"], ["global"]])
def test_claims_carry_a_principal_as_strings_and_back(clients: list[str] | None) -> None:
    principal = Principal("0" * 32, "an agent, with \"quotes\"", Role.READ, TenantScope.of(clients))
    claims = principal.claims()
    assert all(isinstance(value, str) for value in claims.values())
    assert Principal.from_claims(claims) == principal


@pytest.mark.parametrize("claims", [
    {}, {"key_id": "k", "name": "n", "role": "owner", "clients": "null"},
    {"key_id": "k", "name": "n", "role": "read", "clients": "not json"},
    {"key_id": "k", "name": "n", "role": "read", "clients": '{"acme": 1}'},
    {"key_id": "k", "name": "n", "role": "read", "clients": "[1, 2]"},
    {"key_id": 7, "name": "n", "role": "read", "clients": "null"},
])
def test_claims_of_another_shape_name_nobody(claims: dict[str, Any]) -> None:
    assert Principal.from_claims(claims) is None


@pytest.mark.parametrize(("headers", "expected"), [
    ({"x-api-key": "k1"}, "k1"),
    ({"authorization": "Bearer k2"}, "k2"),
    ({"authorization": "bearer   k2 "}, "k2"),
    ({"x-mnexium-key": "k3"}, "k3"),
    ({"x-api-key": "k1", "authorization": "Bearer k2", "x-mnexium-key": "k3"}, "k1"),
    ({"x-api-key": " ", "authorization": "Bearer k2"}, "k2"),
    ({"authorization": "Basic dXNlcjpwYXNz"}, None),
    ({"authorization": "Bearer "}, None),
    ({}, None),
])
def test_the_key_is_read_from_the_first_key_header_present(headers: dict[str, str], expected: str | None) -> None:
    assert presented_key(headers) == expected
