"""How relevant a subject memory (or record) is to the last user message: a calibrated score in [0, 1] whose
cutoff (`ZENGRAM_CHAT_RECALL_MIN_RELEVANCE`, 0.3) means the same for every embedder, and what recall considered
and cut, for the trace (docs/chat.md, "Recall").

A raw cosine says little on its own. all-MiniLM-L6-v2 gives the memory a natural question needs 0.15–0.5
("Where should I eat tonight?" against "Alice prefers vegetarian restaurants": 0.37) and an unrelated memory of the
same subject below 0.2 (its 95th percentile 0.175), so the old `0.7·cosine + 0.3·keyword share` against 0.3 needed
a cosine of 0.43 without a shared word and injected a memory for 1 of 28 questions that needed one
(bench/chat_recall.py over the labelled turns in bench/chat_recall_turns.json). As the document scores are
(zengram.documents.domain.relevance), the cosine is mapped through anchors measured for the model: cosine 0.20,
above which no unrelated question's best memory scored on that set, maps to the 0.3 cutoff, and 0.35 to 0.7. Keyword
agreement (BM25 relative to this search's best) then lifts it by at most `KEYWORD_LIFT` of the way to 1: it
confirms a semantic match, but a keyword alone (cosine near 0) stays below the cutoff. An embedder without
measured anchors keeps its cosine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zengram.chat.domain.policies import PolicyConfig
from zengram.kernel.calibration import IDENTITY, Calibration

KEYWORD_LIFT = 0.2
MINILM = Calibration(((0.0, 0.0), (0.12, 0.10), (0.20, 0.30), (0.35, 0.70), (0.60, 0.95), (1.0, 1.0)))
CALIBRATIONS = {"minilm:all-MiniLM-L6-v2": MINILM}
TEXT_SHOWN = 80  # characters of a cut memory's text in the trace


def calibration_for(model_id: str | None) -> Calibration:
    return CALIBRATIONS.get(model_id or "", IDENTITY)


def calibrated_relevance(cosine: float | None, keyword_share: float, calibration: Calibration) -> float:
    """The calibrated cosine, lifted by keyword agreement (`keyword_share`: BM25 / this search's best, 0–1)."""
    semantic = min(max(calibration(max(cosine or 0.0, 0.0)), 0.0), 1.0)
    return round(min(1.0, semantic + (1.0 - semantic) * KEYWORD_LIFT * min(max(keyword_share, 0.0), 1.0)), 4)


@dataclass(frozen=True)
class Considered:
    """A candidate recall looked at: its evidence, and why it was cut (None: injected)."""

    id: str
    text: str
    relevance: float
    cosine: float | None
    keyword_share: float
    reason: str | None = None

    def view(self) -> dict[str, Any]:
        text = self.text if len(self.text) <= TEXT_SHOWN else self.text[:TEXT_SHOWN - 1] + "…"
        return {"id": self.id, "text": text, "relevance": self.relevance,
                "cosine": None if self.cosine is None else round(self.cosine, 4),
                "keyword_share": round(self.keyword_share, 4), "reason": self.reason}


def below_cutoff(relevance: float, cutoff: float, setting: str) -> str:
    return f"relevance {relevance:.3f} below the cutoff {cutoff:g} ({setting})"


def beyond_limit(limit: int, setting: str) -> str:
    return f"relevant, but {limit} more relevant ones were injected ({setting})"


def considered_view(considered: list[Considered], *, cutoff: float, limit: int) -> dict[str, Any]:
    """What the trace says about one recall: how many candidates, how many injected, and each cut one with why."""
    cut = [c for c in considered if c.reason is not None]
    return {"candidates": len(considered), "injected": len(considered) - len(cut), "cutoff": cutoff, "limit": limit,
            "cut": [c.view() for c in cut]}


def recall_settings_named(policy: PolicyConfig) -> tuple[str, str]:
    """Where a completion's recall cutoff and limit come from: the memory policy's fields when it sets them, else
    the settings."""
    cutoff = ("the memory policy's recall_min_relevance" if policy.recall_min_relevance is not None
              else "ZENGRAM_CHAT_RECALL_MIN_RELEVANCE")
    limit = "the memory policy's recall_limit" if policy.recall_limit is not None else "ZENGRAM_CHAT_RECALL_LIMIT"
    return cutoff, limit
