"""`python -m bench.peers`: mem0 OSS, Zengram's HTTP API and the exact-scan floor on one LoCoMo workload.

One run, one after the other on the same machine: every turn stored one at a time, every question of
categories 1-4 asked (limit 50), then ingest turns/s, search p50/p95 and recall@10 of each and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path

from bench.peers.figures import SystemFigures, figures_of, machine_now, outcomes_of, ratios, render
from bench.peers.systems import ROOT, project_embedder, run_floor, run_mem0, run_ours
from bench.peers.workload import selected
from bench.recall.data import DEFAULT_DATA, load

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
RAW_DIR = ROOT / "bench" / ".data"
SYSTEMS = ("floor", "ours", "mem0")


def _overrides(pairs: list[str]) -> dict[str, str]:
    found = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not name or not equals:
            raise SystemExit(f"--set takes NAME=VALUE, got {pair!r}")
        found[name.strip()] = value.strip()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", default="", help="comma-separated sample ids (default: all)")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"a subset of {','.join(SYSTEMS)}")
    parser.add_argument("--peers-python", type=Path, default=ROOT / ".venv-peers" / "bin" / "python")
    parser.add_argument("--mem0-threads", type=int, default=1,
                        help="torch threads for mem0 (default 1, as our embedder's BLAS; see README)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a zengram Settings field for our server (repeatable)")
    parser.add_argument("--record", action="store_true", help="append the report to bench/peers/RESULTS.md")
    args = parser.parse_args(argv)
    systems = [name.strip() for name in args.systems.split(",") if name.strip()]
    if not systems or set(systems) - set(SYSTEMS):
        raise SystemExit(f"--systems takes names from {', '.join(SYSTEMS)}")
    overrides = _overrides(args.set)

    def progress(message: str) -> None:
        print(f"[{datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)

    try:
        conversations = selected(load(args.data), [n.strip() for n in args.conversations.split(",") if n.strip()])
    except ValueError as error:
        raise SystemExit(str(error)) from error
    turns = sum(len(c.turns) for c in conversations)
    questions = sum(len(c.questions) for c in conversations)
    machine = machine_now()
    progress(f"{len(conversations)} conversations, {turns} turns, {questions} questions; load {machine.load_at_start}")

    results: list[SystemFigures] = []
    names = [c.sample_id for c in conversations]
    notes: dict[str, object] = {"data": str(args.data), "conversations": names, "settings": overrides}
    if "floor" in systems:
        embedder = project_embedder()
        seconds, answers = run_floor(conversations, embedder, progress)
        results.append(figures_of("floor", turns, seconds, outcomes_of(conversations, answers), os.getloadavg()))
        notes["floor_embedder"] = embedder.model_id
        progress(f"floor done; load {os.getloadavg()}")
    if "ours" in systems:
        seconds, outcomes = run_ours(conversations, overrides, progress)
        results.append(figures_of("ours", turns, seconds, outcomes, os.getloadavg()))
        progress(f"ours done; load {os.getloadavg()}")
    if "mem0" in systems:
        report, answers = run_mem0(conversations, args.peers_python, args.mem0_threads, progress)
        if report["turns"] != turns:
            raise RuntimeError(f"mem0 stored {report['turns']} turns of {turns}")
        results.append(figures_of("mem0", turns, report["ingest_seconds"], outcomes_of(conversations, answers),
                                  os.getloadavg()))
        notes["mem0"] = report
        progress(f"mem0 done; load {os.getloadavg()}")
    machine = replace(machine, load_at_end=os.getloadavg())

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
