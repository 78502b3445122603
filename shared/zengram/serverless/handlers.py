"""The Lambda host: one endpoint group per function, wired lazily on the first request.

Nothing here reads the environment, touches the network or builds a Powertools Tracer (which loads the X-Ray SDK)
at import time, so a cold start only pays for what the first request needs; and it imports only what every function
needs, so a function imports the app factory, the settings and the container's wiring when it uses them
(tests/functions/test_import_weight.py keeps each function's imports in check). One Powertools Logger, Tracer and
Metrics (`OBSERVABILITY`) serve every handler of the execution environment, and the services' own loggers
(`zengram.*`) write through that Logger: each line is Powertools JSON, at ZENGRAM_LOG_LEVEL, with the request's
correlation id (the API's request id: the caller's x-request-id, else API Gateway's request id).

An init that is snapshotted (SnapStart) or kept warm (provisioned concurrency) is primed instead: the handler, the
container, its clients and the key are built before the snapshot, and randomness is reseeded after each restore
(docs/aws-edge.md). Behind API Gateway, the authorizer (`authorizer_handler`) has verified the caller's key before a
function runs and passes the caller on in the event; the functions take it from there (`caller_from_authorizer`) and
verify keys themselves only when it is absent (a direct invocation).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Sequence
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, cast

from zengram.assembly.provider import ContainerProvider
from zengram.kernel.errors import FeatureUnavailable
from zengram.kernel.keys import Principal, authenticate, bearer_token, presented_key

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger, Metrics, Tracer
    from fastapi import APIRouter, FastAPI
    from starlette.types import Scope

    from zengram.assembly.containers import Container
    from zengram.memory.services.keys import KeyService
    from zengram.settings import Settings
    from zengram.web.lazy_routes import LazyRouters

LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]
SERVICE_LOGGER = "zengram"  # the parent of every service's logger (logging.getLogger(__name__))
logger = logging.getLogger(__name__)


class ApiKeyNotConfigured(FeatureUnavailable):
    """The Lambda host found no API key to check callers against."""


class LambdaObservability:
    """The execution environment's Powertools Logger, Tracer and Metrics, each built on first use."""

    @cached_property
    def logger(self) -> Logger:
        """Powertools' Logger at ZENGRAM_LOG_LEVEL; the services' `zengram.*` loggers write through it."""
        from aws_lambda_powertools import Logger
        from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers

        from zengram.settings import Settings

        level = Settings().log_level.upper()
        logger = Logger(level=level)
        logger.setLevel(level)  # also when Powertools finds its logger set up already (a second Logger)
        logging.getLogger(SERVICE_LOGGER)  # registered now, so the copy below finds it
        copy_config_to_registered_loggers(source_logger=logger, include={SERVICE_LOGGER})
        logging.getLogger(SERVICE_LOGGER).propagate = False  # its lines leave once, through Powertools' handler
        return logger

    @cached_property
    def tracer(self) -> Tracer:
        from aws_lambda_powertools import Tracer

        return Tracer()

    @property
    def tracing(self) -> bool:
        """Whether X-Ray tracing is on (POWERTOOLS_TRACE_DISABLED unset or false). Off, no Tracer is built at all,
        which spares the first invocation the X-Ray SDK's import."""
        return os.environ.get("POWERTOOLS_TRACE_DISABLED", "false").strip().lower() not in ("true", "1", "yes")

    def traced(self, handler: LambdaHandler) -> LambdaHandler:
        return self.tracer.capture_lambda_handler(handler) if self.tracing else handler

    @property
    def metrics(self) -> Metrics:
        """The process's one Metrics, which the operator's counters (`adapters/aws_lambda/metrics.py`) add to."""
        from zengram.adapters.aws_lambda.metrics import shared_metrics

        return shared_metrics()

    def set_correlation_id(self, request_id: str) -> None:
        self.logger.set_correlation_id(request_id)


OBSERVABILITY = LambdaObservability()


class LazyHandler:
    """A handler that builds the real one (Powertools' decorators, Mangum) on its first invocation, or earlier when
    the init is primed (`built`)."""

    def __init__(self, build: Callable[[], LambdaHandler]) -> None:
        self._build = build
        self._built: LambdaHandler | None = None

    def built(self) -> LambdaHandler:
        if self._built is None:
            self._built = self._build()
        return self._built

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        return self.built()(event, context)


def lazily(build: Callable[[], LambdaHandler]) -> LazyHandler:
    return LazyHandler(build)


def _configured_key() -> str:
    """BRAIN_API_KEY when set (tests, simple deployments), else Secrets Manager or SSM (cached)."""
    from zengram.settings import Settings

    settings = Settings()
    if settings.api_key is not None:
        return settings.api_key.get_secret_value()
    if settings.api_key_secret_id or settings.api_key_parameter:
        from zengram.adapters.aws_parameters import fetch_api_key

        return fetch_api_key(secret_id=settings.api_key_secret_id, parameter_name=settings.api_key_parameter)
    raise ApiKeyNotConfigured(
        "the service has no API key configured (BRAIN_API_KEY, ZENGRAM_API_KEY_SECRET_ID or ZENGRAM_API_KEY_PARAMETER)"
    )


def lambda_settings() -> Settings:
    """A function's settings, from its environment. No index write waits behind an answer: Lambda freezes an
    execution environment once it has answered, so work left for after it would wait for the next event."""
    from zengram.settings import Settings

    return Settings().model_copy(update={"index_behind_writes": 0})


def lambda_container() -> Container:
    """The container of a function, from its environment; its LLM calls count failures as a metric."""
    from zengram.adapters.aws_lambda.metrics import MeteredLanguageModel
    from zengram.adapters.factories import build_language_model
    from zengram.assembly.containers import build_container

    settings = lambda_settings()
    return build_container(settings, language_model=MeteredLanguageModel(build_language_model(settings)))


def create_function_app(routers: Sequence[APIRouter], open_paths: Collection[str] | None = None, *,
                        lazy_routers: LazyRouters | None = None) -> FastAPI:
    """The function's app; `open_paths` served without a key (default: the middleware's OPEN_PATHS);
    `lazy_routers`: routers included on the first request under their paths (and when the init is primed)."""
    from zengram.assembly.roles import HOST_ROUTE_ROLES
    from zengram.web.app import create_app
    from zengram.web.middleware import OPEN_PATHS

    app = create_app(routers, ContainerProvider(lambda_container), expected_key=_configured_key,
                     route_roles=HOST_ROUTE_ROLES,
                     open_paths=OPEN_PATHS if open_paths is None else open_paths,
                     verified_caller=caller_from_authorizer, on_request_id=OBSERVABILITY.set_correlation_id)
    return app if lazy_routers is None else lazy_routers.install(app)


def caller_from_authorizer(scope: Scope) -> Principal | None:
    """The caller the API Gateway authorizer verified: its context, in the event Mangum passes on. None when the
    request did not pass through it (a direct invocation, the one open route), so the key is checked here.

    Only API Gateway writes `requestContext.authorizer` (a client controls headers and body, not the context), and
    it invokes a route behind the authorizer only once the authorizer allowed the request."""
    event = scope.get("aws.event")
    context = event.get("requestContext") if isinstance(event, dict) else None
    authorizer = context.get("authorizer") if isinstance(context, dict) else None
    claims = authorizer.get("lambda") if isinstance(authorizer, dict) else None
    return Principal.from_claims(claims) if isinstance(claims, dict) else None


def http_handler(app: FastAPI) -> LambdaHandler:
    """The Lambda entry point for an HTTP API function: Mangum under Powertools logging, tracing, metrics (their
    service name and namespace from the POWERTOOLS_* variables the template sets per function)."""

    def build() -> LambdaHandler:
        from aws_lambda_powertools.logging import correlation_paths
        from mangum import Mangum

        from zengram.adapters.aws_lambda.metrics import record_request

        logger, metrics = OBSERVABILITY.logger, OBSERVABILITY.metrics
        asgi = Mangum(app, lifespan="off")

        @metrics.log_metrics(capture_cold_start_metric=True)
        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            response: dict[str, Any] = asgi(event, context)
            record_request(event.get("routeKey"), response.get("statusCode"))
            return response

        # API Gateway's request id is the correlation id until the app decides the request id (the caller's).
        with_context = logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
        entry_point: LambdaHandler = with_context(OBSERVABILITY.traced(handler))
        return entry_point

    handler = lazily(build)

    def prime() -> None:
        from mangum import Mangum

        from zengram.web.lazy_routes import include_every_router

        handler.built()  # Powertools' Logger, Metrics and (tracing on) the Tracer with the X-Ray SDK
        include_every_router(app)  # every route the function serves, built before the snapshot
        app.state.provider.get()  # the container: settings, boto3 clients, the embedder and search index adapters
        _configured_key()  # the secret, cached
        # The request path (middleware, routing, the error mapper) on an unauthenticated request: answers 401,
        # stores nothing, and is neither logged nor counted as a request.
        Mangum(app, lifespan="off")(PRIMING_REQUEST, cast(Any, PrimingContext()))

    prepare_execution_environment(prime)
    return handler


def function_container() -> ContainerProvider:
    """The container of a function that is not an HTTP app: built from its environment on first use."""
    return ContainerProvider(lambda_container)


PRIMED_INITS = frozenset({"snap-start", "provisioned-concurrency"})
# An unauthenticated request no route answers with a side effect: it runs the middleware and the error mapper.
PRIMING_REQUEST: dict[str, Any] = {
    "version": "2.0", "routeKey": "$default", "rawPath": "/priming", "rawQueryString": "", "headers": {},
    "isBase64Encoded": False,
    "requestContext": {"http": {"method": "GET", "path": "/priming", "protocol": "HTTP/1.1",
                                "sourceIp": "127.0.0.1", "userAgent": "zengram-priming"},
                       "requestId": "priming", "routeKey": "$default", "stage": "$default"},
}


class PrimingContext:
    function_name = "priming"
    aws_request_id = "priming"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def prepare_execution_environment(prime: Callable[[], object]) -> None:
    """Reseeds randomness after every SnapStart restore, and runs `prime` when this init is snapshotted or kept
    warm: the container, clients and secrets it builds are then in memory before the first request. A failure
    while priming is logged and left to the first request (which builds what priming could not)."""
    _register_after_restore(reseed_randomness)
    if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") not in PRIMED_INITS:
        return
    try:
        prime()
    except Exception:
        logger.warning("priming during init failed; the first request builds what it needs", exc_info=True)


def reseed_randomness() -> None:
    """Every environment restored from one snapshot starts with the same `random` state, so retry jitter (botocore,
    the stores' backoff) would move in lockstep. `secrets`, `uuid4` and `os.urandom` read the kernel, which Lambda
    reseeds on restore; `random`'s generator is seeded here from it again."""
    import random

    random.seed()


_registered_after_restore: set[Callable[[], None]] = set()


def _register_after_restore(hook: Callable[[], None]) -> None:
    """Once per process, through the SnapStart runtime hooks (`snapshot_restore_py`, part of Lambda's Python
    runtime); elsewhere (tests, other hosts) there is no restore to hook."""
    if hook in _registered_after_restore:
        return
    try:
        from snapshot_restore_py import register_after_restore
    except ImportError:
        return
    register_after_restore(hook)
    _registered_after_restore.add(hook)


# ---- The API Gateway authorizer ----

def authorizer_handler() -> LambdaHandler:
    """The HTTP API's Lambda REQUEST authorizer (payload 2.0, simple responses; template.yaml `HttpApi.Auth`).

    Verifies the key with `authenticate`, the check the functions' middleware runs, and answers
    `{"isAuthorized": true, "context": <the principal's claims>}` or `{"isAuthorized": false}` (a 403 at the edge;
    API Gateway itself answers 401 when the cached authorizer's header is missing). API Gateway caches the answer
    per key for the authorizer's TTL, so a revocation reaches the edge within it. The key is never logged."""
    def build() -> LambdaHandler:
        logger = OBSERVABILITY.logger

        @logger.inject_lambda_context
        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            presented = key_in_authorizer_event(event)
            principal = verify_presented_key(presented) if presented else None
            logger.info("authorizer verdict", extra={"route": event.get("routeKey"),
                                                      "authorized": principal is not None,
                                                      "key_id": principal.key_id if principal else None})
            if principal is None:
                return {"isAuthorized": False}
            return {"isAuthorized": True, "context": principal.claims()}

        entry_point: LambdaHandler = handler
        return entry_point

    handler = lazily(build)

    def prime() -> None:
        handler.built()
        _key_service()
        _configured_key()

    prepare_execution_environment(prime)
    return handler


def key_in_authorizer_event(event: dict[str, Any]) -> str | None:
    """The key to verify: the identity source's value when the authorizer has one (the exact value API Gateway
    caches the answer under: one header per authorizer), else the first key header the request carries."""
    sources = [value for value in event.get("identitySource") or [] if isinstance(value, str) and value.strip()]
    if sources:
        return bearer_token(sources[0]) or sources[0].strip()
    headers = event.get("headers") or {}
    return presented_key({str(name).lower(): str(value) for name, value in headers.items()})


def verify_presented_key(presented: str) -> Principal | None:
    return authenticate(presented, scoped=_key_service().authenticate, bootstrap_key=_configured_key)


@cache
def _key_service() -> KeyService:
    from zengram.memory.wiring import build_key_service
    from zengram.settings import Settings

    return build_key_service(Settings())
