"""Serve an app from a background thread of this process: for tests, benchmarks and notebooks."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

# Seconds a stopping server waits for open responses before it ends them: requests finish, server-sent event
# streams (GET /api/v1/events/memories) would keep it waiting forever.
SHUTDOWN_GRACE = 10


class BackgroundServer:
    """`with BackgroundServer(app) as server:` serves `app` at `server.url` (a free loopback port) until the
    block ends; leaving the block shuts uvicorn down gracefully, finishing in-flight background tasks, and ends
    what is still open after SHUTDOWN_GRACE seconds (an open memory event stream never finishes by itself)."""

    def __init__(self, app: Any, *, start_timeout: float = 60.0, shutdown_grace: int = SHUTDOWN_GRACE) -> None:
        import uvicorn

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port: int = probe.getsockname()[1]
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False,
                                timeout_graceful_shutdown=shutdown_grace)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="zengram-uvicorn", daemon=True)
        self._start_timeout = start_timeout

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + self._start_timeout
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *_: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=60)

    @property
    def stopped(self) -> bool:
        return not self._thread.is_alive()
