"""Acceptance: every command of the unchanged agent-brain-cli 10.7.0 (tests/clients/agent_brain_commands.py lists
them, checked against the CLI's own command tree) against both hosts:

- the embedded host: `zengram kb start --daemon` in a project folder, the real offline model; a watched folder is
  watched by the server's file watcher;
- the AWS host: tests/functions/test_agent_brain_cli_on_aws.py (it needs the function tests' fixtures).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.clients.agent_brain_commands import (
    AGENT_BRAIN,
    COMMANDS,
    Host,
    assert_every_command_ran,
    cli_command_tree,
    environment_for,
    exercise_other_commands,
    exercise_server_commands,
    http_api,
)
from tests.clients.test_agent_brain_cli import SAMPLE, free_port

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not AGENT_BRAIN.exists(), reason="agent-brain CLI missing: `make install` puts it in "
                                                        ".venv-agent-brain"),
]


def test_the_table_names_every_command_of_the_cli() -> None:
    assert sorted(COMMANDS) == cli_command_tree()


# -- the embedded host ------------------------------------------------------------------------------------------

def test_every_command_against_the_embedded_host(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = tmp_path / "project"
    shutil.copytree(SAMPLE, root / "sample")
    environment = environment_for(root)

    def zengram(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "zengram.embedded", "kb", *arguments], cwd=root,
                              env=environment, capture_output=True, text=True, timeout=180, check=False)

    def change(relative: str, text: str | None) -> None:
        path = root / "sample" / relative
        if text is None:
            path.unlink()
        else:
            path.write_text(text)

    assert zengram("init").returncode == 0
    started = zengram("start", "--daemon", "--port", str(free_port()), "--json")
    assert started.returncode == 0, started.stdout + started.stderr
    runtime = json.loads((root / ".claude" / "agent-brain" / "runtime.json").read_text())
    host = Host("embedded", root, environment, "sample", change, http_api(runtime["base_url"], runtime["api_key"]))
    try:
        exercise_server_commands(host)
        exercise_other_commands(host, tmp_path / "elsewhere")
        listed = host.json("list")
        assert listed["total"] == 1, listed
    finally:
        stopped = zengram("stop", "--json")
    assert json.loads(stopped.stdout)["status"] == "stopped", stopped.stdout + stopped.stderr
    assert_every_command_ran(host)
