"""Collecting ranked hits from several retrieval paths into candidates (memories, chat memories, records)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Candidate:
    """One memory id as the retrieval paths saw it: cosine from the vector path, ranks from each path."""

    id: str
    cosine: float | None = None
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def sources(self) -> list[str]:
        return sorted(self.ranks)


def fuse(paths: dict[str, Sequence[tuple[str, float]]]) -> dict[str, Candidate]:
    """Collects each path's ranked (id, score) hits into candidates; ranks are 1-based.

    The vector path's score is kept as the cosine; keyword scores only contribute their rank.
    """
    candidates: dict[str, Candidate] = {}
    for path, hits in paths.items():
        for rank, (memory_id, score) in enumerate(hits, start=1):
            candidate = candidates.setdefault(memory_id, Candidate(memory_id))
            candidate.ranks[path] = rank
            candidate.scores[path] = score
            if path == "vector":
                candidate.cosine = score
    return candidates
