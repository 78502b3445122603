"""template.yaml and scoped API keys: every function behind the API key may read the KEYS partition (else a scoped
key would fail there), only the admin function may write it, and no function logs its events (they carry keys)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.template_model import load_template

TEMPLATE = load_template()
FUNCTIONS = {name: resource["Properties"] for name, resource in TEMPLATE["Resources"].items()
             if resource["Type"] == "AWS::Serverless::Function"}
HTTP_BEHIND_KEY = sorted(name for name, props in FUNCTIONS.items()
                         if any(event["Type"] == "HttpApi" for event in props.get("Events", {}).values())
                         and name != "HealthFunction")
WRITES = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}


def statements(props: dict[str, Any]) -> list[dict[str, Any]]:
    return [statement for policy in props.get("Policies", []) if isinstance(policy, dict)
            for statement in policy.get("Statement", [])]


def managed(props: dict[str, Any]) -> set[str]:
    return {name for policy in props.get("Policies", []) if isinstance(policy, dict) for name in policy
            if name != "Statement"}


def actions(statement: dict[str, Any]) -> set[str]:
    action = statement["Action"]
    return set(action if isinstance(action, list) else [action])


def leading_keys(statement: dict[str, Any]) -> list[str]:
    condition = statement.get("Condition", {})
    for operator in condition.values():
        if "dynamodb:LeadingKeys" in operator:
            keys: list[str] = operator["dynamodb:LeadingKeys"]
            return keys
    return []


@pytest.mark.parametrize("name", HTTP_BEHIND_KEY)
def test_every_function_behind_the_key_can_verify_a_scoped_key(name: str) -> None:
    props = FUNCTIONS[name]
    if managed(props) & {"DynamoDBCrudPolicy", "DynamoDBReadPolicy"}:
        return
    assert any("dynamodb:GetItem" in actions(statement) and "KEYS" in leading_keys(statement)
               for statement in statements(props)), f"{name} cannot GetItem the KEYS partition"


def test_only_the_admin_function_writes_keys_and_only_there() -> None:
    writers = {name for name, props in FUNCTIONS.items() for statement in statements(props)
               if "KEYS" in leading_keys(statement) and actions(statement) & WRITES}
    assert writers == {"AdminFunction"}
    assert managed(FUNCTIONS["AdminFunction"]) == {"AWSSecretsManagerGetSecretValuePolicy"}  # no table-wide policy
    keys_statement = next(s for s in statements(FUNCTIONS["AdminFunction"]) if s["Sid"] == "ApiKeys")
    assert leading_keys(keys_statement) == ["KEYS"]


def test_no_function_logs_its_incoming_events() -> None:
    globals_env = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
    for variables in [globals_env, *(p.get("Environment", {}).get("Variables", {}) for p in FUNCTIONS.values())]:
        assert str(variables.get("POWERTOOLS_LOGGER_LOG_EVENT", "false")).lower() != "true"
