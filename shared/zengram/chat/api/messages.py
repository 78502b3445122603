"""`POST /messages`: Anthropic's Messages wire (system field, content blocks, Anthropic's stream events) over the
same context assembly, provider call and learning as `/chat/completions` (docs/chat.md, "Anthropic Messages")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from zengram.chat.api.completions import provider_keys
from zengram.chat.api.deps import ChatDep, ProjectDep
from zengram.chat.api.schemas import CHAT_ERRORS
from zengram.chat.api.schemas.completions import PROVIDER_ERRORS
from zengram.chat.api.schemas.messages import MessageBody
from zengram.chat.domain.anthropic_replies import MessageStream, message_of
from zengram.chat.domain.anthropic_requests import MessagesRequest

router = APIRouter(prefix="/api/v1", tags=["chat: completions"], responses=CHAT_ERRORS)
STREAM_DESCRIPTION = ("With `stream: true`: `text/event-stream` in Anthropic's shape: `event:` and `data:` lines of "
                      "message_start, content_block_start, content_block_delta, content_block_stop, message_delta, "
                      "message_stop (`error` when the provider broke off).")


@router.post("/messages", response_model=MessageBody, responses={
    **PROVIDER_ERRORS, 200: {"description": STREAM_DESCRIPTION,
                             "content": {"application/json": {}, "text/event-stream": {}}}})
def messages(body: MessagesRequest, request: Request, chat: ChatDep, project: ProjectDep,
             memory_policy: Annotated[str | None, Header(alias="x-mnx-memory-policy", max_length=200)] = None,
             ) -> Response:
    """An Anthropic Messages request (the `anthropic` SDK with this server as its base URL and a Zengram key as its
    api_key; `mnx` in the body, e.g. `extra_body`) answered as Anthropic answers, with the context the `mnx`
    switches ask for assembled into the system message exactly as on /chat/completions. The provider is chosen by
    the same key headers (x-anthropic-key…), the model name or `mnx.provider`, and called on its OpenAI-compatible
    endpoint. The answer carries `mnx` and the x-mnx-chat-id / x-mnx-subject-id headers."""
    from zengram.chat.services.completions import Caller  # imported with the chat layer, not at a function's init

    caller = Caller(project, keys=provider_keys(request.headers), memory_policy=memory_policy,
                    request_id=request.scope.get("state", {}).get("request_id"))
    prepared = chat.completions.prepare(body.as_chat_completion(), caller)
    if body.stream:
        chunks = chat.completions.relay(prepared)  # opened here: a provider's refusal is still a JSON error
        return StreamingResponse(MessageStream(body.model).events(chunks), media_type="text/event-stream",
                                 headers={**prepared.headers, "cache-control": "no-cache"})
    return JSONResponse(message_of(chat.completions.complete(prepared), body.model), headers=prepared.headers)
