"""The `ApiKeyStore` contract (see zengram.memory.ports.ApiKeyStore), on SQLite and DynamoDB."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from zengram.kernel.errors import Conflict
from zengram.kernel.keys import ApiKey, KeyDraft, Role, mint_key, verify_key
from zengram.memory.ports import ApiKeyStore

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(api_key_store: ApiKeyStore) -> ApiKeyStore:
    assert isinstance(api_key_store, ApiKeyStore)
    return api_key_store


def minted(name: str = "acme-agent", *, role: Role = Role.WRITE, clients: list[str] | None = None,
           at: datetime = T0) -> tuple[ApiKey, str]:
    draft = KeyDraft(name=name, role=role, clients="all" if clients is None and role is not Role.ADMIN else clients)
    key = mint_key(draft, at)
    return key.record, key.key


def test_create_then_get_returns_every_field(store: ApiKeyStore) -> None:
    record, _ = minted(clients=["acme-corp", "acme.eu:1", "global"])
    store.create(record)
    assert store.get(record.id) == record
    assert record.clients == ["acme-corp", "acme.eu:1", "global"]


def test_a_key_for_every_client_reads_back_as_such(store: ApiKeyStore) -> None:
    record, _ = minted("ops", role=Role.ADMIN)
    store.create(record)
    stored = store.get(record.id)
    assert stored is not None and stored.clients is None and stored.role is Role.ADMIN


def test_unknown_key_is_none(store: ApiKeyStore) -> None:
    assert store.get("0" * 32) is None


def test_the_stored_record_verifies_the_key_it_was_minted_with(store: ApiKeyStore) -> None:
    record, key = minted(clients=["acme-corp"])
    other_record, other_key = minted("globex-agent", clients=["globex"])
    store.create(record)
    store.create(other_record)
    principal = verify_key(key, store.get)
    assert principal is not None and principal.key_id == record.id
    assert principal.scope.clients == frozenset({"acme-corp"})
    assert verify_key(key[:-1] + ("A" if key[-1] != "A" else "B"), store.get) is None
    assert verify_key(other_key, store.get) is not None


def test_creating_an_existing_id_is_a_conflict_and_changes_nothing(store: ApiKeyStore) -> None:
    record, _ = minted(clients=["acme-corp"])
    store.create(record)
    impostor = record.model_copy(update={"name": "impostor", "role": Role.ADMIN, "clients": None})
    with pytest.raises(Conflict):
        store.create(impostor)
    assert store.get(record.id) == record


def test_list_all_is_oldest_first_and_keeps_revoked_keys(store: ApiKeyStore) -> None:
    records = [minted(f"agent-{n}", clients=["acme-corp"], at=T0 + timedelta(minutes=n))[0] for n in (2, 0, 1)]
    for record in records:
        store.create(record)
    store.revoke(records[0].id, T0 + timedelta(hours=1))
    listed = store.list_all()
    assert [key.name for key in listed] == ["agent-0", "agent-1", "agent-2"]
    assert [key.is_revoked for key in listed] == [False, False, True]


def test_list_all_of_an_empty_store_is_empty(store: ApiKeyStore) -> None:
    assert store.list_all() == []


def test_revoke_sets_revoked_at_once(store: ApiKeyStore) -> None:
    record, key = minted(clients=["acme-corp"])
    store.create(record)
    first = store.revoke(record.id, T0 + timedelta(hours=1))
    again = store.revoke(record.id, T0 + timedelta(hours=2))
    assert first is not None and first.revoked_at == T0 + timedelta(hours=1)
    assert again is not None and again.revoked_at == T0 + timedelta(hours=1)
    assert store.get(record.id) == first
    assert verify_key(key, store.get) is None  # a revoked key lets no one in, at once


def test_revoking_an_unknown_key_is_none_and_creates_nothing(store: ApiKeyStore) -> None:
    assert store.revoke("f" * 32, T0) is None
    assert store.get("f" * 32) is None
    assert store.list_all() == []


def test_concurrent_creates_of_distinct_keys_all_land(store: ApiKeyStore) -> None:
    records = [minted(f"agent-{n}", clients=[f"client-{n}"], at=T0 + timedelta(seconds=n))[0] for n in range(12)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(store.create, records))
    assert [key.id for key in store.list_all()] == [record.id for record in records]


def test_the_store_never_holds_the_key_itself(store: ApiKeyStore) -> None:
    record, key = minted(clients=["acme-corp"])
    store.create(record)
    stored = store.get(record.id)
    assert stored is not None
    secret = key.split("_", 2)[2]  # zgk_<id>_<secret>; the secret itself may hold "_"
    assert secret not in stored.model_dump_json() and secret not in stored.secret_hash
