"""Building the opensearch-py client (none / basic / SigV4 auth) and retrying transient failures.

opensearch-py and botocore are imported inside these functions, never at module import: a Lambda
that does not touch the index must not pay for them on a cold start.
"""

from __future__ import annotations

import importlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from zengram.adapters.opensearch.bulk import OpenSearchIndexError
from zengram.kernel.errors import IndexRejected

Auth = Literal["none", "basic", "sigv4"]
AwsService = Literal["es", "aoss"]
T = TypeVar("T")

# Whole-request failures worth another try: throttling, Serverless OCU limit, and server-side trouble.
RETRYABLE_STATUSES = frozenset({402, 429, 500, 502, 503, 504})
# Client errors that say nothing about the request itself: the cluster cannot be used (auth) or is absent.
_NOT_ABOUT_THE_REQUEST = frozenset({401, 403, 404, 408})
# 400s that say the index cannot take any request now (closed, or blocked read-only e.g. on a full disk).
_INDEX_BLOCKED = frozenset({"index_closed_exception", "cluster_block_exception"})


POOL_SIZE = 8


class OpenSearchUnavailable(OpenSearchIndexError):
    """OpenSearch kept failing with a transient error until the retries (or their time budget) ran out."""


@dataclass(frozen=True)
class ClientOptions:
    url: str
    auth: Auth = "none"
    username: str | None = None
    password: str | None = None
    aws_region: str | None = None
    aws_service: AwsService = "es"
    aws_credentials: Any | None = None
    timeout: float = 10.0
    verify_certs: bool = True


def build_client(options: ClientOptions) -> Any:
    """An `OpenSearch` client whose own retries are off: `RetryPolicy` retries with backoff instead
    (opensearch-py retries immediately, without backoff, and only on 502/503/504)."""
    from opensearchpy import OpenSearch

    return OpenSearch(
        hosts=[options.url],
        http_auth=_http_auth(options),
        timeout=options.timeout,
        max_retries=0,
        retry_on_status=(),
        # urllib3 keeps one connection per host by default; a search sends its two paths at once, so the
        # second would open (and then discard) a connection of its own every time.
        pool_maxsize=POOL_SIZE,
        verify_certs=options.verify_certs,
    )


def _http_auth(options: ClientOptions) -> Any:
    if options.auth == "none":
        return None
    if options.auth == "basic":
        if not options.username or options.password is None:
            raise ValueError("basic auth needs a username and a password")
        return (options.username, options.password)
    if options.auth == "sigv4":
        return _sigv4_auth(options)
    raise ValueError(f"unknown auth {options.auth!r}: use 'none', 'basic' or 'sigv4'")


def _sigv4_auth(options: ClientOptions) -> Any:
    """Signs each request for Amazon OpenSearch Service (`es`) or Serverless (`aoss`).

    Credentials come from botocore's default chain unless given (Lambda role, env, profile); the signer
    asks for frozen credentials per request, so refreshed role credentials are picked up."""
    from opensearchpy import Urllib3AWSV4SignerAuth

    credentials = options.aws_credentials
    region = options.aws_region
    if credentials is None or region is None:
        session = importlib.import_module("botocore.session").get_session()
        credentials = credentials or session.get_credentials()
        region = region or session.get_config_variable("region")
    if credentials is None:
        raise ValueError("SigV4 auth found no AWS credentials (role, environment or profile)")
    if not region:
        raise ValueError("SigV4 auth needs an AWS region (aws_region, AWS_REGION or AWS_DEFAULT_REGION)")
    return Urllib3AWSV4SignerAuth(credentials, region, options.aws_service)


def status_of(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


def error_type_of(error: BaseException) -> str:
    """The OpenSearch error type (`index_not_found_exception`, …) of a client exception."""
    return str(getattr(error, "error", ""))


def is_transient(error: BaseException) -> bool:
    from opensearchpy.exceptions import ConnectionError as TransportConnectionError
    from opensearchpy.exceptions import TransportError

    if isinstance(error, TransportConnectionError):  # includes timeouts: every write we send is idempotent
        return True
    return isinstance(error, TransportError) and status_of(error) in RETRYABLE_STATUSES


def reason_of(error: BaseException) -> str:
    """OpenSearch's own words for a failed request (`error.reason` of its answer), if it answered."""
    info = getattr(error, "info", None)
    cause = info.get("error") if isinstance(info, dict) else None
    return str(cause.get("reason", "")) if isinstance(cause, dict) else ""


def failure(operation: str, error: BaseException) -> OpenSearchIndexError | IndexRejected:
    """A client error as the adapter's own error, naming the status, OpenSearch's error type and reason: a refusal of
    this very request is the port's `IndexRejected` (the cluster is up); anything else makes the index unusable."""
    if isinstance(error, OpenSearchIndexError | IndexRejected):
        return error
    rejected = refused_request(error)
    if rejected is not None:
        return rejected
    status = status_of(error) or "no answer"
    detail = ": ".join(part for part in (error_type_of(error), reason_of(error)) if part)
    return OpenSearchIndexError(f"OpenSearch {operation} failed ({status}{', ' + detail if detail else ''})"[:500])


def is_index_missing(error: BaseException) -> bool:
    return status_of(error) == 404 and error_type_of(error) == "index_not_found_exception"


def refused_request(error: BaseException) -> IndexRejected | None:
    """An answer refusing this very request (400 bad query or document, 413 too large...) as `IndexRejected`:
    the cluster is up, the request was wrong. None for anything else."""
    from opensearchpy.exceptions import TransportError

    status = status_of(error)
    if not isinstance(error, TransportError) or status is None or not 400 <= status < 500:
        return None
    if status in _NOT_ABOUT_THE_REQUEST or status in RETRYABLE_STATUSES or error_type_of(error) in _INDEX_BLOCKED:
        return None
    return IndexRejected(f"OpenSearch refused the request: {status} {error_type_of(error)}: {error}"[:500])


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter, for whole requests and for rejected bulk items. `budget` (seconds,
    None: none) also bounds the time: no retry starts once that much time has gone by since the first try."""

    attempts: int = 5
    base_delay: float = 0.2
    max_delay: float = 5.0
    budget: float | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def pause(self, attempt: int) -> None:
        """Waits before try number `attempt + 1` (the first retry waits about `base_delay`)."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        if ceiling > 0:
            self.sleep(random.uniform(ceiling / 2, ceiling))

    def call(self, operation: str, request: Callable[[], T]) -> T:
        started = self.clock()
        for attempt in range(1, self.attempts + 1):
            try:
                return request()
            except Exception as error:
                if not is_transient(error):
                    raise
                if attempt == self.attempts or self.spent(started):
                    raise OpenSearchUnavailable(
                        f"OpenSearch {operation} failed {attempt} times, last with "
                        f"{status_of(error) or 'a connection error'} {error_type_of(error)}".rstrip()
                    ) from error
                self.pause(attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def spent(self, started: float) -> bool:
        """Whether the time budget of an operation begun at `started` (by `clock`) is used up."""
        return self.budget is not None and self.clock() - started >= self.budget


@dataclass(frozen=True)
class OpenSearchOptions:
    """What every index on one cluster takes from the settings but its alias: how to reach the cluster, how to retry,
    and the `refresh` sent with writes (`zengram.adapters.factories.opensearch_options` reads them)."""

    client: ClientOptions
    retry: RetryPolicy
    refresh: Literal["false", "true", "wait_for"]
