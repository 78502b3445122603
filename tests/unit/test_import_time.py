"""Importing the LLM, consolidation and research code (and the functions that host it) does no work: no heavy SDK
(openai, boto3, Powertools and the X-Ray SDK a Tracer loads) is loaded, no setting is read and nothing is written.
Lambda pays the import on every cold start, and a module that read settings at import would ignore the environment
a test or host sets later."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import REPO_ROOT

MODULES = [
    "zengram.assembly.containers",
    "zengram.adapters.openai.chat",
    "zengram.adapters.stepfunctions",
    "zengram.adapters.aws_lambda",
    "zengram.adapters.dynamodb.jobs",
    "zengram.adapters.dynamodb.rate_limits",
    "zengram.adapters.sqlite.jobs",
    "zengram.adapters.sqlite.rate_limits",
    "zengram.memory.services.consolidation",
    "zengram.memory.services.research",
    "zengram.memory.services.reflect",
    "zengram.web.rate_limits",
    "zengram.memory.api.consolidate",
    "zengram.memory.api.reflect",
    "zengram.memory.api.research",
    "zengram.embedded.app",
    "functions.consolidate.app",
    "functions.reflect.app",
    "functions.research.app",
    "functions.research_step.app",
    "functions.memory.app",
    "functions.repair.app",
    "functions.health.app",
]

PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in ("openai", "boto3", "aws_xray_sdk", "aws_lambda_powertools") if m in sys.modules)))
"""


def test_importing_loads_no_sdk_reads_no_setting_and_writes_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    environment = {
        **{name: value for name, value in os.environ.items() if not name.startswith(("ZENGRAM_", "RESEARCH_"))},
        "PYTHONPATH": str(REPO_ROOT),
        # Settings() would refuse these, so an import that built settings (or a container) fails
        "ZENGRAM_RATE_LIMIT_WRITES_PER_MINUTE": "not-a-number",
        "ZENGRAM_RECORD_STORE": "no-such-store",
        "ZENGRAM_LLM_TIMEOUT": "-1",
        "ZENGRAM_DATA_DIR": str(data_dir),
    }
    result = subprocess.run([sys.executable, "-c", PROBE, *MODULES], capture_output=True, text=True,
                            env=environment, cwd=REPO_ROOT, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
    assert not data_dir.exists()


def test_the_probe_would_notice_settings_read_at_import(tmp_path: Path) -> None:
    # The same environment makes building settings fail, so the test above is not vacuous
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "ZENGRAM_RATE_LIMIT_WRITES_PER_MINUTE": "not-a-number"}
    result = subprocess.run([sys.executable, "-c", "from zengram.settings import Settings; Settings()"],
                            capture_output=True, text=True, env=environment, cwd=REPO_ROOT, check=False)
    assert result.returncode != 0 and "rate_limit_writes_per_minute" in result.stderr
