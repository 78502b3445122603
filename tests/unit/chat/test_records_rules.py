"""Record schemas as JSON Schema, validation messages that name the field, and the query rules."""

from __future__ import annotations

from datetime import timedelta

import pytest
from zengram.chat.domain.records import DataRecord, FieldDef, RecordQuerySpec, RecordSchema, check_fields
from zengram.kernel.errors import InvalidInput

from tests.contract.chat.helpers import T0

FIELDS = {"name": FieldDef(type="string", required=True), "arr": FieldDef(type="number", minimum=0),
          "stage": FieldDef(type="text", enum=["open", "won"]),
          "tags": FieldDef(type="array", items={"type": "string"})}
SCHEMA = RecordSchema(project_id="acme", type_name="deal", fields=FIELDS, created_at=T0, updated_at=T0)


def test_the_json_schema_of_a_definition() -> None:
    assert SCHEMA.json_schema == {
        "type": "object", "additionalProperties": False, "required": ["name"],
        "properties": {"name": {"type": "string"}, "arr": {"type": "number", "minimum": 0},
                       "stage": {"type": "string", "enum": ["open", "won"]},
                       "tags": {"type": "array", "items": {"type": "string"}}}}


@pytest.mark.parametrize(("data", "message"), [
    ({"arr": 5}, "data.name: required"),
    ({"name": 3}, "data.name: 3 is not of type 'string'"),
    ({"name": "x", "arr": -1}, "data.arr: -1 is less than the minimum of 0"),
    ({"name": "x", "stage": "lost"}, "data.stage: 'lost' is not one of ['open', 'won']"),
    ({"name": "x", "tags": ["a", 2]}, "data.tags.1: 2 is not of type 'string'"),
    ({"name": "x", "colour": "red"}, "data.colour: not a field of this schema"),
])
def test_invalid_data_is_refused_naming_the_field(data: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        SCHEMA.validate_data(data)
    assert str(refused.value) == message


def test_field_keywords_must_be_json_schema() -> None:
    with pytest.raises(InvalidInput, match=r"^fields\.code: not valid JSON Schema"):
        check_fields({"code": FieldDef(type="string", pattern="([unclosed")})
    check_fields(FIELDS)


def record(name: str, n: int, **data: object) -> DataRecord:
    moment = T0 + timedelta(seconds=n)
    return DataRecord(record_id=f"rec_{n}", project_id="acme", type_name="deal", data={"name": name, **data},
                      created_at=moment, updated_at=moment)


def test_query_filters_exactly_sorts_and_pages() -> None:
    records = [record("a", 0, arr=5, stage="won"), record("b", 1, arr=50, stage="open"),
               record("c", 2, stage="won"), record("d", 3, arr=1, stage="won"),
               record("e", 4, arr=9).deleted(T0)]
    def names(**query: object) -> list[str]:
        return [r.data["name"] for r in RecordQuerySpec.model_validate(query).apply(records)]
    assert names() == ["d", "c", "b", "a"]  # newest first
    assert names(where={"stage": "won"}) == ["d", "c", "a"]
    assert names(where={"stage": "won"}, order_by="arr") == ["d", "a", "c"]  # lacking the field: last
    assert names(order_by="-arr") == ["b", "a", "d", "c"]
    assert names(order_by="arr", limit=2, offset=1) == ["a", "b"]
    assert names(where={"record_id": "rec_1"}) == ["b"]


def test_the_text_projection_and_merge() -> None:
    deal = record("Renewal", 0, arr=250000, tags=["enterprise"])
    assert deal.summary_text == 'deal: name: Renewal; arr: 250000; tags: ["enterprise"]'
    merged = deal.merged({"arr": None, "stage": "won"}, T0)
    assert merged.data == {"name": "Renewal", "tags": ["enterprise"], "stage": "won"} and merged.revision == 2
