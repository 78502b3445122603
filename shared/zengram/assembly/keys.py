"""The API key of a host that keeps its records in a local file (the embedded server): from settings, or generated
once and kept in the data folder (0600). The credential scrubber falls back on it too."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from zengram.settings import Settings


def resolve_api_key(settings: Settings) -> tuple[str, Path | None]:
    """Returns the key and, when it lives in a file, that file's path."""
    if settings.api_key is not None:
        return settings.api_key.get_secret_value(), None
    path = settings.key_file
    if path.exists():
        return path.read_text().strip(), path
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(32)
    # O_EXCL: two servers starting at once cannot both write a key; the loser reads the winner's.
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip(), path
    with os.fdopen(descriptor, "w") as handle:
        handle.write(key + "\n")
    return key, path
