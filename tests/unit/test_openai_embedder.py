"""The OpenAI embedder, driving the real SDK against a fake embeddings server on the loopback."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest
from zengram.adapters.openai import MAX_INPUTS_PER_REQUEST, OpenAIEmbedder
from zengram.kernel.ports import Embedder

API_KEY = "sk-test-not-a-real-key"


def fake_vector(text: str, length: int) -> list[float]:
    """A deterministic, deliberately not normalised vector for `text`."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return [float(x) for x in np.random.default_rng(seed).normal(size=length) * 3.0]


@dataclass
class FakeEmbeddingsServer:
    """POST /v1/embeddings like OpenAI's, listing the embeddings in reverse order (the client must sort)."""

    default_length: int = 8
    returned_length: int | None = None  # when set, ignores the requested dimensions (a misconfiguration)
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs: list[str] = body["input"]
        if any(text == "" for text in inputs):
            return {"error": {"message": "'$.input' is invalid.", "type": "invalid_request_error"}}
        length = self.returned_length or body.get("dimensions", self.default_length)
        data = [
            {"object": "embedding", "index": index, "embedding": fake_vector(text, length)}
            for index, text in enumerate(inputs)
        ]
        return {
            "object": "list",
            "data": data[::-1],
            "model": body["model"],
            "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)},
        }


def handler_for(server: FakeEmbeddingsServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            server.requests.append(body)
            server.authorizations.append(self.headers.get("Authorization", ""))
            if self.path != "/v1/embeddings":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            answer = server.respond(body)
            self._send(400 if "error" in answer else 200, answer)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    return Handler


@pytest.fixture
def fake() -> FakeEmbeddingsServer:
    return FakeEmbeddingsServer()


@pytest.fixture
def base_url(fake: FakeEmbeddingsServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)  # the loopback server must be reached directly
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(fake))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def make_embedder(base_url: str, dimensions: int = 8, **options: Any) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        base_url, API_KEY, "text-embedding-3-small", dimensions, timeout=5.0, max_retries=0, **options
    )


def expected_rows(texts: list[str], length: int) -> np.ndarray[Any, Any]:
    rows = np.asarray([fake_vector(text, length) for text in texts], dtype=np.float32)
    normalised: np.ndarray[Any, Any] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return normalised


def test_keeps_the_embedder_contract(base_url: str) -> None:
    embedder = make_embedder(base_url, dimensions=512)
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "openai:text-embedding-3-small:512"
    assert embedder.dimension == 512


def test_sends_model_inputs_and_dimensions(base_url: str, fake: FakeEmbeddingsServer) -> None:
    make_embedder(base_url, dimensions=16).embed(["alpha", "beta"])
    assert len(fake.requests) == 1
    body = fake.requests[0]
    assert body["model"] == "text-embedding-3-small"
    assert body["input"] == ["alpha", "beta"]
    assert body["dimensions"] == 16
    assert body["encoding_format"] == "float"
    assert fake.authorizations == [f"Bearer {API_KEY}"]


def test_leaves_dimensions_out_when_told_to(base_url: str, fake: FakeEmbeddingsServer) -> None:
    fake.default_length = 8
    make_embedder(base_url, dimensions=8, send_dimensions=False).embed(["alpha"])
    assert "dimensions" not in fake.requests[0]


def test_rows_follow_input_order_whatever_order_the_server_lists(base_url: str) -> None:
    texts = ["first", "second", "third", "fourth"]
    vectors = make_embedder(base_url).embed(texts)
    np.testing.assert_allclose(vectors, expected_rows(texts, 8), rtol=1e-6)


def test_rows_are_float32_and_unit_length(base_url: str) -> None:
    vectors = make_embedder(base_url, dimensions=32).embed(["one", "two", "three"])
    assert vectors.shape == (3, 32)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_empty_input_makes_no_request(base_url: str, fake: FakeEmbeddingsServer) -> None:
    vectors = make_embedder(base_url, dimensions=24).embed([])
    assert vectors.shape == (0, 24)
    assert vectors.dtype == np.float32
    assert fake.requests == []


def test_empty_strings_are_sent_as_a_space(base_url: str, fake: FakeEmbeddingsServer) -> None:
    vectors = make_embedder(base_url).embed(["", "text", ""])
    assert fake.requests[0]["input"] == [" ", "text", " "]
    np.testing.assert_allclose(vectors, expected_rows([" ", "text", " "], 8), rtol=1e-6)


def test_more_than_one_batch_of_inputs_takes_several_requests(
    base_url: str, fake: FakeEmbeddingsServer
) -> None:
    texts = [f"memory {i}" for i in range(MAX_INPUTS_PER_REQUEST + 44)]
    vectors = make_embedder(base_url).embed(texts)
    assert [len(body["input"]) for body in fake.requests] == [MAX_INPUTS_PER_REQUEST, 44]
    assert fake.requests[0]["input"] + fake.requests[1]["input"] == texts
    np.testing.assert_allclose(vectors, expected_rows(texts, 8), rtol=1e-6)


def test_a_text_gets_the_same_vector_whatever_batch_it_is_in(base_url: str) -> None:
    embedder = make_embedder(base_url)
    together = embedder.embed(["a", "b", "c"])
    assert np.array_equal(embedder.embed(["b"])[0], together[1])


def test_vectors_of_another_length_are_refused(base_url: str, fake: FakeEmbeddingsServer) -> None:
    fake.returned_length = 1536  # e.g. a server that ignores `dimensions`
    with pytest.raises(ValueError, match=r"length \[1536\], not the configured 8"):
        make_embedder(base_url).embed(["text"])


def test_without_dimensions_the_model_must_return_the_configured_size(
    base_url: str, fake: FakeEmbeddingsServer
) -> None:
    fake.default_length = 768
    with pytest.raises(ValueError, match="not the configured 1024"):
        make_embedder(base_url, dimensions=1024, send_dimensions=False).embed(["text"])


def test_importing_the_adapter_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    probe = "import sys, zengram.adapters.openai; print('openai' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
