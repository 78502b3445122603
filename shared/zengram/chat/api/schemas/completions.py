"""Response bodies of the completion route, and the errors a provider adds."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from zengram.web.schemas import documented_error

PROVIDER_ERRORS: dict[int | str, dict[str, Any]] = {
    502: documented_error("The provider failed or answered with something unusable"),
    503: documented_error("No provider configured, or the provider is unreachable"),
}


class CompletionBody(BaseModel):
    """The provider's chat-completions answer as it sent it, plus the layer's `mnx` block."""

    model_config = ConfigDict(extra="allow")

    mnx: dict[str, Any]

