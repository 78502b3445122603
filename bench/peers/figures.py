"""What each system scored, the ratios between them, and the machine they ran on: pure, so it is unit-tested."""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from bench.peers.workload import Answer
from bench.recall.data import Conversation
from bench.recall.metrics import Outcome, summarise

RECALL_K = 10
LoadAverage = tuple[float, float, float]


@dataclass(frozen=True)
class SystemFigures:
    name: str
    turns: int
    ingest_seconds: float
    questions: int
    recall_at_10: float
    p50_ms: float
    p95_ms: float

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.ingest_seconds if self.ingest_seconds > 0 else float("inf")


def outcomes_of(conversations: Sequence[Conversation], answers: Sequence[Answer]) -> list[Outcome]:
    """Pairs each question (in the order asked) with what it got back."""
    questions = [question for conversation in conversations for question in conversation.questions]
    if len(questions) != len(answers):
        raise ValueError(f"{len(answers)} answers for {len(questions)} questions")
    return [Outcome(q.category, q.evidence, a.ranked, a.latency_ms) for q, a in zip(questions, answers, strict=True)]


def figures_of(name: str, turns: int, ingest_seconds: float, outcomes: Sequence[Outcome]) -> SystemFigures:
    row = summarise(name, outcomes)
    return SystemFigures(name=name, turns=turns, ingest_seconds=ingest_seconds, questions=row.n,
                         recall_at_10=row.recall[RECALL_K], p50_ms=row.p50_ms, p95_ms=row.p95_ms)


@dataclass(frozen=True)
class Ratios:
    """`ours ÷ other` for every figure: above 1 is better for turns/s and recall, below 1 for latencies."""

    ours: str
    other: str
    ingest: float
    p50: float
    p95: float
    recall: float


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("inf")


def ratios(ours: SystemFigures, other: SystemFigures) -> Ratios:
    return Ratios(ours=ours.name, other=other.name, ingest=_ratio(ours.turns_per_second, other.turns_per_second),
                  p50=_ratio(ours.p50_ms, other.p50_ms), p95=_ratio(ours.p95_ms, other.p95_ms),
                  recall=_ratio(ours.recall_at_10, other.recall_at_10))


@dataclass(frozen=True)
class Machine:
    at: datetime
    cpu: str
    cores: int
    system: str
    python: str
    loads: tuple[tuple[str, LoadAverage], ...]  # (when, 1/5/15-minute load average), in order

    def with_load(self, when: str) -> Machine:
        return replace(self, loads=(*self.loads, (when, os.getloadavg())))


def cpu_model(cpuinfo: str) -> str:
    """The processor's name from /proc/cpuinfo text ("unknown" when it has none)."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return " ".join(value.split())
    return "unknown"


def machine_now() -> Machine:
    cpuinfo = Path("/proc/cpuinfo")
    return Machine(
        at=datetime.now(UTC), cpu=cpu_model(cpuinfo.read_text() if cpuinfo.exists() else ""),
        cores=os.cpu_count() or 0, system=platform.platform(), python=platform.python_version(),
        loads=(("start", os.getloadavg()),),
    )


def _load(values: LoadAverage) -> str:
    return " / ".join(f"{v:.1f}" for v in values)


def render(machine: Machine, systems: Sequence[SystemFigures], comparisons: Sequence[Ratios]) -> str:
    """A Markdown report: the machine, one row per system, one row per comparison."""
    lines = [
        f"Run at {machine.at:%Y-%m-%d %H:%M} UTC on {machine.cpu}, {machine.cores} cores, {machine.system}, "
        f"Python {machine.python}. Load average (1 / 5 / 15 min): "
        + ", ".join(f"{_load(values)} at {when}" for when, values in machine.loads) + ".",
        "",
        "| system | turns | ingest turns/s | questions | search p50 ms | search p95 ms | recall@10 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in systems:
        lines.append(f"| {s.name} | {s.turns} | {s.turns_per_second:.1f} | {s.questions} | {s.p50_ms:.1f} "
                     f"| {s.p95_ms:.1f} | {s.recall_at_10:.3f} |")
    if comparisons:
        lines += ["", "| ratio (ours ÷ other) | ingest turns/s (>1 better) | search p50 (<1 better) "
                  "| search p95 (<1 better) | recall@10 (>1 better) |", "|---|---:|---:|---:|---:|"]
        for r in comparisons:
            lines.append(f"| {r.ours} ÷ {r.other} | {r.ingest:.2f}× | {r.p50:.2f}× | {r.p95:.2f}× "
                         f"| {r.recall:.2f}× |")
    return "\n".join(lines)

