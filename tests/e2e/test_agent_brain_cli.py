"""The unchanged Agent Brain CLI (agent-brain-cli 10.7.0 in .venv-agent-brain) against /kb through the emulated API
Gateway: status, an indexing job followed with `jobs`, queries in the five modes, reset. It finds the server through
AGENT_BRAIN_URL and sends the key as `Authorization: Bearer` (API_KEY), the header the BearerToken authorizer reads.

On AWS the documents function reads folders from S3 only (ZENGRAM_DOCUMENTS_ALLOWED_ROOTS is the stack's
s3:// bucket): the CLI's `index FOLDER` sends a local absolute path (click checks that it exists, then resolves it),
which the function in its container refuses with 403. So through the cloud the sample folder goes to the documents
bucket (moto's S3) and the indexing request is the one the CLI sends, with the s3:// folder; the job is then
followed, queried and reset with the CLI. The embedded stand-in indexes the local folder with the CLI itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.clients.test_agent_brain_cli import AGENT_BRAIN, MODES, SAMPLE

pytestmark = [pytest.mark.xdist_group("e2e"), pytest.mark.skipif(not AGENT_BRAIN.exists(),
                                reason="agent-brain CLI missing: `make install` puts it in .venv-agent-brain")]


class AgentBrain:
    def __init__(self, kb_url: str, key: str, home: Path) -> None:
        self.kb_url = kb_url
        self.key = key
        self.environment = {**{k: v for k, v in os.environ.items() if not k.startswith(("AGENT_BRAIN_", "API_KEY"))},
                            "AGENT_BRAIN_URL": kb_url, "API_KEY": key, "HOME": str(home),
                            "XDG_STATE_HOME": str(home / "state"), "XDG_CONFIG_HOME": str(home / "config")}
        self.home = home

    def __call__(self, *arguments: str, ok: bool = True) -> Any:
        done = subprocess.run([str(AGENT_BRAIN), *arguments, "--json"], cwd=self.home, env=self.environment,
                              capture_output=True, text=True, timeout=300, check=False)
        if ok:
            assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    def wait(self, job_id: str, seconds: float = 240) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            job: dict[str, Any] = self("jobs", job_id)
            if job["status"] in ("done", "failed", "cancelled") or time.monotonic() > deadline:
                return job
            time.sleep(1)

    def query(self, text: str, mode: str, *extra: str) -> list[dict[str, Any]]:
        answer = self("query", text, "--mode", mode, "--top-k", "8", *extra)
        results: list[dict[str, Any]] = answer["results"]
        return results


def upload(local_cloud: dict[str, Any], prefix: str) -> str:
    """The sample folder in the stack's documents bucket (moto's S3): its s3:// folder."""
    import boto3

    bucket = local_cloud["documents_bucket"]
    s3 = boto3.client("s3", endpoint_url=local_cloud["moto_url"], region_name=local_cloud.get("region", "us-east-1"),
                      aws_access_key_id="testing", aws_secret_access_key="testing")
    for path in SAMPLE.rglob("*"):
        if path.is_file():
            s3.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(SAMPLE)}")
    return f"s3://{bucket}/{prefix}"


def test_index_query_in_five_modes_and_reset(local_cloud: dict[str, Any], api_url: str, api_key: str,
                                             at_the_edge: bool, tmp_path: Path) -> None:
    cli = AgentBrain(f"{api_url}/kb", api_key, tmp_path)
    assert cli("status")["health"]["status"] == "healthy"
    cli("reset", "--yes")  # one cloud for the whole run: start from an empty base

    local = Path(local_cloud.get("documents_root") or tmp_path) / "sample"
    shutil.copytree(SAMPLE, local, dirs_exist_ok=True)
    if at_the_edge:
        refused = cli("index", str(local), "--include-code", ok=False)
        assert refused["error"] == "Server returned 403" and "allowed roots" in refused["detail"], refused
        folder = upload(local_cloud, f"e2e-{int(time.time())}")
        queued = httpx.post(f"{api_url}/kb/index", headers={"authorization": f"Bearer {api_key}"}, timeout=120,
                            json={"folder_path": folder, "include_code": True}).json()
    else:
        folder = str(local)
        queued = cli("index", folder, "--include-code")
    assert queued["status"] == "pending" and queued["job_id"].startswith("job_"), queued

    job = cli.wait(queued["job_id"])
    assert job["status"] == "done", job
    assert job["total_documents"] == 6
    status = cli("status")["indexing"]
    assert (status["total_documents"], status["total_chunks"]) == (6, job["total_chunks"])

    for mode in MODES:
        results = cli.query("how is the invoice total computed with tax", mode, "--threshold", "0.1")
        assert results, mode
        assert all({"text", "source", "score", "chunk_id"} <= set(result) for result in results)
        assert any(result["source"].endswith(("billing.py", "guide.md")) for result in results[:3]), (mode, results)
    assert cli.query("shopping cart subtotal", "bm25")[0]["source"].endswith("cart.ts")
    callers = cli.query("what calls compute_total", "graph")
    assert all("compute_total(" in result["text"] for result in callers[:2])

    cli("reset", "--yes")
    assert cli("status")["indexing"]["total_chunks"] == 0
