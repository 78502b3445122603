"""Domain errors carry a kind, never a status; the API's one table maps each kind to its status."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from zengram.kernel import errors
from zengram.kernel.errors import ErrorKind, ZengramError
from zengram.web.errors import STATUS_OF_KIND, status_of

from tests.support import REPO_ROOT

EXPECTED = {
    errors.InvalidInput("limit", "too big"): 400,
    errors.Forbidden("not yours"): 403,
    errors.NotFound("memory m not found"): 404,
    errors.Conflict("busy"): 409,
    errors.StaleRevision("changed"): 409,
    errors.RateLimited("slow down", retry_after=3): 429,
    errors.ZengramError("boom"): 500,
    errors.LLMInvalidResponse("not JSON"): 502,
    errors.IndexRejected("refused"): 502,
    errors.ResearchFailed("timed out"): 502,
    errors.FeatureUnavailable("off"): 503,
    errors.FeatureDisabled("research_disabled", "set RESEARCH_ENABLED=true"): 503,
    errors.LLMUnavailable(): 503,
    errors.IndexUnavailable("down"): 503,
    errors.EmbeddingMismatch("other model"): 503,
    errors.ResearchTimedOut("did not finish in 60 s"): 504,
}


@pytest.mark.parametrize(("error", "status"), EXPECTED.items(), ids=[type(e).__name__ for e in EXPECTED])
def test_each_domain_error_maps_to_its_status(error: ZengramError, status: int) -> None:
    assert status_of(error) == status


def test_every_kind_has_a_status_and_every_error_class_a_kind() -> None:
    assert set(STATUS_OF_KIND) == set(ErrorKind)
    classes = [cls for _, cls in inspect.getmembers(errors, inspect.isclass) if issubclass(cls, ZengramError)]
    assert all(isinstance(cls.kind, ErrorKind) for cls in classes)
    assert {type(error) for error in EXPECTED} == set(classes)  # a new error class gets a line above


def test_the_domain_names_no_http_status() -> None:
    domain = REPO_ROOT / "shared" / "zengram" / "domain"
    offenders = [path.name for path in Path(domain).rglob("*.py") if "status_code" in path.read_text()]
    assert offenders == []
