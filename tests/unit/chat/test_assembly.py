"""The six-step assembly order (mnexium-concepts.md "Message Assembly Order") for every combination of parts."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from zengram.chat.domain.assembly import (
    MEMORIES_HEADER,
    RECORDS_HEADER,
    STATE_HEADER,
    Injected,
    InjectedRecord,
    assemble,
)

PROMPT = "You are Acme's support assistant."
STATE = {"current_task": {"step": 3}}
MEMORIES = ("User's favorite color is blue", "User works remotely")
RECORDS = (InjectedRecord("account", "rec_1", {"name": "TechCorp", "arr": 5}),)
HISTORY = ({"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"})
ASK = [{"role": "user", "content": "What's next?"}]


def expected_system(parts: dict[str, bool]) -> str | None:
    sections = []
    if parts["prompt"]:
        sections.append(PROMPT)
    if parts["state"]:
        sections.append(f"{STATE_HEADER}\n{json.dumps(STATE)}")
    if parts["memories"]:
        sections.append(MEMORIES_HEADER + "".join(f"\n- {m}" for m in MEMORIES))
    if parts["records"]:
        sections.append(f'{RECORDS_HEADER}\n- account rec_1: {{"arr": 5, "name": "TechCorp"}}')
    return "\n\n".join(sections) or None


SWITCHES = [dict(zip(("prompt", "state", "memories", "records", "history"), values, strict=True))
            for values in itertools.product([False, True], repeat=5)]


@pytest.mark.parametrize("parts", SWITCHES, ids=lambda p: "+".join(k for k, v in p.items() if v) or "nothing")
def test_every_combination_keeps_the_order(parts: dict[str, bool]) -> None:
    injected = Injected(prompt=PROMPT if parts["prompt"] else "", state=STATE if parts["state"] else None,
                        memories=MEMORIES if parts["memories"] else (), records=RECORDS if parts["records"] else (),
                        history=HISTORY if parts["history"] else ())
    system = expected_system(parts)
    expected: list[dict[str, Any]] = ([{"role": "system", "content": system}] if system else [])
    expected += list(HISTORY) if parts["history"] else []
    assert assemble(ASK, injected) == [*expected, *ASK]


def test_the_sections_are_appended_to_the_callers_system_message() -> None:
    messages = [{"role": "system", "content": "Answer in French."}, *ASK]
    assembled = assemble(messages, Injected(prompt=PROMPT, memories=MEMORIES[:1], history=HISTORY[:1]))
    assert assembled == [
        {"role": "system", "content": f"Answer in French.\n\n{PROMPT}\n\n{MEMORIES_HEADER}\n- {MEMORIES[0]}"},
        HISTORY[0], *ASK]


def test_content_parts_get_one_more_text_part() -> None:
    system = {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    assembled = assemble([system, *ASK], Injected(prompt=PROMPT))
    assert assembled[0]["content"] == [{"type": "text", "text": "Be brief."}, {"type": "text", "text": PROMPT}]


def test_nothing_injected_leaves_the_request_as_sent() -> None:
    messages = [{"role": "system", "content": "x"}, {"role": "user", "content": "y", "name": "bob"}]
    assert assemble(messages, Injected()) == messages
