"""`python -m bench.chat_recall`: whether chat recall injects what a natural question needs, on the labelled turns
of bench/chat_recall_turns.json (one subject's memories; each turn a user message and the memories it needs).

In process, with the product's MiniLM: the memories are created through the chat layer's memory service, then
each turn is recalled as a completion does (`SubjectMemoryService.recall`, the configured limit and cutoff). Every
candidate's cosine and keyword share come back with it, so the same run also scores the old rule (`0.7·cosine +
0.3·keyword share` against 0.3) and a sweep of cutoffs. Figures: pairs recall (needed memories injected / needed),
precision (injected that were needed / injected), turns helped (a turn that needs a memory got at least one), and
unrelated turns that injected anything (should be 0).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zengram.assembly.containers import build_container
from zengram.chat.domain.recall_calibration import Considered
from zengram.chat.services.memories import NewMemory
from zengram.kernel.ports import Embedder
from zengram.settings import Settings

from bench.documents import embedder_for

TURNS = Path(__file__).resolve().parent / "chat_recall_turns.json"
PROJECT, SUBJECT = "bench", "alice"
OLD_CUTOFF, OLD_VECTOR_WEIGHT = 0.3, 0.7


@dataclass
class Figures:
    needed: int = 0
    found: int = 0
    injected: int = 0
    helped: int = 0
    needing: int = 0
    unrelated: int = 0
    unrelated_injecting: int = 0

    def add(self, relevant: set[str], injected: list[str]) -> None:
        self.needed += len(relevant)
        self.found += len(relevant & set(injected))
        self.injected += len(injected)
        if relevant:
            self.needing += 1
            self.helped += bool(relevant & set(injected))
        else:
            self.unrelated += 1
            self.unrelated_injecting += bool(injected)

    def row(self, name: str) -> str:
        recall = self.found / self.needed if self.needed else 0.0
        precision = self.found / self.injected if self.injected else 0.0
        return (f"| {name} | {recall:.3f} | {precision:.3f} | {self.helped} / {self.needing} | "
                f"{self.unrelated_injecting} / {self.unrelated} |")


def load(path: Path = TURNS) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def considered_per_turn(data: dict[str, Any], embedder: Embedder) -> list[tuple[set[str], list[Considered]]]:
    """Each turn's needed memory texts and everything recall considered for it (at the product's defaults)."""
    with tempfile.TemporaryDirectory(prefix="chat-recall-") as folder:
        settings = Settings(data_dir=Path(folder) / "data", api_key="bench", rate_limit_enabled=False)
        container = build_container(settings, embedder=embedder)
        try:
            memories = container.chat.memories
            for text in data["memories"]:
                memories.create(PROJECT, NewMemory(subject_id=SUBJECT, text=text), no_supersede=True)
            config = container.chat.completions._config  # the cutoff and limit completions use
            out = []
            for turn in data["turns"]:
                recalled = memories.recall(PROJECT, SUBJECT, turn["message"], limit=config.memories,
                                           min_relevance=config.memory_relevance)
                out.append(({data["memories"][i] for i in turn["relevant"]}, recalled.considered))
            return out
        finally:
            container.close()


def injected_by(rule: Callable[[Considered], float], cutoff: float, considered: list[Considered],
                limit: int = 5) -> list[str]:
    ranked = sorted(considered, key=lambda c: -rule(c))
    return [c.text for c in ranked if rule(c) >= cutoff][:limit]


def old_rule(c: Considered) -> float:
    return OLD_VECTOR_WEIGHT * max(c.cosine or 0.0, 0.0) + (1 - OLD_VECTOR_WEIGHT) * c.keyword_share


def calibrated(c: Considered) -> float:
    return c.relevance


def report(turns: list[tuple[set[str], list[Considered]]]) -> str:
    lines = ["| rule | pairs recall | precision | turns helped | unrelated turns injecting |",
             "|---|---:|---:|---:|---:|"]
    product = Figures()
    for relevant, considered in turns:
        product.add(relevant, [c.text for c in considered if c.reason is None])
    old = Figures()
    for relevant, considered in turns:
        old.add(relevant, injected_by(old_rule, OLD_CUTOFF, considered))
    lines += [old.row("old: 0.7·cos + 0.3·keyword ≥ 0.3"), product.row("**calibrated ≥ 0.3 (the product)**")]
    for cutoff in (0.2, 0.25, 0.35, 0.4, 0.5):
        sweep = Figures()
        for relevant, considered in turns:
            sweep.add(relevant, injected_by(calibrated, cutoff, considered))
        lines.append(sweep.row(f"calibrated ≥ {cutoff}"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.chat_recall", description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    args = parser.parse_args(argv)
    data = load()
    turns = considered_per_turn(data, embedder_for(args.embedder))
    print(f"{len(turns)} turns ({sum(1 for r, _ in turns if r)} need a memory), {len(data['memories'])} memories")
    print(report(turns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
