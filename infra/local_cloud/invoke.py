"""`sam local invoke` of one function with one sample event (events/), against the running local cloud: its
emulators (--env-vars, --parameter-overrides from the state) and its key.

An HTTP sample carries `sample-api-key`. Behind API Gateway a function never verifies a key itself: the authorizer
has, and API Gateway hands its verdict to the function in `requestContext.authorizer.lambda`. So an event is
prepared the same way: the key is replaced by the local cloud's, the authorizer function is asked (in its container,
through start-lambda) and its context is put in the event; a key the authorizer refuses stays a header (the function
then answers 401 itself, as it would to a direct call). Events that do not come through API Gateway (schedules,
state machine steps, jobs, the authorizer's own) are sent as they are, with SAMPLE-BUCKET replaced.

    python -m infra.local_cloud.invoke MemoryFunction events/memory/post_memory.json   (make invoke)
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from infra.local_cloud import provision, sam

SAMPLE_KEY = "sample-api-key"
KEY_HEADERS = ("x-api-key", "x-mnexium-key", "authorization")


def is_http_event(event: dict[str, Any]) -> bool:
    return isinstance(event.get("requestContext"), dict) and "http" in event["requestContext"] and "type" not in event


def with_local_key(event: dict[str, Any], key: str) -> dict[str, Any]:
    """The event with the sample key replaced by `key` (in whichever header carries it)."""
    text = json.dumps(event).replace(SAMPLE_KEY, key).replace("SAMPLE-BUCKET", provision.DOCUMENTS_BUCKET)
    prepared: dict[str, Any] = json.loads(text)
    return prepared


def authorizer_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """What API Gateway sends the authorizer for this request: its headers, the identity source (the first key
    header present); None when the request carries no key (API Gateway answers 401 without asking)."""
    headers = event.get("headers", {})
    present = [name for name in KEY_HEADERS if name in headers]
    if not present:
        return None
    asked = copy.deepcopy(event)
    asked.update({"type": "REQUEST", "identitySource": [headers[present[0]]],
                  "routeArn": f"arn:aws:execute-api:us-east-1:123456789012:local/$default/{event.get('routeKey', '')}"})
    return asked


def authorize(event: dict[str, Any], lambda_url: str) -> dict[str, Any]:
    """The event as a function behind the authorizer gets it: the verdict's context in requestContext, the key
    header gone. A refused or missing key leaves the event as it was."""
    asked = authorizer_event(event)
    if asked is None:
        return event
    verdict = invoke_through_start_lambda(lambda_url, "KeyAuthorizerFunction", asked)
    if not verdict.get("isAuthorized"):
        return event
    authorized = copy.deepcopy(event)
    for name in KEY_HEADERS:
        authorized["headers"].pop(name, None)
    authorized["requestContext"]["authorizer"] = {"lambda": verdict.get("context", {})}
    return authorized


def invoke_through_start_lambda(lambda_url: str, function: str, event: dict[str, Any]) -> dict[str, Any]:
    import boto3
    from botocore.config import Config

    client = boto3.session.Session(region_name=provision.REGION, **provision.CREDENTIALS).client(
        "lambda", endpoint_url=lambda_url, config=Config(read_timeout=300, retries={"total_max_attempts": 1}))
    answer: dict[str, Any] = json.loads(client.invoke(FunctionName=function, Payload=json.dumps(event).encode())
                                        ["Payload"].read() or b"null")
    return answer


def prepare(event: dict[str, Any], state: dict[str, Any], *, authorized: bool = True) -> dict[str, Any]:
    prepared = with_local_key(event, state["api_key"])
    if authorized and is_http_event(prepared):
        prepared = authorize(prepared, state["lambda_url"])
    return prepared


def sam_invoke(function: str, event: dict[str, Any], state: dict[str, Any], *, timeout: float = 300.0
               ) -> tuple[Any, float, str]:
    """`sam local invoke FUNCTION` with the event on stdin: (the function's answer, seconds, SAM's log)."""
    command = [str(sam.SAM), "local", "invoke", function, "--template", state["template"], "--event", "-",
               *sam.invoke_options(Path(state["env_vars_file"]), state["parameter_overrides"], state["invoke_image"])]
    started = time.monotonic()
    result = subprocess.run(command, input=json.dumps(event), capture_output=True, text=True, timeout=timeout,
                            env=sam.sam_env(state["docker_host"]), cwd=sam.ROOT, check=False)
    seconds = time.monotonic() - started
    if result.returncode != 0:
        raise RuntimeError(f"sam local invoke {function} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    answer = json.loads(lines[-1]) if lines else None
    return answer, seconds, result.stderr


def main(arguments: list[str]) -> int:
    from infra import local_cloud

    if len(arguments) != 2:
        print("usage: python -m infra.local_cloud.invoke FUNCTION EVENT_FILE", file=sys.stderr)
        return 2
    function, event_file = arguments
    state = local_cloud.up(local_cloud.DEFAULT_STATE_DIR)
    event = prepare(json.loads(Path(event_file).read_text()), state)
    answer, seconds, _ = sam_invoke(function, event, state)
    print(json.dumps(answer, indent=2))
    print(f"({function}: {seconds:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
