"""`python -m bench.recall [--set NAME=VALUE ...] [--label TEXT]`: LoCoMo evidence recall of Zengram search.

Every turn is stored through POST /memory (one client_id per conversation, type event, the session
date as valid_from) and every question asked through GET /memory/search (limit 50). A store built
under the same index-time settings is cached in bench/.data/recall-cache/ and each run searches a
scratch copy of it, so access counts written by one run never leak into the next. Each run reports two modes
(`--mode`): as-is (every hit counted as an access, as agents' searches are) and read-only (`read_only=true`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

from bench.paths import DATA
from bench.recall.data import CATEGORY_NAMES, DATA_ENV, Conversation, LocomoDataMissing, default_data, load
from bench.recall.metrics import render, table
from bench.recall.rerank_server import minilm_rerank_server
from bench.recall.runner import MODEL_CACHE, ask, prepared_store

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
RAW_DIR = DATA


def _overrides(pairs: list[str]) -> dict[str, str]:
    found = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if not name or not _:
            raise SystemExit(f"--set takes NAME=VALUE, got {pair!r}")
        found[name.strip()] = value.strip()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recall", description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a zengram Settings field for this run (repeatable)")
    parser.add_argument("--label", default="", help="a name for this run in RESULTS.md")
    parser.add_argument("--data", type=Path, default=None,
                        help=f"LoCoMo file (default: ${DATA_ENV}, else locomo-dev5.json in the shared folder beside "
                             "the repository)")
    parser.add_argument("--fresh", action="store_true", help="rebuild the store even if one is cached")
    parser.add_argument("--store", type=Path, default=None,
                        help="search this cached pristine store (only for runs that change query-time settings)")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    parser.add_argument("--format", default="index", choices=["index", "full"])
    parser.add_argument("--reference-dates", action="store_true",
                        help="pass reference_date = each conversation's last session (for the temporal resolver)")
    parser.add_argument("--rerank-minilm", action="store_true",
                        help="turn the rerank hook on against a local re-ranker scoring by MiniLM cosine on the "
                             "full memory text (bench/recall/rerank_server.py)")
    parser.add_argument("--speakers-as-people", action="store_true",
                        help="register each conversation's speakers as its client's people before ingest, so "
                             "entity extraction finds them (a store of its own; for the graph path)")
    parser.add_argument("--mode", default="both", choices=["both", *MODES],
                        help="as-is: the product's searches, each hit counted as an access (reinforcement); "
                             "read-only: every search sends read_only=true, so no question is ranked on the hits of "
                             "the questions before it (a held-out evaluation); both (default): one after the other, "
                             "each on its own scratch copy of the store")
    parser.add_argument("--conversations", type=int, default=None, metavar="N",
                        help="only the first N conversations (a smaller run)")
    parser.add_argument("--smoke", action="store_true",
                        help="a check that the run works (python -m bench.smoke recall, on a tiny LoCoMo-shaped "
                             "file): not recorded in RESULTS.md")
    args = parser.parse_args(argv)
    if args.smoke:
        args.no_record, args.label = True, args.label or "smoke"
    overrides = _overrides(args.set)

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    data_path: Path = args.data or default_data()
    try:
        conversations = load(data_path)
    except LocomoDataMissing as missing:
        print(missing, file=sys.stderr)
        return 2
    if args.conversations is not None:
        conversations = conversations[:max(args.conversations, 1)]
    started = time.perf_counter()
    pristine = args.store or prepared_store(conversations, overrides, data_path, progress, fresh=args.fresh,
                                            speakers_as_people=args.speakers_as_people)
    modes = list(MODES) if args.mode == "both" else [args.mode]
    for mode in modes:
        _run_mode(args, mode, pristine, conversations, overrides, data_path, progress, started)
    return 0


MODES = ("as-is", "read-only")


def _run_mode(args: argparse.Namespace, mode: str, pristine: Path, conversations: list[Conversation],
              overrides: dict[str, str], data_path: Path, progress: Callable[[str], None], started: float) -> None:
    """Asks every question in one mode (MODES) on a fresh scratch copy; prints and records the figures."""
    load_before = os.getloadavg()
    asking = time.perf_counter()
    with ExitStack() as stack:
        search_overrides = dict(overrides)
        if args.rerank_minilm:
            url, scorer = stack.enter_context(minilm_rerank_server(MODEL_CACHE))
            search_overrides.update(rerank_enabled="true", rerank_url=url)
            stack.callback(lambda: progress(_scorer_times(scorer.seconds, scorer.abandoned)))
        outcomes = ask(pristine, conversations, search_overrides, search_format=args.format,
                       reference_dates=args.reference_dates, read_only=mode == "read-only")
    asked = time.perf_counter() - asking
    load_after = os.getloadavg()
    rows = table(outcomes, CATEGORY_NAMES)
    text = render(rows)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    settings_text = ", ".join(f"{k}={v}" for k, v in sorted(overrides.items())) or "defaults"
    flags = [flag for flag, on in (("--reference-dates", args.reference_dates),
                                   ("--speakers-as-people", args.speakers_as_people),
                                   ("--rerank-minilm", args.rerank_minilm)) if on]
    if flags:
        settings_text += "; " + " ".join(flags)
    load_text = f"load average {load_before[0]:.1f} → {load_after[0]:.1f} (1 min)"
    name = f"{args.label or 'run'} ({mode})"
    print(f"\n{name} — {stamp} — settings: {settings_text} — {load_text}")
    print(text)
    RAW_DIR.mkdir(parents=True, exist_ok=True)
    (RAW_DIR / f"recall-{int(time.time())}-{mode}.json").write_text(json.dumps(
        {"label": args.label, "mode": mode, "at": stamp, "settings": overrides, "flags": flags,
         "load": [load_before, load_after], "rows": [r.as_dict() for r in rows]}, indent=1))
    if not args.no_record:
        with RESULTS.open("a") as out:
            out.write(f"\n### {name} — {stamp}\n\nSettings: `{settings_text}`; data "
                      f"{data_path.name} ({len(conversations)} conversations); limit 50; "
                      f"{platform.python_version()}, {os.cpu_count()} CPUs; "
                      f"wall {time.perf_counter() - started:.0f}s (questions {asked:.0f}s); {load_text}.\n\n{text}\n")


def _scorer_times(seconds: list[float], abandoned: int) -> str:
    if not seconds:
        return "re-ranker: no requests"
    ordered = sorted(seconds)
    return (f"re-ranker: {len(ordered)} requests, scoring p50 {ordered[len(ordered) // 2] * 1000:.0f} ms, "
            f"p95 {ordered[int(len(ordered) * 0.95)] * 1000:.0f} ms; {abandoned} answered after the hook's timeout")


if __name__ == "__main__":
    raise SystemExit(main())
