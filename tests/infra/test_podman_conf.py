"""infra/containers/podman.py's edit of containers.conf: the keys this kernel needs, everything else kept."""

from __future__ import annotations

import tomllib
from pathlib import Path

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
