"""LLM-powered topic synthesis: what the memories about a topic say, with checked [mem:<id>] citations."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from zengram.memory.api.deps import ReflectServiceDep
from zengram.memory.domain.reflect import ReflectRequest, ReflectResult
from zengram.web.access import ScopeDep
from zengram.web.schemas import ERROR_RESPONSES, documented_error

REFLECT_ERRORS: dict[int | str, dict[str, Any]] = {
    502: documented_error("The LLM answered twice with something that is not the expected JSON"),
    503: documented_error("No LLM provider configured, or it could not be reached"),
}

router = APIRouter(tags=["reflect"], responses=ERROR_RESPONSES)


@router.post("/reflect", response_model=ReflectResult, responses=REFLECT_ERRORS)
def reflect(body: ReflectRequest, reflect: ReflectServiceDep, scope: ScopeDep) -> ReflectResult:
    return reflect.reflect(body, scope)
