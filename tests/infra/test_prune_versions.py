"""infra/scripts/prune_versions.py on moto's Lambda and CloudFormation: old versions go, $LATEST, aliased versions
(a weighted alias's second one too) and the newest few stay; a stage's stack is the one samconfig.toml names."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.support import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "infra" / "scripts"))
import prune_versions

REGION = "eu-west-1"


def test_only_unaliased_versions_beyond_the_newest_few_are_chosen() -> None:
    versions = ["$LATEST", *map(str, range(1, 11))]
    assert prune_versions.prunable(versions, aliased={"10"}, keep=2) == ["7", "6", "5", "4", "3", "2", "1"]
    assert prune_versions.prunable(versions, aliased={"10", "3"}, keep=0) == ["9", "8", "7", "6", "5", "4", "2", "1"]
    assert prune_versions.prunable(["$LATEST", "1"], aliased={"1"}, keep=0) == []


def test_a_stage_names_the_stack_of_samconfig() -> None:
    assert prune_versions.stack_name_of("dev") == "zengram-dev"
    assert prune_versions.stack_name_of("prod") == "zengram-prod"
    with pytest.raises(SystemExit, match=r"no \[qa\.deploy\.parameters\]"):
        prune_versions.stack_name_of("qa")


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": REGION}.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        yield


def code() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", "def handler(event, context):\n    return 1\n")
    return buffer.getvalue()


def function_with_versions(name: str, count: int) -> Any:
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName=f"{name}-role", AssumeRolePolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                "Principal": {"Service": "lambda.amazonaws.com"}}]}))["Role"]["Arn"]
    client = boto3.client("lambda", region_name=REGION)
    client.create_function(FunctionName=name, Runtime="python3.13", Role=role, Handler="app.handler",
                           Code={"ZipFile": code()})
    for version in range(count):
        client.update_function_code(FunctionName=name, ZipFile=code() + bytes([version]))
        client.publish_version(FunctionName=name)
    return client


def remaining(client: Any, name: str) -> list[str]:
    return [v["Version"] for v in client.list_versions_by_function(FunctionName=name)["Versions"]]


def test_old_versions_are_deleted_and_routed_ones_kept(aws: None) -> None:
    client = function_with_versions("zg-dev-memory", 6)
    client.create_alias(FunctionName="zg-dev-memory", Name="live", FunctionVersion="6")
    client.create_alias(FunctionName="zg-dev-memory", Name="canary", FunctionVersion="2",
                        RoutingConfig={"AdditionalVersionWeights": {"1": 0.1}})
    assert prune_versions.prune_function(client, "zg-dev-memory", keep=2, dry_run=True) == ["3"]
    assert remaining(client, "zg-dev-memory") == ["$LATEST", "1", "2", "3", "4", "5", "6"]
    assert prune_versions.prune_function(client, "zg-dev-memory", keep=2) == ["3"]
    assert remaining(client, "zg-dev-memory") == ["$LATEST", "1", "2", "4", "5", "6"]
    assert prune_versions.prune_function(client, "zg-dev-memory", keep=0) == ["5", "4"]
    assert remaining(client, "zg-dev-memory") == ["$LATEST", "1", "2", "6"]


def test_the_stacks_functions_are_found_through_cloudformation(aws: None, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    client = function_with_versions("zg-dev-health", 4)
    client.create_alias(FunctionName="zg-dev-health", Name="live", FunctionVersion="4")
    role = boto3.client("iam", region_name=REGION).get_role(RoleName="zg-dev-health-role")["Role"]["Arn"]
    template = {"Resources": {"Other": {"Type": "AWS::Lambda::Function", "Properties": {
        "FunctionName": "zg-dev-other", "Runtime": "python3.13", "Handler": "app.handler", "Role": role,
        "Code": {"ZipFile": "def handler(event, context):\n    return 1\n"}}},
        "Queue": {"Type": "AWS::SQS::Queue"}}}
    boto3.client("cloudformation", region_name=REGION).create_stack(StackName="zengram-dev",
                                                                    TemplateBody=json.dumps(template))
    assert prune_versions.stack_functions(boto3.client("cloudformation", region_name=REGION), "zengram-dev") == [
        "zg-dev-other"]
    prune_versions.main(["--stack-name", "zengram-dev", "--keep", "0", "--region", REGION])
    assert "zg-dev-other: deleted 0 version(s)" in capsys.readouterr().out
    assert remaining(client, "zg-dev-health") == ["$LATEST", "1", "2", "3", "4"]  # not the stack's: untouched
