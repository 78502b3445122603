"""The AWS `ChatHistoryStore` (chat_ports.py): a summary item per chat (`CHAT#<project>#<subject>`, sort key the chat
id) whose atomic counter reserves each append's indexes, and one item per message (`MSGS#…#<chat>`, sort key the
zero-padded index), so a chat reads in order with one strongly consistent Query."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from zengram.adapters.dynamodb.chat_items import ChatTable, key, part
from zengram.adapters.dynamodb.items import Item, number, string, timestamp
from zengram.adapters.dynamodb.schema import PK, SK
from zengram.adapters.dynamodb.table import make_client
from zengram.adapters.dynamodb.writes import Expression
from zengram.chat.domain.history import ChatSummary, NewMessage, Role, StoredMessage
from zengram.kernel.timestamps import parse_timestamp

INDEX_DIGITS = 12


def chats_partition(project_id: str, subject_id: str) -> str:
    return f"CHAT#{part(project_id)}#{part(subject_id)}"


def messages_partition(project_id: str, subject_id: str, chat_id: str) -> str:
    return f"MSGS#{part(project_id)}#{part(subject_id)}#{part(chat_id)}"


def _message_item(message: StoredMessage) -> Item:
    item: Item = {**key(messages_partition(message.project_id, message.subject_id, message.chat_id),
                        f"{message.index:0{INDEX_DIGITS}d}"),
                  "role": string(message.role.value), "content": string(message.content),
                  "metadata": string(json.dumps(message.metadata, ensure_ascii=False)),
                  "created_at": timestamp(message.created_at)}
    for name in ("name", "tool_call_id"):
        value = getattr(message, name)
        if value:
            item[name] = string(value)
    return item


def _message(item: Item, project_id: str, subject_id: str, chat_id: str) -> StoredMessage:
    return StoredMessage(project_id=project_id, subject_id=subject_id, chat_id=chat_id, index=int(item[SK]["S"]),
                         role=Role(item["role"]["S"]), content=item["content"]["S"],
                         name=item.get("name", {}).get("S"), tool_call_id=item.get("tool_call_id", {}).get("S"),
                         metadata=json.loads(item["metadata"]["S"]),
                         created_at=parse_timestamp(item["created_at"]["S"]))


class DynamoDBChatHistoryStore:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def append(self, project_id: str, subject_id: str, chat_id: str, messages: Sequence[NewMessage],
               at: datetime) -> list[StoredMessage]:
        expression = Expression()
        count = expression.value(number(len(messages)))
        moment = expression.value(timestamp(at))
        update = (f"SET {expression.name('created_at')} = if_not_exists({expression.name('created_at')}, {moment}), "
                  f"{expression.name('last_message_at')} = {moment} "
                  f"ADD {expression.name('message_count')} {count}, {expression.name('next_index')} {count}")
        summary = self._table.update(key(chats_partition(project_id, subject_id), chat_id), expression, update,
                                     returning=True)
        assert summary is not None
        first = int(summary["next_index"]["N"]) - len(messages)  # this call's reserved indexes
        stored = [StoredMessage(project_id=project_id, subject_id=subject_id, chat_id=chat_id, index=first + n,
                                created_at=at, **message.model_dump()) for n, message in enumerate(messages)]
        self._table.put_all([_message_item(message) for message in stored])
        return stored

    def read(self, project_id: str, subject_id: str, chat_id: str, limit: int) -> list[StoredMessage]:
        items = self._table.partition(messages_partition(project_id, subject_id, chat_id), limit=limit)
        return [_message(item, project_id, subject_id, chat_id) for item in items]

    def recent(self, project_id: str, subject_id: str, chat_id: str, limit: int) -> list[StoredMessage]:
        items = list(self._table.partition(messages_partition(project_id, subject_id, chat_id), newest_first=True,
                                           limit=limit))
        return [_message(item, project_id, subject_id, chat_id) for item in reversed(items)]

    def chats(self, project_id: str, subject_id: str, limit: int, offset: int) -> list[ChatSummary]:
        summaries = [ChatSummary(project_id=project_id, subject_id=subject_id, chat_id=item[SK]["S"],
                                 created_at=parse_timestamp(item["created_at"]["S"]),
                                 last_message_at=parse_timestamp(item["last_message_at"]["S"]),
                                 message_count=int(item["message_count"]["N"]))
                     for item in self._table.partition(chats_partition(project_id, subject_id))]
        summaries.sort(key=lambda chat: chat.chat_id)
        summaries.sort(key=lambda chat: chat.last_message_at, reverse=True)
        return summaries[offset:offset + limit]

    def delete_chat(self, project_id: str, subject_id: str, chat_id: str) -> bool:
        messages = list(self._table.partition(messages_partition(project_id, subject_id, chat_id)))
        self._table.delete_all([{PK: item[PK], SK: item[SK]} for item in messages])
        return self._table.delete_returning(key(chats_partition(project_id, subject_id), chat_id)) is not None
