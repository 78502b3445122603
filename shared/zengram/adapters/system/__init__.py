"""Adapters to the local system: the clock."""

from __future__ import annotations

from datetime import datetime

from zengram.kernel.timestamps import utc_now


class SystemClock:
    def now(self) -> datetime:
        return utc_now()
