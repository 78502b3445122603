"""`zengram export` / `zengram import`: whole records through JSON Lines files, with progress bars.

Import is resumable by design: the server skips a record whose id is already stored (without re-embedding
it), so running the same import again after an interruption only adds what is missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from zengram.cli.common import (
    EXIT_REFUSED,
    EXIT_USAGE,
    JsonOption,
    KeyOption,
    UrlOption,
    connect,
    fail,
    print_json,
    reporting_errors,
    stderr,
)
from zengram.client import BrainClient
from zengram.memory.domain.requests import MAX_EXPORT_LIMIT, MAX_IMPORT_RECORDS

MAX_SHOWN_FAILURES = 10


def register(app: typer.Typer) -> None:
    app.command("export")(export_command)
    app.command("import")(import_command)


def _progress() -> Progress:
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=stderr, transient=False)


def export_command(
    file: Annotated[Path, typer.Argument(help="JSON Lines file to write ('-' for stdout)", allow_dash=True)],
    client_id: Annotated[str | None, typer.Option("--client", help="Only this client_id")] = None,
    type: Annotated[str | None, typer.Option("--type", help="Only this type")] = None,
    since: Annotated[str | None, typer.Option(help="Only memories created after this (ISO 8601)")] = None,
    active_only: Annotated[bool, typer.Option("--active-only", help="Leave superseded and deleted ones out")] = False,
    page_size: Annotated[int, typer.Option(min=1, max=MAX_EXPORT_LIMIT, help="Records per request")] = 1000,
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Export whole memories to a JSON Lines file, oldest first (history too, unless --active-only)."""
    client = connect(url, key)
    to_stdout = str(file) == "-"
    with reporting_errors(client), _open_for_writing(file) as sink, _progress() as progress:
        task = progress.add_task("exporting", total=None, visible=not to_stdout)
        written = 0
        for page in client.export_all(client_id=client_id, type=type, since=since, active_only=active_only,
                                      limit=page_size):
            for record in page.memories:
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += page.count
            progress.update(task, completed=written)
        progress.update(task, total=written)
    if as_json:
        return print_json({"exported": written, "file": str(file)})
    if not to_stdout:
        stderr.print(f"exported {written} memories to {file}")
    return None


@dataclass
class ImportTally:
    imported: int = 0
    skipped: int = 0
    failed: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)

    def add(self, line_numbers: list[int], answer: dict[str, Any]) -> None:
        for result in answer["results"]:
            status = result["status"]
            setattr(self, status, getattr(self, status) + 1)
            if status == "failed":
                self.failures.append({"line": line_numbers[result["index"]], "error": result.get("error")})

    def parse_failure(self, line: int, error: str) -> None:
        self.failed += 1
        self.failures.append({"line": line, "error": error})


def import_command(
    file: Annotated[Path, typer.Argument(help="JSON Lines file written by `zengram export`", exists=True,
                                         dir_okay=False, readable=True)],
    batch_size: Annotated[int, typer.Option(min=1, max=MAX_IMPORT_RECORDS, help="Records per request")] = 100,
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import a JSON Lines export; records already there are skipped, so a broken import can be rerun."""
    total = _count_records(file)
    client = connect(url, key)
    tally = ImportTally()
    with reporting_errors(client), file.open(encoding="utf-8") as source, _progress() as progress:
        task = progress.add_task("importing", total=total)
        for batch in _batches(source, batch_size, tally):
            _send_batch(client, batch, tally)
            progress.update(task, completed=tally.imported + tally.skipped + tally.failed)
    _report_import(file, tally, as_json)
    if tally.failed:
        raise typer.Exit(EXIT_REFUSED)


def _send_batch(client: BrainClient, batch: list[tuple[int, dict[str, Any]]], tally: ImportTally) -> None:
    answer = client.import_([record for _, record in batch], operator_approved=True)
    tally.add([line for line, _ in batch], answer.model_dump())


def _report_import(file: Path, tally: ImportTally, as_json: bool) -> None:
    if as_json:
        print_json({"imported": tally.imported, "skipped": tally.skipped, "failed": tally.failed,
                    "failures": tally.failures})
        return
    stderr.print(f"{file}: {tally.imported} imported, {tally.skipped} skipped (already there), "
                 f"{tally.failed} failed")
    for failure in tally.failures[:MAX_SHOWN_FAILURES]:
        stderr.print(f"  line {failure['line']}: {failure['error']}", markup=False)


def _count_records(file: Path) -> int:
    with file.open(encoding="utf-8") as source:
        return sum(1 for line in source if line.strip())


def _batches(source: TextIO, size: int, tally: ImportTally) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    """(line number, record) batches; a line that is not a JSON object fails alone, like a bad record."""
    batch: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(source, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            tally.parse_failure(number, f"not valid JSON ({error.msg})")
            continue
        if not isinstance(record, dict):
            tally.parse_failure(number, "not a JSON object")
            continue
        batch.append((number, record))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class _open_for_writing:
    """The file, or stdout for '-'; a directory or unwritable path is a usage error (exit 2)."""

    def __init__(self, file: Path) -> None:
        self._file = file
        self._handle: TextIO | None = None

    def __enter__(self) -> TextIO:
        if str(self._file) == "-":
            return typer.get_text_stream("stdout")
        try:
            self._handle = self._file.open("w", encoding="utf-8")
        except OSError as error:
            raise fail(f"{self._file}: {error.strerror}", EXIT_USAGE) from error
        return self._handle

    def __exit__(self, *_: object) -> None:
        if self._handle is not None:
            self._handle.close()
