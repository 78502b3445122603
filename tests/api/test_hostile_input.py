"""Hostile input answers 4xx naming the field, never 5xx, and leaves nothing half-written: timestamps whose UTC
conversion overflows, metadata nested hundreds or thousands deep, NaN and Infinity, counters past any store's
integers, booleans given as 0 or "no", and the `Allow` header of a 405."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import Container
from zengram.embedded.app import build_embedded_app
from zengram.settings import Settings

from tests.api.helpers import assert_error, get, memory, search_ids, store
from tests.support import API_KEY, pending_index

OVERFLOWING = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]


@pytest.fixture
def api(settings: Settings, hashing_container: Container) -> Iterator[TestClient]:
    """The embedded app with the cheap embedder: these tests are about refusals, not about meaning."""
    with TestClient(build_embedded_app(settings, hashing_container), headers={"x-api-key": API_KEY}) as client:
        yield client


def import_(client: TestClient, data: list[Any]) -> dict[str, Any]:
    response = client.post("/export/import", json={"operator_approved": True, "data": data})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def raw_json(client: TestClient, method: str, path: str, body: str) -> Any:
    """Sends `body` as it is: the JSON a hostile client writes, not what a JSON library would."""
    return client.request(method, path, content=body.encode(), headers={"content-type": "application/json"})


def nested_objects(depth: int, innermost: str = "1") -> str:
    return '{"a":' * depth + innermost + "}" * depth


# -- timestamps ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("moment", OVERFLOWING)
@pytest.mark.parametrize(("path", "params", "field"), [
    ("/memory/query", {"type": "events"}, "since"),
    ("/memory/search", {"q": "deploy"}, "at_time"),
    ("/briefing", {}, "since"),
    ("/export", {}, "since"),
])
def test_a_timestamp_overflowing_in_utc_is_a_400_naming_the_parameter(
    api: TestClient, path: str, params: dict[str, str], field: str, moment: str
) -> None:
    assert_error(api.get(path, params={**params, field: moment}), 400, field)


@pytest.mark.parametrize("moment", OVERFLOWING)
@pytest.mark.parametrize("field", ["valid_from", "valid_to"])
def test_a_stored_timestamp_overflowing_in_utc_is_a_400_and_stores_nothing(
    api: TestClient, field: str, moment: str
) -> None:
    message = assert_error(api.post("/memory", json=memory("Acme's contract term", type="fact", **{field: moment})),
                           400, field)

    assert "0001" in message and "9999" in message
    assert api.get("/export").json()["count"] == 0


@pytest.mark.parametrize("moment", OVERFLOWING)
@pytest.mark.parametrize("field", ["created_at", "updated_at", "valid_from", "valid_to", "superseded_at",
                                   "deleted_at", "last_observed_at", "last_accessed_at"])
def test_an_imported_record_with_an_overflowing_timestamp_fails_alone(
    api: TestClient, field: str, moment: str
) -> None:
    result = import_(api, [
        memory("Imported before the bad one", id="before"),
        memory("The bad one", id="bad", **{field: moment}),
        memory("Imported after the bad one", id="after"),
    ])

    assert (result["imported"], result["failed"]) == (2, 1)
    assert result["results"][1]["error"].startswith(f"{field}:")
    assert api.get("/memory/bad").status_code == 404


def test_memories_at_the_ends_of_the_calendar_are_stored_indexed_and_found(
    api: TestClient, hashing_container: Container
) -> None:
    # Given imported events created at the first and the last moment Python can hold
    result = import_(api, [
        memory("Quarterly review of the ledger archive", id="first", created_at="0001-01-01T00:00:00Z"),
        memory("Quarterly review of the ledger archive, again", id="last", created_at="9999-12-31T23:59:59.999Z"),
    ])

    # Then both are stored and indexed (their context window reaches past the calendar's ends, held there)
    assert result["imported"] == 2 and result["indexed"] is True
    assert pending_index(hashing_container) == []
    assert {"first", "last"} <= set(search_ids(api, "ledger archive review"))
    # And every time filter takes the extreme moments
    for moment in ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z"):
        for path, params in [("/memory/query", {"type": "events", "since": moment}),
                             ("/memory/search", {"q": "ledger", "at_time": moment}),
                             ("/briefing", {"since": moment}), ("/export", {"since": moment})]:
            assert api.get(path, params=params).status_code == 200, (path, moment)


# -- nesting -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [320, 5_000, 200_000])
def test_metadata_nested_hundreds_or_thousands_deep_is_a_400_naming_metadata(api: TestClient, depth: int) -> None:
    stored = store(api, "Acme's deploy pipeline is green")

    for method, path, body, where in [
        ("POST", "/memory", '{"type":"event","content":"deep","source_agent":"n8n","metadata":'
                            + nested_objects(depth) + "}", "metadata.a.a"),
        ("POST", "/memory", '{"type":"event","content":"deep","source_agent":"n8n","metadata":{"x":'
                            + "[" * depth + "]" * depth + "}}", "metadata.x.0"),
        ("PATCH", f"/memory/{stored['id']}", '{"metadata":' + nested_objects(depth) + "}", "metadata.a.a"),
    ]:
        message = assert_error(raw_json(api, method, path, body), 400, where)
        assert message.endswith("JSON may nest at most 32 levels")

    assert get(api, stored["id"])["metadata"] == {}
    assert api.get("/export").json()["count"] == 1


def test_an_import_nested_thousands_deep_is_a_400_naming_the_record(api: TestClient) -> None:
    body = ('{"operator_approved":true,"data":[{"type":"event","content":"fine","source_agent":"n8n"},'
            '{"type":"event","content":"deep","source_agent":"n8n","metadata":' + nested_objects(5_000) + "}]}")

    message = assert_error(raw_json(api, "POST", "/export/import", body), 400, "data.1.metadata")

    assert "32 levels" in message
    assert api.get("/export").json()["count"] == 0


def test_metadata_one_level_too_deep_is_refused_by_the_metadata_rule(api: TestClient) -> None:
    response = api.post("/memory", json=memory("Too deep by one", metadata={"a": {"b": {"c": {"d": 1}}}}))

    assert assert_error(response, 400, "metadata") == "metadata: may nest at most 3 levels"


def test_strings_full_of_brackets_are_not_nesting(api: TestClient) -> None:
    text = "[{" * 2_000 + '\\"' + "]}" * 2_000

    created = store(api, "Bracket soup in metadata", metadata={"raw": text})

    assert get(api, created["id"])["metadata"] == {"raw": text}


# -- NaN and Infinity --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_in_metadata_are_a_400_naming_where(api: TestClient, number: str) -> None:
    stored = store(api, "Acme's error budget")
    body = '{"type":"event","content":"score","source_agent":"n8n","metadata":{"score":{"values":[1,' + number + "]}}}"

    assert_error(raw_json(api, "POST", "/memory", body), 400, "metadata.score.values.1")
    assert_error(raw_json(api, "PATCH", f"/memory/{stored['id']}", '{"metadata":{"ratio":' + number + "}}"), 400,
                 "metadata.ratio")

    assert get(api, stored["id"])["metadata"] == {}
    assert api.get("/export").json()["count"] == 1


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e999"])
def test_an_imported_record_with_a_non_finite_number_fails_alone(api: TestClient, number: str) -> None:
    body = ('{"operator_approved":true,"data":['
            '{"id":"good","type":"event","content":"fine","source_agent":"n8n"},'
            '{"id":"bad-metadata","type":"event","content":"a","source_agent":"n8n","metadata":{"s":' + number + "}},"
            '{"id":"bad-confidence","type":"event","content":"b","source_agent":"n8n","confidence":' + number + "}]}")

    response = raw_json(api, "POST", "/export/import", body)

    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [item["status"] for item in results] == ["imported", "failed", "failed"]
    assert results[1]["error"].startswith("metadata.s:") and results[2]["error"].startswith("confidence:")
    assert [record["id"] for record in api.get("/export").json()["memories"]] == ["good"]


# -- integers ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value"), [
    ("observation_count", 10**30), ("access_count", 10**30), ("revision", 10**30),
    ("observation_count", 2**63), ("access_count", -1), ("revision", 0),
])
def test_an_imported_counter_out_of_bounds_fails_alone_and_nothing_is_half_written(
    api: TestClient, field: str, value: int
) -> None:
    result = import_(api, [
        memory("Stored first", id="first"),
        memory("Out of bounds", id="out-of-bounds", **{field: value}),
        memory("Stored last", id="last"),
    ])

    assert [item["status"] for item in result["results"]] == ["imported", "failed", "imported"]
    assert result["results"][1]["error"].startswith(f"{field}:")
    assert api.get("/memory/out-of-bounds").status_code == 404
    assert {record["id"] for record in api.get("/export").json()["memories"]} == {"first", "last"}


def test_the_largest_counters_an_import_takes_round_trip(api: TestClient) -> None:
    import_(api, [memory("Seen very often", id="busy", observation_count=10**9, access_count=10**9,
                         revision=10**9)])

    record = get(api, "busy")
    assert (record["observation_count"], record["access_count"], record["revision"]) == (10**9, 10**9, 10**9)
    assert api.patch("/memory/busy", json={"importance": "high"}).status_code == 200
    assert get(api, "busy")["revision"] == 10**9 + 1


# -- booleans ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dry_run", [0, 1, "no", "false", "", None])
def test_reclassify_takes_only_json_booleans_for_dry_run(api: TestClient, dry_run: Any) -> None:
    store(api, "Acme pays its invoices through Stripe")
    before = api.get("/entities/Stripe").json()["type"]

    response = api.post("/entities/reclassify", json={
        "reclassifications": [{"name": "Stripe", "new_type": "person"}], "dry_run": dry_run})

    assert_error(response, 400, "dry_run")
    assert api.get("/entities/Stripe").json()["type"] == before


@pytest.mark.parametrize("approval", ["1", "yes", "on", "True"])
def test_import_approval_as_a_query_parameter_is_true_and_nothing_looser(api: TestClient, approval: str) -> None:
    response = api.post("/export/import", params={"operator_approved": approval},
                        json={"data": [memory("Approved loosely")]})

    assert_error(response, 400, "operator_approved")
    assert api.get("/export").json()["count"] == 0


@pytest.mark.parametrize(("field", "value"), [("active", "yes"), ("active", 0), ("consolidated", "no"),
                                              ("consolidated", 1)])
def test_an_imported_record_takes_only_json_booleans(api: TestClient, field: str, value: Any) -> None:
    result = import_(api, [memory("Flag given loosely", **{field: value})])

    assert result["failed"] == 1 and result["results"][0]["error"].startswith(f"{field}:")


# -- 405 ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("OPTIONS", "/memory/some-id", "DELETE, GET, PATCH"),
    ("PUT", "/memory/some-id", "DELETE, GET, PATCH"),
    ("PUT", "/memory/search", "GET"),
    ("DELETE", "/memory", "POST"),
    ("POST", "/clients/acme-corp", "DELETE, GET, PUT"),
    ("GET", "/export/import", "POST"),
    ("POST", "/health", "GET"),
])
def test_a_405_lists_every_method_of_the_path(api: TestClient, method: str, path: str, allowed: str) -> None:
    response = api.request(method, path)

    assert_error(response, 405)
    assert response.headers["allow"] == allowed
