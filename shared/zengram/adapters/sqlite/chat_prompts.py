"""The embedded `PromptStore`: a `chat_prompts` table in the records file."""

from __future__ import annotations

from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.chat.domain.prompts import SystemPrompt
from zengram.kernel.timestamps import format_timestamp

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_prompts (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_prompts_by_project ON chat_prompts (project_id, created_at, id);
"""


class SQLitePromptStore:
    def __init__(self, path: Path) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)

    def close(self) -> None:
        self._db.close()

    def put(self, prompt: SystemPrompt) -> SystemPrompt:
        with self._db.transaction() as tx:
            tx.execute("INSERT OR REPLACE INTO chat_prompts (id, project_id, created_at, body) VALUES (?, ?, ?, ?)",
                       (prompt.id, prompt.project_id, format_timestamp(prompt.created_at), prompt.model_dump_json()))
        return prompt

    def get(self, project_id: str, prompt_id: str) -> SystemPrompt | None:
        row = self._db.connection().execute("SELECT body FROM chat_prompts WHERE id = ? AND project_id = ?",
                                            (prompt_id, project_id)).fetchone()
        return SystemPrompt.model_validate_json(row["body"]) if row is not None else None

    def of_project(self, project_id: str) -> list[SystemPrompt]:
        rows = self._db.connection().execute(
            "SELECT body FROM chat_prompts WHERE project_id = ? ORDER BY created_at, id", (project_id,))
        return [SystemPrompt.model_validate_json(row["body"]) for row in rows]

    def delete(self, project_id: str, prompt_id: str) -> bool:
        with self._db.transaction() as tx:
            cursor = tx.execute("DELETE FROM chat_prompts WHERE id = ? AND project_id = ?", (prompt_id, project_id))
        return cursor.rowcount == 1
