"""`python -m bench.scrub`: the credential scrubber's time per MB on adversarial and ordinary texts, 10 KB to
10 MB (`--sizes` in KB). Target: flat in the size (linear scrubbing), at most 50 ms per MB.

Adversarial texts repeat what was quadratic (a label whose value holds the next label: `token=token=…`; a URL of
many `@`; connection-string pairs) or what costs most per character (a secret every few bytes). Ordinary texts are
the repository's own prose, code and a JSON log. The figure is CPU time (process time, which other work on the
machine inflates far less than wall time) per MB of text, over at least 1 MB (`ms_per_mb`). Prints the date and the
load average.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

from zengram.kernel.content import Scrubber

ROOT = Path(__file__).resolve().parents[1]
ADVERSARIAL = {"token=token=…": "token=", "a(token=a(…": "a(token=", "https://u:p@…": "https://u:p@",
               "password is …": "password is ", "Password=hunter2;…": "Password=hunter2; "}


def ordinary() -> dict[str, str]:
    log = "\n".join(json.dumps({"level": "info", "request_id": f"req-{n:06d}", "path": "/memory", "status": 200,
                                "message": f"stored memory mem_{n:08x} for client acme in {n % 97} ms"})
                    for n in range(2000))
    return {"README prose": (ROOT / "README.md").read_text(encoding="utf-8"),
            "Python code": (ROOT / "shared/zengram/kernel/credentials.py").read_text(encoding="utf-8"),
            "JSON log": log}


def sized(seed: str, size: int) -> str:
    return (seed * (size // len(seed) + 1))[:size]


def ms_per_mb(scrubber: Scrubber, seed: str, size: int) -> float:
    """CPU ms per MB over at least 1 MB of text (a text below 1 MB is scrubbed several times, each time turned by
    a few characters and numbered: the scrubber's per-text caches must not answer), after two untimed scrubs of texts
    from the same seed (the per-process caches of labels and values are warm, as in a running server, and the last
    size's texts are freed before the clock starts)."""
    for turn in (7, 11):  # two: the per-text caches hold two texts, here the last size's, which is freed now
        scrubber.scrub(sized(seed[turn:] + seed[:turn], 12_345))
    gc.collect()
    turns = range(max(1, 1_000_000 // size))
    texts = [(f"{turn:06d} " + sized(seed[turn % len(seed):] + seed[:turn % len(seed)], size))[:size] for turn in turns]
    start = time.process_time()
    for text in texts:
        scrubber.scrub(text)
    return (time.process_time() - start) * 1000 / (sum(map(len, texts)) / 1_000_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 10000], help="sizes in KB")
    arguments = parser.parse_args()
    scrubber = Scrubber(b"bench" * 8)
    seeds = {**{f"adversarial: {name}": seed for name, seed in ADVERSARIAL.items()},
             **{f"ordinary: {name}": text for name, text in ordinary().items()}}
    load = ", ".join(f"{figure:.2f}" for figure in os.getloadavg())
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {load}, {os.cpu_count()} cores; "
          f"CPU ms per MB of text")
    print(f"{'text':34}" + "".join(f"{size:>10,} KB" for size in arguments.sizes))
    for name, seed in seeds.items():
        figures = [ms_per_mb(scrubber, seed, size * 1000) for size in arguments.sizes]
        print(f"{name:34}" + "".join(f"{figure:>13,.0f}" for figure in figures), flush=True)
    print(f"load average after: {', '.join(f'{figure:.2f}' for figure in os.getloadavg())}")


if __name__ == "__main__":
    main()
