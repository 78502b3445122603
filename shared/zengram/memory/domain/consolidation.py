"""Consolidation (semantics.md "Consolidation (LLM)"), the pure parts: what the LLM must answer, how that answer
is cleaned of ids it invented, what it is asked, and how a schedule turns into an interval.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field

from zengram.memory.domain.models import Importance, KnowledgeCategory, Memory

CONSOLIDATION = "consolidation"  # the job kind, the lock name and the source_agent of what it stores
BATCH_SIZE = 50
_TEXT = 2_000  # longest content the plan may propose (stored memories allow more; consolidation compresses)


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class MergedFact(_Lenient):
    content: str = Field(min_length=1, max_length=_TEXT)
    key: str | None = Field(default=None, max_length=128)
    importance: Importance = Importance.MEDIUM
    knowledge_category: KnowledgeCategory | None = None
    source_ids: list[str] = Field(default_factory=list)


class Contradiction(_Lenient):
    description: str = Field(min_length=1, max_length=_TEXT)
    memory_ids: list[str] = Field(default_factory=list)


class Connection(_Lenient):
    memory_ids: list[str] = Field(default_factory=list)
    relation: str = Field(default="related", max_length=200)


class Summary(_Lenient):
    content: str = Field(min_length=1, max_length=_TEXT)
    memory_ids: list[str] = Field(default_factory=list)


class CategoryAssignment(_Lenient):
    memory_id: str
    knowledge_category: KnowledgeCategory


class ConsolidationPlan(_Lenient):
    """The LLM's answer for one batch."""

    merged_facts: list[MergedFact] = Field(default_factory=list)
    contradictions: list[Contradiction] = Field(default_factory=list)
    connections: list[Connection] = Field(default_factory=list)
    summaries: list[Summary] = Field(default_factory=list)
    categories: list[CategoryAssignment] = Field(default_factory=list)


def _known(ids: Iterable[str], batch_ids: set[str]) -> list[str]:
    return [memory_id for memory_id in dict.fromkeys(ids) if memory_id in batch_ids]


def keep_known_ids(plan: ConsolidationPlan, batch: Sequence[Memory]) -> ConsolidationPlan:
    """The plan with every id that is not a memory of this batch removed, and the items left without the ids they
    need dropped: a merged fact, contradiction or summary needs one, a connection two."""
    ids = {memory.id for memory in batch}
    merged = [item.model_copy(update={"source_ids": known}) for item in plan.merged_facts
              if (known := _known(item.source_ids, ids))]
    contradictions = [item.model_copy(update={"memory_ids": known}) for item in plan.contradictions
                      if (known := _known(item.memory_ids, ids))]
    connections = [item.model_copy(update={"memory_ids": known}) for item in plan.connections
                   if len(known := _known(item.memory_ids, ids)) >= 2]
    summaries = [item.model_copy(update={"memory_ids": known}) for item in plan.summaries
                 if (known := _known(item.memory_ids, ids))]
    categories = {item.memory_id: item for item in plan.categories if item.memory_id in ids}  # last one wins
    return ConsolidationPlan(merged_facts=merged, contradictions=contradictions, connections=connections,
                             summaries=summaries, categories=list(categories.values()))


SYSTEM_PROMPT = """You consolidate the long-term memory of a team of AI agents. You get the unconsolidated \
memories of one client, each with its id. Return:
- merged_facts: durable facts that several memories state or imply, each written once, self-contained and \
concise, with source_ids = the ids of the memories it replaces (they will be retired), an optional stable \
kebab-case key, an importance (critical, high, medium, low) and an optional knowledge_category;
- contradictions: memories that cannot all be true, with a one-sentence description and their memory_ids;
- connections: memories that belong together (memory_ids, at least two) and the relation in a few words;
- summaries: compressed summaries of related episodes (content and the memory_ids they cover);
- categories: a knowledge_category (brand, strategy, meeting, content, technical, relationship, general) for \
memories that have none or a wrong one.
Use only ids from the input. Leave a list empty when nothing fits; never invent facts."""


def batch_prompt(client_id: str, batch: Sequence[Memory]) -> str:
    """The user message: the batch as JSON, only the fields that help the model judge."""
    rows = [{
        "id": memory.id, "type": memory.type.value, "content": memory.content, "key": memory.key,
        "subject": memory.subject, "importance": memory.importance.value, "source_agent": memory.source_agent,
        "knowledge_category": memory.knowledge_category.value if memory.knowledge_category else None,
        "created_at": memory.created_at.isoformat(),
    } for memory in batch]
    return json.dumps({"client_id": client_id, "memories": rows}, ensure_ascii=False)


def client_batches(memories: Iterable[Memory], size: int = BATCH_SIZE) -> list[tuple[str, list[Memory]]]:
    """Memories grouped by client (in order of first appearance), each client's cut into batches of `size`."""
    by_client: dict[str, list[Memory]] = {}
    for memory in memories:
        by_client.setdefault(memory.client_id, []).append(memory)
    return [(client, group[start:start + size]) for client, group in by_client.items()
            for start in range(0, len(group), size)]


_RATE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
_STEP = re.compile(r"^\*/(\d+)$")
_NUMBER = re.compile(r"^\d+$")


def schedule_interval(expression: str) -> timedelta:
    """The period of a schedule, for a simple in-process timer: `rate(6 hours)` (EventBridge), or a five-field
    cron whose only moving part is a step: `*/15 * * * *` (minutes), `0 */6 * * *` (hours) or `30 2 * * *`
    (daily). Anything richer (lists, ranges, weekdays) raises ValueError: the embedded timer cannot honour it."""
    period = _period(expression.strip())
    if period is None or period <= timedelta(0):
        raise ValueError(f"consolidation_interval: {expression!r} is not a schedule the embedded timer understands "
                         "(use 'rate(6 hours)' or a cron like '0 */6 * * *')")
    return period


def _period(text: str) -> timedelta | None:
    if rate := _RATE.match(text):
        unit = {"minute": timedelta(minutes=1), "hour": timedelta(hours=1), "day": timedelta(days=1)}
        return int(rate.group(1)) * unit[rate.group(2).rstrip("s")]
    fields = text.split()
    if len(fields) == 5 and fields[2:] == ["*", "*", "*"]:
        minute, hour = fields[:2]
        if (step := _STEP.match(minute)) and hour == "*":
            return timedelta(minutes=int(step.group(1)))
        if _NUMBER.match(minute) and (step := _STEP.match(hour)):
            return timedelta(hours=int(step.group(1)))
        if _NUMBER.match(minute) and _NUMBER.match(hour):
            return timedelta(days=1)
    return None
