"""`zengram store | search | get | briefing | stats | consolidate | reflect | research`: the API from a shell."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.table import Table

from zengram.cli.common import (
    EXIT_USAGE,
    JsonOption,
    KeyOption,
    UrlOption,
    connect,
    console,
    fail,
    print_json,
    reporting_errors,
)
from zengram.client.calls import StoreOptions
from zengram.kernel.timestamps import format_timestamp


def register(app: typer.Typer) -> None:
    for command in (store, search, get, briefing, stats, consolidate, reflect, research):
        app.command()(command)


def store(
    type: Annotated[str, typer.Argument(help="event, fact, decision or status")],
    content: Annotated[str, typer.Argument(help="The memory text")],
    agent: Annotated[str, typer.Option("--agent", "-a", envvar="BRAIN_SOURCE_AGENT", help="source_agent")] = "cli",
    client_id: Annotated[str | None, typer.Option("--client", help="client_id (default: global)")] = None,
    importance: Annotated[str | None, typer.Option(help="critical, high, medium or low")] = None,
    category: Annotated[str | None, typer.Option(help="semantic, episodic or procedural")] = None,
    knowledge_category: Annotated[str | None, typer.Option(help="brand, strategy, meeting, content, technical, "
                                                                "relationship or general")] = None,
    fact_key: Annotated[str | None, typer.Option("--fact-key", help="Facts: the key a newer fact supersedes")] = None,
    subject: Annotated[str | None, typer.Option(help="Statuses: what the status is about")] = None,
    status_value: Annotated[str | None, typer.Option(help="Statuses: the current value")] = None,
    metadata: Annotated[str | None, typer.Option(help="A JSON object")] = None,
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Store a memory (POST /memory)."""
    options = StoreOptions(client_id=client_id, importance=importance, category=category,
                           knowledge_category=knowledge_category, key=fact_key, subject=subject,
                           status_value=status_value,
                           metadata=None if metadata is None else _json_object(metadata, "--metadata"))
    client = connect(url, key)
    with reporting_errors(client):
        answer = client.store(type, content, agent, **options)
    if as_json:
        return print_json(answer)
    outcome = "deduplicated" if answer.deduplicated else "corroborated" if answer.corroborated else "stored"
    extra = f", supersedes {answer.supersedes}" if answer.supersedes else ""
    console().print(f"{outcome} {answer.id} ({answer.type}{extra})")


def search(
    query: Annotated[str, typer.Argument(help="What to look for, in plain words")],
    limit: Annotated[int, typer.Option("--limit", "-n", help="1-100")] = 10,
    client_id: Annotated[str | None, typer.Option("--client", help="Only this client_id")] = None,
    type: Annotated[str | None, typer.Option("--type", help="event, fact, decision or status")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this source_agent")] = None,
    include_superseded: Annotated[bool, typer.Option(help="Include superseded memories")] = False,
    at_time: Annotated[str | None, typer.Option(help="What was true then (ISO 8601)")] = None,
    date_from: Annotated[str | None, typer.Option("--from", help="Only what happened at or after (ISO 8601)")] = None,
    date_to: Annotated[str | None, typer.Option("--to", help="Only what happened at or before (ISO 8601)")] = None,
    reference_date: Annotated[str | None, typer.Option(
        help="The 'now' that 'yesterday' or 'last week' in the query mean (ISO 8601)")] = None,
    count_access: Annotated[bool, typer.Option(
        "--count-access", help="Count the hits as accesses (reinforcement, which raises their rank in later "
                               "searches); without it the search only looks (read_only=true)")] = False,
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search memories by meaning and keywords, shown as a table. Read-only unless --count-access."""
    client = connect(url, key)
    with reporting_errors(client):
        answer = client.search(query, limit=limit, client_id=client_id, type=type, source_agent=agent,
                               include_superseded=include_superseded, at_time=at_time, date_from=date_from,
                               date_to=date_to, reference_date=reference_date, read_only=not count_access)
    if as_json:
        return print_json(answer)
    table = Table(title=f"{answer.count} results for {answer.query!r}", title_justify="left")
    for column in ("score", "type", "client", "agent", "created", "id"):
        table.add_column(column, no_wrap=True)
    table.add_column("content")
    for hit in answer.results:
        table.add_row(f"{hit['effective_score']:.3f}", hit["type"], hit.get("client_id", ""),
                      hit.get("source_agent", ""), str(hit.get("created_at", ""))[:10], hit["id"][:8],
                      hit.get("content", hit.get("summary", "")))
    console().print(table)


def get(
    memory_id: Annotated[str, typer.Argument(help="The memory's id")],
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one memory, superseded or deleted ones too."""
    client = connect(url, key)
    with reporting_errors(client):
        memory = client.get(memory_id)
    if as_json:
        return print_json(memory)
    state = "active" if memory.active else "deleted" if memory.is_deleted else f"superseded by {memory.superseded_by}"
    console().print(f"{memory.id}  {memory.type.value}  {memory.client_id}  {memory.source_agent}  {state}")
    console().print(memory.content)


def briefing(
    since: Annotated[str | None, typer.Option(help="ISO 8601 (default: 24 hours ago)")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="You: your own entries are left out")] = None,
    include_own: Annotated[bool, typer.Option("--include-own", help="Keep your own entries")] = False,
    client_id: Annotated[str | None, typer.Option("--client", help="Only this client_id")] = None,
    format: Annotated[str, typer.Option(help="compact, summary or full")] = "compact",
    limit: Annotated[int, typer.Option(help="1-500")] = 100,
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """What other agents stored since a moment, by type."""
    start = since or format_timestamp(datetime.now(UTC) - timedelta(hours=24))
    client = connect(url, key)
    with reporting_errors(client):
        answer = client.briefing(start, agent=agent, include="all" if include_own else None,
                                 client_id=client_id, format=format, limit=limit)
    if as_json:
        return print_json(answer)
    out = console()
    summary = answer.summary
    out.print(f"since {answer.since}: {summary.returned} of {summary.total_entries} memories"
              f"{' (more left out)' if summary.has_more else ''}; agents: {', '.join(summary.agents_active) or '-'}")
    for title, entries in (("decisions", answer.decisions or answer.top_decisions),
                           ("facts", answer.facts_updated or answer.top_facts),
                           ("statuses", answer.status_changes or answer.top_statuses),
                           ("events", answer.events or answer.top_events)):
        if entries:
            out.print(f"\n[bold]{title}[/bold]")
            for entry in entries:
                out.print(f"  [{entry.get('importance', '')}] {entry.get('content', entry.get('headline', ''))}",
                          markup=False)


def stats(url: UrlOption = None, key: KeyOption = None, as_json: JsonOption = False) -> None:
    """Memory counts, decay and retrieval health (GET /stats)."""
    client = connect(url, key)
    with reporting_errors(client):
        answer = client.stats()
    if as_json:
        return print_json(answer)
    table = Table(show_header=False)
    for name, value in answer.model_dump(mode="json", exclude_none=True).items():
        table.add_row(name, value if isinstance(value, str) else json.dumps(value))
    console().print(table)


def consolidate(
    sync: Annotated[bool, typer.Option("--sync", help="Wait until the run is finished")] = False,
    status: Annotated[bool, typer.Option("--status", help="Show the engine's status instead")] = False,
    job: Annotated[str | None, typer.Option("--job", help="Show this job instead")] = None,
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run consolidation (async by default: prints the job id), or show its status or a job."""
    client = connect(url, key)
    answer: BaseModel
    with reporting_errors(client):
        if status:
            answer = client.consolidation_status()
        elif job:
            answer = client.consolidation_job(job)
        else:
            answer = client.consolidate(sync=sync)
    if as_json:
        return print_json(answer)
    for name, value in answer.model_dump(mode="json", exclude_none=True).items():
        console().print(f"{name}: {value if isinstance(value, str) else json.dumps(value)}", markup=False)


def reflect(
    topic: Annotated[str, typer.Argument(help="A topic or question")],
    client_id: Annotated[str | None, typer.Option("--client", help="Only this client_id")] = None,
    limit: Annotated[int | None, typer.Option(help="Memories to analyse (default 20, max 50)")] = None,
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """LLM synthesis over the memories about a topic: patterns, timeline, contradictions, gaps."""
    client = connect(url, key)
    with reporting_errors(client):
        answer = client.reflect(topic, client_id=client_id, limit=limit)
    if as_json:
        return print_json(answer)
    reflection = answer.reflection
    out = console()
    out.print(f"{answer.memories_analyzed} memories analysed\n{reflection.summary}", markup=False)
    for section, lines in (("patterns", reflection.patterns), ("timeline", reflection.timeline),
                           ("contradictions", reflection.contradictions), ("gaps", reflection.gaps)):
        if lines:
            out.print(f"\n[bold]{section}[/bold]")
            for line in lines:
                out.print(f"  - {line}", markup=False)


def research(
    topic: Annotated[str, typer.Argument(help="The whole multi-hop question")],
    client_id: Annotated[str | None, typer.Option("--client", help="Only this client_id")] = None,
    max_iterations: Annotated[int | None, typer.Option(help="Retrieval rounds, 1-4 (default 2)")] = None,
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Multi-hop research with a cited answer (the server needs RESEARCH_ENABLED=true)."""
    client = connect(url, key)
    with reporting_errors(client):
        answer = client.research(topic, client_id=client_id, max_iterations=max_iterations)
    if as_json:
        return print_json(answer)
    out = console()
    out.print(answer.answer, markup=False)
    for finding in answer.key_findings:
        out.print(f"  - {finding}", markup=False)
    if answer.partial:
        out.print(f"(partial: unresolved {', '.join(answer.unresolved) or 'questions'})", markup=False)


def _json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise fail(f"{option}: not valid JSON ({error.msg})", EXIT_USAGE) from error
    if not isinstance(value, dict):
        raise fail(f"{option}: must be a JSON object", EXIT_USAGE)
    return value
