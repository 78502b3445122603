"""template.yaml as the local cloud reads it: parameters (defaults, overridden), conditions, and the intrinsic
functions the schedule and state machine properties use. A reference to a function (or its alias) resolves to
the function's logical id, the name `sam local start-lambda` serves it under."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = REPO_ROOT / "template.yaml"
NO_VALUE = object()


def load(template: Path | None = None) -> dict[str, Any]:
    from samtranslator.yaml_helper import yaml_parse

    parsed: dict[str, Any] = yaml_parse((template or TEMPLATE).read_text())
    return parsed


class Resolver:
    def __init__(self, template: dict[str, Any], parameters: dict[str, str]) -> None:
        self.template = template
        self.parameters = {name: str(parameters.get(name, spec.get("Default", "")))
                           for name, spec in template.get("Parameters", {}).items()}

    def creates(self, resource: dict[str, Any]) -> bool:
        return "Condition" not in resource or self.condition(resource["Condition"])

    def condition(self, name: str) -> bool:
        return bool(self.resolve(self.template["Conditions"][name]))

    def ref(self, name: str) -> Any:
        if name in self.parameters:
            return self.parameters[name]
        if name == "AWS::NoValue":
            return NO_VALUE
        if name.startswith("AWS::"):
            return {"AWS::Region": "us-east-1", "AWS::AccountId": "123456789012", "AWS::Partition": "aws",
                    "AWS::StackName": "zengram-local"}.get(name, name)
        logical = name.split(".")[0]
        if logical in self.template["Resources"]:
            return logical
        raise KeyError(f"unknown reference {name}")

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [item for item in (self.resolve(v) for v in value) if item is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, argument), = value.items()
            if key in INTRINSICS:
                return INTRINSICS[key](self, argument)
        return {k: r for k, r in ((k, self.resolve(v)) for k, v in value.items()) if r is not NO_VALUE}


def _if(resolver: Resolver, argument: list[Any]) -> Any:
    return resolver.resolve(argument[1] if resolver.condition(argument[0]) else argument[2])


def _equals(resolver: Resolver, argument: list[Any]) -> bool:
    left, right = (resolver.resolve(item) for item in argument)
    return str(left) == str(right)


def _get_att(resolver: Resolver, argument: Any) -> str:
    logical, attribute = argument if isinstance(argument, list) else argument.split(".", 1)
    return f"local:{logical}.{attribute}"  # queues, log groups: nothing the local jobs use


INTRINSICS = {
    "Ref": lambda r, a: r.ref(a),
    "Condition": lambda r, a: r.condition(a),
    "Fn::If": _if,
    "Fn::Equals": _equals,
    "Fn::Not": lambda r, a: not r.resolve(a[0]),
    "Fn::And": lambda r, a: all(r.resolve(item) for item in a),
    "Fn::Or": lambda r, a: any(r.resolve(item) for item in a),
    "Fn::GetAtt": _get_att,
}
