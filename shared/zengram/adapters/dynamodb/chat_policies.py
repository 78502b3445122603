"""The AWS `MemoryPolicyStore` (chat/ports.py): one item per policy in its project's partition (`MPOLICY#<project>`)."""

from __future__ import annotations

from typing import Any

from zengram.adapters.dynamodb.chat_items import BODY, ChatTable, key, part
from zengram.adapters.dynamodb.items import string
from zengram.adapters.dynamodb.table import make_client
from zengram.chat.domain.policies import MemoryPolicy


def policies_partition(project_id: str) -> str:
    return f"MPOLICY#{part(project_id)}"


class DynamoDBMemoryPolicyStore:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def put(self, policy: MemoryPolicy) -> MemoryPolicy:
        self._table.put_all([{**key(policies_partition(policy.project_id), policy.id),
                              BODY: string(policy.model_dump_json())}])
        return policy

    def get(self, project_id: str, policy_id: str) -> MemoryPolicy | None:
        item = self._table.get(key(policies_partition(project_id), policy_id))
        return MemoryPolicy.model_validate_json(item[BODY]["S"]) if item is not None else None

    def of_project(self, project_id: str) -> list[MemoryPolicy]:
        policies = [MemoryPolicy.model_validate_json(item[BODY]["S"])
                    for item in self._table.partition(policies_partition(project_id))]
        return sorted(policies, key=lambda policy: (policy.created_at, policy.id))

    def delete(self, project_id: str, policy_id: str) -> bool:
        return self._table.delete_returning(key(policies_partition(project_id), policy_id)) is not None
