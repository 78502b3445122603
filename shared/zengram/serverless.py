"""The Lambda host: one endpoint group per function, wired lazily on the first request.

Nothing here reads the environment or touches the network at import time, so a cold start only pays
for what the first request needs.
"""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, FastAPI

from zengram.api.app import create_app
from zengram.bootstrap import ContainerProvider, build_container
from zengram.domain.errors import ZengramError
from zengram.settings import Settings


class ApiKeyNotConfigured(ZengramError):
    status_code = 503


def _configured_key() -> str:
    key = Settings().api_key
    if key is None:
        raise ApiKeyNotConfigured("the service has no API key configured (BRAIN_API_KEY)")
    return key.get_secret_value()


def create_function_app(routers: Sequence[APIRouter]) -> FastAPI:
    provider = ContainerProvider(lambda: build_container(Settings()))
    return create_app(routers, provider, expected_key=_configured_key)
