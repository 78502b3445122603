"""Watched folders on AWS, end to end on moto: the documents bucket sends its object events to EventBridge (the
template's `EventBridgeConfiguration`), the template's rule routes `Object Created` / `Object Deleted` of the bucket
into the watch queue, and the watch function takes the queue's batch and queues the re-index, which runs as the
documents state machine (moto interprets it; see test_documents_function.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from zengram.documents.api import app as kb
from zengram.serverless.documents import changed_objects, documents_watch_handler

from tests.aws_support import REGION
from tests.functions.invoke import FakeLambdaContext, invoke, load_function_module
from tests.functions.test_documents_function import BUCKET, aws, kb_event, wait_for_job
from tests.support import REPO_ROOT

__all__ = ["aws"]  # the fixture, shared with the documents function's tests
TEMPLATE = REPO_ROOT / "template.yaml"


def post(name: str, body: dict[str, Any] | None = None, path: str | None = None) -> tuple[int, dict[str, Any]]:
    event = kb_event(name)
    if body is not None:
        event["body"] = json.dumps(body)
    if path is not None:
        event["rawPath"] = event["requestContext"]["http"]["path"] = path
    response = invoke("documents", event)
    return response["statusCode"], json.loads(response["body"])


def the_rule_pattern() -> dict[str, Any]:
    """The watch rule's event pattern as the template writes it, with the bucket's name filled in."""
    from tests.infra.template_model import load_template

    rule = load_template()["Resources"]["DocumentsWatchRule"]["Properties"]
    pattern: dict[str, Any] = json.loads(json.dumps(rule["EventPattern"]).replace('{"Ref": "DocumentsBucket"}',
                                                                                  json.dumps(BUCKET)))
    return pattern


@pytest.fixture
def watch(aws: tuple[Any, list[str]]) -> Any:
    """The bucket's EventBridge notifications, the rule into a queue, and a function that drains the queue into the
    watch handler (as the SQS event source mapping would); returns that function."""
    import boto3

    s3, _steps = aws
    s3.put_bucket_notification_configuration(Bucket=BUCKET,
                                             NotificationConfiguration={"EventBridgeConfiguration": {}})
    sqs = boto3.client("sqs", region_name=REGION)
    queue = sqs.create_queue(QueueName="zengram-documents-watch")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events = boto3.client("events", region_name=REGION)
    events.put_rule(Name="documents-watch", EventPattern=json.dumps(the_rule_pattern()))
    events.put_targets(Rule="documents-watch", Targets=[{"Id": "queue", "Arn": queue_arn}])
    api = load_function_module("documents").app
    mounted = next(route.app for route in api.routes if getattr(route, "path", "") == kb.BASE_PATH)
    handler = documents_watch_handler(mounted.state.documents)

    def drain() -> dict[str, Any]:
        messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
        for message in messages:
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
        batch = {"Records": [{"messageId": message["MessageId"], "body": message["Body"], "eventSource": "aws:sqs"}
                             for message in messages]}
        answer: dict[str, Any] = handler(batch, FakeLambdaContext())
        return answer

    return drain


def bm25(text: str) -> list[str]:
    status, answer = post("post_query", {"query": text, "mode": "bm25", "top_k": 10})
    assert status == 200, answer
    return [result["source"] for result in answer["results"]]


def test_a_change_in_a_watched_bucket_folder_is_indexed(aws: tuple[Any, list[str]], watch: Any) -> None:
    s3, _steps = aws
    status, queued = post("post_index", {"folder_path": f"s3://{BUCKET}/handbook", "include_code": True,
                                         "watch_mode": "auto", "watch_debounce_seconds": 5})
    assert status == 202, queued
    assert wait_for_job(queued["job_id"])["status"] == "done"
    assert watch()["queued_jobs"] == []  # indexing itself changes nothing in the bucket
    status, folders = post("get_status", path="/kb/index/folders")
    assert status == 200, folders
    assert [(folder["watch_mode"], folder["watch_debounce_seconds"]) for folder in folders["folders"]] == [("auto", 5)]

    s3.put_object(Bucket=BUCKET, Key="handbook/docs/quokka.txt", Body=b"# Quokkas\n\nQuokkas live on Rottnest.\n")
    s3.put_object(Bucket=BUCKET, Key="elsewhere/ignored.txt", Body=b"# Ignored\n\nNot under a watched folder.\n")
    drained = watch()
    assert drained["changed_folders"] == [f"s3://{BUCKET}/handbook"] and len(drained["queued_jobs"]) == 1
    status, job = post("get_job", path=f"/kb/index/jobs/{drained['queued_jobs'][0]}")
    assert job["source"] == "auto"
    assert wait_for_job(drained["queued_jobs"][0])["total_documents"] == 7
    assert f"s3://{BUCKET}/handbook/docs/quokka.txt" in bm25("quokkas rottnest")

    s3.delete_object(Bucket=BUCKET, Key="handbook/docs/quokka.txt")
    drained = watch()
    assert len(drained["queued_jobs"]) == 1
    assert wait_for_job(drained["queued_jobs"][0])["total_documents"] == 6
    assert not [source for source in bm25("quokkas rottnest") if source.endswith("quokka.txt")]

    # Watching turned off: the bucket's events queue nothing
    status, queued = post("post_index", {"folder_path": f"s3://{BUCKET}/handbook", "include_code": True,
                                         "watch_mode": "off"})
    wait_for_job(queued["job_id"])
    s3.put_object(Bucket=BUCKET, Key="handbook/docs/late.txt", Body=b"# Late\n")
    assert watch() == {"changed_folders": [], "queued_jobs": []}


def test_events_that_are_not_s3_object_events_are_skipped() -> None:
    s3_event = {"detail-type": "Object Created", "source": "aws.s3",
                "detail": {"bucket": {"name": "b"}, "object": {"key": "docs/a.txt"}}}
    batch = {"Records": [{"body": json.dumps(s3_event)}, {"body": "not json"}, {"body": json.dumps({"x": 1})},
                         {"body": json.dumps({"detail": {"bucket": {"name": "b"}}})}]}
    assert changed_objects(batch) == ["s3://b/docs/a.txt"]
    assert changed_objects(s3_event) == ["s3://b/docs/a.txt"]
    assert changed_objects({}) == []
