"""Reading template.yaml the way SAM does, for the infra and function tests."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from samtranslator.yaml_helper import yaml_parse

from tests.support import REPO_ROOT

TEMPLATE = REPO_ROOT / "template.yaml"


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    code_dir: Path
    handler: str
    routes: frozenset[tuple[str, str]]

    @property
    def group(self) -> str:
        return self.code_dir.name


def load_template() -> dict[str, Any]:
    parsed: dict[str, Any] = yaml_parse(TEMPLATE.read_text())
    return parsed


def functions(template: dict[str, Any]) -> list[FunctionSpec]:
    found = []
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        properties = resource["Properties"]
        routes = frozenset(
            (event["Properties"]["Method"].upper(), event["Properties"]["Path"])
            for event in properties.get("Events", {}).values()
            if event["Type"] == "HttpApi"
        )
        found.append(FunctionSpec(logical_id, REPO_ROOT / properties["CodeUri"], properties["Handler"], routes))
    return found


def as_packaged(template: dict[str, Any]) -> dict[str, Any]:
    """What `sam package` hands CloudFormation: local code folders replaced by S3 locations."""
    packaged = copy.deepcopy(template)
    for logical_id, resource in packaged["Resources"].items():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri", "DefinitionUri"):
            if isinstance(properties.get(key), str) and not properties[key].startswith("s3://"):
                properties[key] = f"s3://zengram-artifacts/{logical_id}.zip"
    return packaged
