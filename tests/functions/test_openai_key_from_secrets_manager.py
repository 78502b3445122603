"""With Embedder=openai the functions read the OpenAI key from Secrets Manager at run time (the template names the
secret, never its value): the key reaches the embeddings endpoint, and the environment holds only the secret's name."""

from __future__ import annotations

import uuid

import pytest
from zengram.adapters.factories import build_embedder
from zengram.settings import Settings

from tests.aws_support import REGION, dynamodb_endpoint
from tests.unit.test_openai_embedder import FakeEmbeddingsServer, base_url, fake  # noqa: F401 - fixtures


def openai_key_secret(value: str) -> str:
    import boto3

    client = boto3.client("secretsmanager", endpoint_url=dynamodb_endpoint(), region_name=REGION,
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    name = f"zengram-openai-key-{uuid.uuid4().hex[:8]}"  # a new name each time: Powertools caches by name
    client.create_secret(Name=name, SecretString=value)
    return name


def test_the_embedder_uses_the_key_kept_in_secrets_manager(lambda_environment: str, base_url: str,  # noqa: F811
                                                           fake: FakeEmbeddingsServer,  # noqa: F811
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    key = f"sk-from-secrets-manager-{uuid.uuid4().hex[:6]}"
    for name in ("OPENAI_API_KEY", "ZENGRAM_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {"AWS_DEFAULT_REGION": REGION, "AWS_ENDPOINT_URL_SECRETS_MANAGER": dynamodb_endpoint(),
                        "ZENGRAM_EMBEDDER": "openai", "ZENGRAM_OPENAI_API_KEY_SECRET_ID": openai_key_secret(key),
                        "OPENAI_BASE_URL": base_url, "ZENGRAM_EMBEDDING_DIMENSIONS": "8"}.items():
        monkeypatch.setenv(name, value)

    build_embedder(Settings()).embed(["what replaced the cache?"])

    assert fake.authorizations == [f"Bearer {key}"]


def test_without_a_key_or_a_secret_the_openai_embedder_refuses_to_start(lambda_environment: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ZENGRAM_OPENAI_API_KEY", "ZENGRAM_OPENAI_API_KEY_SECRET_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ZENGRAM_EMBEDDER", "openai")
    with pytest.raises(ValueError, match="ZENGRAM_OPENAI_API_KEY_SECRET_ID"):
        build_embedder(Settings())
