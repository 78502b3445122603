"""The Lambda host's functions that serve no HTTP route: the scheduled repair sweep, chat learning jobs, research
steps, scheduled consolidation, and the search index's bootstrap (a CloudFormation custom resource).

Each is wired lazily like the HTTP handlers (`zengram.serverless.handlers`), through the same execution
environment's Powertools Logger and Metrics."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zengram.serverless import handlers as host
from zengram.serverless.handlers import (
    LambdaHandler,
    function_container,
    http_handler,
    lazily,
    prepare_execution_environment,
)

if TYPE_CHECKING:
    from fastapi import FastAPI

    from zengram.assembly.provider import ContainerProvider

REPAIR_TIME_RESERVE_MS = 15_000
logger = logging.getLogger(__name__)


def repair_handler() -> LambdaHandler:
    """The scheduled repair sweep: re-indexes records whose index write failed, while time allows, then reports
    the backlog left (what /stats shows as index_health.pending_index) as the PendingIndex metric. An event with
    `"retry_parked": true` (sent by hand: `aws lambda invoke`) first puts the parked records back in the queue."""
    provider = function_container()

    def build() -> LambdaHandler:
        from zengram.adapters.aws_lambda.metrics import (
            INDEX_FAILURES,
            PENDING_INDEX,
            RECORDS_PARKED,
            RECORDS_REPAIRED,
            count,
        )
        from zengram.adapters.system import SystemClock

        logger, metrics = host.OBSERVABILITY.logger, host.OBSERVABILITY.metrics

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
            pending = container.counters.stats(SystemClock().now(), container.settings.decay_factor).pending_index
            for metric, value in ((RECORDS_REPAIRED, report.indexed), (INDEX_FAILURES, report.failed),
                                  (RECORDS_PARKED, report.parked), (PENDING_INDEX, pending)):
                count(metric, value)
            outcome: dict[str, Any] = {"repaired": report.indexed, "failed": report.failed, "parked": report.parked,
                                       "requeued": requeued, "stopped": report.stopped, "pending_index": pending}
            logger.info("repair sweep finished", extra=outcome)
            return outcome

        entry_point: LambdaHandler = handler
        return entry_point

    handler = lazily(build)
    prepare_execution_environment(lambda: (handler.built(), provider.get()))
    return handler


def chat_learning_handler(provider: ContainerProvider) -> LambdaHandler:
    """The chat layer's learning function (docs/chat.md): an event sent by `LambdaLearningDispatch` runs that job;
    anything else (the EventBridge schedule) runs the jobs that are due and indexes chat items left pending."""

    def build() -> LambdaHandler:
        from zengram.adapters.aws_lambda import job_id_of

        logger = host.OBSERVABILITY.logger

        @logger.inject_lambda_context
        @host.OBSERVABILITY.metrics.log_metrics
        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            chat = provider.get().chat
            job_id = job_id_of(event)
            outcome: dict[str, Any]
            if job_id is not None:
                job = chat.learning.run(job_id)
                outcome = {"job_id": job_id, "status": job.status.value if job else "not due"}
            else:
                outcome = {"ran": chat.learning.run_due(), "indexed": chat.repair_index(),
                           "synced": chat.integrations.sync_due()}
            logger.info("chat learning", extra=outcome)
            return outcome

        return handler

    return lazily(build)


def research_step_handler(provider: ContainerProvider) -> LambdaHandler:
    """A Task state of the research state machine (infra/statemachines/research.asl.json): one step per call.

    The event is `{"step": "retrieve" | "judge" | "synthesize", "state": <ResearchState>}`; the answer is the next
    state. A step's error (e.g. LLMInvalidResponse) fails the execution under its class name, which the API
    function's runner turns back into the same HTTP status."""

    def build() -> LambdaHandler:
        from zengram.memory.domain.research import ResearchState

        logger = host.OBSERVABILITY.logger

        @logger.inject_lambda_context
        @host.OBSERVABILITY.metrics.log_metrics
        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            step, state = str(event.get("step")), ResearchState.model_validate(event.get("state"))
            logger.info("research step", extra={"step": step, "iteration": state.iterations,
                                                "memories": len(state.memory_ids)})
            after: dict[str, Any] = provider.get().research.steps.run(step, state).model_dump(mode="json")
            return after

        return handler

    handler = lazily(build)
    prepare_execution_environment(lambda: (handler.built(), provider.get().research))
    return handler


def consolidation_handler(app: FastAPI) -> LambdaHandler:
    """The consolidation function takes three kinds of events: API Gateway requests (the /consolidate routes), a
    job id sent by `LambdaJobLauncher` after an async POST /consolidate (runs that job), and anything else, the
    EventBridge schedule (a run, unless disabled, without LLM, or one is going on)."""
    http = http_handler(app)

    def build() -> LambdaHandler:
        from zengram.adapters.aws_lambda import job_id_of

        logger = host.OBSERVABILITY.logger

        @logger.inject_lambda_context
        @host.OBSERVABILITY.metrics.log_metrics
        def background(event: dict[str, Any], context: Any) -> dict[str, Any]:
            provider: ContainerProvider = app.state.provider  # the HTTP app's: one container per environment
            consolidation = provider.get().consolidation
            job_id = job_id_of(event)
            job = consolidation.run(job_id) if job_id else consolidation.run_scheduled()
            if job is None:
                return {"skipped": True}
            logger.info("consolidation finished", extra={"job_id": job.id, "status": job.status.value, **job.result})
            return {"job_id": job.id, "status": job.status.value, "result": job.result, "error": job.error}

        return background

    background = lazily(build)
    prepare_execution_environment(background.built)  # the HTTP side (and the container) primed by http_handler

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        if "requestContext" in event:
            return http(event, context)
        return background(event, context)

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
    built: list[Callable[[dict[str, Any], Any], None]] = []

    def build() -> Callable[[dict[str, Any], Any], None]:
        from zengram.settings import Settings

        logger = host.OBSERVABILITY.logger

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

    def handler(event: dict[str, Any], context: Any) -> None:
        if not built:
            built.append(build())
        built[0](event, context)

    return handler


def _bind_index_until_done(context: Any, logger: Any) -> None:
    import time

    from zengram.assembly.containers import build_container
    from zengram.kernel.errors import EmbeddingMismatch

    while True:
        try:
            # binds the model, creating a missing index
            build_container(host.lambda_settings(), check_index=True).close()
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


# ---- Priming: what a snapshotted init does before the snapshot, and what each restore does ----

# AWS_LAMBDA_INITIALIZATION_TYPE of an init whose work outlives it: snapshotted, or kept warm.
