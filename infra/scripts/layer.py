"""The one build of the Lambda layer, used by `make package`, `sam build` (infra/layer/Makefile) and the tests.

    python infra/scripts/layer.py lock              # infra/layer/requirements.in -> requirements.lock
    python infra/scripts/layer.py build DIR [ZIP]   # the layer's python/ folder under DIR (and a zip of it)

Any Python >= 3.11 with pip runs it: pip resolves and installs manylinux wheels for the Lambda runtime (CPython
3.13, x86_64) whatever the local interpreter, so nothing is compiled here. The lock pins every package with its
wheel hash, and leaves out what the layer must not carry:
- boto3, botocore, s3transfer: the runtime ships them, and a copy in /opt/python would shadow the runtime's
  (aws-xray-sdk asks for botocore);
- grpcio, protobuf, opensearch-protobufs: opensearch-py 3 declares its optional gRPC transport, never imported.
Bytecode is precompiled by a local Python 3.13 (pyenv, PATH or LAYER_PYTHON) as unchecked-hash .pyc files: /opt is
read-only on Lambda, so without them every cold start compiles every module. Entries are sorted and dated
1980-01-01, so the same lock and sources give the same zip, byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYER_DIR = ROOT / "infra" / "layer"
REQUIREMENTS = LAYER_DIR / "requirements.in"
LOCK = LAYER_DIR / "requirements.lock"
PACKAGE_SOURCE = ROOT / "shared" / "zengram"

RUNTIME_VERSION = "3.13"
# Lambda's python3.13 runs on Amazon Linux 2023 (glibc 2.34): any manylinux wheel from glibc 2.17 (manylinux2014) to
# 2.34 fits. pip takes a --platform literally, so each is named.
PLATFORMS = ("manylinux2014_x86_64", *(f"manylinux_2_{minor}_x86_64" for minor in range(34, 16, -1)))
PROVIDED_BY_RUNTIME = frozenset({"boto3", "botocore", "s3transfer"})
NEVER_IMPORTED = frozenset({"grpcio", "protobuf", "opensearch-protobufs"})
LEFT_OUT = PROVIDED_BY_RUNTIME | NEVER_IMPORTED
# What the package needs only on a laptop (the offline model and its loader) or never at run time.
SOURCE_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "minilm", "py.typed")
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
LAMBDA_SITE = "/opt/python"  # where Lambda unpacks a layer's python/ folder


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    sha256: str


def _target_flags() -> list[str]:
    platforms = [flag for platform in PLATFORMS for flag in ("--platform", platform)]
    return [*platforms, "--implementation", "cp", "--python-version", RUNTIME_VERSION, "--only-binary=:all:"]


def _pip(*arguments: str) -> None:
    result = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *arguments],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"pip {arguments[0]} failed:\n{result.stdout}\n{result.stderr}")


def _normalized(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def resolve() -> list[Pin]:
    """Every package requirements.in needs on the Lambda runtime, as pip resolves it for that platform."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        _pip("install", "--quiet", "--dry-run", "--ignore-installed", "--target", str(Path(scratch) / "t"),
             "--report", str(report), *_target_flags(), "-r", str(REQUIREMENTS))
        installs = json.loads(report.read_text())["install"]
    pins = [Pin(_normalized(item["metadata"]["name"]), item["metadata"]["version"],
                item["download_info"]["archive_info"]["hashes"]["sha256"]) for item in installs]
    return sorted(pins, key=lambda pin: pin.name)


def lock_text(pins: list[Pin]) -> str:
    kept = [pin for pin in pins if pin.name not in LEFT_OUT]
    dropped = sorted(pin.name for pin in pins if pin.name in LEFT_OUT)
    lines = [
        "# The Lambda layer's packages, pinned with their wheel hashes: `make lock` writes this file from",
        f"# requirements.in for CPython {RUNTIME_VERSION}, manylinux x86_64 up to glibc 2.34 (infra/scripts/layer.py).",
        f"# Resolved but left out (runtime-provided or never imported): {', '.join(dropped) or 'none'}.",
    ]
    for pin in kept:
        lines += [f"{pin.name}=={pin.version} \\", f"    --hash=sha256:{pin.sha256}"]
    return "\n".join(lines) + "\n"


def locked_names(lock: Path = LOCK) -> set[str]:
    return {_normalized(line.split("==")[0]) for line in lock.read_text().splitlines()
            if line and not line.startswith((" ", "#"))}


def runtime_python() -> list[str] | None:
    """A local CPython 3.13, the functions' runtime, to compile the layer's bytecode."""
    candidates = [[os.environ["LAYER_PYTHON"]]] if os.environ.get("LAYER_PYTHON") else []
    candidates += [["python3.13"], ["env", "PYENV_VERSION=3.13.0", "python3.13"]]
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += [[str(path)] for path in sorted(pyenv_root.glob("versions/3.13*/bin/python3.13"))]
    for command in candidates:
        try:
            probe = subprocess.run([*command, "-c", "import sys; print(sys.version_info[:2])"],
                                   capture_output=True, text=True, check=False)
        except OSError:
            continue
        if probe.returncode == 0 and probe.stdout.strip() == "(3, 13)":
            return command
    return None


def build(target: Path) -> str:
    """Fills target/python with the locked packages and the zengram package; says how bytecode was handled."""
    site = target / "python"
    shutil.rmtree(target, ignore_errors=True)
    site.mkdir(parents=True)
    _pip("install", "--quiet", "--no-deps", "--no-compile", "--require-hashes", "--target", str(site),
         *_target_flags(), "-r", str(LOCK))
    for leftover in site.glob("bin"):  # console scripts (fastapi, openai...) have no use in a layer
        shutil.rmtree(leftover)
    shutil.copytree(PACKAGE_SOURCE, site / "zengram", ignore=SOURCE_IGNORED)
    return _precompile(site)


def _precompile(site: Path) -> str:
    python = runtime_python()
    if python is None:
        if os.environ.get("LAYER_REQUIRE_BYTECODE") == "1":
            raise SystemExit("no local Python 3.13 to precompile the layer's bytecode (set LAYER_PYTHON)")
        return "no local Python 3.13: bytecode NOT precompiled (cold starts will compile every module)"
    # Source paths inside the bytecode are the ones Lambda sees (/opt/python/...), not this build folder's.
    command = [*python, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash",
               "-s", str(site), "-p", LAMBDA_SITE, str(site)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"compileall failed:\n{result.stdout}\n{result.stderr}")
    return "bytecode precompiled with Python 3.13 (unchecked-hash .pyc)"


def zip_layer(folder: Path, target: Path) -> int:
    """A reproducible zip: sorted entries, fixed dates and modes."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for file in sorted(path for path in folder.rglob("*") if path.is_file()):
            entry = zipfile.ZipInfo(file.relative_to(folder).as_posix(), date_time=ZIP_DATE)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, file.read_bytes(), compresslevel=6)
    return target.stat().st_size


def main(arguments: list[str]) -> None:
    if arguments[:1] == ["lock"]:
        LOCK.write_text(lock_text(resolve()))
        print(f"wrote {LOCK.relative_to(ROOT)} ({len(locked_names())} packages)")
    elif arguments[:1] == ["build"] and len(arguments) in (2, 3):
        print(build(Path(arguments[1])))
        if len(arguments) == 3:
            zip_layer(Path(arguments[1]), Path(arguments[2]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
