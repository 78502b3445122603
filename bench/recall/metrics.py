"""Evidence recall@k, hit@10, all@10 and MRR over ranked dia_id lists, per category and pooled."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

KS = (1, 5, 10, 50)
POOLED = (1, 2, 3, 4)


@dataclass(frozen=True)
class Outcome:
    category: int
    evidence: frozenset[tuple[int, int]]
    ranked: list[frozenset[tuple[int, int]]]  # each hit's dia_ids (a deduplicated memory may hold several)
    latency_ms: float


def _found_within(outcome: Outcome, k: int) -> set[tuple[int, int]]:
    found: set[tuple[int, int]] = set()
    for ids in outcome.ranked[:k]:
        found |= ids & outcome.evidence
    return found


def recall_at(outcome: Outcome, k: int) -> float:
    return len(_found_within(outcome, k)) / len(outcome.evidence)


def reciprocal_rank(outcome: Outcome) -> float:
    for rank, ids in enumerate(outcome.ranked, start=1):
        if ids & outcome.evidence:
            return 1.0 / rank
    return 0.0


@dataclass(frozen=True)
class Row:
    label: str
    n: int
    recall: dict[int, float]
    hit10: float
    all10: float
    mrr: float
    p50_ms: float
    p95_ms: float

    def as_dict(self) -> dict[str, object]:
        return {"label": self.label, "n": self.n, **{f"r@{k}": round(v, 4) for k, v in self.recall.items()},
                "hit@10": round(self.hit10, 4), "all@10": round(self.all10, 4), "mrr": round(self.mrr, 4),
                "p50_ms": round(self.p50_ms, 1), "p95_ms": round(self.p95_ms, 1)}


def summarise(label: str, outcomes: Sequence[Outcome]) -> Row:
    latencies = np.array([o.latency_ms for o in outcomes]) if outcomes else np.zeros(1)
    n = max(len(outcomes), 1)
    return Row(
        label=label,
        n=len(outcomes),
        recall={k: sum(recall_at(o, k) for o in outcomes) / n for k in KS},
        hit10=sum(recall_at(o, 10) > 0 for o in outcomes) / n,
        all10=sum(recall_at(o, 10) == 1.0 for o in outcomes) / n,
        mrr=sum(reciprocal_rank(o) for o in outcomes) / n,
        p50_ms=float(np.percentile(latencies, 50)),
        p95_ms=float(np.percentile(latencies, 95)),
    )


def table(outcomes: Sequence[Outcome], names: dict[int, str]) -> list[Row]:
    rows = [summarise("cat 1-4", [o for o in outcomes if o.category in POOLED])]
    for category in sorted({o.category for o in outcomes}):
        rows.append(summarise(f"{category} {names.get(category, '')}".strip(),
                              [o for o in outcomes if o.category == category]))
    return rows


def render(rows: Iterable[Row]) -> str:
    header = ("| questions | n | r@1 | r@5 | r@10 | r@50 | hit@10 | all@10 | MRR | p50 ms | p95 ms |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = [header]
    for r in rows:
        lines.append(f"| {r.label} | {r.n} | " + " | ".join(f"{r.recall[k]:.3f}" for k in KS)
                     + f" | {r.hit10:.3f} | {r.all10:.3f} | {r.mrr:.3f} | {r.p50_ms:.1f} | {r.p95_ms:.1f} |")
    return "\n".join(lines)
