"""The `Reranker` port over HTTP: any server with a `/rerank` endpoint in one of the two common shapes.

- "cohere" (Cohere, Jina, Infinity, vLLM, text-embeddings-router): POST `{model?, query, documents,
  return_documents: false}` → `{results: [{index, relevance_score}]}`.
- "tei" (Hugging Face text-embeddings-inference): POST `{query, texts, raw_scores: false}` → `[{index, score}]`.

Answers are read leniently, as upstream Zengram does: a bare list or a `results` list, `relevance_score` or
`score`, `index` or `document.index`, so a server of the other shape still works.

Standard library only (urllib): one small POST per search needs no client library, and the Lambda layer carries
none of its own for it.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any, Literal, TypeGuard

from zengram.memory.domain.rerank import DEFAULT_RERANK

__all__ = ["HttpReranker", "RerankAnswerError", "RerankError", "parse_rerank_answer"]

RerankApi = Literal["cohere", "tei"]
_QUOTED_CHARS = 200


class RerankError(RuntimeError):
    """The re-ranker could not be asked (unreachable, timed out) or answered with an error status."""


class RerankAnswerError(RerankError):
    """The server answered, but not with scores this adapter can read."""


class HttpReranker:
    """Sends at most `max_batch` documents per request (servers cap their batch, TEI at 32 by default) and
    merges the chunks: a cross-encoder scores each pair on its own, so chunking changes no score. All of one
    call's requests share one `timeout` (seconds). Thread-safe (no state between calls)."""

    def __init__(self, url: str, *, api: RerankApi = "cohere", model: str | None = None,
                 api_key: str | None = None, timeout: float = DEFAULT_RERANK.timeout_seconds,
                 max_batch: int = DEFAULT_RERANK.max_batch) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._url = url
        self._api = api
        self._model = model or None
        self._timeout = timeout
        self._max_batch = max_batch
        self._headers = {"content-type": "application/json", "accept": "application/json"}
        if api_key:
            self._headers["authorization"] = f"Bearer {api_key}"

    def describe(self) -> str:
        model = f" model={self._model}" if self._model else ""
        return f"http({self._api}) {self._url}{model} max_batch={self._max_batch}"

    def rerank(self, query: str, documents: Sequence[str]) -> dict[int, float]:
        deadline = time.monotonic() + self._timeout
        scores: dict[int, float] = {}
        for start in range(0, len(documents), self._max_batch):
            chunk = documents[start:start + self._max_batch]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RerankError(f"rerank: timed out after {start} of {len(documents)} documents")
            for index, score in self._score_chunk(query, chunk, remaining).items():
                scores[start + index] = score
        return scores

    def close(self) -> None:
        """Nothing is held between calls."""

    def _score_chunk(self, query: str, documents: Sequence[str], timeout: float) -> dict[int, float]:
        body: dict[str, Any]
        if self._api == "tei":
            body = {"query": query, "texts": list(documents), "raw_scores": False}
        else:
            body = {"query": query, "documents": list(documents), "return_documents": False}
            if self._model:
                body["model"] = self._model
        request = urllib.request.Request(self._url, data=json.dumps(body).encode(), headers=self._headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                text = response.read().decode("utf-8", errors="replace")
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", errors="replace")[:_QUOTED_CHARS]
            raise RerankError(f"rerank: HTTP {error.code}: {detail}") from error
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            raise RerankError(f"rerank: {self._url} unreachable or too slow: {error}") from error
        try:
            answer = json.loads(text)
        except ValueError as error:
            raise RerankAnswerError(f"rerank: not JSON: {text[:_QUOTED_CHARS]}") from error
        return parse_rerank_answer(answer, len(documents))


def parse_rerank_answer(answer: object, documents: int) -> dict[int, float]:
    """position → score from either shape; rows without a usable index and score are skipped, and an answer
    with none at all is an error (so that a wrong endpoint never passes for a re-ranker that liked nothing)."""
    rows = answer if isinstance(answer, list) else answer.get("results") if isinstance(answer, dict) else None
    if not isinstance(rows, list):
        raise RerankAnswerError(f"rerank: unexpected answer: {str(answer)[:_QUOTED_CHARS]}")
    scores: dict[int, float] = {}
    for row in rows:
        if not isinstance(row, dict):
            continue
        index = row.get("index")
        if index is None and isinstance(row.get("document"), dict):
            index = row["document"].get("index")
        score = row.get("relevance_score", row.get("score"))
        if _is_int(index) and 0 <= index < documents and _is_number(score):
            scores[index] = float(score)
    if not scores:
        raise RerankAnswerError(f"rerank: no usable {{index, score}} rows: {str(answer)[:_QUOTED_CHARS]}")
    return scores


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value  # not NaN
