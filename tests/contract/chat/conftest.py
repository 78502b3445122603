"""The chat layer's contract suites (zengram/chat/ports.py) run against every adapter: SQLite (one records file) and
DynamoDB (one table, on moto or the emulator AWS_ENDPOINT_URL names)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from zengram.chat.ports import (
    AgentStateStore,
    ChatHistoryStore,
    ClaimStore,
    LearningJobStore,
    MemoryPolicyStore,
    PromptStore,
    RecallEventStore,
    RecordBase,
    SubjectMemoryStore,
)


@dataclass
class ChatStores:
    memories: SubjectMemoryStore
    history: ChatHistoryStore
    state: AgentStateStore
    records: RecordBase
    prompts: PromptStore
    recalls: RecallEventStore
    learning: LearningJobStore
    claims: ClaimStore
    policies: MemoryPolicyStore


@contextmanager
def _sqlite(folder: Path) -> Iterator[ChatStores]:
    from zengram.adapters.sqlite.chat_claims import SQLiteClaimStore
    from zengram.adapters.sqlite.chat_history import SQLiteChatHistoryStore
    from zengram.adapters.sqlite.chat_learning import SQLiteLearningJobStore
    from zengram.adapters.sqlite.chat_memories import SQLiteSubjectMemoryStore
    from zengram.adapters.sqlite.chat_policies import SQLiteMemoryPolicyStore
    from zengram.adapters.sqlite.chat_prompts import SQLitePromptStore
    from zengram.adapters.sqlite.chat_recalls import SQLiteRecallEventStore
    from zengram.adapters.sqlite.chat_records import SQLiteRecordBase
    from zengram.adapters.sqlite.chat_state import SQLiteAgentStateStore

    path = folder / "records.sqlite3"
    stores = ChatStores(SQLiteSubjectMemoryStore(path), SQLiteChatHistoryStore(path), SQLiteAgentStateStore(path),
                        SQLiteRecordBase(path), SQLitePromptStore(path), SQLiteRecallEventStore(path),
                        SQLiteLearningJobStore(path), SQLiteClaimStore(path), SQLiteMemoryPolicyStore(path))
    yield stores
    for store in vars(stores).values():
        store.close()


@contextmanager
def _dynamodb(_: Path) -> Iterator[ChatStores]:
    if not all(importlib.util.find_spec(name) for name in ("boto3", "moto")):
        pytest.skip("boto3 and moto[server] are needed: pip install -e '.[dev]'")
    from zengram.adapters.dynamodb.chat_claims import DynamoDBClaimStore
    from zengram.adapters.dynamodb.chat_history import DynamoDBChatHistoryStore
    from zengram.adapters.dynamodb.chat_learning import DynamoDBLearningJobStore
    from zengram.adapters.dynamodb.chat_memories import DynamoDBSubjectMemoryStore
    from zengram.adapters.dynamodb.chat_policies import DynamoDBMemoryPolicyStore
    from zengram.adapters.dynamodb.chat_prompts import DynamoDBPromptStore
    from zengram.adapters.dynamodb.chat_recalls import DynamoDBRecallEventStore
    from zengram.adapters.dynamodb.chat_records import DynamoDBRecordBase
    from zengram.adapters.dynamodb.chat_state import DynamoDBAgentStateStore

    from tests.aws_support import fresh_dynamodb_store

    with fresh_dynamodb_store() as table:
        name, client = table.table_name, table.client
        yield ChatStores(DynamoDBSubjectMemoryStore(name, client=client), DynamoDBChatHistoryStore(name, client=client),
                         DynamoDBAgentStateStore(name, client=client), DynamoDBRecordBase(name, client=client),
                         DynamoDBPromptStore(name, client=client), DynamoDBRecallEventStore(name, client=client),
                         DynamoDBLearningJobStore(name, client=client), DynamoDBClaimStore(name, client=client),
                         DynamoDBMemoryPolicyStore(name, client=client))


BACKENDS: dict[str, Callable[[Path], AbstractContextManager[Any]]] = {"sqlite": _sqlite, "dynamodb": _dynamodb}


@pytest.fixture(params=sorted(BACKENDS))
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChatStores]:
    with BACKENDS[request.param](tmp_path) as built:
        yield built
