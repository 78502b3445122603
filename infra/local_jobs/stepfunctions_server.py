"""moto's Step Functions for the local cloud: `python -m infra.local_jobs.stepfunctions_server --port P
--lambda-url URL`.

One process: moto's server on P (execute_state_machine is switched on by its caller), and in a thread the Lambda
endpoint its ASL interpreter calls (MOTO_PORT points the interpreter's lambda:Invoke there). That endpoint passes
every request to `sam local start-lambda` unchanged and restores one thing of the Lambda Invoke contract SAM
drops: an invocation whose function failed answers with `X-Amz-Function-Error: Unhandled`. SAM only recognises an
error payload of exactly {errorMessage, errorType[, stackTrace][, cause]} or of three keys, and the Python 3.13
runtime adds `requestId` (aws/aws-sam-cli#1404: "start-lambda does not catch runtime errors"), so without this
every failing Task would succeed with the error as its output, and no Retry or Catch of the template's machines
could run."""

from __future__ import annotations

import argparse
import json
import os
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The keys of the runtime's error document (awslambdaric: errorMessage, errorType, requestId, stackTrace).
ERROR_KEYS = {"errorMessage", "errorType", "requestId", "stackTrace", "cause"}
FORWARDED = ("Content-Type", "X-Amz-Invocation-Type", "X-Amz-Log-Type", "X-Amz-Client-Context")


def is_function_error(body: bytes) -> bool:
    """The runtime's error document: errorMessage and errorType, nothing but its own keys."""
    try:
        answer = json.loads(body)
    except ValueError:
        return False
    return isinstance(answer, dict) and {"errorMessage", "errorType"} <= set(answer) <= ERROR_KEYS


def lambda_endpoint(lambda_url: str) -> type[BaseHTTPRequestHandler]:
    class Endpoint(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {name: self.headers[name] for name in FORWARDED if self.headers.get(name)}
            request = urllib.request.Request(lambda_url.rstrip("/") + self.path, data=body, headers=headers,
                                             method="POST")
            try:
                with urllib.request.urlopen(request, timeout=900) as response:
                    status, answer, returned = response.status, response.read(), dict(response.headers)
            except urllib.error.HTTPError as error:
                status, answer, returned = error.code, error.read(), dict(error.headers)
            self.send_response(status)
            for name, value in returned.items():
                if name.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                    self.send_header(name, value)
            if status == 200 and "x-amz-function-error" not in {n.lower() for n in returned} \
                    and is_function_error(answer):
                self.send_header("X-Amz-Function-Error", "Unhandled")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            print(f"lambda endpoint: {format % args}", flush=True)

    return Endpoint


def serve_lambda_endpoint(lambda_url: str) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), lambda_endpoint(lambda_url))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--lambda-url", required=True, help="sam local start-lambda, e.g. http://127.0.0.1:3001")
    options = parser.parse_args()
    endpoint = serve_lambda_endpoint(options.lambda_url)
    os.environ["MOTO_PORT"] = str(endpoint.server_address[1])  # where moto's interpreter sends lambda:Invoke
    from moto.server import main as moto_server

    moto_server(["-H", options.host, "-p", str(options.port)])


if __name__ == "__main__":
    main()
