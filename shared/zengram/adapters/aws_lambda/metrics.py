"""The figures an operator watches, as CloudWatch metrics (EMF log lines) through one Powertools `Metrics`.

Namespace and the `service` dimension come from POWERTOOLS_METRICS_NAMESPACE / POWERTOOLS_SERVICE_NAME, which the
template sets per stack and per function. Metrics are flushed by the handler's `log_metrics` decorator at the end
of each invocation. Powertools is imported on first use, never when this module is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zengram.kernel.errors import LLMInvalidResponse, LLMUnavailable

if TYPE_CHECKING:
    from aws_lambda_powertools import Metrics

    from zengram.kernel.ports import JsonModel, LanguageModel

MEMORY_WRITES = "MemoryWrites"
SEARCHES = "Searches"
LLM_FAILURES = "LLMFailures"
PENDING_INDEX = "PendingIndex"
RECORDS_REPAIRED = "RecordsRepaired"
INDEX_FAILURES = "IndexFailures"  # failed attempts the repair sweep counted against records
RECORDS_PARKED = "RecordsParked"  # records the sweep gave up on (see docs/aws-index-outage.md)

# API Gateway route keys whose successful answers count as one write or one search.
ROUTE_METRICS = {
    "POST /memory": MEMORY_WRITES,
    "PATCH /memory/{memory_id}": MEMORY_WRITES,
    "DELETE /memory/{memory_id}": MEMORY_WRITES,
    "POST /memory/{memory_id}/restore": MEMORY_WRITES,
    "POST /export/import": MEMORY_WRITES,
    "GET /memory/search": SEARCHES,
}

_shared: Metrics | None = None


def shared_metrics() -> Metrics:
    """The one `aws_lambda_powertools.Metrics` of this process, shared by every handler and counter."""
    global _shared
    if _shared is None:
        from aws_lambda_powertools import Metrics

        _shared = Metrics()
    return _shared


def count(name: str, value: float = 1) -> None:
    from aws_lambda_powertools.metrics import MetricUnit

    shared_metrics().add_metric(name=name, unit=MetricUnit.Count, value=value)


def record_request(route_key: object, status_code: object) -> None:
    """Counts a write or a search the API answered successfully (any 2xx)."""
    metric = ROUTE_METRICS.get(route_key) if isinstance(route_key, str) else None
    if metric and isinstance(status_code, int) and 200 <= status_code < 300:
        count(metric)


class MeteredLanguageModel:
    """A `LanguageModel` that counts its failures (provider unavailable, or an answer that is not the JSON asked
    for) as LLMFailures before passing them on unchanged."""

    def __init__(self, model: LanguageModel) -> None:
        self._model = model

    @property
    def provider(self) -> str:
        return self._model.provider

    @property
    def model(self) -> str:
        return self._model.model

    def complete_json(self, system: str, user: str, schema: type[JsonModel]) -> JsonModel:
        try:
            return self._model.complete_json(system, user, schema)
        except (LLMUnavailable, LLMInvalidResponse):
            count(LLM_FAILURES)
            raise
