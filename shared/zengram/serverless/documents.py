"""The document knowledge base on Lambda: the /kb API function and the indexing state machine's step function.

Nothing here reads the environment or opens a connection at import time; containers build on first use.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zengram.kernel.lazy import Lazy
from zengram.serverless.handlers import OBSERVABILITY, LambdaHandler, create_function_app, lazily

if TYPE_CHECKING:
    from fastapi import FastAPI

    from zengram.assembly.provider import ContainerProvider
    from zengram.documents.services.indexing import DocumentIndexing
    from zengram.documents.wiring import DocumentsContainer
    from zengram.kernel.ports import Embedder

# A batch stops taking new files when its invocation has less than this left (one large file must still fit).
BATCH_TIME_RESERVE_MS = 120_000


def documents_provider(embedder: Callable[[], Embedder] | None = None) -> Lazy[DocumentsContainer]:
    """`embedder`: the memories' embedder, when the function has built one (same settings, same model). The wiring
    and the settings are imported when the container is built, not at init."""

    def build() -> DocumentsContainer:
        from zengram.assembly.containers import build_documents_container
        from zengram.settings import Settings

        return build_documents_container(Settings(), embedder=embedder() if embedder else None)

    return Lazy(build, close=lambda container: container.close())


def create_documents_function_app(provider: Lazy[DocumentsContainer] | None = None) -> FastAPI:
    """The kb application mounted at /kb behind the same key check as every function. The function's container
    (built to verify scoped keys) lends the documents its embedder, so the two never load a model twice."""
    from zengram.documents.api import app as kb
    from zengram.web.middleware import OPEN_PATHS

    app = create_function_app([], open_paths=OPEN_PATHS | kb.open_paths())
    memories: ContainerProvider = app.state.provider
    app.mount(kb.BASE_PATH, kb.create_kb_app(provider or documents_provider(lambda: memories.get().embedder)))
    return app


def documents_step_handler(provider: Lazy[DocumentsContainer]) -> LambdaHandler:
    """A Task state of the documents state machine. Events: `{"step": "plan" | "batch" | "finish" | "fail",
    "job_id": …}` (and `error`/`cause` for fail). Answers carry `job_id`, `wait` and `done` for the Choice states.
    Built on the first invocation, with the environment's one Powertools Logger (as every handler)."""

    def build() -> LambdaHandler:
        logger = OBSERVABILITY.logger

        @logger.inject_lambda_context
        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            step, job_id = str(event.get("step")), str(event.get("job_id"))
            logger.info("documents step", extra={"step": step, "job_id": job_id})
            return run_step(provider.get().indexing, step, job_id, event, context)

        entry_point: LambdaHandler = OBSERVABILITY.traced(handler)
        return entry_point

    return lazily(build)


def run_step(indexing: DocumentIndexing, step: str, job_id: str, event: dict[str, Any],
             context: Any) -> dict[str, Any]:
    if step == "plan":
        started = indexing.plan(job_id)
        waiting = not started and indexing.is_waiting(job_id)
        return {"job_id": job_id, "wait": waiting, "done": not started and not waiting}
    if step == "batch":
        result = indexing.run_batch(
            job_id, keep_going=lambda: context.get_remaining_time_in_millis() > BATCH_TIME_RESERVE_MS)
        return {"job_id": job_id, "wait": False, "done": result.done,
                "files_processed": result.job.progress.files_processed}
    if step == "finish":
        job = indexing.finish(job_id)
        return {"job_id": job_id, "wait": False, "done": True, "status": job.status.value}
    if step == "fail":
        error = f"{event.get('error', 'failed')}: {str(event.get('cause', ''))[:500]}"
        job = indexing.fail(job_id, error)
        return {"job_id": job_id, "wait": False, "done": True, "status": job.status.value}
    raise ValueError(f"unknown documents step {step!r}")


def documents_watch_handler(provider: Lazy[DocumentsContainer]) -> LambdaHandler:
    """The AWS side of watched folders (`watch_mode: auto`): the documents bucket sends its object events to
    EventBridge; a rule puts `Object Created` / `Object Deleted` into the watch queue, whose batching window is the
    debounce; this function takes a batch and queues one re-index per watched folder that changed (an identical
    job still pending absorbs it). A direct EventBridge event is taken too."""

    def build() -> LambdaHandler:
        logger = OBSERVABILITY.logger

        @logger.inject_lambda_context
        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            answer = watch_changes(provider.get(), event)
            logger.info("documents watch", extra=answer)
            return answer

        entry_point: LambdaHandler = OBSERVABILITY.traced(handler)
        return entry_point

    return lazily(build)


def watch_changes(container: DocumentsContainer, event: dict[str, Any]) -> dict[str, Any]:
    watching = container.watching
    if watching is None:
        return {"changed_folders": [], "queued_jobs": []}
    watching.refresh()
    folders = watching.changed(changed_objects(event))
    queued = watching.run_due(immediately=True)  # the queue's batching window was the debounce
    return {"changed_folders": folders, "queued_jobs": [enqueued.job.id for enqueued in queued]}


def changed_objects(event: dict[str, Any]) -> list[str]:
    """`s3://bucket/key` of each S3 object event in an SQS batch of EventBridge events (or in one such event)."""
    bodies: list[Any] = [event] if "detail" in event else []
    for record in event.get("Records") or []:
        try:
            bodies.append(json.loads(record.get("body") or "{}"))
        except (TypeError, ValueError, AttributeError):
            continue  # not an EventBridge event: nothing to watch in it
    paths = []
    for body in bodies:
        detail = body.get("detail") if isinstance(body, dict) else None
        if not isinstance(detail, dict):
            continue
        bucket = (detail.get("bucket") or {}).get("name")
        key = (detail.get("object") or {}).get("key")
        if isinstance(bucket, str) and isinstance(key, str) and bucket and key:
            paths.append(f"s3://{bucket}/{key}")
    return paths
