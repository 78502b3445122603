"""Chat history: what was said in each chat, and what of it a new turn replays."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from zengram.chat.domain.history import ChatSummary, NewMessage, StoredMessage, within_budget
from zengram.chat.ports import ChatHistoryStore
from zengram.kernel.content import Scrubber
from zengram.kernel.errors import NotFound

RECENT_WINDOW = 500  # the most messages a budget is ever filled from


class ChatHistoryService:
    def __init__(self, store: ChatHistoryStore, scrubber: Scrubber, *, token_budget: int) -> None:
        self._store = store
        self._scrubber = scrubber
        self._budget = token_budget

    def append(self, project_id: str, subject_id: str, chat_id: str, messages: Sequence[NewMessage],
               at: datetime) -> list[StoredMessage]:
        """Stores the messages scrubbed of credentials (the model saw them as sent; the history keeps no secret)."""
        scrubbed = [message.model_copy(update={"content": self._scrubber.scrub(message.content),
                                               "metadata": self._scrubber.scrub_value(message.metadata)})
                    for message in messages]
        return self._store.append(project_id, subject_id, chat_id, scrubbed, at) if scrubbed else []

    def replay(self, project_id: str, subject_id: str, chat_id: str) -> list[StoredMessage]:
        """The chat's most recent messages within the token budget (setting `chat_history_token_budget`)."""
        return within_budget(self._store.recent(project_id, subject_id, chat_id, RECENT_WINDOW), self._budget)

    def chats(self, project_id: str, subject_id: str, limit: int, offset: int) -> list[ChatSummary]:
        return self._store.chats(project_id, subject_id, limit, offset)

    def read(self, project_id: str, subject_id: str, chat_id: str, limit: int) -> list[StoredMessage]:
        return self._store.read(project_id, subject_id, chat_id, limit)

    def delete(self, project_id: str, subject_id: str, chat_id: str) -> None:
        if not self._store.delete_chat(project_id, subject_id, chat_id):
            raise NotFound(f"chat {chat_id} of subject {subject_id} not found")
