"""`zengram-mcp`: serve the tools to a coding assistant (stdio) or over the network (streamable HTTP).

Configured like Zengram's MCP server: BRAIN_API_URL (default: the local embedded server), BRAIN_API_KEY
(default: the key the local server generated), BRAIN_MCP_SOURCE_AGENT (default: claude-code).
Nothing but the JSON-RPC stream may reach stdout in stdio mode, so every message goes to stderr.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from zengram.client import AsyncBrainClient
from zengram.client.errors import AuthenticationError
from zengram.client.local import Connection, resolve_connection


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="zengram-mcp", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="streamable-http: address to bind")
    parser.add_argument("--port", type=int, default=8085, help="streamable-http: port (endpoint /mcp)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    from zengram.mcp_server.tools import build_server

    arguments = _arguments(argv)
    connection = resolve_connection(os.environ.get("BRAIN_API_URL"), os.environ.get("BRAIN_API_KEY"))
    raw_timeout = os.environ.get("BRAIN_MCP_TIMEOUT", "").strip() or "15000"  # milliseconds, as in Zengram
    try:
        timeout = float(raw_timeout) / 1000
    except ValueError:
        timeout = 0.0
    if timeout <= 0:
        print(f"[zengram-mcp] BRAIN_MCP_TIMEOUT must be a positive number of milliseconds, got {raw_timeout!r}",
              file=sys.stderr)
        raise SystemExit(1)
    client: AsyncBrainClient
    if connection.api_key:
        client = AsyncBrainClient(url=connection.url, api_key=connection.api_key, timeout=timeout)
    else:
        # Exiting would show the assistant only "Connection closed": serve, and let every call say why it fails.
        client = KeylessClient(connection)
        print(f"[zengram-mcp] {client.problem}", file=sys.stderr)
    server = build_server(client)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per API call would drown stderr
    print(f"[zengram-mcp] serving Zengram at {connection.url} over {arguments.transport}", file=sys.stderr)
    if arguments.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=arguments.host, port=arguments.port)


def missing_key_message(connection: Connection) -> str:
    where = ("BRAIN_API_KEY is set but empty" if connection.key_source == "BRAIN_API_KEY" else
             f"looked in BRAIN_API_KEY (unset) and in the key file {connection.key_source} (missing or empty)")
    return (f"no API key for {connection.url}: {where}. Set BRAIN_API_KEY in the MCP server's env, or start "
            "`zengram serve` (it writes that file) with the same ZENGRAM_DATA_DIR")


class KeylessClient(AsyncBrainClient):
    """The client `zengram-mcp` serves with when it found no key: every request fails, before any is sent, with
    an error that says where the key was looked for."""

    def __init__(self, connection: Connection) -> None:
        super().__init__(url=connection.url, api_key="")
        self.problem = missing_key_message(connection)

    async def _send(self, call: Any) -> Any:
        raise AuthenticationError(self.problem)


if __name__ == "__main__":
    main()
