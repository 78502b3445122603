"""moto's server for `make local-cloud`: DynamoDB, SQS, S3, Secrets Manager (and whatever else a function calls)
on one port, on an address the function containers reach. Serialised the way the tests run it
(tests/aws_support.py): moto's DynamoDB is not safe under concurrent requests, real DynamoDB is atomic per request.

    python -m infra.local_cloud.moto_server --host 0.0.0.0 --port 5000
"""

from __future__ import annotations

import argparse
import threading
from typing import Any


def main() -> None:
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    from tests.aws_support import _one_request_at_a_time, _roll_back_only_touched_items

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    arguments = parser.parse_args()

    class QuietHandler(MotoRequestHandler):
        def log_request(self, *args: Any) -> None:
            """No access log line per request."""

    _roll_back_only_touched_items()
    app = _one_request_at_a_time(DomainDispatcherApplication(create_backend_app))
    server = make_server(arguments.host, arguments.port, app, threaded=True, request_handler=QuietHandler)
    print(f"moto on http://{arguments.host}:{server.server_port}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
