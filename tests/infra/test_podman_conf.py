"""infra/containers/podman.py: its edit of containers.conf (the keys this kernel needs, everything else kept) and
where it starts the Docker API service."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from infra.containers import podman
from infra.containers.podman import configure


def test_configure_adds_the_keys_and_keeps_the_rest(tmp_path: Path) -> None:
    conf = tmp_path / "containers.conf"
    conf.write_text('# site settings\n[containers]\nlog_driver = "k8s-file"\ndefault_ulimits = ["nofile=1024:2048"]\n'
                    '\n[network]\nnetwork_backend = "netavark"\n')
    assert configure(conf) is True
    data = tomllib.loads(conf.read_text())
    assert data["engine"]["runtime"] == "runc"
    assert data["containers"] == {"log_driver": "k8s-file", "default_ulimits": []}
    assert data["network"] == {"network_backend": "netavark"}
    assert conf.read_text().startswith("# site settings\n")


def test_configure_is_idempotent_and_creates_a_missing_file(tmp_path: Path) -> None:
    conf = tmp_path / "etc" / "containers.conf"
    assert configure(conf) is True
    first = conf.read_text()
    assert configure(conf) is False
    assert conf.read_text() == first
    assert tomllib.loads(first) == {"engine": {"runtime": "runc"}, "containers": {"default_ulimits": []}}


def test_the_service_starts_in_no_caller_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The service outlives whoever started it: started in a clone that is later deleted, every container start
    failed ("write child: broken pipe"). It runs from `/`."""
    started: dict[str, Any] = {}

    class FakeService:
        pid, returncode = 4242, None

        def __init__(self, command: list[str], **options: Any) -> None:
            started.update(options, command=command)

        def poll(self) -> None:
            return None

    monkeypatch.setattr(podman, "LOG_FILE", tmp_path / "service.log")
    monkeypatch.setattr(podman, "PID_FILE", tmp_path / "service.pid")
    monkeypatch.setattr(podman.subprocess, "Popen", FakeService)
    monkeypatch.setattr(podman, "answers", lambda path: True)
    monkeypatch.chdir(tmp_path)
    podman.start_service(tmp_path / "podman.sock")
    assert started["command"][:3] == ["podman", "system", "service"]
    assert started["cwd"] == "/" and started["start_new_session"] is True
