"""The chat layer's routers in the two groups deployed as functions of their own (docs/chat.md, "On AWS"): a
chat turn's (completions, history, state, prompts) and its data's (subject memories, claims, records, …).
Each group imports only its own routers, so a function's init builds only the routes it serves (#18 §5); the data
group's function builds each of its routers on the first request under that router's paths (`lazy_data_routers`)."""

from __future__ import annotations

from importlib import import_module

from fastapi import APIRouter

from zengram.chat.api import PREFIX
from zengram.web.lazy_routes import LazyRouters

# The data group's routers (modules of zengram.chat.api), in the order the embedded app includes them.
DATA_ROUTERS = ("memories", "claims", "profiles", "policies", "records", "integrations", "events")
# For each first path segment under /api/v1, the data routers serving paths under it
# (tests/unit/test_chat_lazy_routes.py checks every route of the group against it).
DATA_SEGMENTS: dict[str, tuple[str, ...]] = {
    "memories": ("memories", "claims"),  # GET /api/v1/memories/{memory_id}/claims is the claims router's
    "claims": ("claims",), "profiles": ("profiles",), "memory": ("policies",), "records": ("records",),
    "integrations": ("integrations",), "events": ("events",), "audit": ("events",),
}


def turn_routers() -> list[APIRouter]:
    """What a chat turn needs: completions (and Anthropic's Messages wire), history (with the trace and learning
    jobs), state, prompts."""
    from zengram.chat.api import completions, history, messages, prompts, state

    return [completions.router, messages.router, history.router, state.router, prompts.router]


def data_routers() -> list[APIRouter]:
    """A subject's data: memories, claims, profiles, memory policies, records, integrations and the memory event
    stream."""
    from zengram.chat.api import claims, events, integrations, memories, policies, profiles, records

    return [memories.router, claims.router, profiles.router, policies.router, records.router, integrations.router,
            events.router]


def data_router(name: str) -> APIRouter:
    """One of DATA_ROUTERS, imported now."""
    if name not in DATA_ROUTERS:
        raise ValueError(f"not a data router: {name}")
    router: APIRouter = import_module(f"zengram.chat.api.{name}").router
    return router


def lazy_data_routers() -> LazyRouters:
    """The data group as the chat_data function serves it: each router built on the first request under its
    path, so an init builds none of the group's ~50 routes (#38 item 4)."""
    return LazyRouters(PREFIX, DATA_SEGMENTS, data_router)
