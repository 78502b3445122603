"""The embedded `RateLimiter`: one row per (key, bucket) holding the current window's count."""

from __future__ import annotations

import math
from pathlib import Path

from zengram.adapters.sqlite.database import SQLiteDatabase
from zengram.kernel.ports import Clock

SCHEMA = """
CREATE TABLE IF NOT EXISTS rate_limits (
    key TEXT NOT NULL,
    bucket TEXT NOT NULL,
    window_start INTEGER NOT NULL,
    hits INTEGER NOT NULL,
    PRIMARY KEY (key, bucket)
);
"""

# One UPSERT counts the hit and starts a new window when the stored one is over. The right-hand sides see the
# row as it was, so `hits` restarts at 1 exactly when the window moves on. A window never moves backwards
# (a process with a late clock joins the newer window instead of resetting it).
_HIT = """
INSERT INTO rate_limits (key, bucket, window_start, hits) VALUES (?, ?, ?, 1)
ON CONFLICT (key, bucket) DO UPDATE SET
    hits = CASE WHEN excluded.window_start > window_start THEN 1 ELSE hits + 1 END,
    window_start = MAX(window_start, excluded.window_start)
RETURNING hits
"""

_REFUND = "UPDATE rate_limits SET hits = hits - 1 WHERE key = ? AND bucket = ? AND window_start = ? AND hits > 0"


class SQLiteRateLimiter:
    """Counts in the records database file, so every server process on the machine shares them."""

    def __init__(self, path: Path, clock: Clock) -> None:
        self._db = SQLiteDatabase(path, SCHEMA)
        self._clock = clock

    def close(self) -> None:
        self._db.close()

    def hit(self, key: str, bucket: str, limit: int, window_seconds: int) -> int | None:
        now = self._clock.now().timestamp()
        window_start = int(now // window_seconds) * window_seconds
        with self._db.transaction() as tx:
            hits = int(tx.execute(_HIT, (key, bucket, window_start)).fetchall()[0]["hits"])
        if hits <= limit:
            return None
        return max(1, math.ceil(window_start + window_seconds - now))

    def refund(self, key: str, bucket: str, window_seconds: int) -> None:
        window_start = int(self._clock.now().timestamp() // window_seconds) * window_seconds
        with self._db.transaction() as tx:
            tx.execute(_REFUND, (key, bucket, window_start))
