"""`zengram kb …`: the document knowledge base from a shell, Agent Brain style (init, start, stop, list, status,
index, query, reset). Exit codes as the other client commands: 1 refused, 2 usage, 3 unreachable."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.table import Table

from zengram.cli import kb_instances as instances
from zengram.cli.common import EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE, console, fail

app = typer.Typer(help="The document knowledge base (Agent Brain-compatible API under /kb).", no_args_is_help=True)

UrlOption = Annotated[str | None, typer.Option(
    "--url", envvar="AGENT_BRAIN_URL", show_envvar=True,
    help="Base URL, e.g. http://127.0.0.1:8084/kb (default: the project's runtime.json, else the local server)")]
KeyOption = Annotated[str | None, typer.Option(
    "--key", show_default=False, help="API key (default: the project's runtime.json or config.json, else the "
                                      "local server's key)")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON")]


class KbClient:
    """The few calls the commands make; errors become the documented exit codes."""

    def __init__(self, url: str | None, key: str | None, timeout: float = 60.0) -> None:
        self.base_url, api_key = _connection(url, key)
        self._http = httpx.Client(timeout=timeout, headers={"Authorization": f"Bearer {api_key}"} if api_key else {})

    def call(self, method: str, path: str, **options: Any) -> Any:
        try:
            response = self._http.request(method, f"{self.base_url}{path}", **options)
        except httpx.HTTPError as error:
            raise fail(f"cannot reach {self.base_url} ({error}); start a server with `zengram kb start --daemon`",
                       EXIT_UNREACHABLE) from error
        if response.status_code >= 400:
            try:
                message = response.json().get("error", response.text)
            except ValueError:
                message = response.text
            raise fail(f"{response.status_code}: {message}", EXIT_REFUSED)
        return response.json()


def _connection(url: str | None, key: str | None) -> tuple[str, str | None]:
    from zengram.client.local import resolve_connection

    project = instances.find_project()
    runtime = instances.running(project) or {}
    base = url or runtime.get("base_url")
    api_key = key or runtime.get("api_key") or project.config().get("api_key")
    if base is None or api_key is None:
        local = resolve_connection()
        base = base or f"{local.url}{instances.BASE_PATH}"
        api_key = api_key or local.api_key or None
    return str(base).rstrip("/"), api_key


@app.command()
def init(
    path: Annotated[Path | None, typer.Option("--path", help="Project folder (default: the current one)")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing config.json")] = False,
    as_json: JsonOption = False,
) -> None:
    """Create the project's state folder (.claude/agent-brain/) with a config.json holding a new API key."""
    try:
        project = instances.init_project(path or Path.cwd(), force=force)
    except FileExistsError as error:
        raise fail(str(error), EXIT_REFUSED) from error
    if as_json:
        typer.echo(json.dumps({"status": "initialized", "project_root": str(project.root),
                               "state_dir": str(project.state_dir), "config_path": str(project.config_file)}))
        return
    console().print(f"initialized {project.state_dir} (API key in config.json, mode 0600)")


@app.command()
def start(
    daemon: Annotated[bool, typer.Option("--daemon", "-d", help="Run in the background")] = False,
    port: Annotated[int | None, typer.Option(help="Port (default: the first free one of the config's range)")] = None,
    host: Annotated[str | None, typer.Option(help="Address to bind (default: the config's bind_host)")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the server to answer")] = 120.0,
    as_json: JsonOption = False,
) -> None:
    """Start this project's server (writes runtime.json, which the Agent Brain CLI reads too)."""
    project = instances.find_project()
    if not project.config_file.is_file():
        raise fail(f"no {project.config_file}: run `zengram kb init` first", EXIT_USAGE)
    current = instances.running(project)
    if current is not None:
        _report_started(current, as_json, "already running")
        return
    config = project.config()
    bind = host or str(config.get("bind_host", "127.0.0.1"))
    chosen = port or (instances.free_port(bind, int(config.get("port_range_start", 8000)),
                                          int(config.get("port_range_end", 8100)))
                      if config.get("auto_port", True) else int(config.get("port", 8000)))
    if not daemon:
        command, environment = instances.server_command(project, bind, chosen)
        state = instances.runtime_state(project, bind, chosen, os.getpid(), foreground=True)
        instances._write_private(project.runtime_file, state)  # the exec'd server keeps this pid
        instances.register(project)
        console().print(f"serving {state['base_url']} (Ctrl+C to stop)")
        os.execvpe(command[0], command, environment)
    try:
        state = instances.start_daemon(project, bind, chosen, timeout)
    except RuntimeError as error:
        raise fail(str(error), EXIT_REFUSED) from error
    _report_started(state, as_json, "started")


def _report_started(state: dict[str, Any], as_json: bool, outcome: str) -> None:
    if as_json:
        typer.echo(json.dumps({"status": outcome, "base_url": state["base_url"], "pid": state["pid"]}))
    else:
        console().print(f"{outcome}: {state['base_url']} (pid {state['pid']})")


@app.command()
def stop(as_json: JsonOption = False) -> None:
    """Stop this project's server."""
    pid = instances.stop(instances.find_project())
    if as_json:
        typer.echo(json.dumps({"status": "stopped" if pid else "not_running", "pid": pid}))
    else:
        console().print(f"stopped (pid {pid})" if pid else "no server running for this project")


@app.command("list")
def list_instances(as_json: JsonOption = False) -> None:
    """Running document servers of every registered project."""
    found = instances.instances()
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    table = Table("project", "url", "pid", "health")
    for entry in found:
        table.add_row(entry["project_root"], str(entry["base_url"]), str(entry["pid"]),
                      "healthy" if entry["healthy"] else "not answering")
    console().print(table if found else "no running instances")


@app.command()
def status(url: UrlOption = None, key: KeyOption = None, as_json: JsonOption = False) -> None:
    """Health and indexing status."""
    client = KbClient(url, key)
    health, state = client.call("GET", "/health/"), client.call("GET", "/health/status")
    if as_json:
        typer.echo(json.dumps({"health": health, "indexing": state}, indent=2))
        return
    table = Table(show_header=False)
    for label, value in [("status", f"{health['status']} ({health['message']})"), ("version", health["version"]),
                         ("documents", state["total_documents"]), ("chunks", state["total_chunks"]),
                         ("indexing", f"{state['progress_percent']:.1f}%" if state["indexing_in_progress"] else "idle"),
                         ("folders", "\n".join(state["indexed_folders"]) or "-"),
                         ("graph", f"{state['graph_index']['entity_count']} entities, "
                                   f"{state['graph_index']['relationship_count']} relationships")]:
        table.add_row(label, str(value))
    console().print(table)


@app.command()
def query(
    text: Annotated[str, typer.Argument(help="What to look for")],
    mode: Annotated[str, typer.Option("--mode", "-m", help="vector, bm25, hybrid, graph or multi")] = "hybrid",
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="1-100")] = 5,
    threshold: Annotated[float, typer.Option("--threshold", "-t", help="Least vector similarity")] = 0.7,
    alpha: Annotated[float, typer.Option("--alpha", "-a", help="Hybrid: 1 vector only, 0 BM25 only")] = 0.5,
    traversal_depth: Annotated[int, typer.Option("--traversal-depth", help="Graph hops (1-5)")] = 2,
    include_relationships: Annotated[bool, typer.Option("--include-relationships",
                                                        help="Show each result's code relationships")] = False,
    url: UrlOption = None, key: KeyOption = None, as_json: JsonOption = False,
) -> None:
    """Search the indexed documents."""
    body = {"query": text, "mode": mode, "top_k": top_k, "similarity_threshold": threshold, "alpha": alpha,
            "traversal_depth": traversal_depth, "include_relationships": include_relationships}
    answer = KbClient(url, key).call("POST", "/query/", json=body)
    if as_json:
        typer.echo(json.dumps(answer, indent=2, ensure_ascii=False))
        return
    out = console()
    out.print(f"{answer['total_results']} results in {answer['query_time_ms']:.1f} ms")
    for rank, result in enumerate(answer["results"], start=1):
        where = result["metadata"].get("symbol") or result["metadata"].get("section") or ""
        out.print(f"\n[bold]{rank}. {result['source']}[/bold] {where}  score {result['score']:.3f}")
        out.print(result["text"][:400], markup=False, highlight=False)
        for relation in result.get("relationships") or []:
            out.print(f"   {relation['source_entity']} {relation['type']} {relation['target']}", markup=False)


@app.command()
def index(
    path: Annotated[Path, typer.Argument(help="Folder to index")],
    recursive: Annotated[bool, typer.Option("--recursive/--no-recursive", help="Include subfolders")] = True,
    include_code: Annotated[bool, typer.Option("--include-code/--no-code", help="Index source code too")] = True,
    chunk_size: Annotated[int, typer.Option(help="Tokens per chunk")] = 512,
    chunk_overlap: Annotated[int, typer.Option(help="Tokens repeated between chunks")] = 50,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Show progress until the job ends")] = True,
    url: UrlOption = None, key: KeyOption = None, as_json: JsonOption = False,
) -> None:
    """Index a folder as a job, with a progress bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    client = KbClient(url, key)
    body = {"folder_path": str(path.expanduser().resolve()), "recursive": recursive, "include_code": include_code,
            "chunk_size": chunk_size, "chunk_overlap": chunk_overlap}
    queued = client.call("POST", "/index/", json=body)
    job_id = queued["job_id"]
    job: dict[str, Any] = queued
    if wait:
        columns = (TextColumn("indexing"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[file]}"),
                   TimeElapsedColumn())
        with Progress(*columns, disable=as_json) as bar:
            task = bar.add_task("index", total=None, file="")
            while True:
                job = client.call("GET", f"/index/jobs/{job_id}")
                progress = job["progress"]
                bar.update(task, total=progress["files_total"] or None, completed=progress["files_processed"],
                           file=progress["current_file"][-50:])
                if job["status"] in ("done", "failed", "cancelled"):
                    break
                time.sleep(0.3)
    if as_json:
        typer.echo(json.dumps(job, indent=2))
    elif not wait:
        console().print(f"queued job {job_id}")
    else:
        console().print(f"{job['status']}: {job.get('total_documents', 0)} documents, "
                        f"{job.get('total_chunks', 0)} chunks" + (f" ({job['error']})" if job.get("error") else ""))
    if job["status"] in ("failed", "cancelled"):
        raise typer.Exit(EXIT_REFUSED)


@app.command()
def reset(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation")] = False,
    url: UrlOption = None, key: KeyOption = None, as_json: JsonOption = False,
) -> None:
    """Delete every indexed chunk, file and folder."""
    if not yes and not typer.confirm("Delete the whole document index?"):
        raise typer.Exit(EXIT_USAGE)
    answer = KbClient(url, key).call("DELETE", "/index/")
    if as_json:
        typer.echo(json.dumps(answer))
    else:
        console().print(answer["message"])
