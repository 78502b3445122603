"""The template's state machines, run locally with their Task states in the functions' containers.

The emulator is moto's Step Functions in a process of its own (stepfunctions_server.py) with
`execute_state_machine` on: it runs the definitions with its ASL interpreter (a port of LocalStack's), and that
interpreter sends `lambda:Invoke` to `http://localhost:$MOTO_PORT` - moto's own port unless MOTO_PORT says
otherwise. MOTO_PORT names an endpoint in the same process that passes each invocation to `sam local start-lambda`
(and marks failed invocations as Lambda does), so every Task runs in the function's Lambda container.

Why not LocalStack's Step Functions: its Lambda integration calls LocalStack's own Lambda service (an internal
client with no endpoint setting), which runs functions only in containers of its own and needs its
lambda-runtime-init binary (downloaded at run time; blocked here), so the invocations could not be sent to
`sam local start-lambda` (docs/local-cloud.md, "Schedules and state machines").

Each machine is created under its logical id, from its DefinitionUri with its DefinitionSubstitutions resolved
(a function reference becomes the function's logical id, the name start-lambda serves it under), so its ARN is
known before it exists: `arn(logical_id)`."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from infra.local_jobs.template import REPO_ROOT, Resolver, load

REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's account
ROLE = f"arn:aws:iam::{ACCOUNT}:role/zengram-local-states"
START_SECONDS = 30


@dataclass(frozen=True)
class Machine:
    logical_id: str
    kind: str  # STANDARD or EXPRESS
    definition: str

    @property
    def arn(self) -> str:
        return arn(self.logical_id)


def arn(logical_id: str, region: str = REGION) -> str:
    return f"arn:aws:states:{region}:{ACCOUNT}:stateMachine:{logical_id}"


def read_machines(template: Path | None = None, parameters: dict[str, str] | None = None) -> list[Machine]:
    """Every AWS::Serverless::StateMachine the parameters create, its definition ready to create."""
    document = load(template)
    resolver = Resolver(document, parameters or {})
    machines = []
    for logical_id, resource in document["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::StateMachine" or not resolver.creates(resource):
            continue
        properties = resource["Properties"]
        substitutions = resolver.resolve(properties.get("DefinitionSubstitutions", {}))
        text = (REPO_ROOT / properties["DefinitionUri"]).read_text()
        definition = substitute(text, {name: str(value) for name, value in substitutions.items()})
        json.loads(definition)  # still JSON
        machines.append(Machine(logical_id, properties.get("Type", "STANDARD"), definition))
    return machines


def substitute(text: str, values: dict[str, str]) -> str:
    """DefinitionSubstitutions applied as CloudFormation does: each ${name} given a value is replaced."""
    return re.sub(r"\$\{(\w+)\}", lambda match: values.get(match.group(1), match.group(0)), text)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_emulator(lambda_url: str, log: Path, *, host: str = "0.0.0.0", port: int | None = None,
                   python: str = sys.executable) -> tuple[subprocess.Popen[bytes], str]:
    """moto's Step Functions sending Task invocations to `lambda_url` (a start-lambda on this machine), through
    the endpoint of infra/local_jobs/stepfunctions_server.py. Listens on `host` (0.0.0.0: the functions'
    containers reach it at host.containers.internal)."""
    if urlparse(lambda_url).hostname not in ("127.0.0.1", "localhost") or urlparse(lambda_url).port is None:
        raise ValueError(f"the Lambda endpoint must be on this machine with a port: {lambda_url}")
    port = port or free_port()
    environment = {**os.environ, "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
                   "AWS_DEFAULT_REGION": REGION, "PYTHONPATH": os.pathsep.join(sys.path)}
    with log.open("ab") as output:
        process = subprocess.Popen([python, "-m", "infra.local_jobs.stepfunctions_server", "--host", host,
                                    "--port", str(port), "--lambda-url", lambda_url], env=environment,
                                   cwd=REPO_ROOT, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            _post(f"{url}/moto-api/config", {"stepfunctions": {"execute_state_machine": True}})
            return process, url
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"moto's Step Functions did not start: see {log}") from None
            time.sleep(0.2)


def _post(url: str, body: dict[str, Any]) -> None:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        response.read()


def client(sfn_url: str, region: str = REGION) -> Any:
    import boto3

    return boto3.client("stepfunctions", endpoint_url=sfn_url, region_name=region, aws_access_key_id="local",
                        aws_secret_access_key="local")


def create_machines(sfn_url: str, machines: list[Machine], region: str = REGION) -> dict[str, str]:
    """Creates the machines (under their logical ids) in `region`; returns {logical id: ARN}."""
    sfn = client(sfn_url, region)
    created = {}
    for machine in machines:
        answer = sfn.create_state_machine(name=machine.logical_id, definition=machine.definition, roleArn=ROLE,
                                          type=machine.kind)
        created[machine.logical_id] = answer["stateMachineArn"]
    return created
