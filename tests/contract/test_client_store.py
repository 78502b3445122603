"""The `ClientStore` contract (see zengram.memory.ports.ClientStore), on SQLite and DynamoDB."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from zengram.memory.domain.clients import ClientFingerprint
from zengram.memory.ports import ClientStore

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(client_store: ClientStore) -> ClientStore:
    assert isinstance(client_store, ClientStore)
    return client_store


def fingerprint(client_id: str = "acme-corp", *, at: datetime = T0, **fields: Any) -> ClientFingerprint:
    return ClientFingerprint(client_id=client_id, created_at=at, updated_at=at, **fields)


def test_put_then_get_returns_every_field(store: ClientStore) -> None:
    given = fingerprint(name="Acme Corporation", aliases=["Acme", "ACME Corp"], people=["Jane Doe", "Raúl Núñez"],
                        domains=["acme.com"], keywords=["rockets", "anvils"])
    stored = store.put(given)
    assert stored == given  # revision 1, nothing lost or reordered
    assert store.get("acme-corp") == given


def test_unknown_client_is_none(store: ClientStore) -> None:
    assert store.get("nobody") is None


def test_empty_lists_and_no_name_round_trip(store: ClientStore) -> None:
    given = fingerprint("bare")
    assert store.put(given) == given
    assert store.get("bare") == given


def test_replace_keeps_created_at_and_bumps_revision(store: ClientStore) -> None:
    store.put(fingerprint(name="Acme", aliases=["Acme"], keywords=["rockets"]))
    later = T0 + timedelta(days=2)
    replaced = store.put(fingerprint(at=later, aliases=["Acme Corp"]))
    assert replaced.created_at == T0
    assert replaced.updated_at == later
    assert replaced.revision == 2
    assert replaced.name is None and replaced.aliases == ["Acme Corp"] and replaced.keywords == []  # replaced whole
    assert store.get("acme-corp") == replaced


def test_delete_reports_whether_one_existed(store: ClientStore) -> None:
    store.put(fingerprint())
    assert store.delete("acme-corp") is True
    assert store.get("acme-corp") is None
    assert store.delete("acme-corp") is False
    assert store.list_all() == []


def test_a_deleted_client_put_again_starts_over(store: ClientStore) -> None:
    store.put(fingerprint())
    store.put(fingerprint())
    store.delete("acme-corp")
    again = store.put(fingerprint(at=T0 + timedelta(hours=1)))
    assert again.revision == 1 and again.created_at == T0 + timedelta(hours=1)


def test_list_all_is_ordered_by_client_id(store: ClientStore) -> None:
    for client_id in ["globex", "acme-corp", "initech", "Zeta", "acme"]:
        store.put(fingerprint(client_id))
    assert [f.client_id for f in store.list_all()] == ["Zeta", "acme", "acme-corp", "globex", "initech"]


def test_client_ids_are_stored_exactly(store: ClientStore) -> None:
    """Ids with the characters the API allows (`.`, `:`, `_`, `-`) stay apart and read back as given."""
    ids = ["a.b", "a:b", "a_b", "a-b", "A-B"]
    for client_id in ids:
        store.put(fingerprint(client_id, aliases=[client_id]))
    stored = {client_id: store.get(client_id) for client_id in ids}
    assert {client_id: f.aliases if f else None for client_id, f in stored.items()} == {i: [i] for i in ids}


def test_concurrent_puts_of_one_client_lose_nothing(store: ClientStore) -> None:
    writers = 16
    puts = [fingerprint(at=T0 + timedelta(seconds=i), keywords=[f"k{i}"]) for i in range(writers)]
    with ThreadPoolExecutor(max_workers=writers) as pool:
        results = list(pool.map(store.put, puts))
    assert sorted(r.revision for r in results) == list(range(1, writers + 1))  # each write its own revision
    first = next(r for r in results if r.revision == 1)
    assert {r.created_at for r in results} == {first.created_at}  # the first writer's created_at, kept by all
    final = store.get("acme-corp")
    assert final is not None and final.revision == writers and final.created_at == first.created_at
    last = next(r for r in results if r.revision == writers)
    assert final.keywords == last.keywords  # the last write wins whole, never a mix of two
