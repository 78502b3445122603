"""The OpenSearch `SearchIndex` where a fault must be injected or a request seen: the real adapter and the
real opensearch-py client against a local server (tests/opensearch_fake.py) that records each request and
answers as scripted.

What only this can show: retries on 429/503/500 and none on 400, rejected bulk items, requests that must not
be sent, SigV4 signing, the Serverless request shapes (no `_id`, no `refresh`) and the faiss engine (the test
node has no native k-NN libraries). Everything else runs against a real engine: tests/opensearch and the
contract suite (tests/contract), on the session's test node.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from zengram.adapters.opensearch import BulkWriteError, ClientOptions, OpenSearchIndex, OpenSearchUnavailable
from zengram.adapters.opensearch.client import RetryPolicy
from zengram.assembly.containers import Container
from zengram.kernel.errors import IndexRejected, IndexUnavailable
from zengram.kernel.search import IndexAttributes, IndexDocument, SearchFilters
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import MemoryDraft
from zengram.memory.services.indexing import IndexSync
from zengram.settings import Settings

from tests.opensearch_fake import FakeOpenSearch, Recorded, internal_error, iter_bulk, rejected, unavailable

ALIAS = "zengram-test"
CONCRETE = "zengram-test-v2-4d"
MODEL = "test:hashing"
T0 = datetime(2026, 3, 1, tzinfo=UTC)
MAPPING_FILE = Path(__file__).resolve().parents[2] / "shared/zengram/adapters/opensearch/mappings/memories.v2.json"


def unit(*values: float) -> npt.NDArray[np.float32]:
    vector = np.zeros(4, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def attributes(**fields: Any) -> IndexAttributes:
    values: dict[str, Any] = {"type": "event", "source_agent": "claude-code", "client_id": "acme",
                              "category": "episodic", "valid_from": T0, "created_at": T0}
    return IndexAttributes(**{**values, **fields})


def document(memory_id: str, text: str = "deploy pipeline", **fields: Any) -> IndexDocument:
    return IndexDocument(memory_id, text, unit(1, 0), attributes(**fields))


def adapter(fake: FakeOpenSearch, *, alias: str = ALIAS, refresh: Any = "wait_for", engine: Any = None,
            **client: Any) -> OpenSearchIndex:
    return OpenSearchIndex(ClientOptions(fake.url, **client), alias=alias, refresh=refresh, engine=engine,
                           retry=RetryPolicy(base_delay=0.0))


def only(requests: list[Recorded]) -> Recorded:
    assert len(requests) == 1, [f"{r.method} {r.path}" for r in requests]
    return requests[0]


def trail(fake: FakeOpenSearch) -> list[str]:
    return [f"{r.method} {r.path}" for r in fake.requests]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """No index write behind a write's answer, as a host with OpenSearch runs (bootstrap turns the queue off
    there): the container here is embedded, with an OpenSearch index swapped into its IndexSync."""
    return settings.model_copy(update={"index_behind_writes": 0})


@pytest.fixture
def fake() -> Iterator[FakeOpenSearch]:
    with FakeOpenSearch() as server:
        yield server


@pytest.fixture
def index(fake: FakeOpenSearch) -> Iterator[OpenSearchIndex]:
    built = adapter(fake)
    yield built
    built.close()


@pytest.fixture
def bound(fake: FakeOpenSearch, index: OpenSearchIndex) -> OpenSearchIndex:
    index.bind_model(MODEL, 4)
    fake.requests.clear()
    return index


# -- the index definition ---------------------------------------------------------------------------------

def test_the_mapping_file_leaves_only_dimension_and_model_to_fill() -> None:
    template = json.loads(MAPPING_FILE.read_text())
    vector = template["mappings"]["properties"]["vector"]
    assert vector["dimension"] is None
    assert vector["method"]["engine"] in ("lucene", "faiss")
    assert template["mappings"]["_meta"] == {"mapping_version": 2, "model_id": None, "dimension": None}


def engine_of(fake: FakeOpenSearch) -> str:
    engine: str = only(fake.requests_to("PUT", f"^/{CONCRETE}$")).json()["mappings"]["properties"]["vector"][
        "method"]["engine"]
    return engine


def test_faiss_can_replace_lucene(fake: FakeOpenSearch) -> None:
    adapter(fake, engine="faiss").bind_model(MODEL, 4)
    assert engine_of(fake) == "faiss"


# -- searches ------------------------------------------------------------------------------------------

def test_keyword_search_without_searchable_words_sends_nothing(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    assert bound.keyword_search("!!! ???", SearchFilters(), k=5) == []
    assert bound.keyword_search("deploy", SearchFilters(), k=0) == []
    assert bound.vector_search(unit(1), SearchFilters(), k=0) == []
    assert fake.requests == []


# -- writes --------------------------------------------------------------------------------------------

def test_empty_writes_send_nothing(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    bound.upsert([])
    bound.set_attributes({})
    bound.delete([])
    assert fake.requests == []


@pytest.mark.parametrize(("refresh", "sent"), [(True, "true"), ("true", "true"), ("wait_for", "wait_for"),
                                               (False, None), ("false", None)])
def test_the_refresh_policy_is_configurable(fake: FakeOpenSearch, refresh: Any, sent: str | None) -> None:
    index = adapter(fake, refresh=refresh)
    index.bind_model(MODEL, 4)
    index.upsert([document("a")])
    assert only(fake.requests_to("POST", "_bulk")).query.get("refresh") == sent


def test_large_batches_are_split(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    bound.upsert([document(f"d{i}") for i in range(450)])
    assert [len(r.ndjson()) // 2 for r in fake.requests_to("POST", "_bulk")] == [200, 200, 50]


# -- transient failures ----------------------------------------------------------------------------------

def test_a_429_is_retried(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    fake.script("POST", "_search$", (429, rejected()))
    fake.search_hits = [("a", 1.0)]
    assert [hit.id for hit in bound.vector_search(unit(1), SearchFilters(), k=5)] == ["a"]
    assert len(fake.requests_to("POST", "_search$")) == 2


def test_a_503_on_bulk_is_retried(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    fake.script("POST", "_bulk$", (503, unavailable()))
    bound.upsert([document("a")])
    assert len(fake.requests_to("POST", "_bulk$")) == 2
    assert bound.count() == 1


def test_a_repeated_500_gives_up_with_a_clear_error(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    fake.script("POST", "_bulk$", *[(500, internal_error())] * 6)
    with pytest.raises(OpenSearchUnavailable, match="bulk failed 5 times, last with 500"):
        bound.upsert([document("a")])
    assert len(fake.requests_to("POST", "_bulk$")) == 5  # ours only: the client's own retries are off


def test_client_errors_are_not_retried(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    fake.script("POST", "_search$", (400, {"error": {"type": "parsing_exception", "reason": "bad"}, "status": 400}))
    with pytest.raises(Exception, match="parsing_exception"):
        bound.keyword_search("deploy", SearchFilters(), k=5)
    assert len(fake.requests_to("POST", "_search$")) == 1


def test_retries_stop_when_their_time_budget_is_spent() -> None:
    from opensearchpy.exceptions import ConnectionError as TransportConnectionError

    now = [0.0]
    calls: list[float] = []

    def unreachable() -> None:
        calls.append(now[0])
        now[0] += 0.7  # each try waits out a connect timeout
        raise TransportConnectionError("N/A", "connection refused", None)

    policy = RetryPolicy(attempts=10, base_delay=0.1, max_delay=0.1, budget=1.6, clock=lambda: now[0],
                         sleep=lambda seconds: now.__setitem__(0, now[0] + seconds))
    with pytest.raises(OpenSearchUnavailable, match="failed 3 times"):
        policy.call("bulk", unreachable)
    assert len(calls) == 3  # at 0, ~0.8 and ~1.55 s; the third failed at ~2.2 s, past the budget: no fourth


def test_backoff_grows_exponentially_and_is_bounded() -> None:
    from opensearchpy.exceptions import TransportError

    delays: list[float] = []
    policy = RetryPolicy(attempts=5, base_delay=0.1, max_delay=0.5, sleep=delays.append)
    calls = iter([TransportError(429, "rejected_execution_exception", {})] * 4 + [None])

    def flaky() -> str:
        error = next(calls)
        if error is not None:
            raise error
        return "ok"

    assert policy.call("search", flaky) == "ok"
    ceilings = [0.1, 0.2, 0.4, 0.5]
    assert len(delays) == 4
    assert all(ceiling / 2 <= delay <= ceiling for delay, ceiling in zip(delays, ceilings, strict=True))


# -- partial bulk failures -----------------------------------------------------------------------------

def test_rejected_items_are_retried_and_bad_ones_named(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    fake.fail_item("b", (429, "rejected_execution_exception"))
    fake.fail_item("c", *[(400, "mapper_parsing_exception")] * 5)
    with pytest.raises(BulkWriteError, match=r"1 document\(s\): c: 400 mapper_parsing_exception") as raised:
        bound.upsert([document("a"), document("b"), document("c")])

    assert raised.value.failed_ids == ["c"]
    first, second = fake.requests_to("POST", "_bulk$")
    assert [header["_id"] for _, header, _ in iter_bulk(first)] == ["a", "b", "c"]
    assert [header["_id"] for _, header, _ in iter_bulk(second)] == ["b"]
    assert fake.indices[CONCRETE].docs.keys() == {"a", "b"}


def test_items_pushed_back_until_the_last_attempt_mean_the_index_is_overloaded(fake: FakeOpenSearch,
                                                                                bound: OpenSearchIndex) -> None:
    # Nothing was refused for what it is: the document is not to blame (the repair sweep must not count it), the
    # index is unavailable for now.
    fake.fail_item("b", *[(429, "rejected_execution_exception")] * 5)
    with pytest.raises(OpenSearchUnavailable, match=r"overloaded \(b\): still failing after 5 attempts") as raised:
        bound.upsert([document("a"), document("b")])
    assert isinstance(raised.value, IndexUnavailable)
    assert len(fake.requests_to("POST", "_bulk$")) == 5


def test_a_refused_document_is_named_with_the_overloaded_ones(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    fake.fail_item("b", *[(429, "rejected_execution_exception")] * 5)
    fake.fail_item("c", (400, "mapper_parsing_exception"))
    with pytest.raises(BulkWriteError) as raised:
        bound.upsert([document("a"), document("b"), document("c")])
    assert isinstance(raised.value, IndexRejected)
    assert sorted(raised.value.failures) == ["b", "c"]


def test_a_request_refused_as_a_whole_is_index_rejected(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    too_large = {"error": {"type": "content_too_long_exception", "reason": "too long"}, "status": 413}
    fake.script("POST", "_bulk$", (413, too_large))
    with pytest.raises(IndexRejected, match="413 content_too_long_exception"):
        bound.upsert([document("a")])
    assert len(fake.requests_to("POST", "_bulk$")) == 1  # not retried: the same request would be refused again


def test_an_unreachable_cluster_is_index_unavailable(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    fake.script("GET", "_mapping$", *[(503, unavailable())] * 5)
    with pytest.raises(IndexUnavailable, match="get mapping failed 5 times"):
        _ = bound.model_id


def test_a_failed_write_leaves_the_records_pending_for_repair(fake: FakeOpenSearch, bound: OpenSearchIndex,
                                                              hashing_container: Container) -> None:
    memory = hashing_container.memory
    bound.clear()
    sync = IndexSync(hashing_container.records, hashing_container.outbox, bound, hashing_container.embedder)
    sync.ensure_compatible()
    memory.index_sync = sync
    fake.script("POST", "_bulk$", *[(503, unavailable())] * 5)

    result = memory.store(MemoryDraft(type=MemoryType.EVENT, content="The deploy failed", source_agent="n8n"))
    assert result.indexed is False
    assert [m.id for m in hashing_container.outbox.pending_index(10)] == [result.memory.id]
    assert sync.repair().indexed == 1
    assert hashing_container.outbox.pending_index(10) == []
    assert fake.indices[f"{ALIAS}-v2-64d"].docs.keys() == {result.memory.id}


# -- authentication ------------------------------------------------------------------------------------

def test_basic_auth_sends_the_credentials(fake: FakeOpenSearch) -> None:
    adapter(fake, auth="basic", username="admin", password="s3cret!").count()
    assert fake.requests[0].headers["authorization"] == "Basic " + base64.b64encode(b"admin:s3cret!").decode()


def test_no_auth_sends_no_authorization(fake: FakeOpenSearch) -> None:
    adapter(fake).count()
    assert "authorization" not in fake.requests[0].headers


def dummy_credentials(token: str | None = None) -> Any:
    from botocore.credentials import Credentials

    return Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", token)


@pytest.mark.parametrize("service", ["es", "aoss"])
def test_sigv4_signs_every_request_for_the_service(fake: FakeOpenSearch, service: str) -> None:
    index = adapter(fake, auth="sigv4", aws_region="eu-west-1", aws_service=service,
                    aws_credentials=dummy_credentials())
    index.keyword_search("deploy", SearchFilters(), k=5)
    index.count()

    for request in fake.requests:
        authorization = request.headers["authorization"]
        assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
        assert f"/eu-west-1/{service}/aws4_request" in authorization
        assert "SignedHeaders=host;x-amz-content-sha256;x-amz-date" in authorization
        assert len(request.headers["x-amz-date"]) == len("20260301T120000Z")
        # The signed payload hash is the hash of the bytes that arrived.
        assert request.headers["x-amz-content-sha256"] == hashlib.sha256(request.body).hexdigest()
    assert fake.requests[0].body  # the search had a body to sign


def test_sigv4_takes_credentials_and_region_from_the_environment(fake: FakeOpenSearch, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_PROFILE", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENV")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-from-env")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token-from-env")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")

    adapter(fake, auth="sigv4", aws_service="aoss").count()
    headers = fake.requests[0].headers
    assert "Credential=AKIDFROMENV/" in headers["authorization"]
    assert "/ap-south-1/aoss/aws4_request" in headers["authorization"]
    assert headers["x-amz-security-token"] == "session-token-from-env"


def test_sigv4_without_a_region_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(ValueError, match="region"):
        OpenSearchIndex(ClientOptions("https://search.example.com", auth="sigv4", aws_credentials=dummy_credentials()))


@pytest.mark.parametrize(("options", "message"), [
    ({"auth": "basic", "username": "admin"}, "username and a password"),
    ({"alias": "Zengram"}, "invalid alias"),
    ({"alias": "a,b"}, "invalid alias"),
    ({"refresh": "sometimes"}, "refresh must be"),
])
def test_bad_options_are_refused(options: dict[str, Any], message: str) -> None:
    index_options = {name: value for name, value in options.items() if name in ("alias", "refresh")}
    client_options = {name: value for name, value in options.items() if name not in index_options}
    with pytest.raises(ValueError, match=message):
        OpenSearchIndex(ClientOptions("http://127.0.0.1:9", **client_options), **index_options)


# -- OpenSearch Serverless (aoss) ------------------------------------------------------------------------

@pytest.fixture
def serverless(fake: FakeOpenSearch) -> OpenSearchIndex:
    index = adapter(fake, auth="sigv4", aws_service="aoss", aws_region="us-east-1",
                    aws_credentials=dummy_credentials(), refresh=False)
    index.bind_model(MODEL, 4)
    fake.requests.clear()
    return index


def test_serverless_defaults_to_faiss_and_sends_no_refresh(fake: FakeOpenSearch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        index = adapter(fake, auth="sigv4", aws_service="aoss", aws_region="us-east-1",
                        aws_credentials=dummy_credentials(), refresh="wait_for")
    assert "no refresh parameter" in caplog.text
    index.bind_model(MODEL, 4)
    index.upsert([document("a")])
    assert engine_of(fake) == "faiss"
    assert only(fake.requests_to("POST", "_bulk$")).query == {}


def test_serverless_writes_let_the_server_assign_ids(fake: FakeOpenSearch, serverless: OpenSearchIndex) -> None:
    serverless.upsert([document("a", "first words")])
    assert trail(fake) == [f"POST /{ALIAS}/_search", f"POST /{ALIAS}/_bulk"]
    lookup = fake.requests[0].json()
    assert lookup["query"] == {"terms": {"id": ["a"]}}
    kind, header, source = next(iter_bulk(fake.requests[1]))
    assert (kind, header, source and source["id"]) == ("index", {}, "a")

    fake.requests.clear()
    serverless.upsert([document("a", "second words")])  # the new copy goes in, then the old one out
    index_request, delete_request = fake.requests_to("POST", "_bulk$")
    old_id = next(iter_bulk(delete_request))[1]["_id"]
    assert next(iter_bulk(index_request))[1] == {}
    assert [source["text"] for source in fake.indices[CONCRETE].docs.values()] == ["second words"]
    assert old_id not in fake.indices[CONCRETE].docs


def test_serverless_checks_the_alias_once_before_writing(fake: FakeOpenSearch, serverless: OpenSearchIndex) -> None:
    # Serverless gets no require_alias, so a fresh process makes sure the alias exists before its first write
    # rather than let a write create a bare index under the alias name.
    fresh = adapter(fake, auth="sigv4", aws_service="aoss", aws_region="us-east-1",
                    aws_credentials=dummy_credentials(), refresh=False)
    fresh.upsert([document("a")])
    fresh.upsert([document("b")])
    assert [r for r in trail(fake) if r.startswith("HEAD")] == [f"HEAD /_alias/{ALIAS}"]


def test_serverless_updates_and_deletes_resolve_the_server_ids(fake: FakeOpenSearch,
                                                               serverless: OpenSearchIndex) -> None:
    serverless.upsert([document("a"), document("b")])
    stored = {source["id"]: doc_id for doc_id, source in fake.indices[CONCRETE].docs.items()}
    fake.requests.clear()

    serverless.set_attributes({"a": attributes(active=False), "unknown": attributes()})
    update = only(fake.requests_to("POST", "_bulk$"))
    assert [(kind, header) for kind, header, _ in iter_bulk(update)] == [("update", {"_id": stored["a"]})]

    serverless.delete(["b", "never-existed"])
    delete = fake.requests_to("POST", "_bulk$")[-1]
    assert delete.ndjson() == [{"delete": {"_id": stored["b"]}}]
    assert serverless.count() == 1


def test_serverless_duplicates_count_once_in_hits(fake: FakeOpenSearch, serverless: OpenSearchIndex) -> None:
    fake.search_hits = [("a", 0.9), ("a", 0.7), ("b", 0.8)]
    assert [hit.id for hit in serverless.vector_search(unit(1), SearchFilters(), k=5)] == ["a", "b"]


# -- cold starts ---------------------------------------------------------------------------------------

def test_importing_the_adapter_loads_neither_opensearchpy_nor_botocore() -> None:
    code = ("import sys, zengram.adapters.opensearch; "
            "print(sorted(m for m in ('opensearchpy', 'botocore', 'boto3', 'requests') if m in sys.modules))")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


# -- scopes (the chat layer's documents share the index) -------------------------------------------------

def test_an_index_made_before_scopes_gets_the_scope_field_added_once(fake: FakeOpenSearch) -> None:
    body = json.loads(MAPPING_FILE.read_text("utf-8"))
    del body["mappings"]["properties"]["scope"]
    body["mappings"]["_meta"] = {"mapping_version": 2, "model_id": MODEL, "dimension": 4}
    fake.add_index(CONCRETE, ALIAS, body)
    index = adapter(fake)

    assert index.model_id == MODEL
    assert index.model_id == MODEL
    assert only(fake.requests_to("PUT", f"^/{ALIAS}/_mapping$")).json() == {
        "properties": {"scope": {"type": "keyword"}}}


def test_a_new_index_has_the_scope_field_and_is_not_changed(fake: FakeOpenSearch, bound: OpenSearchIndex) -> None:
    assert bound.model_id == MODEL
    assert fake.requests_to("PUT", f"^/{ALIAS}/_mapping$") == []
    assert fake.indices[CONCRETE].mappings["properties"]["scope"] == {"type": "keyword"}


def test_memories_are_written_without_a_scope_and_chat_documents_with_theirs(fake: FakeOpenSearch,
                                                                             bound: OpenSearchIndex) -> None:
    bound.upsert([document("memory"), document("note", scope="chat:alice")])
    bound.set_attributes({"memory": attributes(), "note": attributes(scope="chat:team")})

    written = [(kind, source) for request in fake.requests_to("POST", "_bulk$")
               for kind, _, source in iter_bulk(request)]
    assert [("scope" in (source or {}).get("doc", source or {})) for _, source in written] == [False, True, False, True]
    assert written[1][1] is not None and written[1][1]["scope"] == "chat:alice"
    assert written[3][1] is not None and written[3][1]["doc"]["scope"] == "chat:team"
