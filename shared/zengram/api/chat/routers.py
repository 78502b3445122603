"""Every router of the chat layer, for the hosts to mount (the embedded app, the chat function)."""

from __future__ import annotations

from fastapi import APIRouter

from zengram.api.chat import completions, history, memories, prompts, records, state, unsupported

CHAT_ROUTERS: list[APIRouter] = [completions.router, memories.router, history.router, state.router, records.router,
                                 prompts.router, unsupported.router]
