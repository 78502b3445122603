"""`python -m bench.peers`: mem0 OSS, Zengram's HTTP API and the exact-scan floor on one LoCoMo workload.

One run on one machine, the systems taking turns conversation by conversation (who goes first rotates, so
a load that drifts falls on all alike): every turn stored one at a time, then every question of
categories 1-4 asked (limit 50); then ingest turns/s, search p50/p95 and recall@10 of each and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from bench.paths import DATA, MODEL_CACHE
from bench.peers.figures import figures_of, machine_now, ratios, render
from bench.peers.systems import ROOT, Floor, Mem0, System, mem0, ours, project_embedder, rotated
from bench.peers.workload import selected
from bench.recall.data import LocomoDataMissing, default_data, load
from bench.recall.metrics import Outcome

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
RAW_DIR = DATA
SYSTEMS = ("floor", "ours", "mem0")


def _overrides(pairs: list[str]) -> dict[str, str]:
    found = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not name or not equals:
            raise SystemExit(f"--set takes NAME=VALUE, got {pair!r}")
        found[name.strip()] = value.strip()
    return found


def _start(name: str, stack: ExitStack, args: argparse.Namespace, overrides: dict[str, str],
           notes: dict[str, object], progress: Callable[[str], None]) -> System:
    """The named system, its model loaded and warmed up (nothing is timed yet); stopped when `stack` closes."""
    if name == "floor":
        embedder = project_embedder()
        notes["floor_embedder"] = embedder.model_id
        return Floor(embedder)
    if name == "ours":
        return stack.enter_context(ours(overrides, progress))
    return stack.enter_context(mem0(args.peers_python, args.mem0_threads, progress))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)  # None: bench.recall.data.default_data()
    parser.add_argument("--conversations", default="", help="comma-separated sample ids (default: all)")
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help=f"a subset of {','.join(SYSTEMS)}; the first goes first in the first conversation")
    parser.add_argument("--peers-python", type=Path, default=ROOT / ".venv-peers" / "bin" / "python")
    parser.add_argument("--mem0-threads", type=int, default=1,
                        help="torch threads for mem0 (default 1, as our embedder's BLAS; see README)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a zengram Settings field for our server (repeatable)")
    parser.add_argument("--record", action="store_true", help="append the report to bench/peers/RESULTS.md")
    parser.add_argument("--smoke", action="store_true",
                        help="a check that the harness works (python -m bench.smoke peers, on a tiny LoCoMo-shaped "
                             "file): the floor and our server only, mem0 needing the peers' own venv")
    args = parser.parse_args(argv)
    if args.smoke:
        args.systems, args.record = "floor,ours", False
    systems = [name.strip() for name in args.systems.split(",") if name.strip()]
    if not systems or set(systems) - set(SYSTEMS) or len(set(systems)) != len(systems):
        raise SystemExit(f"--systems takes names from {', '.join(SYSTEMS)}")
    overrides = _overrides(args.set)

    def progress(message: str) -> None:
        print(f"[{datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)

    args.data = args.data or default_data()
    try:
        conversations = selected(load(args.data), [n.strip() for n in args.conversations.split(",") if n.strip()])
    except (ValueError, LocomoDataMissing) as error:
        raise SystemExit(str(error)) from error
    turns = sum(len(c.turns) for c in conversations)
    questions = sum(len(c.questions) for c in conversations)
    # Where an ONNX MiniLM runtime keeps the graphs it builds (as `make bench-recall` does), shared by the floor and
    # our server rather than rebuilt in each one's fresh data folder; ignored by an embedder that builds none.
    os.environ.setdefault("ZENGRAM_MINILM_CACHE_DIR", str(MODEL_CACHE))
    machine = machine_now()
    progress(f"{len(conversations)} conversations, {turns} turns, {questions} questions; load {os.getloadavg()}")

    names = [c.sample_id for c in conversations]
    # The data file by name only: a recorded report names no machine's absolute path (tests/infra/test_docs.py).
    notes: dict[str, object] = {"data": args.data.name, "conversations": names, "settings": overrides}
    with ExitStack() as stack:
        started = [_start(name, stack, args, overrides, notes, progress) for name in systems]
        ingest_seconds = dict.fromkeys(systems, 0.0)
        for index, conversation in enumerate(conversations):
            for system in rotated(started, index):
                ingest_seconds[system.name] += system.ingest(conversation)
            progress(f"stored {conversation.sample_id} in every system; load {os.getloadavg()}")
        machine = machine.with_load("the end of ingest")
        outcomes: dict[str, list[Outcome]] = {name: [] for name in systems}
        for index, conversation in enumerate(conversations):
            for system in rotated(started, index):
                outcomes[system.name] += system.ask(conversation)
            progress(f"asked {conversation.sample_id} of every system; load {os.getloadavg()}")
        for system in started:
            if isinstance(system, Mem0):
                notes["mem0"] = system.report()  # versions, torch threads, whether BM25 was on
    machine = machine.with_load("the end")
    results = [figures_of(name, turns, ingest_seconds[name], outcomes[name]) for name in systems]

    by_name = {s.name: s for s in results}
    comparisons = [ratios(by_name["ours"], by_name[other]) for other in ("mem0", "floor")
                   if "ours" in by_name and other in by_name]
    text = render(machine, results, comparisons)
    print(text)
    RAW_DIR.mkdir(parents=True, exist_ok=True)
    (RAW_DIR / f"peers-{int(time.time())}.json").write_text(json.dumps({
        "machine": asdict(machine), "systems": [asdict(s) for s in results],
        "ratios": [asdict(r) for r in comparisons], "notes": notes}, indent=1, default=str))
    if args.record:
        with RESULTS.open("a") as out:
            out.write(f"\n### Run {machine.at:%Y-%m-%d %H:%M} UTC — {', '.join(names)}"
                      f" ({turns} turns, {questions} questions)\n\n{text}\n\nDetails: `{json.dumps(notes)}`\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
