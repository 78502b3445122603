"""The `RecordBase` contract (zengram/chat/ports.py), for every adapter."""

from __future__ import annotations

import pytest
from zengram.chat.domain.records import DataRecord, FieldDef, RecordSchema
from zengram.chat.domain.tenancy import new_id
from zengram.kernel.errors import StaleRevision

from tests.contract.chat.conftest import ChatStores
from tests.contract.chat.helpers import at


def schema(type_name: str, seconds: float = 0, project: str = "acme") -> RecordSchema:
    return RecordSchema(project_id=project, type_name=type_name, created_at=at(seconds), updated_at=at(seconds),
                        fields={"name": FieldDef(type="string", required=True), "arr": FieldDef(type="number")})


def record(data: dict[str, object], seconds: float = 0, type_name: str = "account",
           project: str = "acme") -> DataRecord:
    return DataRecord(record_id=new_id("rec"), project_id=project, type_name=type_name, data=data,
                      created_at=at(seconds), updated_at=at(seconds))


def test_schemas_are_replaced_by_type_name(stores: ChatStores) -> None:
    stores.records.put_schema(schema("deal"))
    first = stores.records.put_schema(schema("account"))
    replaced = stores.records.put_schema(schema("account", seconds=10).model_copy(update={"description": "v2"}))
    stores.records.put_schema(schema("ticket", project="globex"))
    assert replaced.created_at == first.created_at and replaced.description == "v2"
    assert stores.records.schema("acme", "account") == replaced
    assert [s.type_name for s in stores.records.schemas("acme")] == ["account", "deal"]
    assert stores.records.schema("acme", "ticket") is None


def test_records_are_saved_at_the_revision_read(stores: ChatStores) -> None:
    techcorp = stores.records.insert(record({"name": "TechCorp", "arr": 5}))
    assert stores.records.get("acme", "account", techcorp.record_id) == techcorp
    assert stores.records.get("acme", "deal", techcorp.record_id) is None
    updated = stores.records.save(techcorp.merged({"arr": 7}, at(1)), techcorp.revision)
    with pytest.raises(StaleRevision):
        stores.records.save(techcorp.merged({"arr": 9}, at(2)), techcorp.revision)
    assert stores.records.get_many([techcorp.record_id]) == {techcorp.record_id: updated}


def test_records_of_a_type_oldest_first_without_deleted_ones(stores: ChatStores) -> None:
    made = [stores.records.insert(record({"name": f"n{n}"}, seconds=n)) for n in range(4)]
    stores.records.insert(record({"name": "deal"}, type_name="deal"))
    stores.records.insert(record({"name": "other project"}, project="globex"))
    stores.records.save(made[1].deleted(at(9)), made[1].revision)
    assert [r.data["name"] for r in stores.records.records("acme", "account")] == ["n0", "n2", "n3"]


def test_writes_wait_for_the_index_until_marked(stores: ChatStores) -> None:
    first = stores.records.insert(record({"name": "A"}))
    assert [r.record_id for r in stores.records.pending_index(10)] == [first.record_id]
    stores.records.mark_indexed({first.record_id: first.revision})
    assert stores.records.pending_index(10) == []
    changed = stores.records.save(first.merged({"arr": 1}, at(1)), first.revision)
    stores.records.mark_indexed({first.record_id: first.revision})
    assert [r.revision for r in stores.records.pending_index(10)] == [changed.revision]
    assert [r.record_id for r in stores.records.iter_all()] == [first.record_id]
