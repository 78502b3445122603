"""The Lambda host: one endpoint group per function, wired lazily on the first request.

Nothing here touches the network at import time, so an on-demand cold start only pays for what the first request
needs. An init that is snapshotted (SnapStart) or kept warm (provisioned concurrency) is primed instead: the container
is built and the clients warmed before the snapshot, and randomness is reseeded after each restore (docs/aws-edge.md).

Behind API Gateway, the authorizer (`authorizer_handler`) has verified the caller's key before a function runs and
passes the caller on in the event; the functions take it from there (`caller_from_authorizer`) and verify keys
themselves only when it is absent (a direct invocation).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, cast

from fastapi import APIRouter, FastAPI
from starlette.types import Scope

from zengram.api.app import create_app
from zengram.bootstrap import Container, ContainerProvider, build_container, build_key_service, build_language_model
from zengram.domain.errors import ZengramError
from zengram.domain.keys import Principal, authenticate, bearer_token, presented_key
from zengram.settings import Settings

logger = logging.getLogger(__name__)
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]

REPAIR_TIME_RESERVE_MS = 15_000


class ApiKeyNotConfigured(ZengramError):
    status_code = 503


def _configured_key() -> str:
    """BRAIN_API_KEY when set (tests, simple deployments), else Secrets Manager or SSM (cached)."""
    settings = Settings()
    if settings.api_key is not None:
        return settings.api_key.get_secret_value()
    if settings.api_key_secret_id or settings.api_key_parameter:
        from zengram.adapters.aws_parameters import fetch_api_key

        return fetch_api_key(secret_id=settings.api_key_secret_id, parameter_name=settings.api_key_parameter)
    raise ApiKeyNotConfigured(
        "the service has no API key configured (BRAIN_API_KEY, ZENGRAM_API_KEY_SECRET_ID or ZENGRAM_API_KEY_PARAMETER)"
    )


def lambda_container() -> Container:
    """The container of a function, from its environment; its LLM calls count failures as a metric."""
    from zengram.adapters.aws_lambda.metrics import MeteredLanguageModel

    settings = Settings()
    return build_container(settings, language_model=MeteredLanguageModel(build_language_model(settings)))


def create_function_app(routers: Sequence[APIRouter]) -> FastAPI:
    return create_app(routers, ContainerProvider(lambda_container), expected_key=_configured_key,
                      verified_caller=caller_from_authorizer)


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


def http_handler(app: FastAPI) -> Handler:
    """The Lambda entry point for an HTTP API function: Mangum under Powertools logging, tracing, metrics.

    Logger, Tracer and Metrics take their service name and namespace from the POWERTOOLS_* variables the
    template sets per function. The Tracer (the X-Ray SDK) is built on the first request, or when priming.
    """
    from aws_lambda_powertools import Logger
    from aws_lambda_powertools.logging import correlation_paths
    from mangum import Mangum

    from zengram.adapters.aws_lambda.metrics import record_request, shared_metrics

    logger, metrics = Logger(), shared_metrics()
    asgi = Mangum(app, lifespan="off")

    def serve(event: dict[str, Any], context: Any) -> dict[str, Any]:
        response: dict[str, Any] = asgi(event, context)
        record_request(event.get("routeKey"), response.get("statusCode"))
        return response

    traced = LazilyTraced(serve)

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
    @metrics.log_metrics(capture_cold_start_metric=True)
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return traced(event, context)

    def prime() -> None:
        traced.build()
        app.state.provider.get()
        _configured_key()
        asgi(PRIMING_REQUEST, cast(Any, PrimingContext()))  # the request path: middleware, routing, an error answer

    prepare_execution_environment(prime)
    entry_point: Handler = handler
    return entry_point


class LazilyTraced:
    """A handler under the Powertools Tracer (X-Ray), which is built on the first call, or by `build` when
    priming: importing the X-Ray SDK is about a quarter of a second of init."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._traced: Handler | None = None

    def build(self) -> Handler:
        if self._traced is None:
            from aws_lambda_powertools import Tracer

            self._traced = cast(Handler, Tracer().capture_lambda_handler(self._handler))
        return self._traced

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        return self.build()(event, context)


# ---- Priming: what a snapshotted init does before the snapshot, and what each restore does ----

# AWS_LAMBDA_INITIALIZATION_TYPE of an init whose work outlives it: snapshotted, or kept warm.
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

def authorizer_handler() -> Handler:
    """The HTTP API's Lambda REQUEST authorizer (payload 2.0, simple responses; template.yaml `HttpApi.Auth`).

    Verifies the key with `authenticate`, the check the functions' middleware runs, and answers
    `{"isAuthorized": true, "context": <the principal's claims>}` or `{"isAuthorized": false}` (a 403 at the edge;
    API Gateway itself answers 401 when the cached authorizer's header is missing). API Gateway caches the answer
    per key for the authorizer's TTL, so a revocation reaches the edge within it. The key is never logged."""
    from aws_lambda_powertools import Logger

    logger = Logger()

    @logger.inject_lambda_context
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        presented = key_in_authorizer_event(event)
        principal = verify_presented_key(presented) if presented else None
        logger.info("authorizer verdict", extra={"route": event.get("routeKey"), "authorized": principal is not None,
                                                  "key_id": principal.key_id if principal else None})
        if principal is None:
            return {"isAuthorized": False}
        return {"isAuthorized": True, "context": principal.claims()}

    def prime() -> None:
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
def _key_service() -> Any:
    return build_key_service(Settings())


def repair_handler() -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The scheduled repair sweep: re-indexes records whose index write failed, while time allows, then reports
    the backlog left (what /stats shows as index_health.pending_index) as the PendingIndex metric. An event with
    `"retry_parked": true` (sent by hand: `aws lambda invoke`) first puts the parked records back in the queue."""
    from aws_lambda_powertools import Logger

    from zengram.adapters.aws_lambda.metrics import (
        INDEX_FAILURES,
        PENDING_INDEX,
        RECORDS_PARKED,
        RECORDS_REPAIRED,
        count,
        shared_metrics,
    )
    from zengram.adapters.system import SystemClock

    logger, metrics = Logger(), shared_metrics()
    provider = function_container()
    prepare_execution_environment(provider.get)

    @logger.inject_lambda_context
    @metrics.log_metrics(capture_cold_start_metric=True)
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        container = provider.get()
        index_sync = container.memory.index_sync
        requeued = index_sync.retry_parked() if event.get("retry_parked") is True else 0
        report = index_sync.repair_until_clean(
            keep_going=lambda: context.get_remaining_time_in_millis() > REPAIR_TIME_RESERVE_MS,
            batch=container.settings.index_repair_batch,
        )
        pending = container.store.stats(SystemClock().now(), container.settings.decay_factor).pending_index
        for metric, value in ((RECORDS_REPAIRED, report.indexed), (INDEX_FAILURES, report.failed),
                              (RECORDS_PARKED, report.parked), (PENDING_INDEX, pending)):
            count(metric, value)
        outcome: dict[str, Any] = {"repaired": report.indexed, "failed": report.failed, "parked": report.parked,
                                   "requeued": requeued, "stopped": report.stopped, "pending_index": pending}
        logger.info("repair sweep finished", extra=outcome)
        return outcome

    entry_point: Callable[[dict[str, Any], Any], dict[str, Any]] = handler
    return entry_point


def research_step_handler(provider: ContainerProvider) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """A Task state of the research state machine (infra/statemachines/research.asl.json): one step per call.

    The event is `{"step": "retrieve" | "judge" | "synthesize", "state": <ResearchState>}`; the answer is the next
    state. A step's error (e.g. LLMInvalidResponse) fails the execution under its class name, which the API
    function's runner turns back into the same HTTP status."""
    from aws_lambda_powertools import Logger

    from zengram.adapters.aws_lambda.metrics import shared_metrics
    from zengram.domain.research import ResearchState

    logger = Logger()
    prepare_execution_environment(lambda: provider.get().research)

    @logger.inject_lambda_context
    @shared_metrics().log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        step, state = str(event.get("step")), ResearchState.model_validate(event.get("state"))
        logger.info("research step", extra={"step": step, "iteration": state.iterations,
                                            "memories": len(state.memory_ids)})
        after: dict[str, Any] = provider.get().research.steps.run(step, state).model_dump(mode="json")
        return after

    return handler


def function_container() -> ContainerProvider:
    """The container of a function that is not an HTTP app: built from its environment on first use."""
    return ContainerProvider(lambda_container)


def consolidation_handler(app: FastAPI) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The consolidation function takes three kinds of events: API Gateway requests (the /consolidate routes), a
    job id sent by `LambdaJobLauncher` after an async POST /consolidate (runs that job), and anything else, the
    EventBridge schedule (a run, unless disabled, without LLM, or one is going on)."""
    from aws_lambda_powertools import Logger

    from zengram.adapters.aws_lambda import job_id_of
    from zengram.adapters.aws_lambda.metrics import shared_metrics

    logger = Logger()
    http = http_handler(app)

    @logger.inject_lambda_context
    @shared_metrics().log_metrics
    def background(event: dict[str, Any], context: Any) -> dict[str, Any]:
        provider: ContainerProvider = app.state.provider  # the HTTP app's: one container per execution environment
        consolidation = provider.get().consolidation
        job_id = job_id_of(event)
        job = consolidation.run(job_id) if job_id else consolidation.run_scheduled()
        if job is None:
            return {"skipped": True}
        logger.info("consolidation finished", extra={"job_id": job.id, "status": job.status.value, **job.result})
        return {"job_id": job.id, "status": job.status.value, "result": job.result, "error": job.error}

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        if "requestContext" in event:
            return http(event, context)
        answer: dict[str, Any] = background(event, context)
        return answer

    return handler


BOOTSTRAP_RETRY_SECONDS = 10
BOOTSTRAP_TIME_RESERVE_MS = 30_000


def index_bootstrap_handler() -> Callable[[dict[str, Any], Any], None]:
    """The SearchIndex custom resource of template.yaml, the explicit step that creates the search index.

    Create and Update bind the configured embedding model to the index, creating it (mapping, alias) when there is
    none, and fail the deployment when the index holds another model's vectors (that needs `zengram reindex`).
    Access a deployment has just granted can take a while to apply (Serverless data policies), so other failures
    are retried while time allows. Delete leaves the index alone: it is derived data, the table keeps the records.
    CloudFormation always gets an answer, or the stack would wait an hour for one."""
    from aws_lambda_powertools import Logger

    logger = Logger()

    @logger.inject_lambda_context
    def handler(event: dict[str, Any], context: Any) -> None:
        alias = Settings().opensearch_alias
        status, reason = "SUCCESS", f"search index alias {alias} is ready"
        try:
            if event.get("RequestType") in ("Create", "Update"):
                _bind_index_until_done(context, logger)
        except Exception as error:
            logger.exception("search index bootstrap failed")
            status, reason = "FAILED", f"{type(error).__name__}: {error}"
        _answer_cloudformation(event, status, reason[:1000], physical_id=alias)

    return handler


def _bind_index_until_done(context: Any, logger: Any) -> None:
    import time

    from zengram.domain.errors import EmbeddingMismatch

    while True:
        try:
            build_container(Settings(), check_index=True).close()  # binds the model, creating a missing index
            return
        except EmbeddingMismatch:
            raise
        except Exception as error:
            if context.get_remaining_time_in_millis() < BOOTSTRAP_TIME_RESERVE_MS:
                raise
            logger.warning("search index not ready yet, retrying", extra={"error": f"{type(error).__name__}: {error}"})
            time.sleep(BOOTSTRAP_RETRY_SECONDS)


def _answer_cloudformation(event: dict[str, Any], status: str, reason: str, *, physical_id: str) -> None:
    """PUTs the custom resource's result to the pre-signed URL CloudFormation gave (no content type: it is signed)."""
    import json
    import urllib.request

    body = json.dumps({
        "Status": status, "Reason": reason, "PhysicalResourceId": physical_id,
        "StackId": event["StackId"], "RequestId": event["RequestId"], "LogicalResourceId": event["LogicalResourceId"],
        "Data": {"Alias": physical_id},
    }).encode()
    request = urllib.request.Request(event["ResponseURL"], data=body, method="PUT", headers={"Content-Type": ""})
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
