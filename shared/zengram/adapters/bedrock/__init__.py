"""Amazon Bedrock Titan Text Embeddings v2 as the `Embedder` port (keeps the model out of the Lambda layer)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

TITAN_V2_DIMENSIONS = (256, 512, 1024)


class BedrockEmbedder:
    """Titan v2 embeds one text per call, so batches fan out over a few threads."""

    def __init__(
        self,
        *,
        model_id: str = "amazon.titan-embed-text-v2:0",
        dimensions: int = 1024,
        region: str | None = None,
        client: Any | None = None,
        parallel_calls: int = 4,
    ) -> None:
        if "titan-embed-text-v2" in model_id and dimensions not in TITAN_V2_DIMENSIONS:
            raise ValueError(f"Titan Text Embeddings v2 supports dimensions {TITAN_V2_DIMENSIONS}, not {dimensions}")
        self._bedrock_model = model_id
        self._dimensions = dimensions
        self._region = region
        self._client = client
        self._parallel_calls = parallel_calls

    @property
    def model_id(self) -> str:
        return f"bedrock:{self._bedrock_model}:{self._dimensions}"

    @property
    def dimension(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = np.empty((len(texts), self._dimensions), dtype=np.float32)
        if not texts:
            return vectors
        if len(texts) == 1:
            vectors[0] = self._embed_one(texts[0])
            return vectors
        with ThreadPoolExecutor(max_workers=self._parallel_calls) as pool:
            for row, vector in enumerate(pool.map(self._embed_one, texts)):
                vectors[row] = vector
        return vectors

    def _embed_one(self, text: str) -> npt.NDArray[np.float32]:
        body = {"inputText": text or " ", "dimensions": self._dimensions, "normalize": True}
        response = self._bedrock().invoke_model(
            modelId=self._bedrock_model, body=json.dumps(body), contentType="application/json",
            accept="application/json",
        )
        vector = np.asarray(json.loads(response["body"].read())["embedding"], dtype=np.float32)
        if vector.shape != (self._dimensions,):
            raise ValueError(f"Bedrock returned {vector.shape[0]} dimensions; {self._dimensions} configured")
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector

    def _bedrock(self) -> Any:
        if self._client is None:
            import boto3  # type: ignore[import-untyped]
            from botocore.config import Config  # type: ignore[import-untyped]

            self._client = boto3.client(
                "bedrock-runtime", region_name=self._region,
                config=Config(retries={"mode": "adaptive", "max_attempts": 8}),
            )
        return self._client
