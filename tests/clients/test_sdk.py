"""The Python SDK against a running embedded server: typed answers, the server's errors, request ids."""

from __future__ import annotations

import asyncio
import socket

import pytest
from zengram.client import (
    AsyncBrainClient,
    AuthenticationError,
    BrainClient,
    BrainConnectionError,
    ConflictError,
    ForbiddenError,
    InvalidRequestError,
    NotFoundError,
)
from zengram.client.bodies import QueryBody, SearchBody, StoreBody
from zengram.embedded.background import BackgroundServer
from zengram.memory.domain.models import Memory

from tests.clients.conftest import SleepRecorder
from tests.support import API_KEY


def test_store_search_query_get_with_the_servers_models(brain: BrainClient) -> None:
    stored = brain.store(type="fact", content="Acme Corp uses Next.js 14 with App Router", client_id="acme-corp",
                         key="acme-tech-stack", importance="high")

    assert isinstance(stored, StoreBody) and stored.deduplicated is False
    search = brain.search("which frontend framework does acme use", client_id="acme-corp", limit=5)
    assert isinstance(search, SearchBody)
    assert [hit["id"] for hit in search.results] == [stored.id]
    facts = brain.query("facts", key="acme-tech-stack", client_id="acme-corp")
    assert isinstance(facts, QueryBody) and facts.results[0]["id"] == stored.id
    memory = brain.get(stored.id)
    assert isinstance(memory, Memory) and memory.source_agent == "sdk-test" and memory.key == "acme-tech-stack"


def test_update_delete_restore_round_trip(brain: BrainClient) -> None:
    old = brain.store(type="fact", content="The deploy window is Tuesday", key="deploy-window")
    new = brain.store(type="fact", content="The deploy window is Thursday", key="deploy-window")
    assert new.supersedes == old.id

    updated = brain.update(new.id, importance="critical")
    restored = brain.restore(old.id)
    deleted = brain.delete(new.id, reason="wrong day")

    assert updated.updated_fields == ["importance"]
    assert restored.restored and restored.superseded == [new.id]
    assert deleted.deleted and deleted.reason == "wrong day" and deleted.deleted_by == "sdk-test"
    assert brain.get(old.id).active and not brain.get(new.id).active


def test_errors_carry_the_servers_text_and_status(brain: BrainClient, live_server: BackgroundServer) -> None:
    with pytest.raises(NotFoundError) as missing:
        brain.get("no-such-memory")
    with pytest.raises(InvalidRequestError) as invalid:
        brain.search("anything", limit=1000)
    with pytest.raises(AuthenticationError) as unauthorised, BrainClient(url=live_server.url, api_key="wrong") as bad:
        bad.search("anything")
    deleted = brain.store(type="event", content="A memory to delete")
    brain.delete(deleted.id)
    with pytest.raises(ConflictError):
        brain.update(deleted.id, content="too late")

    assert missing.value.status_code == 404 and "no-such-memory" in missing.value.error
    assert invalid.value.error.startswith("limit:")
    assert unauthorised.value.status_code == 401
    assert missing.value.request_id  # the server's x-request-id, to find the request in its logs


def test_client_side_mistakes_are_value_errors_before_any_request(brain: BrainClient) -> None:
    with pytest.raises(ValueError, match="at least one field"):
        brain.update("some-id")
    with pytest.raises(ValueError, match="source_agent"), BrainClient(url=brain.url, api_key=API_KEY) as anonymous:
        anonymous.store(type="event", content="who am I")
    assert brain.last_request_id is None  # nothing was sent


def test_request_id_is_passed_through(brain: BrainClient) -> None:
    traced = brain.with_request_id("trace-4711")
    traced.search("anything")
    with pytest.raises(NotFoundError) as missing:
        traced.get("no-such-memory")

    assert traced.last_request_id == "trace-4711"
    assert missing.value.request_id == "trace-4711"
    brain.health()
    assert brain.last_request_id not in (None, "trace-4711")  # the original client sends none of its own


def test_export_pages_and_import_needs_approval(brain: BrainClient) -> None:
    ids = [brain.store(type="event", content=f"Deployment number {n} went fine").id for n in range(5)]

    pages = list(brain.export_all(limit=2))
    with pytest.raises(ForbiddenError) as refused:
        brain.import_(pages[0].memories)
    again = brain.import_(pages[0].memories, operator_approved=True)

    assert [len(page.memories) for page in pages] == [2, 2, 1]
    assert [record["id"] for page in pages for record in page.memories] == ids
    assert refused.value.error.startswith("operator_approved:")
    assert (again.imported, again.skipped) == (0, 2)


def test_briefing_is_typed(brain: BrainClient) -> None:
    brain.store(type="decision", content="We move the API to Lambda", source_agent="architect")

    briefing = brain.briefing("2000-01-01T00:00:00Z", agent="sdk-test")

    assert briefing.summary.total_entries == 1
    assert [entry["content"] for entry in briefing.decisions] == ["We move the API to Lambda"]


def test_async_client_speaks_the_same_api(live_server: BackgroundServer) -> None:
    async def scenario() -> tuple[str, list[str], int | None]:
        async with AsyncBrainClient(url=live_server.url, api_key=API_KEY, source_agent="async-test") as brain:
            stored = await brain.store(type="fact", content="Billing runs on Stripe", key="billing-provider")
            search = await brain.search("payment provider billing", limit=3)
            try:
                await brain.get("no-such-memory")
            except NotFoundError as error:
                status = error.status_code
            return stored.id, [hit["id"] for hit in search.results], status

    stored_id, hits, status = asyncio.run(scenario())

    assert hits == [stored_id]
    assert status == 404


def test_an_unreachable_server_is_a_connection_error_after_the_retries(sleeps: SleepRecorder) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]  # nothing listens here once the probe is closed

    with pytest.raises(BrainConnectionError) as unreachable, BrainClient(
        url=f"http://127.0.0.1:{closed_port}", api_key=API_KEY, max_retries=2, sleep=sleeps
    ) as brain:
        brain.search("anything")

    assert unreachable.value.status_code is None
    assert f"127.0.0.1:{closed_port}" in unreachable.value.error
    assert sleeps.waits == [0.5, 1.0]


def test_async_client_beyond_search(live_server: BackgroundServer) -> None:
    async def scenario() -> dict[str, object]:
        async with AsyncBrainClient(url=live_server.url, api_key=API_KEY, source_agent="async-test") as brain:
            old = await brain.store(type="fact", content="The office is in Leeds", key="office")
            new = await brain.store(type="fact", content="The office is in York", key="office")
            await brain.update(new.id, importance="high")
            restored = await brain.restore(old.id)
            deleted = await brain.delete(new.id, reason="moved back")
            pages = [page async for page in brain.export_all(active_only=False, limit=1)]
            briefing = await brain.briefing("2000-01-01T00:00:00Z")
            await brain.put_client("acme", name="Acme")
            return {"restored": restored.superseded, "new": new.id, "deleted": deleted.deleted_by,
                    "pages": [len(page.memories) for page in pages], "briefing": briefing.summary.total_entries,
                    "clients": [client.client_id for client in (await brain.list_clients()).clients],
                    "status": (await brain.consolidation_status()).is_running,
                    "entities": (await brain.entity_stats()).total}

    seen = asyncio.run(scenario())

    assert seen["restored"] == [seen["new"]] and seen["deleted"] == "async-test"
    assert seen["pages"] == [1, 1] and seen["briefing"] == 1
    assert seen["clients"] == ["acme"] and seen["status"] is False
    assert seen["entities"] == 1  # the writing agent (its memories have no client: global is no entity)
