"""The search index behind a circuit breaker, so an index that is down costs a request nothing.

Every host wraps its index in `GuardedIndex`. Once a call has failed (after the adapter's own retries), the
circuit opens: calls fail at once with `IndexUnavailable` for `index_circuit_open_seconds`, then one probe goes
through. Writes meanwhile are stored and left pending (the record store is the source of truth); searches
answer 503 at once instead of waiting out timeouts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from zengram.kernel.errors import IndexRejected, IndexUnavailable
from zengram.kernel.outbox import describe_error
from zengram.kernel.ports import Clock, SearchIndex
from zengram.kernel.search import IndexAttributes, IndexDocument, IndexHit, SearchFilters
from zengram.kernel.timestamps import format_timestamp
from zengram.memory.domain.circuit import CircuitBreaker, CircuitState, CircuitStatus

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

T = TypeVar("T")


class GuardedIndex:
    """A `SearchIndex` that fails fast while its inner index is down.

    What counts as the index failing: anything it raises but `IndexRejected` (an answer refusing a request or a
    document means the index is up). Failures leave as `IndexUnavailable` (503), the cause chained.
    """

    def __init__(self, inner: SearchIndex, breaker: CircuitBreaker, clock: Clock, *,
                 before_each_call: Callable[[], None] | None = None) -> None:
        self.inner = inner
        self._breaker = breaker
        self._clock = clock
        # The embedded host's write-behind queue: every call waits for the index writes queued before it.
        self._before_each_call = before_each_call

    def health(self) -> CircuitStatus:
        return self._breaker.status(self._clock.now())

    def close(self) -> None:
        self.inner.close()

    def closed_circuit(self) -> bool:
        """Whether calls go through now (not failing fast, not probing)."""
        return self.health().state is CircuitState.CLOSED

    # -- the SearchIndex port, each call through the breaker -------------------------------------------

    @property
    def model_id(self) -> str | None:
        return self._call("read the model", lambda: self.inner.model_id)

    def bind_model(self, model_id: str, dimension: int) -> None:
        self._call("bind the model", lambda: self.inner.bind_model(model_id, dimension))

    def upsert(self, documents: Sequence[IndexDocument], texts: dict[str, str] | None = None) -> None:
        self._call("upsert", lambda: self.inner.upsert(documents, texts))

    def set_attributes(self, updates: dict[str, IndexAttributes]) -> None:
        self._call("set attributes", lambda: self.inner.set_attributes(updates))

    def set_texts(self, texts: dict[str, str]) -> None:
        self._call("set texts", lambda: self.inner.set_texts(texts))

    def delete(self, memory_ids: Sequence[str]) -> None:
        self._call("delete", lambda: self.inner.delete(memory_ids))

    def vector_search(self, vector: npt.NDArray[np.float32], filters: SearchFilters, k: int) -> list[IndexHit]:
        return self._call("vector search", lambda: self.inner.vector_search(vector, filters, k))

    def keyword_search(self, text: str, filters: SearchFilters, k: int) -> list[IndexHit]:
        return self._call("keyword search", lambda: self.inner.keyword_search(text, filters, k))

    def count(self) -> int:
        return self._call("count", self.inner.count)

    def clear(self) -> None:
        self._call("clear", self.inner.clear)

    # -- the breaker -----------------------------------------------------------------------------------

    def _call(self, operation: str, call: Callable[[], T]) -> T:
        if self._before_each_call is not None:
            self._before_each_call()
        if not self._breaker.allow(self._clock.now()):
            raise IndexUnavailable(unavailable_message(self.health()))
        try:
            result = call()
        except IndexRejected:
            self._breaker.succeeded()  # it answered: the index is up, the request was at fault
            raise
        except Exception as error:
            self._breaker.failed(describe_error(error), self._clock.now())
            if isinstance(error, IndexUnavailable):
                raise
            raise IndexUnavailable(f"the search index failed to {operation}: {describe_error(error)}") from error
        self._breaker.succeeded()
        return result


def unavailable_message(status: CircuitStatus) -> str:
    """Why calls are refused while the circuit is open, and until when."""
    when = f"; next try after {format_timestamp(status.retry_at)}" if status.retry_at else ""
    probing = " (a probe is under way)" if status.state is CircuitState.HALF_OPEN else ""
    return f"the search index is unavailable{probing}: {status.last_error or 'it failed'}{when}"
