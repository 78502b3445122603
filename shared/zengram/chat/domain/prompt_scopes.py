"""The scopes a system prompt or a memory policy applies at, project → subject → chat, and their order.

Shared by prompts (a chat turn's) and memory policies (a subject's data): neither function builds the other's
models at init (tests/functions/test_import_weight.py)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Protocol, TypeVar

DEFAULT_PRIORITY = 100


class PromptScope(StrEnum):
    PROJECT = "project"  # every request of the project
    SUBJECT = "subject"  # requests for the subject named by `scope_id`
    CHAT = "chat"  # requests in the chat named by `scope_id`


SCOPE_ORDER = {PromptScope.PROJECT: 0, PromptScope.SUBJECT: 1, PromptScope.CHAT: 2}


class Scoped(Protocol):
    """A prompt or a memory policy: what the scoped resolution reads."""

    @property
    def id(self) -> str: ...
    @property
    def scope(self) -> PromptScope: ...
    @property
    def scope_id(self) -> str | None: ...
    @property
    def is_default(self) -> bool: ...
    @property
    def is_active(self) -> bool: ...
    @property
    def priority(self) -> int: ...
    @property
    def created_at(self) -> datetime: ...


T = TypeVar("T", bound=Scoped)


def applies(item: Scoped, subject_id: str | None, chat_id: str | None) -> bool:
    """Whether an item of this scope applies to a request about this subject, in this chat."""
    if item.scope is PromptScope.PROJECT:
        return True
    wanted = subject_id if item.scope is PromptScope.SUBJECT else chat_id
    return wanted is not None and item.scope_id == wanted


def resolve_defaults(items: Iterable[T], subject_id: str | None, chat_id: str | None) -> list[T]:
    """The active defaults that apply, in order: the project's, then the subject's, then the chat's; within a scope
    by priority (lower first), then age."""
    chosen = [item for item in items if item.is_active and item.is_default and applies(item, subject_id, chat_id)]
    return sorted(chosen, key=lambda item: (SCOPE_ORDER[item.scope], item.priority, item.created_at, item.id))
