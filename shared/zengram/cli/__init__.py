"""The `zengram` command's client side: commands that talk to a running server through the SDK.

The server side (`serve`, `reindex`, `keys`) lives in `zengram.embedded.cli`, which registers these.
"""

import typer

from zengram.cli import commands, transfer


def register(app: typer.Typer) -> None:
    commands.register(app)
    transfer.register(app)
