"""`python -m infra.local_cloud up | down | status [--state-dir DIR] [--warm LAZY|EAGER]` (make local-cloud)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from infra import local_cloud


def main(arguments: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.local_cloud", description=local_cloud.__doc__)
    parser.add_argument("action", choices=["up", "down", "status"])
    parser.add_argument("--state-dir", type=Path, default=local_cloud.DEFAULT_STATE_DIR)
    parser.add_argument("--warm", choices=["LAZY", "EAGER"], default="LAZY",
                        help="sam local --warm-containers (EAGER: every function's container at start)")
    options = parser.parse_args(arguments)
    if options.action == "up":
        state = local_cloud.up(options.state_dir, warm=options.warm)
        print(json.dumps({key: state[key] for key in ("api_url", "lambda_url", "moto_url", "opensearch_url",
                                                      "timings")}, indent=2))
        print(f"state: {local_cloud.state_file(options.state_dir)}; `make local-cloud-down` stops it")
        return 0
    if options.action == "down":
        local_cloud.down(options.state_dir)
        print("local cloud stopped")
        return 0
    report = local_cloud.status(options.state_dir)
    print(json.dumps(report, indent=2))
    return 0 if report["running"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
