"""ClientService: the fingerprint cache behind client_id auto-resolution, and its refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from zengram.adapters.sqlite.clients import SQLiteClientStore
from zengram.kernel.errors import InvalidInput, NotFound
from zengram.memory.domain.clients import ClientDraft, ClientFingerprint
from zengram.memory.services.clients import ClientService

from tests.support import TEST_SCRUBBER, ManualClock


class CountingStore(SQLiteClientStore):
    """The SQLite store, counting how often the fingerprint list is read."""

    list_calls = 0

    def list_all(self) -> list[ClientFingerprint]:
        self.list_calls += 1
        return super().list_all()


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[CountingStore]:
    adapter = CountingStore(tmp_path / "records.sqlite3")
    yield adapter
    adapter.close()


@pytest.fixture
def monotonic() -> FakeMonotonic:
    return FakeMonotonic()


@pytest.fixture
def service(store: CountingStore, monotonic: FakeMonotonic) -> ClientService:
    return ClientService(store, ManualClock(), scrubber=TEST_SCRUBBER, cache_seconds=30, monotonic=monotonic)


def another_process_puts(store: CountingStore, client_id: str, alias: str) -> None:
    """A write that bypasses this service, as another server process or Lambda instance would make it."""
    now = ManualClock().now()
    store.put(ClientFingerprint(client_id=client_id, aliases=[alias], created_at=now, updated_at=now))


def test_resolution_reads_the_list_once_per_cache_period(
    service: ClientService, store: CountingStore, monotonic: FakeMonotonic
) -> None:
    service.put("acme", ClientDraft(aliases=["Acme"]))
    assert [service.resolve("Acme called") for _ in range(5)] == ["acme"] * 5
    assert store.list_calls == 1


def test_other_processes_writes_show_after_the_cache_period(
    service: ClientService, store: CountingStore, monotonic: FakeMonotonic
) -> None:
    assert service.resolve("Globex called") == "global"
    another_process_puts(store, "globex", "Globex")
    monotonic.now += 29.9
    assert service.resolve("Globex called") == "global"  # still the cached list
    monotonic.now += 0.1
    assert service.resolve("Globex called") == "globex"
    assert store.list_calls == 2


def test_local_writes_invalidate_the_cache_at_once(service: ClientService) -> None:
    assert service.resolve("Initech called") == "global"
    service.put("initech", ClientDraft(aliases=["Initech"]))
    assert service.resolve("Initech called") == "initech"
    service.delete("initech")
    assert service.resolve("Initech called") == "global"


def test_a_zero_cache_period_reads_every_time(store: CountingStore, monotonic: FakeMonotonic) -> None:
    service = ClientService(store, ManualClock(), scrubber=TEST_SCRUBBER, cache_seconds=0, monotonic=monotonic)
    service.resolve("a")
    service.resolve("b")
    assert store.list_calls == 2


def test_global_is_not_a_client_and_unknown_ids_are_not_found(service: ClientService) -> None:
    with pytest.raises(InvalidInput, match=r"^client_id:"):
        service.put("global", ClientDraft(aliases=["Everyone"]))
    with pytest.raises(NotFound):
        service.get("nobody")
    with pytest.raises(NotFound):
        service.delete("nobody")
