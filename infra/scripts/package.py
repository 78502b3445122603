"""`make package`: builds the Lambda layer for the python3.13 x86_64 runtime without Docker and prints sizes.

pip fetches manylinux wheels for the target platform (`--only-binary=:all:`), so nothing is compiled here.
boto3/botocore/s3transfer are left out: the Lambda Python runtime ships them (saves ~25 MB zipped).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
LAYER = BUILD / "layer"
LAMBDA_LIMIT_MB = 250
PROVIDED_BY_RUNTIME = ("boto3", "botocore", "s3transfer")


def folder_size(path: Path) -> int:
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())


def zip_folder(folder: Path, target: Path) -> int:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(folder))
    return target.stat().st_size


def build_layer() -> Path:
    site = LAYER / "python"
    shutil.rmtree(LAYER, ignore_errors=True)
    site.mkdir(parents=True)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--platform", "manylinux2014_x86_64", "--implementation", "cp", "--python-version", "3.13",
         "--only-binary=:all:", "--target", str(site), "-r", str(ROOT / "shared" / "requirements.txt")],
        capture_output=True, text=True, check=False,
    )
    if result.returncode != 0:
        sys.exit(f"pip could not build the layer:\n{result.stderr}")
    for name in PROVIDED_BY_RUNTIME:
        for path in site.glob(f"{name}*"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    shutil.copytree(ROOT / "shared" / "zengram", site / "zengram",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "minilm"))
    return site


def runtime_python() -> list[str] | None:
    """A local Python 3.13 (the functions' runtime), to precompile the layer's bytecode, if one runs here."""
    for command in (["python3.13"], ["env", "PYENV_VERSION=3.13.0", "python3.13"]):
        probe = subprocess.run([*command, "-c", "import sys; print(sys.version_info[:2])"],
                               capture_output=True, text=True, check=False)
        if probe.returncode == 0 and probe.stdout.strip() == "(3, 13)":
            return command
    return None


def precompile(site: Path) -> str:
    """Lambda's /opt is read-only: without shipped .pyc files every cold start compiles every module."""
    python = runtime_python()
    if python is None:
        return "no local python3.13: bytecode not precompiled (cold starts will compile modules)"
    subprocess.run([*python, "-m", "compileall", "-q", "-j", "0", str(site)], capture_output=True, check=False)
    return "bytecode precompiled with python3.13"


def mb(size: int) -> str:
    return f"{size / 1_048_576:6.1f} MB"


def main() -> None:
    site = build_layer()
    print(precompile(site))
    unzipped = folder_size(LAYER)
    zipped = zip_folder(LAYER, BUILD / "layer.zip")
    print(f"layer (python3.13, x86_64): {mb(unzipped)} unzipped, {mb(zipped)} zipped; "
          f"Lambda limit {LAMBDA_LIMIT_MB} MB unzipped (layer + function code) -> "
          f"{'OK' if unzipped < LAMBDA_LIMIT_MB * 1_048_576 else 'TOO BIG'}")
    packages = sorted(((folder_size(path), path.name) for path in site.iterdir() if path.is_dir()), reverse=True)
    print("largest packages:")
    for size, name in packages[:8]:
        print(f"  {mb(size)}  {name}")
    for function in sorted((ROOT / "functions").iterdir()):
        if (function / "app.py").is_file():
            code = zip_folder(function, BUILD / f"function-{function.name}.zip")
            print(f"function {function.name:<10} {code:>6} bytes zipped")


if __name__ == "__main__":
    main()
