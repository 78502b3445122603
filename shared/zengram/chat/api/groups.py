"""The chat layer's routers in the two groups deployed as functions of their own (docs/chat.md, "On AWS"): a
chat turn's (completions, history, state, prompts) and its data's (subject memories, records, the 501 refusals).
Each group imports only its own routers, so a function's init builds only the routes it serves (#18 §5)."""

from __future__ import annotations

from fastapi import APIRouter


def turn_routers() -> list[APIRouter]:
    """What a chat turn needs: completions (and Anthropic's Messages wire), history (with the trace and learning
    jobs), state, prompts."""
    from zengram.chat.api import completions, history, messages, prompts, state

    return [completions.router, messages.router, history.router, state.router, prompts.router]


def data_routers() -> list[APIRouter]:
    """A subject's data: memories, claims, profiles, memory policies, records and the memory event stream, and
    the refusals of what the layer does not offer (kept last)."""
    from zengram.chat.api import claims, events, memories, policies, profiles, records, unsupported

    return [memories.router, claims.router, profiles.router, policies.router, records.router, events.router,
            unsupported.router]
