"""`zengram keys create | list | revoke`: scoped API keys, managed through a running server's /admin/keys with an
admin key (the bootstrap BRAIN_API_KEY by default). `zengram keys` alone still says where that key lives."""

from __future__ import annotations

from typing import Annotated

import typer
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
from zengram.memory.api.schemas.keys import ApiKeyBody


def register(keys_app: typer.Typer) -> None:
    keys_app.command("create")(create)
    keys_app.command("list")(list_keys)
    keys_app.command("revoke")(revoke)


def create(
    name: Annotated[str, typer.Argument(help="What the key is for, e.g. acme-support-agent")],
    role: Annotated[str, typer.Option("--role", help="read, write or admin")] = "read",
    client: Annotated[list[str] | None, typer.Option("--client", help="A client_id it may see (repeat for more)")]
    = None,
    all_clients: Annotated[bool, typer.Option("--all-clients", help="Every client (admin keys always)")] = False,
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Create a scoped key; it is printed once, here, and never again."""
    if client and all_clients:
        raise fail("give --client or --all-clients, not both", EXIT_USAGE)
    clients: list[str] | str | None = "all" if all_clients else client or None
    brain = connect(url, key)
    with reporting_errors(brain):
        created = brain.create_key(name, role, clients)
    if as_json:
        return print_json(created)
    out = console()
    out.print(f"created key {created.id} ({created.role}, clients: {_clients(created)})")
    out.print("the key (shown once; the server keeps only a salted hash):")
    typer.echo(created.key)


def list_keys(url: UrlOption = None, key: KeyOption = None, as_json: JsonOption = False) -> None:
    """List the scoped keys (never the keys themselves), revoked ones included."""
    brain = connect(url, key)
    with reporting_errors(brain):
        listed = brain.list_keys()
    if as_json:
        return print_json(listed)
    table = Table(title=f"{listed.count} keys", title_justify="left")
    for column in ("id", "name", "role", "clients", "created", "revoked"):
        table.add_column(column)
    for item in listed.keys:
        table.add_row(item.id, item.name, item.role, _clients(item), item.created_at, item.revoked_at or "")
    console().print(table)


def revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (zengram keys list)")],
    url: UrlOption = None,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Revoke a key: its next request is refused."""
    brain = connect(url, key)
    with reporting_errors(brain):
        revoked = brain.revoke_key(key_id)
    if as_json:
        return print_json(revoked)
    console().print(f"revoked {revoked.id} at {revoked.revoked_at}")


def _clients(item: ApiKeyBody) -> str:
    return item.clients if isinstance(item.clients, str) else ", ".join(item.clients)
