"""`python -m bench.smoke [name ...]`: every benchmark's tiny-size mode, from nothing, in seconds each.

Each smoke runs `python -m bench.<name> --smoke` in a child process whose benchmark data folder
(`ZENGRAM_BENCH_DATA`) is a fresh temporary one, with a tiny LoCoMo-shaped file written there
(`ZENGRAM_LOCOMO`): it seeds every store it needs as a fresh clone does, without the project's shared folder,
and leaves the cached full-size stores alone. The figures a smoke prints say nothing about speed (tiny stores
on whatever the machine is doing); what it proves is that the benchmark still runs end to end and prints its
figures and targets. tests/bench/test_smokes.py runs them in `make test`, so none can rot unnoticed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.paths import DATA_ENV
from bench.recall.data import DATA_ENV as LOCOMO_ENV

ROOT = Path(__file__).resolve().parents[1]
# name → the module `python -m` runs, with `--smoke`
SMOKES = {
    "run": "bench.run", "writes": "bench.writes", "soak": "bench.soak", "embedder": "bench.embedder",
    "documents": "bench.documents", "recall": "bench.recall", "peers": "bench.peers", "coldstart": "bench.coldstart",
    "startup": "bench.startup",
}
TIMEOUT_SECONDS = 600.0

_SPEAKERS = (("Ada", "Ben"), ("Cleo", "Dev"))
_TOPICS = ("painting a mural of the harbour", "training for the city marathon", "adopting a rescue dog named Pip",
           "learning to bake sourdough bread", "planning a trip to Lisbon in May", "starting a community garden",
           "volunteering at the animal shelter", "taking evening classes in pottery")
# (what the evidence turn says, the question it answers): one per conversation and session
_FACTS = (("my sister Mira moved to Porto to open a bakery", "Where did Mira move to open her bakery?"),
          ("I finally bought a red kayak for the lake", "What colour is the kayak bought for the lake?"),
          ("our band plays its first gig at the Blue Fox on Friday", "Where does the band play its first gig?"),
          ("I switched jobs and now teach chemistry at Hillside school", "What subject is now taught at Hillside?"),
          ("grandpa gave me his old telescope for stargazing", "Who gave away the old telescope?"),
          ("we named the new kitten Biscuit after the cookies", "What is the new kitten called?"))
_SESSION_DATES = ("1:56 pm on 8 May, 2023", "10:02 am on 21 June, 2023", "7:30 pm on 3 August, 2023")


@dataclass(frozen=True)
class SmokeResult:
    name: str
    returncode: int
    seconds: float
    output: str


def tiny_locomo() -> list[dict[str, object]]:
    """Two short conversations in LoCoMo's shape (bench/recall/data.py reads it): three sessions of eight turns,
    an observation per session, a question per session answered by one distinctive turn (its evidence)."""
    samples: list[dict[str, object]] = []
    for number, (first, second) in enumerate(_SPEAKERS):
        conversation: dict[str, object] = {"speaker_a": first, "speaker_b": second}
        observation: dict[str, dict[str, list[list[str]]]] = {}
        questions: list[dict[str, object]] = []
        for session, date in enumerate(_SESSION_DATES, start=1):
            fact, question = _FACTS[number * len(_SESSION_DATES) + session - 1]
            turns = []
            for turn in range(1, 9):
                speaker = (first, second)[turn % 2]
                topic = _TOPICS[(number * 3 + session + turn) % len(_TOPICS)]
                text = (f"Guess what, {fact}!" if turn == 2 else
                        f"{speaker} has been {topic} lately, and it went better than expected this week.")
                turns.append({"speaker": speaker, "dia_id": f"D{session}:{turn}", "text": text})
            conversation[f"session_{session}"] = turns
            conversation[f"session_{session}_date_time"] = date
            observation[f"session_{session}_observation"] = {first: [[f"{first} said {fact}.", f"D{session}:2"]]}
            questions.append({"question": question, "answer": fact, "evidence": [f"D{session}:2"],
                              "category": 1 + (session + number) % 4})
        samples.append({"sample_id": f"smoke-{number + 1}", "conversation": conversation, "qa": questions,
                        "observation": observation})
    return samples


def smoke_environment(folder: Path) -> dict[str, str]:
    """The environment of a smoke: its own data folder and LoCoMo file under `folder`."""
    locomo = folder / "locomo-smoke.json"
    locomo.write_text(json.dumps(tiny_locomo(), indent=1), encoding="utf-8")
    paths = [str(ROOT / "shared"), str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, DATA_ENV: str(folder / "data"), LOCOMO_ENV: str(locomo),
            "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}


def run_smoke(name: str, extra: Sequence[str] = ()) -> SmokeResult:
    """`python -m bench.<name> --smoke` in a fresh temporary data folder; its combined output."""
    with tempfile.TemporaryDirectory(prefix=f"bench-smoke-{name}-") as folder:
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", SMOKES[name], "--smoke", *extra], cwd=ROOT,
                              env=smoke_environment(Path(folder)), capture_output=True, text=True,
                              timeout=TIMEOUT_SECONDS, check=False)
        return SmokeResult(name, done.returncode, round(time.perf_counter() - began, 1), done.stdout + done.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.smoke", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", choices=[[], *SMOKES], help="smokes to run (default: all)")
    parser.add_argument("--verbose", action="store_true", help="print each smoke's output")
    args = parser.parse_args(argv)
    failed = 0
    for name in args.names or list(SMOKES):
        result = run_smoke(name)
        if args.verbose or result.returncode:
            print(result.output)
        verdict = "ok" if result.returncode == 0 else f"FAILED (exit {result.returncode})"
        print(f"smoke {name:<10} {verdict:<20} {result.seconds:6.1f} s", flush=True)
        failed += result.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
