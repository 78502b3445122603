"""`zengram`: run the embedded server and look after its data folder; `zengram.cli` adds the commands
that talk to a running server (store, search, export, import, keys create/list/revoke...)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer

from zengram import cli as client_commands
from zengram.assembly.containers import build_container
from zengram.assembly.keys import resolve_api_key
from zengram.cli import kb as kb_commands
from zengram.cli import keys as key_commands
from zengram.kernel.errors import EmbeddingMismatch
from zengram.kernel.timestamps import utc_now
from zengram.settings import Settings

app = typer.Typer(help="Zengram: shared long-term memory for AI agents.", no_args_is_help=True)

DataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="Data folder (default: ZENGRAM_DATA_DIR or ./.zengram)")
]


def _settings(data_dir: Path | None, **overrides: object) -> Settings:
    settings = Settings()
    updates = {name: value for name, value in {"data_dir": data_dir, **overrides}.items() if value is not None}
    return settings.model_copy(update=updates)


@app.command()
def serve(
    data_dir: DataDir = None,
    host: Annotated[str | None, typer.Option(help="Address to bind")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on")] = None,
) -> None:
    """Start the embedded server (all endpoints, local storage, offline embeddings)."""
    import uvicorn

    from zengram.embedded.app import build_embedded_app
    from zengram.embedded.background import SHUTDOWN_GRACE

    settings = _settings(data_dir, host=host, port=port)
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    _, key_file = resolve_api_key(settings)
    if key_file is not None:
        typer.echo(f"API key: stored in {key_file} (cat it; send it as the x-api-key header)")
    else:
        typer.echo("API key: taken from BRAIN_API_KEY")
    typer.echo(f"Data: {settings.data_dir.resolve()}  Listening: http://{settings.host}:{settings.port}")
    typer.echo(f"Dashboard: http://{settings.host}:{settings.port}/dashboard/ (sign in with the API key)")
    try:
        container = build_container(settings, check_index=True)  # a wrong embedder is refused before serving
    except EmbeddingMismatch as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    uvicorn.run(build_embedded_app(settings, container), host=settings.host, port=settings.port,
                log_level=settings.log_level.lower(), timeout_graceful_shutdown=SHUTDOWN_GRACE)


@app.command()
def reindex(data_dir: DataDir = None) -> None:
    """Rebuild the search index from the record store, re-embedding with the configured model."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    settings = _settings(data_dir)
    container = build_container(settings)  # not checked: the index may hold another model's vectors
    try:
        with Progress(TextColumn("reindexing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as progress:
            task = progress.add_task("reindex", total=container.records.count())
            total = container.memory.index_sync.reindex(
                on_progress=lambda done: progress.update(task, completed=done)
            )
        chat_total = container.chat.reindex()  # the rebuild cleared the chat layer's documents too
        waiting = container.counters.stats(utc_now(), settings.decay_factor)
    finally:
        container.close()
    typer.echo(f"indexed {total} memories with {container.embedder.model_id}")
    if chat_total:
        typer.echo(f"indexed {chat_total} subject memories and records of the chat layer")
    if waiting.pending_index or waiting.parked_index:
        typer.echo(f"{waiting.pending_index} refused by the index and left pending, {waiting.parked_index} parked: "
                   "see GET /stats index_health; `zengram repair` retries them")


@app.command()
def repair(
    data_dir: DataDir = None,
    retry_parked: Annotated[bool, typer.Option(
        "--retry-parked", help="First put the parked records (given up on after repeated failures) back in the queue",
    )] = False,
) -> None:
    """Index the records whose last change has not reached the search index, as the repair sweep does.

    Honours ZENGRAM_RECORD_STORE / ZENGRAM_SEARCH_INDEX, so it also repairs an AWS deployment from a shell with
    its credentials."""
    settings = _settings(data_dir)
    container = build_container(settings)
    try:
        index_sync = container.memory.index_sync
        requeued = index_sync.retry_parked() if retry_parked else 0
        report = index_sync.repair_until_clean(keep_going=lambda: True, batch=settings.index_repair_batch)
        chat_repaired = container.chat.repair_index(settings.index_repair_batch)
    finally:
        container.close()
    if chat_repaired:
        typer.echo(f"indexed {chat_repaired} subject memories and records of the chat layer")
    if retry_parked:
        typer.echo(f"{requeued} parked record(s) put back in the queue")
    typer.echo(f"indexed {report.indexed}; {report.failed} failed (left pending), {report.parked} of them parked")
    if report.stopped:
        typer.echo(f"stopped early, the rest left pending: {report.stopped}", err=True)
        raise typer.Exit(1)


@app.command("backfill-entities")
def backfill_entities(data_dir: DataDir = None) -> None:
    """Extract entities for stored memories that have none (e.g. stored by a version before entity extraction)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    container = build_container(_settings(data_dir))
    try:
        with Progress(TextColumn("extracting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as progress:
            task = progress.add_task("backfill", total=container.records.count())
            report = container.memory.backfill_entities(on_progress=lambda done: progress.update(task, completed=done))
    finally:
        container.close()
    typer.echo(f"entities added to {report.updated} memories; {report.none_found} name none; "
               f"{report.skipped} changed meanwhile (run again to finish them)")


keys_app = typer.Typer(help="The bootstrap API key, and scoped keys (create, list, revoke).")
app.add_typer(keys_app, name="keys")


@keys_app.callback(invoke_without_command=True)
def keys(
    context: typer.Context,
    data_dir: DataDir = None,
    show: Annotated[bool, typer.Option("--show", help="Print the key itself (for scripts: KEY=$(zengram keys --show))")]
    = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print {source, key_file} (and key with --show) as JSON")]
    = False,
) -> None:
    """Show where the bootstrap (admin) API key comes from, generating it on first use as `serve` would.
    `zengram keys create|list|revoke` manage scoped keys through the running server (docs/keys.md)."""
    if context.invoked_subcommand is not None:
        return
    settings = _settings(data_dir)
    key, key_file = resolve_api_key(settings)
    if as_json:
        answer = {"source": "key_file" if key_file else "BRAIN_API_KEY",
                  "key_file": str(key_file) if key_file else None, **({"key": key} if show else {})}
        typer.echo(json.dumps(answer, indent=2))
        return
    if show:
        typer.echo(key)
        return
    typer.echo(f"key file: {key_file}" if key_file else "key: from the BRAIN_API_KEY environment variable")


key_commands.register(keys_app)
client_commands.register(app)
app.add_typer(kb_commands.app, name="kb")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
