"""Memory policies: what learning may keep and what recall may inject, scoped project → subject → chat like the
system prompts (docs/chat.md, "Memory policies").

A request's policy is chosen by `mnx.memory_policy` (or the `x-mnx-memory-policy` header): omitted or `true`
resolves the active default policies of the project, the subject and the chat (their texts joined in that order,
their configs merged so a later scope's key wins); `false` applies none; a policy id applies that policy alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_serializer

from zengram.chat.domain.prompt_scopes import DEFAULT_PRIORITY, PromptScope, applies, resolve_defaults
from zengram.chat.domain.request_values import JsonValue
from zengram.kernel.request_fields import NotBoolean
from zengram.kernel.text_rules import NotBlank
from zengram.kernel.timestamps import format_timestamp

Kind = Annotated[str, StringConstraints(pattern=r"^[a-z_]{1,32}$")]
PolicyText = Annotated[str, StringConstraints(max_length=4000)]
PolicyName = Annotated[str, StringConstraints(min_length=1, max_length=200), NotBlank()]
PolicyId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,100}$")]
MAX_KINDS = 20


class PolicyConfig(BaseModel):
    """What a policy decides. Mnexium's keys shape learning; `recall_*` (this server's) shape what a completion
    with `recall: true` injects. A key left out decides nothing: the server's default applies."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    include_kinds: Annotated[list[Kind], Field(max_length=MAX_KINDS)] | None = None  # only these kinds are learned
    exclude_kinds: Annotated[list[Kind], Field(max_length=MAX_KINDS)] | None = None  # these kinds never are
    confidence_min: Annotated[float, Field(ge=0, le=1), NotBoolean] | None = None  # least confidence of one learned
    importance_min: Annotated[int, Field(ge=0, le=100), NotBoolean] | None = None  # least importance of one learned
    max_memories_per_turn: Annotated[int, Field(ge=1, le=50), NotBoolean] | None = None  # most learned from a turn
    recall_limit: Annotated[int, Field(ge=0, le=50), NotBoolean] | None = None  # most memories injected
    recall_min_relevance: Annotated[float, Field(ge=0, le=1), NotBoolean] | None = None  # least relevance injected
    recall_private: bool | None = None  # false: only the project's shared memories are injected, not the subject's

    def merged(self, later: PolicyConfig) -> PolicyConfig:
        """This config with every key `later` sets replaced by its value."""
        return self.model_copy(update=later.model_dump(exclude_none=True))

    def keeps(self, kind: str, confidence: float, importance: int) -> str | None:
        """Why a learned memory of this kind, confidence and importance is dropped (None: it is kept)."""
        if self.include_kinds is not None and kind not in self.include_kinds:
            return f"kind '{kind}' not in include_kinds"
        if self.exclude_kinds is not None and kind in self.exclude_kinds:
            return f"kind '{kind}' in exclude_kinds"
        if self.confidence_min is not None and confidence < self.confidence_min:
            return f"confidence {confidence} below confidence_min {self.confidence_min}"
        if self.importance_min is not None and importance < self.importance_min:
            return f"importance {importance} below importance_min {self.importance_min}"
        return None


class MemoryPolicy(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    project_id: str
    name: str
    policy_text: str
    scope: PromptScope = PromptScope.PROJECT
    scope_id: str | None = None
    is_default: bool = False  # resolved automatically where its scope applies
    is_active: bool = True
    priority: int = DEFAULT_PRIORITY  # lower first within a scope
    config: PolicyConfig = PolicyConfig()
    metadata: dict[str, Any] | None = None
    created_at: datetime
    updated_at: datetime

    @field_serializer("created_at", "updated_at", when_used="json")
    def _timestamp_text(self, moment: datetime) -> str:
        return format_timestamp(moment)

    def applies_to(self, subject_id: str | None, chat_id: str | None) -> bool:
        return applies(self, subject_id, chat_id)

    def changed(self, changes: dict[str, Any], at: datetime) -> MemoryPolicy:
        """Anything but the id, project, scope and scope id may change."""
        return self.model_copy(update={**changes, "updated_at": at})


class AppliedPolicy(BaseModel):
    """The policy a request applies: the ids it came from, their texts joined, their configs merged. Kept in the
    learning job, so a retry applies what the request did."""

    model_config = ConfigDict(frozen=True)

    policy_ids: list[str] = Field(default_factory=list)
    policy_text: str = ""
    config: PolicyConfig = PolicyConfig()


def resolve(policies: Iterable[MemoryPolicy], subject_id: str | None, chat_id: str | None) -> list[MemoryPolicy]:
    """The active default policies that apply, project then subject then chat, each scope by priority, then age."""
    return resolve_defaults(policies, subject_id, chat_id)


def applied(policies: Sequence[MemoryPolicy]) -> AppliedPolicy:
    config = PolicyConfig()
    for policy in policies:
        config = config.merged(policy.config)
    return AppliedPolicy(policy_ids=[p.id for p in policies],
                         policy_text="\n\n".join(p.policy_text for p in policies if p.policy_text), config=config)


# -- requests --------------------------------------------------------------------------------------------------

class PolicyCreate(BaseModel):
    """POST /memory/policies, Mnexium's fields: `name` and `policy_text` required."""

    model_config = ConfigDict(extra="ignore")

    id: PolicyId | None = None  # the caller may name it (`mp_…`); else one is made
    name: PolicyName
    policy_text: PolicyText
    scope: PromptScope = PromptScope.PROJECT
    scope_id: Annotated[str, StringConstraints(max_length=200)] | None = None  # "" is none (Mnexium lists "")
    is_default: bool = False
    is_active: bool = True
    priority: Annotated[int, Field(ge=0, le=10_000), NotBoolean] = DEFAULT_PRIORITY
    config: PolicyConfig = PolicyConfig()
    metadata: dict[str, JsonValue] | None = None


class PolicyPatch(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: PolicyName | None = None
    policy_text: PolicyText | None = None
    is_default: bool | None = None
    is_active: bool | None = None
    priority: Annotated[int, Field(ge=0, le=10_000), NotBoolean] | None = None
    config: PolicyConfig | None = None
    metadata: dict[str, JsonValue] | None = None


class PolicyChoice(BaseModel):
    """How a request chose its policy: `resolve` the scoped defaults, none (`off`), or one by `policy_id`."""

    model_config = ConfigDict(frozen=True)

    off: bool = False
    policy_id: str | None = None

    @classmethod
    def of(cls, option: bool | str | None, header: str | None) -> PolicyChoice:
        """The request's choice: `mnx.memory_policy` when sent, else the header (`true`/`false`/an id)."""
        value: bool | str | None = option if option is not None else header
        if isinstance(value, str):
            text = value.strip()
            value = {"true": True, "false": False, "": None}.get(text.lower(), text)
        if value is False:
            return cls(off=True)
        return cls(policy_id=value) if isinstance(value, str) else cls()

