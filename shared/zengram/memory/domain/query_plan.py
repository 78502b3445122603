"""What a search does with its query before the paths run: the temporal resolver's date window and recency
boost, and query expansion (docs/retrieval-extras.md). Pure: the service passes the settings and the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from zengram.memory.domain.expansion import QueryAnalysis, analyze_query
from zengram.memory.domain.models import Memory
from zengram.memory.domain.temporal import TemporalMode, TemporalResolution, proximity_boost, resolve_temporal, within


@dataclass(frozen=True)
class QueryExtras:
    """Which query-time extras run. `temporal_windows`: which time words in the query narrow the search to
    their window (TemporalMode). `temporal_boost`: for a temporal query with a `reference_date` (or `at_time`),
    memories near it score up to ×2 (`half_life_days` away: ×1.37). `query_expansion`: vague queries get topic
    terms on the vector path. The defaults are the product's (Settings takes them from here): all off, as none
    raised recall on LoCoMo (bench/recall/RESULTS.md, "Retrieval extras"); no retrieval profile turns them on."""

    temporal_windows: TemporalMode = TemporalMode.OFF
    temporal_boost: bool = False
    half_life_days: float = 30.0
    query_expansion: bool = False


DEFAULT_QUERY_EXTRAS = QueryExtras()


@dataclass(frozen=True)
class QueryPlan:
    query: str
    vector_text: str  # what the vector path embeds: the query, expanded when vague
    date_from: datetime | None  # the window every path keeps (explicit bounds win over resolved ones)
    date_to: datetime | None
    temporal: TemporalResolution | None  # what the resolver found (None: it did not run)
    analysis: QueryAnalysis | None  # what expansion found (None: it did not run)
    boost_reference: datetime | None  # the moment the temporal boost measures from (None: no boost)
    half_life_days: float

    def boost(self, memory: Memory) -> float:
        if self.boost_reference is None:
            return 1.0
        return proximity_boost(memory.valid_from or memory.created_at, self.boost_reference, self.half_life_days)

    def keeps(self, memory: Memory) -> bool:
        """Whether the memory's moment (valid_from, else stored time) lies in the window."""
        return within(memory.valid_from or memory.created_at, self.date_from, self.date_to)

    def wire(self) -> dict[str, Any]:
        """Upstream Zengram's `retrieval` fields for what was applied: `query_domain`, `expanded_query`,
        `temporal` (its camelCase object), plus `date_window` when a window narrowed the search."""
        notes: dict[str, Any] = {}
        if self.analysis is not None and self.analysis.domain:
            notes["query_domain"] = self.analysis.domain
        if self.vector_text != self.query:
            notes["expanded_query"] = self.vector_text
        if self.temporal is not None and self.temporal.is_temporal:
            notes["temporal"] = {**self.temporal.wire(), "boost": self.boost_reference is not None}
        if self.date_from is not None or self.date_to is not None:
            notes["date_window"] = {"from": _iso(self.date_from), "to": _iso(self.date_to)}
        return notes


def plan_query(query: str, extras: QueryExtras, *, now: datetime, reference_date: datetime | None = None,
               at_time: datetime | None = None, date_from: datetime | None = None,
               date_to: datetime | None = None) -> QueryPlan:
    """Relative time words resolve against `reference_date`, else `at_time`, else now; the boost needs one of
    the first two (as upstream: "now" is no reference for a recency boost of stored history)."""
    reference = reference_date or at_time
    temporal = None
    windows = extras.temporal_windows
    if windows is not TemporalMode.OFF or extras.temporal_boost:  # the boost alone still needs to know
        temporal = resolve_temporal(query, reference or now, TemporalMode.ALL if windows is TemporalMode.OFF
                                    else windows)
    if temporal is not None and windows is not TemporalMode.OFF:
        date_from = date_from or temporal.date_from
        date_to = date_to or temporal.date_to
    analysis = analyze_query(query) if extras.query_expansion else None
    boosting = extras.temporal_boost and temporal is not None and temporal.is_temporal and reference is not None
    return QueryPlan(
        query=query, vector_text=analysis.expand(query) if analysis else query, date_from=date_from,
        date_to=date_to, temporal=temporal, analysis=analysis, boost_reference=reference if boosting else None,
        half_life_days=extras.half_life_days,
    )


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
