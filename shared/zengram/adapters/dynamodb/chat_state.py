"""The AWS `AgentStateStore` (chat_ports.py): one item per key (`STATE#<project>#<subject>`, sort key the key).
An expiring value also carries `ttl` (epoch seconds) for the table's TimeToLiveSpecification, which removes it
some time after it expired; reads treat it as absent from `expires_at` on."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from zengram.adapters.dynamodb.chat_items import BODY, ChatTable, key, part
from zengram.adapters.dynamodb.items import Item, number, string, timestamp
from zengram.adapters.dynamodb.table import make_client
from zengram.adapters.dynamodb.writes import Expression
from zengram.chat.domain.state import AgentState
from zengram.kernel.timestamps import parse_timestamp

TTL_ATTRIBUTE = "ttl"


def state_partition(project_id: str, subject_id: str) -> str:
    return f"STATE#{part(project_id)}#{part(subject_id)}"


def _state(item: Item) -> AgentState:
    return AgentState.model_validate_json(item[BODY]["S"]).model_copy(
        update={"created_at": parse_timestamp(item["created_at"]["S"])})


class DynamoDBAgentStateStore:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def put(self, state: AgentState) -> AgentState:
        expression = Expression()
        created = expression.name("created_at")
        assignments = [expression.equals(BODY, string(state.model_dump_json())),
                       f"{created} = if_not_exists({created}, {expression.value(timestamp(state.created_at))})"]
        update = f"SET {', '.join(assignments)}"
        if state.expires_at is not None:
            update += f", {expression.equals(TTL_ATTRIBUTE, number(int(state.expires_at.timestamp()) + 1))}"
        else:
            update += f" REMOVE {expression.name(TTL_ATTRIBUTE)}"
        stored = self._table.update(key(state_partition(state.project_id, state.subject_id), state.key), expression,
                                    update, returning=True)
        assert stored is not None
        return _state(stored)

    def get(self, project_id: str, subject_id: str, key_name: str, now: datetime) -> AgentState | None:
        item = self._table.get(key(state_partition(project_id, subject_id), key_name))
        state = _state(item) if item is not None else None
        return state if state is not None and state.is_live(now) else None

    def list_live(self, project_id: str, subject_id: str, now: datetime) -> list[AgentState]:
        states = (_state(item) for item in self._table.partition(state_partition(project_id, subject_id)))
        return [state for state in states if state.is_live(now)]

    def delete(self, project_id: str, subject_id: str, key_name: str, now: datetime) -> bool:
        old = self._table.delete_returning(key(state_partition(project_id, subject_id), key_name))
        return old is not None and _state(old).is_live(now)
