"""The `MemoryPolicyStore` contract (zengram/chat/ports.py), for every adapter."""

from __future__ import annotations

from zengram.chat.domain.policies import MemoryPolicy, PolicyConfig
from zengram.chat.domain.prompts import PromptScope

from tests.contract.chat.conftest import ChatStores
from tests.contract.chat.helpers import at


def policy(policy_id: str, seconds: float, project: str = "acme", **fields: object) -> MemoryPolicy:
    values: dict[str, object] = {"id": policy_id, "project_id": project, "name": policy_id,
                                 "policy_text": f"{policy_id} text", "created_at": at(seconds),
                                 "updated_at": at(seconds)}
    return MemoryPolicy.model_validate({**values, **fields})


def test_policies_are_stored_per_project(stores: ChatStores) -> None:
    first = stores.policies.put(policy("mp_first", 0, is_default=True,
                                       config=PolicyConfig(include_kinds=["fact"], recall_private=False)))
    second = stores.policies.put(policy("mp_second", 1, scope=PromptScope.SUBJECT, scope_id="alice",
                                        metadata={"team": "support"}))
    same_id_elsewhere = stores.policies.put(policy("mp_first", 2, project="globex"))
    assert stores.policies.get("acme", "mp_first") == first
    assert stores.policies.get("globex", "mp_first") == same_id_elsewhere  # ids are the project's own
    assert stores.policies.get("globex", "mp_second") is None
    assert stores.policies.of_project("acme") == [first, second]
    changed = stores.policies.put(first.changed({"config": PolicyConfig(recall_limit=2)}, at(3)))
    assert stores.policies.get("acme", "mp_first") == changed
    assert stores.policies.delete("acme", "mp_second") is True
    assert stores.policies.delete("acme", "mp_second") is False
    assert stores.policies.of_project("acme") == [changed]
    assert stores.policies.of_project("globex") == [same_id_elsewhere]
