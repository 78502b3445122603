"""Calling a function's handler the way Lambda does: a recorded event and a context object."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.support import REPO_ROOT

EVENTS = REPO_ROOT / "events"


@dataclass
class FakeLambdaContext:
    function_name: str = "zengram-test"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:zengram-test"
    aws_request_id: str = "52fdfc07-2182-154f-163f-5f0f9a621d72"
    log_group_name: str = "/aws/lambda/zengram-test"
    log_stream_name: str = "2026/12/01/[$LATEST]abc"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def load_function_module(group: str) -> ModuleType:
    return importlib.import_module(f"functions.{group}.app")


def load_event(relative: str, **overrides: Any) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / relative).read_text())
    event.update(overrides)
    return event


def invoke(group: str, event: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = load_function_module(group).handler(event, FakeLambdaContext())
    return response


def sample_events(group: str) -> list[Path]:
    return sorted((EVENTS / group).glob("*.json"))
