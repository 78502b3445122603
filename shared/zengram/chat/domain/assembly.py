"""The message list a model receives, in the order mnexium-concepts.md fixes ("Message Assembly Order"):

1. the resolved system prompt, 2. agent state as JSON, 3. memories, 4. records, appended (in that order) to the
system message: the caller's own leading system message when there is one, else a new one at the top;
5. the chat history, after the system message; 6. the caller's messages, as sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

STATE_HEADER = "Agent state (JSON):"
MEMORIES_HEADER = "Relevant memories about the user:"
RECORDS_HEADER = "Relevant records:"
SECTION_BREAK = "\n\n"


@dataclass(frozen=True)
class InjectedRecord:
    type_name: str
    record_id: str
    data: Mapping[str, Any]


@dataclass(frozen=True)
class Injected:
    """What the layer adds to a request, each part already chosen (and budgeted) by the services."""

    prompt: str = ""
    state: Mapping[str, Any] | None = None  # key → value
    memories: Sequence[str] = ()
    records: Sequence[InjectedRecord] = ()
    history: Sequence[Mapping[str, Any]] = ()


def system_sections(injected: Injected) -> list[str]:
    """Steps 1–4 as text, in order; parts with nothing to say are left out."""
    sections = [injected.prompt] if injected.prompt else []
    if injected.state:
        sections.append(f"{STATE_HEADER}\n{state_json(injected.state)}")
    if injected.memories:
        sections.append(MEMORIES_HEADER + "".join(f"\n- {text}" for text in injected.memories))
    if injected.records:
        sections.append(RECORDS_HEADER + "".join(
            f"\n- {record.type_name} {record.record_id}: {json.dumps(record.data, ensure_ascii=False, sort_keys=True)}"
            for record in injected.records))
    return sections


def state_json(state: Mapping[str, Any]) -> str:
    return json.dumps(dict(state), ensure_ascii=False, sort_keys=True)


def assemble(messages: Sequence[Mapping[str, Any]], injected: Injected) -> list[dict[str, Any]]:
    """The final messages: system (caller's + steps 1–4), history, then the caller's other messages."""
    caller = [dict(message) for message in messages]
    system = caller.pop(0) if caller and caller[0].get("role") == "system" else None
    sections = system_sections(injected)
    if sections:
        system = _with_sections(system, SECTION_BREAK.join(sections))
    head = [system] if system is not None else []
    return [*head, *(dict(message) for message in injected.history), *caller]


def _with_sections(system: dict[str, Any] | None, text: str) -> dict[str, Any]:
    if system is None:
        return {"role": "system", "content": text}
    content = system.get("content")
    if isinstance(content, list):  # content parts: the sections become one more text part
        return {**system, "content": [*content, {"type": "text", "text": text}]}
    own = content if isinstance(content, str) else ""
    return {**system, "content": f"{own}{SECTION_BREAK}{text}" if own else text}
