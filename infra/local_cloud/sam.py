"""SAM CLI for the local cloud: the container engine and base image it needs, `sam build` (skipped when nothing it
reads changed), and the `sam local` commands with the emulators' endpoints."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAM = ROOT / ".venv-sam" / "bin" / "sam"
BUILD_DIR = ROOT / ".aws-sam" / "build"
BUILT_TEMPLATE = BUILD_DIR / "template.yaml"
BUILD_STAMP = ROOT / ".aws-sam" / "local-cloud-inputs.sha256"
LOCAL_TEMPLATE = BUILD_DIR / "template.local.json"  # beside the built one: its CodeUri paths stay valid
LAYER_DIR = BUILD_DIR / "DomainLayer"
LAYER_IMAGE_REPOSITORY = "localhost/zengram-lambda"
BASE_IMAGE = "public.ecr.aws/lambda/python:3.13-x86_64"
PODMAN_SOCKET = Path("/run/zengram-podman/podman.sock")
# What `sam build` reads: a change to any of these rebuilds.
BUILD_INPUTS = ("template.yaml", "functions", "shared/zengram", "infra/layer", "infra/scripts/layer.py")


def docker_host() -> str:
    """The Docker API SAM talks to: podman's socket service (infra/containers/podman.py installs, configures and
    starts it when it can), else DOCKER_HOST as given."""
    try:
        from infra.containers.podman import ensure_podman  # type: ignore[import-not-found]
    except ImportError:
        ensure_podman = None
    if ensure_podman is not None:
        return str(ensure_podman())
    if os.environ.get("DOCKER_HOST"):
        return os.environ["DOCKER_HOST"]
    if PODMAN_SOCKET.exists():
        return f"unix://{PODMAN_SOCKET}"
    raise RuntimeError("no container engine: run `make podman` (podman's Docker API socket) or set DOCKER_HOST")


def ensure_base_image(host: str) -> None:
    """The Lambda base image, built locally (no registry is reachable): infra/lambda-image/build.py when present
    (a no-op when its input hash matches), else it must exist already."""
    builder = ROOT / "infra" / "lambda-image" / "build.py"
    if builder.exists():
        subprocess.run([sys.executable, str(builder)], cwd=ROOT, check=True)
        return
    if not image_exists(host, BASE_IMAGE):
        raise RuntimeError(f"the Lambda base image {BASE_IMAGE} is missing: build it (`make lambda-image`)")


def image_exists(host: str, image: str) -> bool:
    import urllib.parse

    path = host.removeprefix("unix://")
    result = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--unix-socket", path,
                             f"http://d/images/{urllib.parse.quote(image, safe='')}/json"],
                            capture_output=True, text=True, check=False)
    return result.stdout.strip() == "200"


def inputs_digest() -> str:
    digest = hashlib.sha256()
    for name in BUILD_INPUTS:
        path = ROOT / name
        files = sorted(p for p in (path.rglob("*") if path.is_dir() else [path])
                       if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
        for file in files:
            digest.update(str(file.relative_to(ROOT)).encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def runtime_path() -> str:
    """PATH with a Python 3.13 first: `sam build` checks the functions' runtime is on PATH."""
    found = shutil.which("python3.13") or next(iter(sorted(glob.glob(
        os.path.expanduser("~/.pyenv/versions/3.13*/bin/python3.13")))), None)
    path = os.environ.get("PATH", "/usr/bin:/bin")
    return f"{Path(found).parent}{os.pathsep}{path}" if found else path


def build(log: Path) -> float | None:
    """`sam build` unless the built template is there and its inputs are unchanged; the seconds it took, or None
    when skipped."""
    digest = inputs_digest()
    if BUILT_TEMPLATE.exists() and BUILD_STAMP.exists() and BUILD_STAMP.read_text().strip() == digest:
        return None
    started = time.monotonic()
    env = {**os.environ, "PATH": runtime_path(), "PYTHON": str(ROOT / ".venv" / "bin" / "python"),
           "SAM_CLI_TELEMETRY": "0"}
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as output:
        # Not --cached: SAM keys a layer's cache on its ContentUri (infra/layer/) alone, and this layer's Makefile
        # packs shared/zengram from outside it, so a cached build kept a stale package. This skip is by all inputs.
        result = subprocess.run([str(SAM), "build", "--parallel"], cwd=ROOT, env=env, stdout=output,
                                stderr=subprocess.STDOUT, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"sam build failed ({result.returncode}): see {log}")
    BUILD_STAMP.write_text(digest + "\n")
    return time.monotonic() - started


def layer_image(host: str) -> str:
    """The base image with the built layer in /opt, tagged by the layer's and the base's content.

    SAM bakes a layer defined in the template into an image tagged by the layer's *name* and rebuilds it on every
    invocation (copying the 138 MB layer each time); every checkout on the machine shares that one tag, so a
    container could start with another checkout's layer. The local template (`local_template`) runs the functions
    without the layer on this image instead (`--invoke-image`): built once per content, its RIE variant (SAM's
    `…:rapid-x86_64`) too, and the repository name carries the digest, so checkouts never share one."""
    digest = hashlib.sha256()
    digest.update(_image_id(host, BASE_IMAGE).encode())
    for file in sorted(p for p in LAYER_DIR.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(LAYER_DIR)).encode() + b"\0" + str(file.stat().st_size).encode())
        if file.suffix != ".pyc":
            digest.update(file.read_bytes())
    image = f"{LAYER_IMAGE_REPOSITORY}-{digest.hexdigest()[:16]}:latest"
    if not image_exists(host, image):
        containerfile = f"FROM {BASE_IMAGE}\nCOPY . /opt\n"
        subprocess.run(["podman", "build", "--quiet", "--tag", image, "--file", "-", str(LAYER_DIR)],
                       input=containerfile, text=True, capture_output=True, check=True)
    return image


def _image_id(host: str, image: str) -> str:
    path = host.removeprefix("unix://")
    import urllib.parse

    result = subprocess.run(["curl", "-s", "--unix-socket", path,
                             f"http://d/images/{urllib.parse.quote(image, safe='')}/json"],
                            capture_output=True, text=True, check=True)
    identifier: str = json.loads(result.stdout)["Id"]
    return identifier


def local_template() -> Path:
    """The built template without the layer references (the layer is in the invoke image: `layer_image`)."""
    from samtranslator.yaml_helper import yaml_parse

    template = yaml_parse(BUILT_TEMPLATE.read_text())
    template.get("Globals", {}).get("Function", {}).pop("Layers", None)
    for resource in template["Resources"].values():
        if resource.get("Type") == "AWS::Serverless::Function":
            resource["Properties"].pop("Layers", None)
    LOCAL_TEMPLATE.write_text(json.dumps(template, indent=1))
    return LOCAL_TEMPLATE


def parameter_overrides(moto_url: str, lambda_url: str, *, embeddings_url: str) -> list[str]:
    return [f"EndpointUrl={moto_url}", f"LambdaEndpointUrl={lambda_url}", "Embedder=openai",
            f"OpenAIBaseUrl={embeddings_url}", "OpenAIEmbeddingModel=all-MiniLM-L6-v2", "Stage=local"]


def write_env_vars(path: Path, variables: dict[str, str]) -> None:
    """The --env-vars file: the same values for every function (`Parameters`). It can only set variables the
    template declares (the intrinsic ones, e.g. ZENGRAM_OPENSEARCH_URL, arrive empty under sam local otherwise)."""
    path.write_text(json.dumps({"Parameters": variables}, indent=2) + "\n")


def local_command(kind: str, port: int, *, env_vars: Path, overrides: list[str], image: str,
                  warm: str = "LAZY") -> list[str]:
    """`sam local start-api` or `start-lambda` on 127.0.0.1:port, on the local template, with the layer image."""
    return [str(SAM), "local", kind, "--template", str(LOCAL_TEMPLATE), "--host", "127.0.0.1", "--port", str(port),
            *invoke_options(env_vars, overrides, image), "--warm-containers", warm]


def invoke_options(env_vars: Path, overrides: list[str], image: str) -> list[str]:
    return ["--skip-pull-image", "--invoke-image", image, "--env-vars", str(env_vars),
            "--parameter-overrides", " ".join(overrides), "--region", "us-east-1"]


def sam_env(host: str) -> dict[str, str]:
    """The environment of a `sam local` process: the Docker API, dummy credentials (the functions get them too;
    moto accepts any), no telemetry, and none of the caller's ZENGRAM_* values (SAM would pass a shell value on
    to every function that declares the variable)."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("ZENGRAM_", "AWS_", "BRAIN_", "OPENAI_"))}
    return {**env, "DOCKER_HOST": host, "SAM_CLI_TELEMETRY": "0", "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"}
