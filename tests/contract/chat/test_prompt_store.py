"""The `PromptStore` contract (zengram/chat/ports.py), for every adapter."""

from __future__ import annotations

from zengram.chat.domain.prompts import PromptScope, SystemPrompt
from zengram.chat.domain.tenancy import new_id

from tests.contract.chat.conftest import ChatStores
from tests.contract.chat.helpers import at


def prompt(name: str, seconds: float, project: str = "acme", **fields: object) -> SystemPrompt:
    values: dict[str, object] = {"id": new_id("sp"), "project_id": project, "name": name,
                                 "prompt_text": f"{name} text", "created_at": at(seconds), "updated_at": at(seconds)}
    return SystemPrompt.model_validate({**values, **fields})


def test_prompts_are_stored_per_project(stores: ChatStores) -> None:
    first = stores.prompts.put(prompt("first", 0, is_default=True))
    second = stores.prompts.put(prompt("second", 1, scope=PromptScope.SUBJECT, scope_id="alice", priority=5))
    stores.prompts.put(prompt("elsewhere", 2, project="globex"))
    assert stores.prompts.get("acme", first.id) == first
    assert stores.prompts.get("globex", first.id) is None
    assert stores.prompts.of_project("acme") == [first, second]
    changed = stores.prompts.put(first.changed({"prompt_text": "new text"}, at(3)))
    assert stores.prompts.get("acme", first.id) == changed
    assert stores.prompts.delete("acme", second.id) is True
    assert stores.prompts.delete("acme", second.id) is False
    assert stores.prompts.of_project("acme") == [changed]
