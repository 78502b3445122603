"""The documented examples are one story (issue 37, 5.6: the README stored under `acme-tech-stack`, docs/clients.md
under `acme-stack`, so after both the outdated fact was active again). They are read from the documents, not
copied here, and run in the order a newcomer meets them against one server: the README's curl block, the store
example of docs/api/memory.md, the SDK example and the CLI's store and search lines of docs/clients.md. Then the
story holds: one active fact per key, and the outdated one is not among them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from zengram.embedded.background import BackgroundServer

from tests.support import API_KEY, REPO_ROOT

DOCUMENTED_URL = "http://127.0.0.1:8084"
FENCE = re.compile(r"^```(?P<language>\w*)\n(?P<code>.*?)^```", re.MULTILINE | re.DOTALL)


def block(document: str, after: str, language: str) -> str:
    """The first fenced block of `language` after the text `after` in `document` (a path under the repo)."""
    text = (REPO_ROOT / document).read_text(encoding="utf-8")
    start = text.index(after)
    match = next(match for match in FENCE.finditer(text, start) if match["language"] == language)
    return match["code"]


def json_values(output: str) -> list[Any]:
    """The JSON answers curl printed one after the other (without newlines between them)."""
    decoder, values, position = json.JSONDecoder(), [], 0
    output = output.strip()
    while position < len(output):
        value, position = decoder.raw_decode(output, position)
        values.append(value)
        while position < len(output) and output[position].isspace():
            position += 1
    return values


def run_shell(code: str, server: BackgroundServer, cwd: Path) -> str:
    script = "set -euo pipefail\n" + code.replace(DOCUMENTED_URL, server.url).replace("curl ", "curl -sS --fail ")
    result = subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=120,
                            env=client_environment(server), check=False)
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


def client_environment(server: BackgroundServer) -> dict[str, str]:
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("BRAIN_", "ZENGRAM_"))}
    # KEY: what the README's `export KEY=$(cat .zengram/api-key)` left in the reader's shell.
    return {**environment, "BRAIN_API_URL": server.url, "BRAIN_API_KEY": API_KEY, "KEY": API_KEY,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"}


def active_facts(server: BackgroundServer) -> list[dict[str, Any]]:
    answer = httpx.get(f"{server.url}/memory/query", params={"type": "facts", "client_id": "acme-corp", "limit": 100},
                       headers={"x-api-key": API_KEY}, timeout=30)
    assert answer.status_code == 200, answer.text
    return [fact for fact in answer.json()["results"] if fact.get("active", True)]


def test_the_documented_examples_tell_one_story(live_server: BackgroundServer, tmp_path: Path) -> None:
    (tmp_path / ".zengram").mkdir()
    (tmp_path / ".zengram" / "api-key").write_text(API_KEY + "\n")  # what `make serve` generated

    readme = json_values(run_shell(block("README.md", "## Store a memory, then search", "bash"), live_server,
                                   tmp_path))
    first, second, found = readme
    assert second["supersedes"] == first["id"]
    assert [hit["content"] for hit in found["results"]] == ["Acme Corp moved to Next.js 15"]

    (stored,) = json_values(run_shell(block("docs/api/memory.md", "**Store a memory**", "bash"), live_server,
                                      tmp_path))
    assert stored["supersedes"] == second["id"]  # the story goes on: the newest word on Acme's stack

    sdk = subprocess.run([sys.executable, "-c", block("docs/clients.md", "**Python SDK**", "python")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env=client_environment(live_server),
                         check=False)
    assert sdk.returncode == 0, sdk.stderr
    assert "Next.js 14" not in sdk.stdout and "Next.js 15" in sdk.stdout
    assert "404" in sdk.stdout

    cli_lines = [line for line in block("docs/clients.md", "**CLI**", "bash").replace("\\\n", " ").splitlines()
                 if line.startswith(("zengram store", "zengram search"))]
    assert len(cli_lines) == 2
    run_shell("\n".join(line.split("  #")[0] for line in cli_lines), live_server, tmp_path)

    facts = active_facts(live_server)
    keys = [fact["key"] for fact in facts]
    assert sorted(keys) == sorted(set(keys)), keys  # one active fact per key
    assert not [fact for fact in facts if "Next.js 14" in fact["content"]]
    assert {"acme-tech-stack", "acme-hosting", "acme-payment-terms"} <= set(keys)
