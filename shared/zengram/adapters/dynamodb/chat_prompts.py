"""The AWS `PromptStore` (chat_ports.py): one item per prompt in its project's partition (`PROMPT#<project>`)."""

from __future__ import annotations

from typing import Any

from zengram.adapters.dynamodb.chat_items import BODY, ChatTable, key, part
from zengram.adapters.dynamodb.items import string
from zengram.adapters.dynamodb.table import make_client
from zengram.chat.domain.prompts import SystemPrompt


def prompts_partition(project_id: str) -> str:
    return f"PROMPT#{part(project_id)}"


class DynamoDBPromptStore:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def put(self, prompt: SystemPrompt) -> SystemPrompt:
        self._table.put_all([{**key(prompts_partition(prompt.project_id), prompt.id),
                              BODY: string(prompt.model_dump_json())}])
        return prompt

    def get(self, project_id: str, prompt_id: str) -> SystemPrompt | None:
        item = self._table.get(key(prompts_partition(project_id), prompt_id))
        return SystemPrompt.model_validate_json(item[BODY]["S"]) if item is not None else None

    def of_project(self, project_id: str) -> list[SystemPrompt]:
        prompts = [SystemPrompt.model_validate_json(item[BODY]["S"])
                   for item in self._table.partition(prompts_partition(project_id))]
        return sorted(prompts, key=lambda prompt: (prompt.created_at, prompt.id))

    def delete(self, project_id: str, prompt_id: str) -> bool:
        return self._table.delete_returning(key(prompts_partition(project_id), prompt_id)) is not None
