"""What every client command shares: connection options, `--json`, exit codes and error messages.

Exit codes (documented in docs/clients.md):
  0  done
  1  the server said no (4xx/5xx; the message is the server's `error` text), or some imported records failed
  2  usage: a bad option or argument, an unreadable file (typer/click also use 2 for usage errors)
  3  cannot connect: the server is not running or not reachable at the URL
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.console import Console

from zengram.client import BrainClient, BrainConnectionError, BrainError
from zengram.client.local import resolve_connection

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3

UrlOption = Annotated[str | None, typer.Option(
    "--url", envvar="BRAIN_API_URL", show_envvar=True,
    help="Server URL (default: the local embedded server, http://127.0.0.1:8084)")]
KeyOption = Annotated[str | None, typer.Option(
    "--key", envvar="BRAIN_API_KEY", show_envvar=True, show_default=False,
    help="API key (default: the key the local server generated into .zengram/api-key)")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the server's JSON answer instead of a summary")]

stderr = Console(stderr=True, highlight=False)


def console() -> Console:
    """Built per command so CliRunner's captured stdout is the one written to."""
    return Console(highlight=False, soft_wrap=True)


def connect(url: str | None, key: str | None) -> BrainClient:
    connection = resolve_connection(url, key)
    retries = os.environ.get("BRAIN_MAX_RETRIES", "").strip()
    return BrainClient(url=connection.url, api_key=connection.api_key,
                       max_retries=int(retries) if retries.isdigit() else 3)


def fail(message: str, code: int) -> typer.Exit:
    stderr.print(f"[red]error:[/red] {message}", markup=True, highlight=False)
    return typer.Exit(code)


@contextmanager
def reporting_errors(client: BrainClient | None = None) -> Iterator[None]:
    """Turns SDK failures into a one-line message and the documented exit code."""
    try:
        yield
    except BrainConnectionError as error:
        hint = " (is it running? start one with `zengram serve`)"
        raise fail(f"{error.error}{hint}", EXIT_UNREACHABLE) from error
    except BrainError as error:
        raise fail(str(error), EXIT_REFUSED) from error
    except ValueError as error:
        raise fail(str(error), EXIT_USAGE) from error
    finally:
        if client is not None:
            client.close()


def print_json(payload: BaseModel | dict[str, Any] | list[Any]) -> None:
    data = payload.model_dump(mode="json", exclude_none=True) if isinstance(payload, BaseModel) else payload
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
