"""The Bedrock Titan v2 embedder, against botocore's Stubber (exact request parameters, canned answers)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import boto3
import numpy as np
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber
from zengram.adapters.bedrock import BedrockEmbedder

MODEL = "amazon.titan-embed-text-v2:0"


def answer(vector: list[float]) -> dict[str, Any]:
    payload = json.dumps({"embedding": vector, "inputTextTokenCount": 3}).encode()
    return {"body": StreamingBody(io.BytesIO(payload), len(payload)), "contentType": "application/json"}


def expected(text: str, dimensions: int = 256) -> dict[str, Any]:
    return {"modelId": MODEL, "contentType": "application/json", "accept": "application/json",
            "body": json.dumps({"inputText": text, "dimensions": dimensions, "normalize": True})}


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def test_one_text_is_one_invoke_with_normalised_output(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_response("invoke_model", answer([3.0, 4.0] + [0.0] * 254), expected("Acme ships on Fridays"))
    embedder = BedrockEmbedder(model_id=MODEL, dimensions=256, client=client)
    vectors = embedder.embed(["Acme ships on Fridays"])
    assert vectors.shape == (1, 256) and vectors.dtype == np.float32
    assert vectors[0][:2].tolist() == pytest.approx([0.6, 0.8])
    assert embedder.model_id == f"bedrock:{MODEL}:256"


def test_batches_keep_input_order_and_empty_text_is_sent_as_a_space(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    embedder = BedrockEmbedder(model_id=MODEL, dimensions=256, client=client, parallel_calls=1)
    for position, text in enumerate(["first", "", "third"]):
        vector = [0.0] * 256
        vector[position] = 1.0
        stubber.add_response("invoke_model", answer(vector), expected(text or " "))
    vectors = embedder.embed(["first", "", "third"])
    assert [int(np.argmax(row)) for row in vectors] == [0, 1, 2]
    assert embedder.embed([]).shape == (0, 256)


def test_a_wrong_vector_size_is_a_clear_error(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_response("invoke_model", answer([1.0] * 512), expected("x"))
    with pytest.raises(ValueError, match="512 dimensions"):
        BedrockEmbedder(model_id=MODEL, dimensions=256, client=client).embed(["x"])


def test_unsupported_titan_dimensions_are_refused() -> None:
    with pytest.raises(ValueError, match="256, 512, 1024"):
        BedrockEmbedder(model_id=MODEL, dimensions=384)
