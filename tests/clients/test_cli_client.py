"""The `zengram` client commands against a running server: output, --json, exit codes, and the
export → import round trip through JSON Lines files."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner
from zengram.assembly.containers import build_container
from zengram.client import BrainClient
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.embedded.cli import app
from zengram.settings import Settings

from tests.clients.conftest import EMPTY_PLAN
from tests.llm_server import ScriptedLLMServer
from tests.support import API_KEY, HashingEmbedder, TickingClock

ENV = {"BRAIN_API_KEY": API_KEY, "BRAIN_MAX_RETRIES": "0", "COLUMNS": "200"}  # wide: table rows on one line


def run(server_url: str, *arguments: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [*arguments, "--url", server_url], env=ENV)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def empty_server(tmp_path: Path) -> Iterator[BackgroundServer]:
    """A second server with its own data folder, for restoring into."""
    settings = Settings(data_dir=tmp_path / "restore", api_key=API_KEY, rate_limit_enabled=False)
    container = build_container(settings, embedder=HashingEmbedder(), clock=TickingClock())
    with BackgroundServer(build_embedded_app(settings, container)) as server:
        yield server
    container.close()


def test_store_then_search_shows_a_table(live_server: BackgroundServer) -> None:
    code, stored, _ = run(live_server.url, "store", "fact", "Acme invoices are due in 30 days", "--client", "acme",
                          "--fact-key", "acme-payment-terms", "--agent", "finance-bot")
    assert code == 0 and stored.startswith("stored ")

    code, table, _ = run(live_server.url, "search", "invoice payment terms", "--client", "acme")

    assert code == 0
    assert "Acme invoices are due in 30 days" in table and "finance-bot" in table and "1 results" in table


def test_search_only_looks_unless_asked_to_count_accesses(live_server: BackgroundServer) -> None:
    """Issue 37: a newcomer's searches from a shell must not reorder what agents later find (ADR 0042)."""
    with BrainClient(url=live_server.url, api_key=API_KEY, source_agent="cli-test") as brain:
        memory_id = brain.store("fact", "Initech pays invoices by wire transfer", key="initech-payment").id
        for _ in range(2):
            assert run(live_server.url, "search", "Initech wire transfer")[0] == 0
        assert brain.get(memory_id).access_count == 0

        assert run(live_server.url, "search", "Initech wire transfer", "--count-access")[0] == 0
        deadline = time.monotonic() + 30  # the access is counted after the response is sent
        while brain.get(memory_id).access_count == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert brain.get(memory_id).access_count == 1


def test_search_takes_a_date_window(live_server: BackgroundServer) -> None:
    with BrainClient(url=live_server.url, api_key=API_KEY, source_agent="cli-test") as brain:
        brain.store("event", "Renewed the TLS certificates", valid_from="2026-01-05T10:00:00Z")
        brain.store("event", "Renewed the domain names", valid_from="2026-02-05T10:00:00Z")

    code, table, _ = run(live_server.url, "search", "renewed", "--from", "2026-02-01T00:00:00Z",
                         "--to", "2026-02-28T00:00:00Z", "--reference-date", "2026-03-01T00:00:00Z")

    assert code == 0 and "Renewed the domain names" in table and "TLS" not in table and "1 results" in table


def test_read_commands_print_the_servers_json(live_server: BackgroundServer) -> None:
    _, stored, _ = run(live_server.url, "store", "event", "The nightly backup finished", "--json")
    memory_id = json.loads(stored)["id"]

    _, search, _ = run(live_server.url, "search", "nightly backup", "--json")
    _, got, _ = run(live_server.url, "get", memory_id, "--json")
    _, briefing, _ = run(live_server.url, "briefing", "--since", "2000-01-01T00:00:00Z", "--json")

    assert json.loads(search)["results"][0]["id"] == memory_id
    assert json.loads(got)["content"] == "The nightly backup finished"
    assert json.loads(briefing)["summary"]["total_entries"] == 1


def test_exit_codes(live_server: BackgroundServer) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"

    refused = run(live_server.url, "get", "no-such-memory")
    invalid = run(live_server.url, "search", "x", "--limit", "1000")
    bad_metadata = run(live_server.url, "store", "event", "x", "--metadata", "[1]")
    usage = CliRunner().invoke(app, ["search"], env=ENV)
    unreachable = run(closed, "stats")

    assert refused[0] == 1 and "HTTP 404" in refused[2] and "no-such-memory" in refused[2]
    assert invalid[0] == 1 and "limit:" in invalid[2]
    assert bad_metadata[0] == 2 and "--metadata: must be a JSON object" in bad_metadata[2]
    assert usage.exit_code == 2
    assert unreachable[0] == 3 and "cannot reach" in unreachable[2]


def test_export_then_import_into_an_empty_server_gives_identical_records(
    live_server: BackgroundServer, empty_server: BackgroundServer, tmp_path: Path
) -> None:
    with BrainClient(url=live_server.url, api_key=API_KEY, source_agent="ops") as brain:
        brain.store(type="fact", content="Support hours are 9 to 5", key="support-hours", client_id="acme")
        brain.store(type="fact", content="Support hours are 8 to 6", key="support-hours", client_id="acme")
        gone = brain.store(type="event", content="A test event nobody needs")
        brain.delete(gone.id, reason="noise")
        for n in range(4):
            brain.store(type="decision", content=f"Decision number {n}: ship on Fridays is off", client_id="acme")
    exported, restored = tmp_path / "backup.jsonl", tmp_path / "again.jsonl"

    code, _, message = run(live_server.url, "export", str(exported), "--page-size", "3")
    assert code == 0 and "exported 7 memories" in message
    code, _, message = run(empty_server.url, "import", str(exported), "--batch-size", "2")
    assert code == 0 and "7 imported, 0 skipped" in message
    run(empty_server.url, "export", str(restored))

    assert exported.read_text().splitlines() == restored.read_text().splitlines()
    records = [json.loads(line) for line in exported.read_text().splitlines()]
    assert sum(not record["active"] for record in records) == 2  # the superseded fact and the deleted event


def test_an_interrupted_import_resumes_by_skipping_what_is_there(
    live_server: BackgroundServer, empty_server: BackgroundServer, tmp_path: Path
) -> None:
    with BrainClient(url=live_server.url, api_key=API_KEY, source_agent="ops") as brain:
        for n in range(6):
            brain.store(type="event", content=f"Ticket {n} was closed by the support team")
    full, first_half = tmp_path / "all.jsonl", tmp_path / "half.jsonl"
    run(live_server.url, "export", str(full))
    first_half.write_text("".join(full.read_text().splitlines(keepends=True)[:3]))
    assert run(empty_server.url, "import", str(first_half))[0] == 0

    code, _, message = run(empty_server.url, "import", str(full))
    again = run(empty_server.url, "import", str(full), "--json")

    assert code == 0 and "3 imported, 3 skipped (already there), 0 failed" in message
    assert json.loads(again[1]) == {"imported": 0, "skipped": 6, "failed": 0, "failures": []}


def test_a_broken_line_fails_alone_and_the_exit_code_says_so(
    empty_server: BackgroundServer, tmp_path: Path
) -> None:
    file = tmp_path / "mixed.jsonl"
    good = {"type": "fact", "content": "Our VAT number is on every invoice", "source_agent": "import"}
    file.write_text(json.dumps(good) + "\n{not json\n" + json.dumps({"type": "memo", "content": "x",
                                                                       "source_agent": "import"}) + "\n")

    code, _, message = run(empty_server.url, "import", str(file))

    assert code == 1
    assert "1 imported, 0 skipped (already there), 2 failed" in message
    assert "line 2: not valid JSON" in message and "line 3: type:" in message


def test_keys_show_prints_the_key_for_scripts(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["keys", "--show", "--data-dir", str(tmp_path)], env={"BRAIN_API_KEY": ""})
    assert result.exit_code == 0
    assert result.stdout.strip() == (tmp_path / "api-key").read_text().strip()


def test_every_read_command_takes_json(live_server: BackgroundServer, tmp_path: Path) -> None:
    """search, get and briefing are above; here stats, consolidate --status, export, import and keys."""
    _, stored, _ = run(live_server.url, "store", "status", "The deploy pipeline is green", "--subject", "deploy",
                       "--status-value", "green", "--json")
    memory_id = json.loads(stored)["id"]
    file = tmp_path / "one.jsonl"

    stats = run(live_server.url, "stats", "--json")
    status = run(live_server.url, "consolidate", "--status", "--json")
    exported = run(live_server.url, "export", str(file), "--json")
    imported = run(live_server.url, "import", str(file), "--json")
    keys = CliRunner().invoke(app, ["keys", "--json", "--data-dir", str(tmp_path / "data")],
                              env={"BRAIN_API_KEY": ""})

    assert all(code == 0 for code, _, _ in (stats, status, exported, imported)) and keys.exit_code == 0
    assert json.loads(stats[1])["total_memories"] == 1
    assert json.loads(status[1])["is_running"] is False
    assert json.loads(exported[1]) == {"exported": 1, "file": str(file)}
    assert json.loads(file.read_text())["id"] == memory_id
    assert json.loads(imported[1]) == {"imported": 0, "skipped": 1, "failed": 0, "failures": []}
    assert json.loads(keys.stdout) == {"source": "key_file", "key_file": str(tmp_path / "data" / "api-key")}


def test_llm_commands_against_a_server_with_an_llm(
    llm_live_server: BackgroundServer, llm_server: ScriptedLLMServer
) -> None:
    url = llm_live_server.url
    memory_id = json.loads(run(url, "store", "decision", "Deploys are frozen on Fridays", "--client", "acme",
                               "--json")[1])["id"]

    llm_server.script({"summary": "Fridays are frozen.", "patterns": [f"freeze [mem:{memory_id}]"], "timeline": [],
                       "contradictions": [], "gaps": ["since when"]})
    reflect = run(url, "reflect", "deploy freeze", "--client", "acme")
    llm_server.script({"summary": "Frozen.", "patterns": [], "timeline": [], "contradictions": [], "gaps": []})
    reflect_json = run(url, "reflect", "deploy freeze", "--json")
    llm_server.script({"draft": "d", "status": "SUFFICIENT", "reason": "r", "missing": []},
                      {"answer": f"No Friday deploys [mem:{memory_id}]", "key_findings": ["frozen"],
                       "unresolved": []})
    research = run(url, "research", "when can we not deploy?", "--max-iterations", "1")
    llm_server.script({"draft": "d", "status": "INSUFFICIENT", "reason": "r", "missing": ["why"]},
                      {"answer": "Fridays.", "key_findings": [], "unresolved": ["why"]})
    research_json = run(url, "research", "when can we not deploy?", "--max-iterations", "1", "--json")
    llm_server.script(EMPTY_PLAN)
    consolidated = run(url, "consolidate", "--sync", "--json")
    job_id = json.loads(consolidated[1])["job_id"]
    job = run(url, "consolidate", "--job", job_id)

    assert reflect[0] == 0 and "1 memories analysed" in reflect[1] and "Fridays are frozen." in reflect[1]
    assert "since when" in reflect[1]
    assert json.loads(reflect_json[1])["reflection"]["summary"] == "Frozen."
    assert research[0] == 0 and f"No Friday deploys [mem:{memory_id}]" in research[1] and "- frozen" in research[1]
    answer = json.loads(research_json[1])
    assert answer["partial"] is True and answer["unresolved"] == ["why"]
    assert json.loads(consolidated[1])["status"] == "succeeded"
    assert job[0] == 0 and f"job_id: {job_id}" in job[1] and "status: succeeded" in job[1]
    assert llm_server.pending == 0


def test_llm_commands_without_an_llm_exit_1_with_the_servers_reason(live_server: BackgroundServer) -> None:
    run(live_server.url, "store", "event", "Something to reflect on")

    reflect = run(live_server.url, "reflect", "anything")
    research = run(live_server.url, "research", "anything?")
    consolidate = run(live_server.url, "consolidate")

    assert reflect[0] == 1 and "HTTP 503: LLM provider unavailable" in reflect[2]
    assert research[0] == 1 and "RESEARCH_ENABLED=true" in research[2]
    assert consolidate[0] == 1 and "HTTP 503: LLM provider unavailable" in consolidate[2]


def test_keys_create_list_and_revoke_through_the_server(live_server: BackgroundServer) -> None:
    # zengram keys create: the key is printed once (last line), with its id and scope
    code, created, _ = run(live_server.url, "keys", "create", "acme-agent", "--role", "write", "--client", "acme",
                           "--client", "acme-labs")
    assert code == 0, created
    key = created.strip().splitlines()[-1]
    key_id = key.split("_")[1]
    assert f"created key {key_id} (write, clients: acme, acme-labs)" in created

    # the key works, within its clients only
    scoped = CliRunner().invoke(app, ["store", "event", "Acme renewal signed", "--client", "acme",
                                      "--url", live_server.url], env={**ENV, "BRAIN_API_KEY": key})
    assert scoped.exit_code == 0, scoped.output
    refused = CliRunner().invoke(app, ["store", "event", "Globex note", "--client", "globex",
                                       "--url", live_server.url], env={**ENV, "BRAIN_API_KEY": key})
    assert refused.exit_code == 1 and "not one of this API key's clients" in refused.stderr

    # zengram keys list: the key's row, never the key
    code, listed, _ = run(live_server.url, "keys", "list")
    assert code == 0 and key_id in listed and "acme-agent" in listed and key not in listed
    _, listed_json, _ = run(live_server.url, "keys", "list", "--json")
    assert json.loads(listed_json)["keys"][0]["clients"] == ["acme", "acme-labs"]

    # zengram keys revoke: the next request with it is refused
    code, revoked, _ = run(live_server.url, "keys", "revoke", key_id)
    assert code == 0 and revoked.startswith(f"revoked {key_id} at ")
    after = CliRunner().invoke(app, ["stats", "--url", live_server.url], env={**ENV, "BRAIN_API_KEY": key})
    assert after.exit_code == 1 and "invalid API key" in after.stderr


def test_keys_create_refuses_bad_input_with_the_documented_codes(live_server: BackgroundServer) -> None:
    code, _, error = run(live_server.url, "keys", "create", "x", "--client", "acme", "--all-clients")
    assert code == 2 and "not both" in error
    code, _, error = run(live_server.url, "keys", "create", "x", "--role", "write")
    assert code == 1 and "clients:" in error
    code, admin, _ = run(live_server.url, "keys", "create", "ops", "--role", "admin", "--json")
    assert code == 0 and json.loads(admin)["clients"] == "all" and json.loads(admin)["key"].startswith("zgk_")
