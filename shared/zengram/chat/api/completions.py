"""`POST /chat/completions`: OpenAI-compatible, with the `mnx` block; streaming as server-sent events."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.datastructures import Headers

from zengram.chat.api.audit import USAGE_STATE
from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS
from zengram.chat.api.schemas.completions import PROVIDER_ERRORS, CompletionBody
from zengram.chat.domain.events import SESSION_HEADER, SESSION_PATTERN, TokenUsage
from zengram.chat.domain.providers import KEY_HEADERS, Provider
from zengram.chat.domain.requests import ChatCompletionRequest

router = APIRouter(prefix="/api/v1", tags=["chat: completions"], responses=CHAT_ERRORS)
STREAM_DESCRIPTION = ("With `stream: true`: `text/event-stream`, one `data:` line per chunk as the provider sent it "
                      "(OpenAI's chat.completion.chunk), `data: [DONE]` last.")


@router.post("/chat/completions", response_model=CompletionBody, responses={
    **PROVIDER_ERRORS, 200: {"description": STREAM_DESCRIPTION,
                             "content": {"application/json": {}, "text/event-stream": {}}}})
def chat_completions(body: ChatCompletionRequest, request: Request, chat: ChatDep, project: ProjectDep,
                     memory_policy: Annotated[str | None, Header(alias="x-mnx-memory-policy", max_length=200)] = None,
                     session_id: Annotated[str | None, Header(alias=SESSION_HEADER, pattern=SESSION_PATTERN)] = None,
                     ) -> Response:
    """The caller's messages with the context the `mnx` switches ask for, assembled in the spec's six-step order,
    sent to the provider chosen by the key headers (x-openai-key, x-anthropic-key, x-google-key: used for this call
    only, never stored or logged), the model name or `mnx.provider`; without a key, the configured default
    provider. An `mnx.provider` other than the default needs its key header (400 names the header otherwise).
    The answer carries `mnx` and the x-mnx-chat-id / x-mnx-subject-id headers."""
    from zengram.chat.services.completions import Caller  # imported with the chat layer, not at a function's init

    caller = Caller(project, keys=provider_keys(request.headers), memory_policy=memory_policy,
                    request_id=request.scope.get("state", {}).get("request_id"), session_id=session_id)
    prepared = chat.completions.prepare(body, caller)
    if body.stream:
        events = chat.completions.stream(prepared)  # opened here: a provider's refusal is still a JSON error
        counted = _counting_usage(events, request.scope.setdefault("state", {}))
        return StreamingResponse(counted, media_type="text/event-stream",
                                 headers={**prepared.headers, "cache-control": "no-cache"})
    answer: dict[str, Any] = chat.completions.complete(prepared)
    request.scope.setdefault("state", {})[USAGE_STATE] = TokenUsage.of(answer.get("usage"))
    return JSONResponse(answer, headers=prepared.headers)


def _counting_usage(events: Iterator[str], state: dict[str, Any]) -> Iterator[str]:
    """The stream as it is, noting the `usage` a provider's chunk carries (with `stream_options.include_usage`)
    for the audit."""
    for event in events:
        if '"usage"' in event and event.startswith("data: {"):
            try:
                usage = TokenUsage.of(json.loads(event[len("data: "):]).get("usage"))
            except ValueError:
                usage = None
            if usage is not None:
                state[USAGE_STATE] = usage
        yield event


def provider_keys(headers: Headers) -> dict[Provider, str]:
    """The provider keys the caller sent (blank ones are absent). Read from the headers, never stored."""
    return {provider: value.strip() for provider, name in KEY_HEADERS.items()
            if (value := headers.get(name)) and value.strip()}
