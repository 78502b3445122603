"""Where the CLI and the MCP server connect when told nothing: the local embedded server and its key file."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Connection:
    url: str
    api_key: str
    key_source: str  # for messages: "--key", "BRAIN_API_KEY" or the key file's path


def resolve_connection(url: str | None = None, api_key: str | None = None) -> Connection:
    """Arguments first, then `BRAIN_API_URL` / `BRAIN_API_KEY`, then the embedded server's own settings
    (`ZENGRAM_HOST`/`ZENGRAM_PORT`) and the key it generated into `<ZENGRAM_DATA_DIR>/api-key`. Never
    creates a key: a missing one is left empty and the server's 401 says so."""
    from zengram.settings import Settings

    settings = Settings()
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    resolved_url = (url or os.environ.get("BRAIN_API_URL", "").strip() or f"http://{host}:{settings.port}")
    if api_key:
        return Connection(resolved_url.rstrip("/"), api_key, "--key")
    if settings.api_key is not None:
        return Connection(resolved_url.rstrip("/"), settings.api_key.get_secret_value(), "BRAIN_API_KEY")
    key_file = settings.key_file
    key = key_file.read_text().strip() if key_file.is_file() else ""
    return Connection(resolved_url.rstrip("/"), key, str(key_file))
