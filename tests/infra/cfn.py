"""A small CloudFormation evaluator for the template tests: resolves the intrinsic functions template.yaml uses
(Ref, Fn::Sub, Fn::Select, Fn::Split, Fn::Join, Fn::If, Fn::GetAtt, Fn::Equals/Not/And/Or/Contains, Condition)
for given parameters and a given stack, as CloudFormation documents them. Resources resolve to what CloudFormation
would generate for them: a name unique to the stack."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

ACCOUNT = "123456789012"
REGION = "eu-west-1"
NO_VALUE = object()


@dataclass
class Stack:
    """One deployment of the template: its name, its id (a UUID) and its parameter values."""

    name: str
    uuid: str
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/{self.name}/{self.uuid}"


class Evaluator:
    def __init__(self, template: dict[str, Any], stack: Stack) -> None:
        self.template = template
        self.stack = stack
        self.parameters = {name: stack.parameters.get(name, spec.get("Default"))
                           for name, spec in template.get("Parameters", {}).items()}
        for name, spec in template.get("Parameters", {}).items():
            if spec["Type"] == "CommaDelimitedList" and isinstance(self.parameters[name], str):
                self.parameters[name] = self.parameters[name].split(",")

    def pseudo(self, name: str) -> Any:
        return {"AWS::StackName": self.stack.name, "AWS::StackId": self.stack.id, "AWS::Region": REGION,
                "AWS::AccountId": ACCOUNT, "AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com",
                "AWS::NoValue": NO_VALUE}[name]

    def ref(self, name: str) -> Any:
        if name.startswith("AWS::"):
            return self.pseudo(name)
        if name in self.parameters:
            return self.parameters[name]
        resource = self.template["Resources"].get(name, {})
        if resource.get("Type") == "AWS::Lambda::Function" and "FunctionName" in resource["Properties"]:
            return self.resolve(resource["Properties"]["FunctionName"])  # Ref of a named function is its name
        if resource or "." in name:
            return f"{self.stack.name}-{name.replace('.', '')}-GENERATED1"  # a physical id unique to the stack
        raise KeyError(f"unknown reference {name}")

    def condition(self, name: str) -> bool:
        return bool(self.resolve(self.template["Conditions"][name]))

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [item for item in (self.resolve(v) for v in value) if item is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, argument), = value.items()
            function = getattr(self, "_" + key.replace("::", "_"), None)
            if function is not None:
                return function(argument)
        return {k: r for k, r in ((k, self.resolve(v)) for k, v in value.items()) if r is not NO_VALUE}

    def _Ref(self, name: str) -> Any:
        return self.ref(name)

    def _Condition(self, name: str) -> bool:
        return self.condition(name)

    def _Fn_GetAtt(self, argument: Any) -> str:
        logical, attribute = argument if isinstance(argument, list) else argument.split(".", 1)
        return f"arn:aws:generated:{REGION}:{ACCOUNT}:{self.stack.name}-{logical}-GENERATED1/{attribute}"

    def _Fn_Sub(self, argument: Any) -> str:
        text, variables = (argument, {}) if isinstance(argument, str) else (argument[0], argument[1])
        resolved = {name: self.resolve(v) for name, v in variables.items()}

        def substitute(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in resolved:
                return str(resolved[name])
            if "." in name and name.split(".")[0] in self.template["Resources"]:
                return self._Fn_GetAtt(name)
            return str(self.ref(name))

        return re.sub(r"\$\{([^}!]+)\}", substitute, text)

    def _Fn_Select(self, argument: list[Any]) -> Any:
        return self.resolve(argument[1])[int(self.resolve(argument[0]))]

    def _Fn_Split(self, argument: list[Any]) -> list[str]:
        return str(self.resolve(argument[1])).split(argument[0])

    def _Fn_Join(self, argument: list[Any]) -> str:
        return str(argument[0]).join(str(item) for item in self.resolve(argument[1]))

    def _Fn_If(self, argument: list[Any]) -> Any:
        return self.resolve(argument[1] if self.condition(argument[0]) else argument[2])

    def _Fn_Equals(self, argument: list[Any]) -> bool:
        left, right = (self.resolve(item) for item in argument)
        return bool(str(left) == str(right))

    def _Fn_Not(self, argument: list[Any]) -> bool:
        return not self.resolve(argument[0])

    def _Fn_And(self, argument: list[Any]) -> bool:
        return all(self.resolve(item) for item in argument)

    def _Fn_Or(self, argument: list[Any]) -> bool:
        return any(self.resolve(item) for item in argument)

    def _Fn_Contains(self, argument: list[Any]) -> bool:
        return str(self.resolve(argument[1])) in [str(item) for item in self.resolve(argument[0])]

    def failed_rules(self) -> list[str]:
        """The AssertDescription of every Rules assertion these parameters break."""
        failures = []
        for rule in self.template.get("Rules", {}).values():
            if "RuleCondition" in rule and not self.resolve(rule["RuleCondition"]):
                continue
            failures += [assertion["AssertDescription"] for assertion in rule["Assertions"]
                         if not self.resolve(assertion["Assert"])]
        return failures

    def refused_parameters(self) -> list[str]:
        """Parameters whose value breaks their AllowedValues or AllowedPattern (checked before the Rules)."""
        refused = []
        for name, spec in self.template.get("Parameters", {}).items():
            value = self.parameters[name]
            values = value if isinstance(value, list) else [value]
            allowed = [str(v) for v in spec.get("AllowedValues", values)]
            pattern = spec.get("AllowedPattern", ".*")
            if not all(str(v) in allowed and re.fullmatch(pattern, str(v)) for v in values):
                refused.append(name)
        return refused
