"""What every tool of `zengram-mcp` shares: its annotations, argument checking, and how an answer (or the
server's error) becomes the tool's text."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Mapping
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ValidationError

from zengram.client import BrainError

READ = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)


def checked(model: type[BaseModel], arguments: Mapping[str, Any]) -> None:
    """Raises a ToolError naming the first offending argument, as the HTTP API's 400 would."""
    try:
        model.model_validate({name: value for name, value in arguments.items() if value is not None})
    except ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ToolError(message if not location or message.startswith(f"{location}:")
                        else f"{location}: {message}") from error


async def answer(call: Awaitable[Any]) -> str:
    """The server's JSON answer as text, or a tool error carrying the server's `error` text."""
    try:
        result = await call
    except BrainError as error:
        raise ToolError(str(error)) from error
    if isinstance(result, BaseModel):
        result = result.model_dump(mode="json", exclude_none=True)
    return json.dumps(result, indent=2, ensure_ascii=False)
