"""The language model when none is configured: every feature that needs one answers 503."""

from __future__ import annotations

from zengram.kernel.errors import LLMUnavailable
from zengram.kernel.ports import JsonModel


class NoLanguageModel:
    """The `LanguageModel` port with no provider behind it (no ZENGRAM_LLM_BASE_URL and no key)."""

    @property
    def provider(self) -> str:
        return "none"

    @property
    def model(self) -> str:
        return "none"

    def complete_json(self, system: str, user: str, schema: type[JsonModel]) -> JsonModel:
        raise LLMUnavailable("LLM provider unavailable")
