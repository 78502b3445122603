"""The Lambda host: one endpoint group per function, wired lazily on the first request.

Nothing here reads the environment or touches the network at import time, so a cold start only pays
for what the first request needs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import APIRouter, FastAPI

from zengram.api.app import create_app
from zengram.bootstrap import ContainerProvider, build_container
from zengram.domain.errors import ZengramError
from zengram.settings import Settings

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


def create_function_app(routers: Sequence[APIRouter]) -> FastAPI:
    provider = ContainerProvider(lambda: build_container(Settings()))
    return create_app(routers, provider, expected_key=_configured_key)


def http_handler(app: FastAPI) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The Lambda entry point for an HTTP API function: Mangum under Powertools logging, tracing, metrics.

    Logger, Tracer and Metrics take their service name and namespace from the POWERTOOLS_* variables the
    template sets per function.
    """
    from aws_lambda_powertools import Logger, Metrics, Tracer
    from aws_lambda_powertools.logging import correlation_paths
    from mangum import Mangum

    logger, tracer, metrics = Logger(), Tracer(), Metrics()
    asgi = Mangum(app, lifespan="off")

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
    @tracer.capture_lambda_handler
    @metrics.log_metrics(capture_cold_start_metric=True)
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        response: dict[str, Any] = asgi(event, context)
        return response

    return handler


def repair_handler() -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The scheduled repair sweep: re-indexes records whose index write failed, while time allows. An event with
    `"retry_parked": true` (sent by hand: `aws lambda invoke`) first puts the parked records back in the queue."""
    from aws_lambda_powertools import Logger, Metrics
    from aws_lambda_powertools.metrics import MetricUnit

    logger, metrics = Logger(), Metrics()
    provider = function_container()

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
        metrics.add_metric(name="RecordsRepaired", unit=MetricUnit.Count, value=report.indexed)
        metrics.add_metric(name="IndexFailures", unit=MetricUnit.Count, value=report.failed)
        metrics.add_metric(name="RecordsParked", unit=MetricUnit.Count, value=report.parked)
        outcome: dict[str, Any] = {"repaired": report.indexed, "failed": report.failed, "parked": report.parked,
                                   "requeued": requeued, "stopped": report.stopped}
        logger.info("repair sweep finished", extra=outcome)
        return outcome

    entry_point: Callable[[dict[str, Any], Any], dict[str, Any]] = handler
    return entry_point


def chat_learning_handler(provider: ContainerProvider) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The chat layer's learning function (docs/chat.md): an event sent by `LambdaLearningDispatch` runs that job;
    anything else (the EventBridge schedule) runs the jobs that are due and indexes chat items left pending."""
    from aws_lambda_powertools import Logger

    from zengram.adapters.aws_lambda import job_id_of

    logger = Logger()

    @logger.inject_lambda_context
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        chat = provider.get().chat
        job_id = job_id_of(event)
        outcome: dict[str, Any]
        if job_id is not None:
            job = chat.learning.run(job_id)
            outcome = {"job_id": job_id, "status": job.status.value if job else "not due"}
        else:
            outcome = {"ran": chat.learning.run_due(), "indexed": chat.repair_index()}
        logger.info("chat learning", extra=outcome)
        return outcome

    entry_point: Callable[[dict[str, Any], Any], dict[str, Any]] = handler
    return entry_point


def research_step_handler(provider: ContainerProvider) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """A Task state of the research state machine (infra/statemachines/research.asl.json): one step per call.

    The event is `{"step": "retrieve" | "judge" | "synthesize", "state": <ResearchState>}`; the answer is the next
    state. A step's error (e.g. LLMInvalidResponse) fails the execution under its class name, which the API
    function's runner turns back into the same HTTP status."""
    from aws_lambda_powertools import Logger

    from zengram.domain.research import ResearchState

    logger = Logger()

    @logger.inject_lambda_context
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        step, state = str(event.get("step")), ResearchState.model_validate(event.get("state"))
        logger.info("research step", extra={"step": step, "iteration": state.iterations,
                                            "memories": len(state.memory_ids)})
        after: dict[str, Any] = provider.get().research.steps.run(step, state).model_dump(mode="json")
        return after

    return handler


def function_container() -> ContainerProvider:
    """The container of a function that is not an HTTP app: built from its environment on first use."""
    return ContainerProvider(lambda: build_container(Settings()))


def consolidation_handler(app: FastAPI) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The consolidation function takes three kinds of events: API Gateway requests (the /consolidate routes), a
    job id sent by `LambdaJobLauncher` after an async POST /consolidate (runs that job), and anything else, the
    EventBridge schedule (a run, unless disabled, without LLM, or one is going on)."""
    from aws_lambda_powertools import Logger

    from zengram.adapters.aws_lambda import job_id_of

    logger = Logger()
    http = http_handler(app)

    @logger.inject_lambda_context
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
        return background(event, context)

    return handler
