"""LambdaJobLauncher against botocore's Stubber: the exact Invoke request, and a refusal surfacing as an error."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("boto3")

import boto3
from botocore.stub import Stubber
from zengram.adapters.aws_lambda import LambdaJobLauncher, job_id_of


def stubbed_client() -> tuple[object, Stubber]:
    client = boto3.session.Session().client("lambda", region_name="eu-west-1", aws_access_key_id="testing",
                                            aws_secret_access_key="testing")
    return client, Stubber(client)


def never_here(job_id: str) -> None:
    raise AssertionError("the Lambda launcher must not run the job in this process")


def test_launch_invokes_the_function_asynchronously_with_the_job_id() -> None:
    client, stubber = stubbed_client()
    stubber.add_response("invoke", {"StatusCode": 202}, expected_params={
        "FunctionName": "zengram-consolidate:live", "InvocationType": "Event",
        "Payload": json.dumps({"zengram_job_id": "job-1"}).encode()})
    with stubber:
        LambdaJobLauncher("zengram-consolidate:live", client=client).launch("job-1", never_here)
    stubber.assert_no_pending_responses()
    assert job_id_of({"zengram_job_id": "job-1"}) == "job-1"
    assert job_id_of({"detail-type": "Scheduled Event"}) is None


def test_a_refused_invocation_raises() -> None:
    client, stubber = stubbed_client()
    stubber.add_client_error("invoke", service_error_code="ResourceNotFoundException", http_status_code=404)
    with stubber, pytest.raises(Exception, match="ResourceNotFoundException"):
        LambdaJobLauncher("zengram-consolidate:live", client=client).launch("job-1", never_here)
