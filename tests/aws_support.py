"""AWS endpoints for tests: the emulator named by AWS_ENDPOINT_URL(_DYNAMODB) (e.g. LocalStack), else one moto
server per test session, started on first use. Credentials are dummies passed to the client: never real AWS,
and nothing is written to os.environ."""

from __future__ import annotations

import atexit
import contextlib
import copy
import functools
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

REGION = "us-east-1"
_DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
_ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL")

_lock = threading.Lock()
_moto_url: str | None = None

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def _one_request_at_a_time(app: WsgiApp) -> WsgiApp:
    """moto's DynamoDB backend is not thread-safe, while real DynamoDB applies each request atomically:
    `transact_write_items` deep-copies the table, applies its actions one by one and, when one fails,
    puts the copy back (dropping whatever other threads wrote meanwhile); conditional put/update check and
    write without a lock. So the server answers one request at a time; clients still race freely."""
    lock = threading.Lock()

    def serialized(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with lock:
            return list(app(environ, start_response))

    return serialized


def _roll_back_only_touched_items() -> None:
    """moto snapshots a transaction's whole table with deepcopy, to put it back on cancellation: O(table size)
    per call, cancelled ones included, which doubled the time of the 50-writer test. With requests serialized,
    saving and restoring just the items the transaction names rolls back exactly the same."""
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    whole_table_transaction = DynamoDBBackend.transact_write_items

    def transact_write_items(backend: Any, transact_items: list[dict[str, Any]]) -> None:
        restores = [_saved_item(backend, action) for item in transact_items for action in item.values()]
        Table.__deepcopy__ = lambda table, memo: table  # moto's own snapshot is now free...
        try:
            whole_table_transaction(backend, transact_items)
        except Exception:
            for restore in reversed(restores):  # ...because this puts back what the transaction touched
                restore()
            raise
        finally:
            del Table.__deepcopy__

    DynamoDBBackend.transact_write_items = transact_write_items


def _saved_item(backend: Any, action: dict[str, Any]) -> Callable[[], None]:
    """Remembers one item as it is now; the returned function puts it back (or removes it if it was absent)."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    table = backend.get_table(action["TableName"])
    key = action.get("Item") or action["Key"]
    hash_value = DynamoType(key[table.hash_key_attr])
    range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
    before = copy.deepcopy(table.get_item(hash_value, range_value))

    def restore() -> None:
        if before is None:
            table.delete_item(hash_value, range_value)
        else:
            table.put_item(before.to_json()["Attributes"], overwrite=True)

    return restore


def _serve_moto() -> None:
    """Runs in the child process: serves until its parent goes away, after printing its URL."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    class QuietHandler(MotoRequestHandler):
        def log_request(self, *args: Any) -> None:
            """No access log line per request."""

    _roll_back_only_touched_items()
    app = _one_request_at_a_time(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=QuietHandler)
    threading.Thread(target=server.serve_forever, name="moto-server", daemon=True).start()
    print(f"http://127.0.0.1:{server.server_port}", flush=True)
    sys.stdin.read()  # returns when the parent exits or closes our stdin


def _start_moto() -> str:
    """moto in a child process: in-process, its request handling and the tests' client threads would share one
    GIL, which made the concurrency tests twice as slow."""
    child = subprocess.Popen([sys.executable, "-m", "tests.aws_support"], cwd=Path(__file__).parent.parent,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    atexit.register(_stop, child)
    url = child.stdout.readline().strip()
    if not url.startswith("http://"):
        raise RuntimeError(f"the moto server did not start (exit code {child.poll()})")
    return url


def _stop(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None
    child.stdin.close()
    child.wait(timeout=10)


def external_endpoint() -> str | None:
    """The emulator the environment points at, if any."""
    return next((os.environ[name] for name in _ENDPOINT_VARIABLES if os.environ.get(name)), None)


def dynamodb_endpoint() -> str:
    """The emulator from the environment, else this session's moto server (started on first call)."""
    global _moto_url
    external = external_endpoint()
    if external is not None:
        return external
    with _lock:
        if _moto_url is None:
            _moto_url = _start_moto()
        return _moto_url


def dynamodb_client() -> Any:
    """A client for the test endpoint, configured like the adapter's own (same retry policy)."""
    from zengram.adapters.dynamodb.table import make_client

    return make_client(endpoint_url=dynamodb_endpoint(), session=_session())


@functools.cache
def _session() -> Any:
    """One boto3 session for the whole run: a fresh one re-reads botocore's service models (~0.5 s)."""
    import boto3

    return boto3.session.Session(region_name=os.environ.get("AWS_DEFAULT_REGION", REGION), **_DUMMY_CREDENTIALS)


def unique_table_name() -> str:
    return f"zengram-test-{uuid.uuid4().hex[:12]}"


@contextlib.contextmanager
def fresh_dynamodb_store() -> Iterator[Any]:
    """A DynamoDBRecordStore on a new table of its own, dropped afterwards."""
    from zengram.adapters.dynamodb import DynamoDBRecordStore

    store = DynamoDBRecordStore(unique_table_name(), client=dynamodb_client())
    store.ensure_table()
    try:
        yield store
    finally:
        store.client.delete_table(TableName=store.table_name)
        store.close()


if __name__ == "__main__":
    _serve_moto()
