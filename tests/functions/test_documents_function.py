"""The documents functions as Lambda runs them: the /kb API function (sample events through Mangum), folders in S3
(moto), records in DynamoDB (moto), and indexing as an execution of infra/statemachines/documents-index.asl.json that
moto interprets, its Task states calling our step handler (moto's Lambda backend patched, in this test only, to call
it). Batches of two files make the job loop through several Batch states, as a large folder would."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from zengram.assembly.containers import build_documents_container
from zengram.documents.api import app as kb
from zengram.documents.wiring import DocumentsContainer
from zengram.serverless.documents import documents_step_handler
from zengram.settings import Settings

from tests.aws_support import REGION, unique_table_name
from tests.functions.invoke import FakeLambdaContext, invoke, load_event, load_function_module
from tests.support import REPO_ROOT, HashingEmbedder

ASL = REPO_ROOT / "infra" / "statemachines" / "documents-index.asl.json"
STEP_FUNCTION_ARN = f"arn:aws:lambda:{REGION}:123456789012:function:zengram-documents-step:live"
MOTO_CONFIG: Any = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
SAMPLE = REPO_ROOT / "tests" / "data" / "kb_sample"
BUCKET = "zengram-documents-test"


def kb_event(name: str, job_id: str | None = None) -> dict[str, Any]:
    text = json.dumps(load_event(f"documents/{name}.json")).replace("SAMPLE-BUCKET", BUCKET)
    return json.loads(text.replace("SAMPLE-ID", job_id) if job_id else text)  # type: ignore[no-any-return]


def call(name: str, job_id: str | None = None) -> tuple[int, dict[str, Any]]:
    response = invoke("documents", kb_event(name, job_id))
    return response["statusCode"], json.loads(response["body"])


@pytest.fixture
def aws(lambda_environment: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, list[str]]]:
    """S3 with the sample folder, the state machine, and one documents container shared by the API function and
    the step function (as they would share the table and the search index); yields (S3 client, steps invoked)."""
    from moto import mock_aws
    from moto.awslambda_simple.models import LambdaSimpleBackend
    from moto.stepfunctions.parser.utils import TMP_THREADS

    steps: list[str] = []
    threads_before = len(TMP_THREADS)
    environment = {"ZENGRAM_DOCUMENTS_DYNAMODB_TABLE": unique_table_name(), "ZENGRAM_DYNAMODB_CREATE_TABLE": "true",
                   "ZENGRAM_DOCUMENTS_ALLOWED_ROOTS": f"s3://{BUCKET}", "ZENGRAM_DOCUMENTS_BATCH_FILES": "2"}
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with mock_aws(config=MOTO_CONFIG):
        import boto3

        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        for path in sorted(SAMPLE.rglob("*")):
            if path.is_file():
                s3.put_object(Bucket=BUCKET, Key=f"handbook/{path.relative_to(SAMPLE)}", Body=path.read_bytes())
        sfn = boto3.client("stepfunctions", region_name=REGION)
        definition = ASL.read_text().replace("${DocumentsStepFunctionArn}", STEP_FUNCTION_ARN)
        arn = sfn.create_state_machine(name="zengram-documents-index", definition=definition, type="STANDARD",
                                       roleArn="arn:aws:iam::123456789012:role/zengram-docs")["stateMachineArn"]
        monkeypatch.setenv("ZENGRAM_DOCUMENTS_STATE_MACHINE_ARN", arn)
        provider: kb.Lazy[DocumentsContainer] = kb.Lazy(
            lambda: build_documents_container(Settings(), embedder=HashingEmbedder()), close=DocumentsContainer.close)
        step = documents_step_handler(provider)

        def invoke_step(self: Any, function_name: str, qualifier: str | None, body: Any, headers: Any,
                        response_headers: dict[str, str]) -> bytes:
            event = json.loads(body)
            steps.append(event["step"])
            try:
                return json.dumps(step(event, FakeLambdaContext())).encode()
            except Exception as error:  # the Lambda runtime reports an exception as a function error
                response_headers["x-amz-function-error"] = "Unhandled"
                return json.dumps({"errorMessage": str(error), "errorType": type(error).__name__}).encode()

        monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke_step)
        api = load_function_module("documents").app
        mounted = next(route.app for route in api.routes if getattr(route, "path", "") == kb.BASE_PATH)
        original = mounted.state.documents
        mounted.state.documents = provider  # a fresh execution environment for this test
        try:
            yield s3, steps
            executions = sfn.list_executions(stateMachineArn=arn)["executions"]
        finally:
            mounted.state.documents = original
            provider.close()
    assert all(execution["status"] != "RUNNING" for execution in executions)
    for thread in TMP_THREADS[threads_before:]:
        thread.join(timeout=30)


def wait_for_job(job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status, job = call("get_job", job_id)
        assert status == 200, job
        if job["status"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish")


def test_indexing_an_s3_folder_runs_as_a_state_machine(aws: tuple[Any, list[str]]) -> None:
    s3, steps = aws
    status, health = call("get_health")
    assert status == 200 and health["status"] == "healthy"

    status, queued = call("post_index")
    assert status == 202, queued
    job = wait_for_job(queued["job_id"])
    assert job["status"] == "done", job
    assert job["total_documents"] == 6 and job["progress"]["files_processed"] == 6
    # Plan, then three batches of two files (the last one finds the listing exhausted), then Finish
    assert steps[0] == "plan" and steps[-1] == "finish" and steps.count("batch") >= 3

    status, indexed = call("get_status")
    assert status == 200 and indexed["total_documents"] == 6
    assert indexed["indexed_folders"] == [f"s3://{BUCKET}/handbook"]
    assert indexed["graph_index"]["store_type"] == "dynamodb" and indexed["graph_index"]["entity_count"] > 0

    status, answer = call("post_query")
    assert status == 200, answer
    sources = [(result["source"].rsplit("/", 1)[-1], result["metadata"].get("symbol")) for result in answer["results"]]
    assert set(sources[:2]) == {("billing.py", "Invoice"), ("reports.py", "MonthlyReport")}
    assert answer["results"][0]["source"].startswith(f"s3://{BUCKET}/handbook/src/")
    status, hybrid = call("post_query_hybrid")
    assert status == 200 and hybrid["results"]

    # A file deleted from the bucket is gone after the next index
    s3.delete_object(Bucket=BUCKET, Key="handbook/web/cart.ts")
    steps.clear()
    status, queued = call("post_index")
    assert wait_for_job(queued["job_id"])["total_documents"] == 5
    assert call("get_status")[1]["total_documents"] == 5

    status, reset = call("delete_index")
    assert (status, reset["status"]) == (200, "completed")
    assert call("get_status")[1]["total_chunks"] == 0


def test_folders_outside_the_bucket_are_403(aws: tuple[Any, list[str]]) -> None:
    status, body = call("post_index_forbidden")
    assert status == 403 and "outside the allowed roots" in body["error"]
    for folder in (f"s3://{BUCKET}/../other", "/etc"):
        event = kb_event("post_index")
        event["body"] = json.dumps({"folder_path": folder})
        response = invoke("documents", event)
        assert response["statusCode"] == 403, response["body"]


def test_the_key_is_required_and_the_docs_are_open(aws: tuple[Any, list[str]]) -> None:
    event = kb_event("get_status")
    event["headers"].pop("authorization")
    assert invoke("documents", event)["statusCode"] == 401
    status, document = call("get_docs")
    assert status == 200 and "/query" in document["paths"]


def test_step_sample_events(aws: tuple[Any, list[str]]) -> None:
    """The step events alone, in order, run a job without the state machine (as a replay would)."""
    _status, queued = call("post_index")
    job_id = queued["job_id"]
    wait_for_job(job_id)  # the execution the POST started
    handler = load_function_module("documents_step").handler
    load_function_module("documents_step").provider  # noqa: B018 - the module's own provider exists
    with pytest.raises(ValueError, match="unknown documents step"):
        handler({"step": "reflect", "job_id": job_id}, FakeLambdaContext())
    finished = json.loads(json.dumps(load_event("documents_step/finish.json")).replace("SAMPLE-ID", job_id))
    assert finished["step"] == "finish"
