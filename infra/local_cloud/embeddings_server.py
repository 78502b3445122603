"""An OpenAI-compatible `/v1/embeddings` endpoint serving the offline MiniLM model, for `make local-cloud`.

The functions run with `ZENGRAM_EMBEDDER=openai` pointed here (OpenAIBaseUrl): the code path the cloud uses with
Embedder=openai, the layer as deployed (no model in it), and vectors from the same all-MiniLM-L6-v2 the embedded
host uses, with no network. It answers the request shape the `openai` SDK sends (input: text or list of texts,
`dimensions`, encoding_format float) and refuses any other dimension than the model's.

    python -m infra.local_cloud.embeddings_server --host 0.0.0.0 --port 8089
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_NAME = "all-MiniLM-L6-v2"


def build_embedder() -> Any:
    from zengram.adapters.factories import build_minilm_embedder
    from zengram.settings import Settings

    return build_minilm_embedder(Settings())


def embeddings_response(embedder: Any, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(status, body) for one POST /v1/embeddings body."""
    texts = request.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts or not all(isinstance(text, str) for text in texts):
        return 400, {"error": {"message": "input must be a string or a non-empty list of strings",
                               "type": "invalid_request_error"}}
    dimensions = request.get("dimensions", embedder.dimension)
    if dimensions != embedder.dimension:
        return 400, {"error": {"message": f"{MODEL_NAME} has {embedder.dimension} dimensions, not {dimensions}",
                               "type": "invalid_request_error"}}
    vectors = embedder.embed(texts)
    data = [{"object": "embedding", "index": index, "embedding": [float(x) for x in vector]}
            for index, vector in enumerate(vectors)]
    tokens = sum(len(text.split()) for text in texts)
    return 200, {"object": "list", "data": data, "model": request.get("model", MODEL_NAME),
                 "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def make_handler(embedder: Any) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """No access log line per request."""

        def _send(self, status: int, body: dict[str, Any]) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/health", "/v1/models"):
                self._send(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                self._send(404, {"error": {"message": "not found"}})
                return
            try:
                request = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "the body is not JSON"}})
                return
            self._send(*embeddings_response(embedder, request if isinstance(request, dict) else {}))

    return Handler


def serve(host: str, port: int) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), make_handler(build_embedder()))
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    arguments = parser.parse_args()
    server = serve(arguments.host, arguments.port)
    print(f"embeddings on http://{arguments.host}:{server.server_port}/v1", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
