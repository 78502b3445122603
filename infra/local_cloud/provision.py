"""What CloudFormation creates before the functions run, created on moto's server the way the stack does: the API key
secret, the tables, the documents bucket; then the search index, by the template's own custom resource (the
IndexBootstrapFunction in its container, sent CloudFormation's Create event, answering on a pre-signed S3 URL)."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from typing import Any

REGION = "us-east-1"
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
# Names as SAM local resolves `!Ref` of these resources (their logical ids), so the functions need no override.
API_KEY_SECRET = "ApiKeySecret"
MEMORY_TABLE = "MemoryTable"
DOCUMENTS_TABLE = "DocumentsTable"
# Beside them, what the local cloud adds: the key of the local embeddings server, the documents bucket (SAM local
# would name it DocumentsBucket, which S3 refuses: upper case), the CloudFormation answers.
OPENAI_KEY_SECRET = "zengram-local-openai-key"
DOCUMENTS_BUCKET = "zengram-local-documents"
RESPONSES_BUCKET = "zengram-local-cfn-responses"


def client(service: str, endpoint: str) -> Any:
    import boto3

    return boto3.session.Session(region_name=REGION, **CREDENTIALS).client(service, endpoint_url=endpoint)


def put_secret(secrets: Any, name: str, value: str) -> None:
    try:
        secrets.create_secret(Name=name, SecretString=value)
    except secrets.exceptions.ResourceExistsException:
        secrets.put_secret_value(SecretId=name, SecretString=value)


def create_resources(moto_url: str, api_key: str) -> None:
    from zengram.adapters.dynamodb import documents, schema

    secrets = client("secretsmanager", moto_url)
    put_secret(secrets, API_KEY_SECRET, api_key)
    put_secret(secrets, OPENAI_KEY_SECRET, "local-embeddings-need-no-key")
    dynamodb = client("dynamodb", moto_url)
    schema.ensure_table(dynamodb, MEMORY_TABLE)
    documents.ensure_table(dynamodb, DOCUMENTS_TABLE)
    s3 = client("s3", moto_url)
    for bucket in (DOCUMENTS_BUCKET, RESPONSES_BUCKET):
        with contextlib.suppress(s3.exceptions.BucketAlreadyOwnedByYou, s3.exceptions.BucketAlreadyExists):
            s3.create_bucket(Bucket=bucket)


def answer_url(container_moto_url: str) -> tuple[str, str]:
    """A pre-signed S3 PUT URL (on moto, as a container reaches it) for a custom resource's answer: (url, key)."""
    key = f"answers/{uuid.uuid4()}"
    url = client("s3", container_moto_url).generate_presigned_url(
        "put_object", Params={"Bucket": RESPONSES_BUCKET, "Key": key}, ExpiresIn=3600)
    return url, key


def read_answer(moto_url: str, key: str, *, wait: float = 10.0) -> dict[str, Any]:
    """The answer a custom resource PUT to `answer_url`'s URL."""
    s3 = client("s3", moto_url)
    deadline = time.monotonic() + wait
    while True:
        try:
            answer: dict[str, Any] = json.loads(s3.get_object(Bucket=RESPONSES_BUCKET, Key=key)["Body"].read())
            return answer
        except s3.exceptions.NoSuchKey:
            if time.monotonic() > deadline:
                raise RuntimeError("the custom resource sent CloudFormation no answer") from None
            time.sleep(0.5)


def custom_resource_event(request_type: str, response_url: str, stage: str) -> dict[str, Any]:
    """CloudFormation's request to the SearchIndex custom resource (template.yaml), with the local embedder."""
    stack_id = f"arn:aws:cloudformation:{REGION}:123456789012:stack/zengram-local/{uuid.uuid4()}"
    return {"RequestType": request_type, "ServiceToken": "IndexBootstrapFunction", "ResponseURL": response_url,
            "StackId": stack_id, "RequestId": str(uuid.uuid4()), "LogicalResourceId": "SearchIndex",
            "ResourceType": "Custom::ZengramSearchIndex", "PhysicalResourceId": f"zengram-{stage}-memories",
            "ResourceProperties": {"Alias": f"zengram-{stage}-memories", "Embedder": "openai",
                                   "Dimensions": "384", "DataAccessPolicy": "none"}}


def bootstrap_search_index(moto_url: str, container_moto_url: str, lambda_url: str, stage: str) -> dict[str, Any]:
    """Runs the SearchIndex custom resource: Invoke of IndexBootstrapFunction through `sam local start-lambda` with
    CloudFormation's Create event; the function PUTs its answer to a pre-signed URL (on moto's S3, which the
    container reaches by `container_moto_url`). Returns that answer; raises unless it is SUCCESS."""
    import boto3
    from botocore.config import Config

    url, key = answer_url(container_moto_url)
    lambdas = boto3.session.Session(region_name=REGION, **CREDENTIALS).client(
        "lambda", endpoint_url=lambda_url,
        config=Config(read_timeout=330, connect_timeout=10, retries={"total_max_attempts": 1}))
    invoked = lambdas.invoke(FunctionName="IndexBootstrapFunction",
                             Payload=json.dumps(custom_resource_event("Create", url, stage)).encode())
    if invoked.get("FunctionError"):
        raise RuntimeError(f"the index bootstrap failed: {invoked['Payload'].read().decode()[:2000]}")
    answer = read_answer(moto_url, key)
    if answer.get("Status") != "SUCCESS":
        raise RuntimeError(f"the index bootstrap answered {answer.get('Status')}: {answer.get('Reason')}")
    return answer
