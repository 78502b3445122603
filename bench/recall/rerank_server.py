"""A re-ranker for measuring the rerank hook offline: POST /rerank in the Cohere shape, scoring each document
by the MiniLM cosine between the query and the document's full text, as (1 + cos) / 2.

Not a cross-encoder (none runs offline here: no torch, no shipped weights). It is the honest scorer this
machine has: the same model as the vector path, over the whole memory text, re-ordering the fused top.
Document vectors are cached by text (the same turns come back for many questions).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
from zengram.adapters.minilm import build_minilm_embedder
from zengram.settings import Settings


class MiniLMScorer:
    def __init__(self, model_cache: Path | None = None) -> None:
        self._embedder = build_minilm_embedder(Settings().minilm_runtime, cache_dir=model_cache)
        self._vectors: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}
        self._lock = threading.Lock()
        self.seconds: list[float] = []  # time spent scoring per request
        self.abandoned = 0  # answers the hook no longer waited for

    def score(self, query: str, documents: list[str]) -> list[float]:
        started = time.perf_counter()
        with self._lock:
            missing = [text for text in dict.fromkeys(documents) if text not in self._vectors]
            if missing:
                self._vectors.update(zip(missing, self._embedder.embed(missing), strict=True))
            query_vector = self._embedder.embed([query])[0]
            scores = [float((1.0 + self._vectors[text] @ query_vector) / 2.0) for text in documents]
        self.seconds.append(time.perf_counter() - started)
        return scores


@contextmanager
def minilm_rerank_server(model_cache: Path | None = None) -> Iterator[tuple[str, MiniLMScorer]]:
    """(the /rerank URL, the scorer) while the server runs on the loopback."""
    scorer = MiniLMScorer(model_cache)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            scores = scorer.score(str(body["query"]), [str(text) for text in body["documents"]])
            payload = json.dumps({"results": [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]})
            try:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload.encode())
            except (BrokenPipeError, ConnectionResetError):  # the hook timed out and kept the fused order
                scorer.abandoned += 1

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/rerank", scorer
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
