"""The settings of a whole host: each context's, composed into one. Read when a host starts, never at import time.

Every setting has an environment variable: `ZENGRAM_<NAME>` unless an alias is listed (docs/settings.md). Each
context's wiring reads only its own model (`zengram.memory.settings`, `zengram.chat.settings`,
`zengram.documents.settings`); the shared adapters' models are in `zengram.kernel.settings`.
"""

from __future__ import annotations

from zengram.chat.settings import ChatSettings
from zengram.documents.settings import DocumentsSettings
from zengram.memory.settings import MemorySettings


class Settings(MemorySettings, ChatSettings, DocumentsSettings):
    """Every setting has an environment variable: `ZENGRAM_<NAME>` unless an alias is listed."""
