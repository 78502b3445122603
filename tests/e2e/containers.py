"""Containers for the end-to-end tests: podman (infra/containers/podman.py) and the locally built Lambda base image
(infra/lambda-image/build.py), as session fixtures that skip with the reason where podman cannot run, and fail
instead in CI (CI=true) or with ZENGRAM_REQUIRE_CONTAINERS=1.

Every test using them shares one podman: the Docker API service on /run/zengram-podman/podman.sock (left running,
like a system service) and its image store; `podman` runs the CLI against the same store.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from infra.containers.podman import DOCKER_HOST, podman_problem

REPO = Path(__file__).resolve().parents[2]
LAMBDA_IMAGE_BUILD = REPO / "infra" / "lambda-image" / "build.py"
LAMBDA_BASE = "public.ecr.aws/lambda/python:3.13"
# The first build of the base (debootstrap, ~100-200 s) may happen inside the test run.
BUILD_TIMEOUT_S = 900


def required() -> bool:
    """In CI, containers that cannot run are a failure, never a skip."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or os.environ.get(
        "ZENGRAM_REQUIRE_CONTAINERS") == "1"


def unusable(reason: str) -> None:
    """Skip (on a developer's machine) or fail (in CI) the test that needs containers, saying why."""
    if required():
        pytest.fail(f"containers are required here (CI) but unusable: {reason}")
    pytest.skip(f"containers unusable here: {reason}")


def podman(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return done


@pytest.fixture(scope="session")
def docker_host() -> str:
    """DOCKER_HOST of podman's Docker API (installed, configured and started when needed)."""
    problem = podman_problem()
    if problem:
        unusable(problem)
    return DOCKER_HOST


@pytest.fixture(scope="session")
def lambda_base_image(docker_host: str) -> str:
    """The Lambda Python 3.13 base image, built when missing or stale (a no-op in ~1 s when it is current)."""
    try:
        done = subprocess.run([sys.executable, str(LAMBDA_IMAGE_BUILD)], capture_output=True, text=True,
                              timeout=BUILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        unusable(f"building the Lambda base image took over {BUILD_TIMEOUT_S} s")
    if done.returncode != 0:
        unusable(f"the Lambda base image could not be built: {(done.stderr or done.stdout).strip()[-1500:]}")
    return LAMBDA_BASE


@dataclass
class RunningContainer:
    name: str
    url: str


def run_container(image: str, name: str, *, port: int, volumes: dict[str, str],
                  env: dict[str, str]) -> RunningContainer:
    """`podman run -d` with the container's port published on a free loopback port; returns its base URL."""
    args = ["run", "-d", "--name", name, "-p", f"127.0.0.1::{port}"]
    for volume, target in volumes.items():
        args += ["-v", f"{volume}:{target}"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    podman(*args, image)
    return RunningContainer(name, published_url(name, port))


def published_url(name: str, port: int) -> str:
    """The host address of a container's published port (it changes when the container restarts)."""
    address = podman("port", name, str(port)).stdout.strip().splitlines()[0]
    return f"http://{address.replace('0.0.0.0', '127.0.0.1')}"


def wait_healthy(container: RunningContainer, timeout: float = 240) -> None:
    """Until GET /health answers 200; the container's log in the failure when it never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{container.url}/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        state = podman("inspect", "--format", "{{.State.Status}}", container.name, check=False).stdout.strip()
        if state not in ("running", "created", "configured", "initialized"):
            break
        time.sleep(1)
    logs = podman("logs", "--tail", "40", container.name, check=False)
    raise AssertionError(f"{container.name} not healthy ({state}):\n{logs.stdout[-3000:]}{logs.stderr[-3000:]}")


@pytest.fixture
def podman_volume(docker_host: str) -> Iterator[str]:
    """A named volume of the test's own, removed afterwards with any container still using it."""
    name = f"zengram-test-{os.getpid()}-{time.monotonic_ns()}"
    podman("volume", "create", name)
    try:
        yield name
    finally:
        users = podman("ps", "-a", "--filter", f"volume={name}", "--format", "{{.Names}}", check=False).stdout.split()
        for container in users:
            podman("rm", "-f", "-t", "5", container, check=False)
        podman("volume", "rm", "-f", name, check=False)
