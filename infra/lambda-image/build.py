"""The Lambda Python 3.13 base image, built locally: `make lambda-image` (or `python infra/lambda-image/build.py`).

No container registry is reachable here, so `public.ecr.aws/lambda/python:3.13` cannot be pulled; SAM CLI
(`sam local ... --skip-pull-image`) and the self-hosting Containerfile use this image under the same tags instead:
- a Debian bookworm root filesystem (`debootstrap --variant=minbase` from the apt mirror this machine is
  configured with), with the shared libraries CPython's extension modules link against;
- CPython 3.13 copied from pyenv's build into /var/lang (the official image's prefix);
- `awslambdaric` (the runtime interface client) in /var/runtime, boto3 in /var/lang's site-packages (Lambda's
  Python runtime provides it: the functions' layer does not ship it);
- the official image's conventions: LAMBDA_TASK_ROOT=/var/task, LAMBDA_RUNTIME_DIR=/var/runtime,
  /lambda-entrypoint.sh (ENTRYPOINT; the handler is its argument), /var/runtime/bootstrap, /opt/python and
  /var/task on the module path, WORKDIR /var/task; the RIE at /usr/local/bin/aws-lambda-rie when SAM CLI's copy
  is at hand, so `podman run -p 9000:8080 IMAGE app.handler` serves invocations as the official image does.
SAM CLI puts its own RIE layer on top (/var/rapid/aws-lambda-rie, which runs /var/runtime/bootstrap).

The image carries a label with a hash of the build's inputs (this script, the interpreter, the pinned pip
packages, the RIE); when the tagged image has the same label, nothing is rebuilt. `--force` rebuilds anyway.
Needs root (debootstrap, chroot) and podman (infra/containers/podman.py installs and configures it).
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from infra.containers.podman import PodmanUnavailable, apt_install, ensure_podman  # noqa: E402

TAGS = ("public.ecr.aws/lambda/python:3.13-x86_64", "public.ecr.aws/lambda/python:3.13")
LABEL = "dev.zengram.lambda-image.inputs"
DERIVED_PREFIXES = ("public.ecr.aws/lambda/python:3.13-rapid-", "samcli/lambda-python:3.13-")
WORK = Path(os.environ.get("ZENGRAM_LAMBDA_IMAGE_WORK", "/var/tmp/zengram-lambda-image"))
SUITE = "bookworm"
# The shared libraries of CPython's extension modules (ldd of lib-dynload; Tk and curses panels are left out).
DEB_PACKAGES = ("ca-certificates", "libssl3", "libffi8", "libsqlite3-0", "zlib1g", "libbz2-1.0", "liblzma5",
                "libreadline8", "libncursesw6", "libtinfo6", "libuuid1", "libexpat1", "libbsd0", "libmd0",
                "tzdata")
PYENV_GLOB = "/root/.pyenv/versions/3.13.*"
# What the official image's runtime directory holds, from PyPI (awslambdaric brings simplejson, snapshot-restore-py).
RUNTIME_PACKAGES = ("awslambdaric==4.2.2",)
# The AWS SDK Lambda's Python runtime provides (the version the project's tests run against).
SDK_PACKAGES = ("boto3==1.44.18", "botocore==1.44.18", "s3transfer==0.19.3")
# Left out of /var/lang: tests, IDLE, Tk (no X libraries in the image). Of pyenv's site-packages only pip is kept
# (the official image has it; the rest there is this machine's).
PYTHON_EXCLUDES = ("lib/python3.13/test", "lib/python3.13/idlelib", "lib/python3.13/tkinter",
                   "lib/python3.13/turtledemo", "share", "bin/idle3.13")
SITE_PACKAGES = "lib/python3.13/site-packages"
ENV = {
    "LANG": "C.UTF-8",
    "TZ": ":/etc/localtime",
    "PATH": "/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin",
    "LD_LIBRARY_PATH": "/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib",
    "LAMBDA_TASK_ROOT": "/var/task",
    "LAMBDA_RUNTIME_DIR": "/var/runtime",
}
ENTRYPOINT_SH = """#!/bin/sh
# As the official image's: the handler is the only argument; without a Runtime API, the emulator serves one.
if [ $# -ne 1 ]; then
  echo "entrypoint requires the handler name to be the first argument" 1>&2
  exit 142
fi
export _HANDLER="$1"

RUNTIME_ENTRYPOINT=/var/runtime/bootstrap
if [ -z "${AWS_LAMBDA_RUNTIME_API}" ]; then
  exec /usr/local/bin/aws-lambda-rie $RUNTIME_ENTRYPOINT
else
  exec $RUNTIME_ENTRYPOINT
fi
"""
BOOTSTRAP_SH = """#!/bin/sh
# The Python 3.13 runtime: the runtime interface client runs the handler (SAM's RIE passes it in the environment).
export AWS_EXECUTION_ENV="${AWS_EXECUTION_ENV:-AWS_Lambda_python3.13}"
LAYER_PATH=/opt/python/lib/python3.13/site-packages:/opt/python
export PYTHONPATH="/var/task:$LAYER_PATH:/var/runtime${PYTHONPATH:+:$PYTHONPATH}"
HANDLER="${_HANDLER:-$AWS_LAMBDA_FUNCTION_HANDLER}"
cd "${LAMBDA_TASK_ROOT:-/var/task}"
if [ -n "$AWS_LAMBDA_EXEC_WRAPPER" ]; then
  exec "$AWS_LAMBDA_EXEC_WRAPPER" /var/lang/bin/python3.13 -m awslambdaric "$HANDLER"
fi
exec /var/lang/bin/python3.13 -m awslambdaric "$HANDLER"
"""


def log(message: str) -> None:
    print(f"[lambda-image] {message}", flush=True)


def run(*cmd: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(cmd, check=True, **kwargs)


def find_python() -> Path:
    found = sorted(glob.glob(PYENV_GLOB), key=lambda p: [int(x) for x in Path(p).name.split(".")])
    if not found:
        raise SystemExit(f"no CPython 3.13 under {PYENV_GLOB} (pyenv install 3.13)")
    return Path(found[-1])


def find_rie() -> Path | None:
    """SAM CLI's bundled runtime interface emulator, when the SAM venv is installed."""
    found = glob.glob(str(REPO / ".venv-sam/lib/python3*/site-packages/samcli/local/rapid/aws-lambda-rie-x86_64"))
    return Path(found[0]) if found else None


def apt_mirror() -> str:
    """The Debian mirror apt is configured with (sources.list or a deb822 .sources file) that serves SUITE."""
    sources = Path("/etc/apt/sources.list")
    files = ([sources] if sources.exists() else []) + sorted(Path("/etc/apt/sources.list.d").glob("*.list")) \
        + sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))
    for path in files:
        text = path.read_text(errors="replace")
        if path.suffix == ".sources":
            for stanza in text.split("\n\n"):
                fields = _deb822(stanza)
                if "deb" in fields.get("types", "").split() and SUITE in fields.get("suites", "").split():
                    return fields["uris"].split()[0]
        else:
            for line in text.splitlines():
                words = [w for w in line.split("#")[0].split() if not w.startswith("[")]
                if len(words) >= 3 and words[0] == "deb" and words[2] == SUITE:
                    return words[1]
    return "http://deb.debian.org/debian"


def _deb822(stanza: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in stanza.splitlines():
        if line.startswith("#") or ":" not in line or line[:1].isspace():
            continue
        key, value = line.split(":", 1)
        fields[key.strip().lower()] = value.strip()
    return fields


def input_hash(python: Path, rie: Path | None) -> str:
    """What decides the image's contents; the image is rebuilt when it changes."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    version = subprocess.run([str(python / "bin/python3"), "-c", "import sys; print(sys.version)"],
                             capture_output=True, text=True, check=True).stdout
    digest.update(f"{python}\n{version}".encode())
    digest.update(json.dumps([RUNTIME_PACKAGES, SDK_PACKAGES, DEB_PACKAGES]).encode())
    if rie:
        digest.update(hashlib.sha256(rie.read_bytes()).digest())
    return digest.hexdigest()[:16]


def current_label(tag: str) -> str | None:
    done = subprocess.run(["podman", "image", "inspect", "--format", f'{{{{index .Labels "{LABEL}"}}}}', tag],
                          capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def debootstrap(rootfs: Path, mirror: str) -> None:
    cache = WORK / "debs"
    cache.mkdir(parents=True, exist_ok=True)
    log(f"debootstrap --variant=minbase {SUITE} from {mirror}")
    run("debootstrap", "--variant=minbase", f"--include={','.join(DEB_PACKAGES)}", f"--cache-dir={cache}",
        SUITE, str(rootfs), mirror, stdout=subprocess.DEVNULL)
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man",
                     "usr/share/info", "usr/share/locale"):
        path = rootfs / leftover
        if path.is_dir():
            shutil.rmtree(path)
            path.mkdir()
    # The image resolves names through the container engine's files, not the build host's.
    for name in ("etc/hostname", "etc/resolv.conf"):
        (rootfs / name).unlink(missing_ok=True)


def install_python(rootfs: Path, python: Path) -> None:
    """Copy pyenv's CPython into /var/lang; its RUNPATH points at pyenv's prefix, so ld.so.conf names /var/lang/lib."""
    lang = rootfs / "var/lang"
    excluded = {python / e for e in PYTHON_EXCLUDES}

    def ignore(directory: str, names: list[str]) -> set[str]:
        if Path(directory) == python / SITE_PACKAGES:
            return {n for n in names if not (n == "pip" or n.startswith("pip-"))}
        return {n for n in names if Path(directory, n) in excluded or n.startswith("_tkinter")}

    log(f"CPython from {python} into /var/lang")
    shutil.copytree(python, lang, symlinks=True, ignore=ignore)
    for script in (lang / "bin").iterdir():
        if script.is_file() and not script.is_symlink():
            data = script.read_bytes()
            if data.startswith(b"#!" + str(python).encode()):
                script.write_bytes(data.replace(str(python).encode(), b"/var/lang", 1))
    (rootfs / "etc/ld.so.conf.d/var-lang.conf").write_text("/var/lang/lib\n")
    run("chroot", str(rootfs), "/sbin/ldconfig")


def pip_install(python: Path, target: Path, packages: tuple[str, ...]) -> None:
    log(f"pip install {' '.join(packages)} into {str(target).split('/rootfs', 1)[-1]}")
    run(str(python / "bin/python3"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--root-user-action=ignore", "--no-warn-script-location", "--only-binary=:all:",
        "--target", str(target), *packages)


def install_runtime(rootfs: Path, python: Path, rie: Path | None) -> None:
    pip_install(python, rootfs / "var/runtime", RUNTIME_PACKAGES)
    pip_install(python, rootfs / "var/lang/lib/python3.13/site-packages", SDK_PACKAGES)
    for directory in ("var/task", "opt/python", "opt/extensions", "opt/lib", "opt/bin"):
        (rootfs / directory).mkdir(parents=True, exist_ok=True)
    _write_script(rootfs / "lambda-entrypoint.sh", ENTRYPOINT_SH)
    _write_script(rootfs / "var/runtime/bootstrap", BOOTSTRAP_SH)
    if rie:
        target = rootfs / "usr/local/bin/aws-lambda-rie"
        shutil.copy2(rie, target)
        target.chmod(0o755)


def _write_script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def check_rootfs(rootfs: Path) -> None:
    """Every extension module's libraries resolve in the image, and the runtime's imports work there."""
    dynload = sorted((rootfs / "var/lang/lib/python3.13/lib-dynload").glob("*.so"))
    binaries = [rootfs / "var/lang/bin/python3.13", *dynload]
    missing = []
    for binary in binaries:
        inside = "/" + str(binary.relative_to(rootfs))
        out = subprocess.run(["chroot", str(rootfs), "/usr/bin/ldd", inside], capture_output=True, text=True).stdout
        missing += [f"{inside}: {line.strip()}" for line in out.splitlines() if "not found" in line]
    if missing:
        raise SystemExit("libraries missing in the image:\n" + "\n".join(missing))
    modules = "ssl, sqlite3, ctypes, lzma, bz2, zlib, readline, uuid, decimal, hashlib, json, pip, awslambdaric"
    run("chroot", str(rootfs), "/usr/bin/env", "PYTHONPATH=/var/runtime", "/var/lang/bin/python3.13", "-c",
        f"import {modules}, boto3")
    log(f"ldd: {len(binaries)} binaries resolve; imports of {modules}, boto3 work")


def import_image(rootfs: Path, inputs: str) -> None:
    tarball = WORK / "rootfs.tar"
    with tarfile.open(tarball, "w") as tar:
        tar.add(rootfs, arcname=".")
    changes = [f"ENV {k}={v}" for k, v in ENV.items()] + [
        "WORKDIR /var/task", 'ENTRYPOINT ["/lambda-entrypoint.sh"]', f"LABEL {LABEL}={inputs}"]
    args = [a for change in changes for a in ("--change", change)]
    log(f"podman import as {TAGS[0]}")
    try:
        run("podman", "import", "--quiet", *args, str(tarball), TAGS[0], stdout=subprocess.DEVNULL)
    finally:
        tarball.unlink(missing_ok=True)
    for tag in TAGS[1:]:
        run("podman", "tag", TAGS[0], tag)


def drop_derived_images() -> None:
    """SAM CLI's images built on the previous base (its RIE layer, function layers): it only rebuilds them when
    they are missing, so they would keep the old base. Those a container still uses stay (rmi without --force)."""
    listed = subprocess.run(["podman", "images", "--format", "{{.Repository}}:{{.Tag}}"],
                            capture_output=True, text=True).stdout.split()
    stale = [name for name in listed if name.removeprefix("docker.io/").startswith(DERIVED_PREFIXES)]
    for name in stale:
        removed = subprocess.run(["podman", "rmi", name], capture_output=True, text=True).returncode == 0
        log(f"{'removed' if removed else 'kept (in use)'} {name}, built on the previous base")


def build(force: bool) -> None:
    ensure_podman()
    python, rie = find_python(), find_rie()
    inputs = input_hash(python, rie)
    if not force and all(current_label(tag) == inputs for tag in TAGS):
        log(f"{TAGS[0]} is up to date (inputs {inputs}): nothing to build")
        return
    apt_install(("debootstrap",), ("debootstrap",))
    started = time.monotonic()
    rootfs = WORK / "rootfs"
    if rootfs.exists():
        shutil.rmtree(rootfs)
    try:
        debootstrap(rootfs, apt_mirror())
        install_python(rootfs, python)
        install_runtime(rootfs, python, rie)
        check_rootfs(rootfs)
        import_image(rootfs, inputs)
        drop_derived_images()
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)
    log(f"built {', '.join(TAGS)} (inputs {inputs}) in {time.monotonic() - started:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild even when the image is up to date")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("the Lambda base image is built as root (debootstrap, chroot, rootful podman)", file=sys.stderr)
        return 1
    WORK.mkdir(parents=True, exist_ok=True)
    with open(WORK / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time; a waiting one then finds the image up to date
        try:
            build(args.force)
        except (PodmanUnavailable, subprocess.CalledProcessError) as exc:
            print(f"lambda image: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
