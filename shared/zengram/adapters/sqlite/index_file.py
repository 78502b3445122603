"""The embedded index's SQLite file: the `docs` table (each document's vector and filter fields) and its FTS5 twin
`docs_fts` (its text), how documents are written there, and how the matrix is read back on open (a restart must
not re-embed). The record store remains the source of truth (`zengram reindex` rebuilds this file from it)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.adapters.sqlite.fts_tables import RowsWithText, merge_segments_at
from zengram.adapters.sqlite.vector_matrix import CATEGORICAL_FIELDS, VectorMatrix
from zengram.kernel.search import IndexAttributes, IndexDocument

TOKENIZE = "porter unicode61 remove_diacritics 2"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    vector BLOB NOT NULL,
    type TEXT NOT NULL,
    source_agent TEXT NOT NULL,
    client_id TEXT NOT NULL,
    category TEXT NOT NULL,
    knowledge_category TEXT,
    active INTEGER NOT NULL,
    valid_from REAL NOT NULL,
    valid_to REAL,
    created_at REAL NOT NULL,
    entities TEXT NOT NULL DEFAULT '',
    scope TEXT NOT NULL DEFAULT ''
);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(text, tokenize = '{TOKENIZE}');
"""
DOCS = RowsWithText(table="docs", fts="docs_fts")

ATTRIBUTE_COLUMNS = (*CATEGORICAL_FIELDS, "active", "valid_from", "valid_to", "created_at", "entities", "scope")
# Entity keys are stored as one text, each wrapped in this separator, so `instr` finds a whole key.
_ENTITY_SEPARATOR = "\x1f"


def open_index_file(path: Path) -> SQLiteDatabase:
    """The file at `path`, created or brought up to date (columns added since, FTS5's merge threshold)."""
    db = SQLiteDatabase(path, SCHEMA)
    _add_column(db, "entities")  # files written before entities existed (`zengram reindex` fills it)
    _add_column(db, "scope")  # before scopes existed: Zengram memories only, which the default says
    with db.transaction() as tx:
        merge_segments_at(tx, DOCS.fts)
    return db


def _add_column(db: SQLiteDatabase, name: str) -> None:
    columns = {row["name"] for row in db.connection().execute("PRAGMA table_info(docs)")}
    if name not in columns:
        with db.transaction() as tx:
            tx.execute(f"ALTER TABLE docs ADD COLUMN {name} TEXT NOT NULL DEFAULT ''")


def entity_text(keys: Sequence[str]) -> str:
    return "".join(f"{_ENTITY_SEPARATOR}{key}{_ENTITY_SEPARATOR}" for key in keys)


def _epoch(moment: datetime | None) -> float | None:
    return moment.timestamp() if moment is not None else None


def _attribute_values(attributes: IndexAttributes) -> list[object]:
    return [attributes.type, attributes.source_agent, attributes.client_id, attributes.category,
            attributes.knowledge_category, int(attributes.active), _epoch(attributes.valid_from),
            _epoch(attributes.valid_to), _epoch(attributes.created_at), entity_text(attributes.entities),
            attributes.scope]


def _attributes_from_row(row: sqlite3.Row) -> IndexAttributes:
    def moment(value: float | None) -> datetime | None:
        return datetime.fromtimestamp(value, UTC) if value is not None else None

    return IndexAttributes(
        type=row["type"], source_agent=row["source_agent"], client_id=row["client_id"],
        category=row["category"], knowledge_category=row["knowledge_category"], active=bool(row["active"]),
        valid_from=moment(row["valid_from"]) or datetime.fromtimestamp(0, UTC),
        valid_to=moment(row["valid_to"]), created_at=moment(row["created_at"]) or datetime.fromtimestamp(0, UTC),
        entities=tuple(key for key in row["entities"].split(_ENTITY_SEPARATOR) if key), scope=row["scope"],
    )


def write_document(tx: sqlite3.Connection, document: IndexDocument) -> int:
    """Inserts or replaces the document's row and text; returns its rowid (shared by `docs` and `docs_fts`)."""
    blob = np.asarray(document.vector, dtype=np.float32).tobytes()
    values = _attribute_values(document.attributes)
    existing = tx.execute("SELECT rowid FROM docs WHERE id = ?", (document.id,)).fetchone()
    if existing is None:
        cursor = tx.execute(
            f"INSERT INTO docs (id, vector, {', '.join(ATTRIBUTE_COLUMNS)}) "
            f"VALUES (?, ?, {', '.join('?' for _ in ATTRIBUTE_COLUMNS)})",
            [document.id, blob, *values],
        )
        rowid = int(cursor.lastrowid or 0)
    else:
        rowid = int(existing[0])
        assignments = ", ".join(f"{column} = ?" for column in ATTRIBUTE_COLUMNS)
        tx.execute(f"UPDATE docs SET vector = ?, {assignments} WHERE rowid = ?", [blob, *values, rowid])
        tx.execute("DELETE FROM docs_fts WHERE rowid = ?", (rowid,))
    tx.execute("INSERT INTO docs_fts (rowid, text) VALUES (?, ?)", (rowid, document.text))
    return rowid


def write_attributes(tx: sqlite3.Connection, updates: dict[str, IndexAttributes]) -> None:
    assignments = ", ".join(f"{column} = ?" for column in ATTRIBUTE_COLUMNS)
    tx.executemany(
        f"UPDATE docs SET {assignments} WHERE id = ?",
        [[*_attribute_values(attributes), memory_id] for memory_id, attributes in updates.items()],
    )


def write_texts(tx: sqlite3.Connection, texts: dict[str, str]) -> dict[str, str]:
    """Replaces the FTS5 text of the documents there are; returns those (id → text)."""
    replaced: dict[str, str] = {}
    for memory_id, text in texts.items():
        row = tx.execute("SELECT rowid FROM docs WHERE id = ?", (memory_id,)).fetchone()
        if row is not None:
            tx.execute("DELETE FROM docs_fts WHERE rowid = ?", (row[0],))
            tx.execute("INSERT INTO docs_fts (rowid, text) VALUES (?, ?)", (row[0], text))
            replaced[memory_id] = text
    return replaced


def read_matrix(db: SQLiteDatabase, dimension: int) -> VectorMatrix:
    """Every stored vector and its fields, as a matrix."""
    matrix = VectorMatrix(dimension)
    cursor = db.connection().execute(
        f"SELECT rowid, id, vector, {', '.join(ATTRIBUTE_COLUMNS)} FROM docs ORDER BY rowid"
    )
    for row in cursor:
        vector = np.frombuffer(row["vector"], dtype=np.float32)
        matrix.put(row["id"], vector, _attributes_from_row(row), row["rowid"])
    return matrix
