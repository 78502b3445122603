"""The Lambda layer, built the way `sam build` builds it (infra/layer/Makefile, BuildMethod makefile) from the lock:
what it holds and leaves out, that it is the very build `make package` makes (byte for byte), and - with a local
Python 3.13, the runtime's - that every function imports from it beside the runtime's own boto3, as Lambda's init
does. pip installs the locked wheels (from its cache, or PyPI) for CPython 3.13 on manylinux x86_64."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.infra.template_model import load_template
from tests.support import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "infra" / "scripts"))
import layer

pytestmark = pytest.mark.xdist_group("layer")  # one worker builds it once

LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024  # layers + function code
LAYER_BUDGET = 120 * 1024 * 1024  # #18 §5: the layer's own share, unzipped, leaving room for a second layer
FUNCTIONS = sorted(path.name for path in (REPO_ROOT / "functions").iterdir() if (path / "app.py").is_file())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """What `sam build` puts in its artifacts folder for DomainLayer: `make build-DomainLayer` with ARTIFACTS_DIR."""
    artifacts = tmp_path_factory.mktemp("sam-build") / "DomainLayer"
    artifacts.mkdir()
    result = subprocess.run(["make", "--no-print-directory", "-f", str(REPO_ROOT / "infra/layer/Makefile"),
                             "build-DomainLayer", f"ARTIFACTS_DIR={artifacts}", f"PYTHON={sys.executable}"],
                            capture_output=True, text=True, check=False, cwd=tmp_path_factory.mktemp("elsewhere"))
    assert result.returncode == 0, result.stdout + result.stderr
    yield artifacts


def site(built: Path) -> Path:
    return built / "python"


def test_the_template_builds_the_layer_with_this_makefile() -> None:
    layer_resource = load_template()["Resources"]["DomainLayer"]
    assert layer_resource["Metadata"] == {"BuildMethod": "makefile"}
    assert REPO_ROOT / layer_resource["Properties"]["ContentUri"] == REPO_ROOT / "infra" / "layer"
    makefile = (REPO_ROOT / "infra/layer/Makefile").read_text()
    assert "build-DomainLayer:" in makefile and "infra/scripts/layer.py build" in makefile


def test_the_layer_leaves_out_what_the_runtime_provides_and_what_is_never_imported(built: Path) -> None:
    names = {path.name.lower() for path in site(built).iterdir()}
    for package in ("boto3", "botocore", "s3transfer", "grpc", "grpcio", "google", "opensearch_protobufs"):
        assert not any(name == package or name.startswith(f"{package}-") for name in names), package
    assert not (site(built) / "bin").exists()


def test_the_layer_holds_exactly_the_locked_packages_and_zengram(built: Path) -> None:
    installed = {layer._normalized(path.name.split("-")[0]) for path in site(built).glob("*.dist-info")}
    assert installed == layer.locked_names()
    package = site(built) / "zengram"
    assert (package / "serverless/handlers.py").is_file() and (package / "adapters/opensearch/mappings").is_dir()
    assert not (package / "adapters" / "minilm").exists()  # the offline model stays on laptops


def test_what_nothing_imports_on_lambda_is_left_out(built: Path) -> None:
    python = site(built)
    assert (python / "numpy" / "__init__.py").is_file() and (python / "numpy" / "testing").is_dir()
    assert not list(python.glob("numpy/**/tests")) and not (python / "numpy" / "f2py").exists()
    assert not list(python.rglob("*.pyi"))


# Top-level modules the package imports that the layer need not carry: the runtime's own (boto3, botocore, the
# SnapStart hooks), what only a laptop runs (the CLI, the MCP server, the embedded server: left out of the layer's
# sources or never reached on Lambda), and usearch, imported only by an embedded index above its ANN threshold (the
# functions' embedded indexes stay empty: they never store memories), and watchfiles, the embedded host's watcher of
# document folders (on AWS, S3 event notifications tell the watch function what changed).
NOT_IN_THE_LAYER = {"boto3", "botocore", "snapshot_restore_py", "mcp", "rich", "typer", "uvicorn", "usearch",
                    "watchfiles"}
LAPTOP_ONLY_PACKAGES = {"cli", "mcp_server", "embedded", "minilm", "dashboard"}


def imported_modules() -> dict[str, set[str]]:
    """Every third-party top-level module shared/zengram imports (at any depth, lazily included), by file."""
    import ast

    found: dict[str, set[str]] = {}
    package = REPO_ROOT / "shared" / "zengram"
    for path in package.rglob("*.py"):
        if LAPTOP_ONLY_PACKAGES & set(path.relative_to(package).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                     else [])
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "zengram":
                    found.setdefault(top, set()).add(path.name)
    return found


def test_every_module_the_package_imports_on_lambda_is_in_the_layer(built: Path) -> None:
    """A lazy import the layer cannot satisfy fails only when that code path runs on Lambda (threadpoolctl, for the
    embedded index of the functions that keep none, was found that way under `sam local`)."""
    imported = imported_modules()
    assert "threadpoolctl" in imported and "numpy" in imported  # the scan sees lazy imports
    missing = {name: files for name, files in imported.items()
               if name not in NOT_IN_THE_LAYER and not (site(built) / name).exists()
               and not (site(built) / f"{name}.py").exists()}
    assert missing == {}


def test_the_lock_pins_every_requirement_with_a_hash() -> None:
    lock = layer.LOCK.read_text()
    requirements = {layer._normalized(line.split(">")[0].split("[")[0].split("=")[0].strip())
                    for line in layer.REQUIREMENTS.read_text().splitlines() if line and not line.startswith("#")}
    assert requirements <= layer.locked_names()
    pins = [line for line in lock.splitlines() if line and not line.startswith((" ", "#"))]
    assert all("==" in pin and pin.endswith("\\") for pin in pins)
    assert lock.count("--hash=sha256:") == len(pins)
    assert not layer.LEFT_OUT & layer.locked_names()


def test_the_layer_fits_lambda(built: Path, tmp_path: Path) -> None:
    unzipped = sum(file.stat().st_size for file in built.rglob("*") if file.is_file())
    zipped = layer.zip_layer(built, tmp_path / "layer.zip")
    assert unzipped < LAMBDA_UNZIPPED_LIMIT - 5 * 1024 * 1024  # room for the functions' code
    assert unzipped <= LAYER_BUDGET, f"{unzipped / 2**20:.0f} MB unzipped"
    assert zipped < 60 * 1024 * 1024
    with zipfile.ZipFile(tmp_path / "layer.zip") as archive:
        assert all(name.startswith("python/") for name in archive.namelist())


def test_make_package_builds_the_same_layer_byte_for_byte(built: Path, tmp_path: Path) -> None:
    layer.build(tmp_path / "package")
    assert layer.zip_layer(tmp_path / "package", tmp_path / "package.zip") > 0
    layer.zip_layer(built, tmp_path / "sam.zip")
    assert (tmp_path / "package.zip").read_bytes() == (tmp_path / "sam.zip").read_bytes()


@pytest.fixture(scope="module")
def runtime_python() -> list[str]:
    python = layer.runtime_python()
    if python is None:
        pytest.skip("no local Python 3.13 (the Lambda runtime's): bytecode and imports not checked")
    return python


def test_bytecode_is_precompiled_for_the_runtime(built: Path, runtime_python: list[str]) -> None:
    modules = list((site(built) / "zengram").rglob("*.py"))
    compiled = list((site(built) / "zengram").rglob("__pycache__/*.cpython-313.pyc"))
    assert modules and len(compiled) == len(modules)
    assert not list(site(built).rglob("*.cpython-311.pyc"))


def test_every_function_imports_from_the_layer_on_the_runtime(built: Path, runtime_python: list[str],
                                                             tmp_path: Path) -> None:
    """As Lambda's init: the function folder, then /opt/python (the layer), then the runtime's boto3 (linked here
    from the test environment, as /var/runtime holds it). botocore must come from the runtime, not the layer."""
    runtime = tmp_path / "var-runtime"
    runtime.mkdir()
    import boto3
    import botocore
    import s3transfer

    for module in (boto3, botocore, s3transfer):
        (runtime / module.__name__).symlink_to(Path(module.__file__ or "").parent)
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "AWS_REGION": "eu-west-1",
                   "POWERTOOLS_TRACE_DISABLED": "true", "PYTHONDONTWRITEBYTECODE": "1",
                   "PYTHONPATH": os.pathsep.join([str(site(built)), str(runtime)])}
    # Each function's app.py imported under its own name, in one interpreter (one import of the layer).
    probe = f"""
import importlib.util, sys, botocore
for name in {FUNCTIONS!r}:
    folder = {str(REPO_ROOT / "functions")!r} + "/" + name
    sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location("fn_" + name, folder + "/app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.handler), name
    sys.path.remove(folder)
import opensearchpy, numpy, openai
print(botocore.__file__)
"""
    result = subprocess.run([*runtime_python, "-c", probe], capture_output=True, text=True, check=False,
                            env=environment, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().startswith(str(runtime))


def test_without_a_local_python_313_the_layer_ships_sources_and_says_so(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "module.py").write_text("VALUE = 1\n")
    monkeypatch.setattr(layer, "runtime_python", lambda: None)
    monkeypatch.delenv("LAYER_REQUIRE_BYTECODE", raising=False)
    assert "NOT precompiled" in layer._precompile(tmp_path)
    assert not list(tmp_path.rglob("*.pyc"))
    monkeypatch.setenv("LAYER_REQUIRE_BYTECODE", "1")
    with pytest.raises(SystemExit, match=r"no local Python 3\.13"):
        layer._precompile(tmp_path)


def test_a_zip_depends_on_contents_only(tmp_path: Path) -> None:
    """Same files, other modification times and creation order: the same bytes."""
    for folder, order in (("a", ["x.py", "y.py"]), ("b", ["y.py", "x.py"])):
        for name in order:
            (tmp_path / folder / "python").mkdir(parents=True, exist_ok=True)
            (tmp_path / folder / "python" / name).write_text(f"# {name}\n")
        os.utime(tmp_path / folder / "python" / "x.py", (1_000_000 if folder == "a" else 2_000_000,) * 2)
    layer.zip_layer(tmp_path / "a", tmp_path / "a.zip")
    layer.zip_layer(tmp_path / "b", tmp_path / "b.zip")
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
