"""Every function of template.yaml answers `sam local invoke` in its own Lambda container (the locally built
python3.13 base image, the layer as `sam build` builds it), against the local cloud: DynamoDB and Secrets Manager on
moto's server, the real OpenSearch node, the MiniLM embeddings endpoint (infra/local_cloud, docs/local-cloud.md).

Each function gets a sample event from events/ (infra/scripts/make_events.py). An HTTP event reaches its function
the way API Gateway delivers it: the key is the local cloud's, verified by the authorizer function in its container,
and the verdict is in `requestContext.authorizer.lambda` (infra/local_cloud/invoke.py). Each answer is checked for
its status and body, and, where the function writes, for what it wrote.

Needs podman (its Docker API), the Lambda base image, the SAM CLI venv, Java and Maven (the OpenSearch node):
without them the module is skipped with the reason, and fails instead under CI=true (or
ZENGRAM_REQUIRE_CONTAINERS=1: tests/e2e/containers.py). The invocations run two at a
time (a container start and a cold init each); the cloud is started once for the module and stopped after it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.e2e.containers import unusable
from tests.support import REPO_ROOT

pytestmark = [pytest.mark.timeout(3600), pytest.mark.xdist_group("e2e")]  # one worker, one cloud (conftest)

EVENTS = REPO_ROOT / "events"
PARALLEL_INVOCATIONS = 2


def unusable_reason() -> str | None:
    """Why the local cloud cannot run here, or None."""
    import shutil

    from infra.local_cloud import sam

    if not sam.SAM.exists():
        return "no SAM CLI (.venv-sam: `make install`)"
    if shutil.which("podman") is None:
        return "no podman (`make podman`)"
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        return f"no {' and '.join(missing)} for the OpenSearch node"
    try:
        host = sam.docker_host()
        sam.ensure_base_image(host)
    except Exception as error:  # whatever makes the engine or the image unusable is the reason
        return f"podman or the Lambda base image is unusable: {error}"
    return None


@pytest.fixture(scope="module")
def cloud(local_cloud: dict[str, Any]) -> dict[str, Any]:
    """The session's local cloud (tests/e2e/conftest.py): one cloud for the whole e2e suite."""
    reason = unusable_reason()
    if reason is not None:
        unusable(reason)
    return local_cloud


@dataclass(frozen=True)
class Answer:
    function: str
    event: dict[str, Any]
    payload: Any
    seconds: float
    error: str | None = None  # why there is no answer (the invocation itself failed)

    @property
    def status(self) -> int:
        return int(self.payload["statusCode"])

    @property
    def body(self) -> Any:
        return json.loads(self.payload["body"])


def sample(relative: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / relative).read_text())
    return event


# ---- what runs before the invocations: a job for the documents step, a pre-signed URL for the bootstrap ----


def pending_documents_job(state: dict[str, Any]) -> str:
    """A queued indexing job in the documents table (as POST /kb/index leaves it), for the step function to fail."""
    from zengram.adapters.dynamodb.documents import DynamoDBDocumentTables
    from zengram.documents.domain.models import IndexJob

    from infra.local_cloud import provision

    tables = DynamoDBDocumentTables(state["tables"]["documents"],
                                    client=provision.client("dynamodb", state["moto_url"]))
    job = IndexJob(id=uuid.uuid4().hex, folder_path=f"s3://{state['documents_bucket']}/handbook",
                   enqueued_at=datetime.now(UTC))
    tables.jobs.put(job)
    return job.id


@dataclass(frozen=True)
class Case:
    function: str
    event: str
    prepare: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None


def with_job(event: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    return {**event, "job_id": pending_documents_job(state)}


def with_answer_url(event: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    from infra.local_cloud import provision

    url, key = provision.answer_url(state["container_urls"]["moto"])
    prepared = provision.custom_resource_event("Update", url, state["stage"])
    prepared["answer_key"] = key  # not CloudFormation's: the test's note of where to read the answer
    return prepared


CASES = {case.function: case for case in (
    Case("KeyAuthorizerFunction", "authorizer/api_key.json"),
    Case("HealthFunction", "health/get_health.json"),
    Case("MemoryFunction", "memory/post_memory.json"),
    Case("BriefingFunction", "briefing/get_stats.json"),
    Case("ExportFunction", "export/get_export.json"),
    Case("EntitiesFunction", "entities/get_entity_stats.json"),
    Case("ClientsFunction", "clients/put_client.json"),
    Case("AdminFunction", "admin/list_keys.json"),
    Case("RepairFunction", "repair/scheduled_repair.json"),
    Case("ResearchFunction", "research/post_research.json"),
    Case("ResearchStepFunction", "research_step/retrieve.json"),
    Case("ReflectFunction", "reflect/post_reflect_invalid.json"),
    Case("ConsolidateFunction", "consolidate/get_status.json"),
    Case("DocumentsFunction", "documents/get_status.json"),
    Case("DocumentsStepFunction", "documents_step/fail.json", with_job),
    Case("DocumentsWatchFunction", "documents_watch/bucket_changes.json"),
    Case("ChatFunction", "chat/put_state.json"),
    Case("ChatDataFunction", "chat_data/post_memory.json"),
    Case("ChatLearningFunction", "chat_learning/scheduled_sweep.json"),
    Case("IndexBootstrapFunction", "bootstrap/update.json", with_answer_url),
)}


def invoke_case(case: Case, state: dict[str, Any]) -> Answer:
    """One invocation; a failure to invoke at all is kept as the answer's error (each test reports its own)."""
    from infra.local_cloud import invoke

    event: dict[str, Any] = {}
    try:
        event = invoke.prepare(sample(case.event), state)
        if case.prepare is not None:
            event = case.prepare(event, state)
        payload, seconds, _ = invoke.sam_invoke(case.function, event, state)
    except Exception as error:  # reported by the function's own test, not as an error of every test
        return Answer(case.function, event, None, 0.0, error=f"{type(error).__name__}: {error}")
    return Answer(case.function, event, payload, seconds)


@pytest.fixture(scope="module")
def answers(cloud: dict[str, Any]) -> dict[str, Answer]:
    """Every function invoked once (a memory is stored first, so the readers have something to read)."""
    started = time.monotonic()
    results = {"MemoryFunction": invoke_case(CASES["MemoryFunction"], cloud)}
    others = [case for name, case in CASES.items() if name != "MemoryFunction"]
    with ThreadPoolExecutor(PARALLEL_INVOCATIONS) as pool:
        for answer in pool.map(lambda case: invoke_case(case, cloud), others):
            results[answer.function] = answer
    timings = {name: round(answer.seconds, 1) for name, answer in results.items()}
    print(f"\nsam local invoke, {len(results)} functions in {time.monotonic() - started:.0f} s: {timings}")
    return results


@pytest.fixture
def answer_of(answers: dict[str, Answer]) -> Callable[[str], Answer]:
    def answer(function: str) -> Answer:
        found = answers[function]
        assert found.error is None, found.error
        assert not (isinstance(found.payload, dict) and "errorMessage" in found.payload), found.payload
        return found

    return answer


def test_every_function_of_the_template_has_a_case() -> None:
    from tests.infra.template_model import functions, load_template

    assert {function.logical_id for function in functions(load_template())} == set(CASES)


def test_the_authorizer_verifies_the_key_and_passes_its_scope(answer_of: Callable[[str], Answer],
                                                             cloud: dict[str, Any]) -> None:
    from infra.local_cloud import invoke

    assert answer_of("KeyAuthorizerFunction").payload == {"isAuthorized": True, "context": {
        "key_id": "bootstrap", "name": "bootstrap admin key (BRAIN_API_KEY)", "role": "admin", "clients": "null"}}
    refused = invoke.invoke_through_start_lambda(cloud["lambda_url"], "KeyAuthorizerFunction",
                                                 sample("authorizer/invalid_key.json"))
    assert refused == {"isAuthorized": False}


def test_health_checks_every_backend(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("HealthFunction")
    assert answer.status == 200
    assert answer.body["checks"] == {"records": "up", "search_index": "up", "embeddings": "up"}


def test_memory_stores_in_dynamodb_and_opensearch(answer_of: Callable[[str], Answer], cloud: dict[str, Any]) -> None:
    answer = answer_of("MemoryFunction")
    assert answer.status in (200, 201), answer.payload
    assert answer.body["stored_in"] == {"vector": True, "structured_db": True}
    from infra.local_cloud import provision

    item = provision.client("dynamodb", cloud["moto_url"]).get_item(
        TableName=cloud["tables"]["memory"], Key={"pk": {"S": f"MEMORY#{answer.body['id']}"}, "sk": {"S": "MEMORY"}})
    assert item["Item"]["content"]["S"] == "Acme Corp uses Next.js 14 with App Router"


def test_briefing_counts_the_stored_memory(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("BriefingFunction")
    assert answer.status == 200
    assert answer.body["total_memories"] >= 1 and answer.body["by_type"]["fact"] >= 1


def test_export_lists_the_clients_memories(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("ExportFunction")
    assert answer.status == 200
    contents = [memory["content"] for memory in answer.body["memories"]]
    assert "Acme Corp uses Next.js 14 with App Router" in contents


def test_entities_counts_what_the_memory_mentions(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("EntitiesFunction")
    assert answer.status == 200
    assert answer.body["total"] >= 1


def test_clients_stores_a_fingerprint(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("ClientsFunction")
    assert answer.status == 201, answer.payload  # a new fingerprint
    assert answer.body["client_id"] == "acme-corp" and answer.body["name"] == "Acme Corporation"


def test_admin_lists_keys(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("AdminFunction")
    assert answer.status == 200
    assert isinstance(answer.body["keys"], list)


def test_the_repair_sweep_finds_nothing_pending(answer_of: Callable[[str], Answer]) -> None:
    assert answer_of("RepairFunction").payload == {"repaired": 0, "failed": 0, "parked": 0, "requeued": 0,
                                                 "stopped": None, "pending_index": 0}


def test_research_is_off_unless_enabled(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("ResearchFunction")  # ResearchEnabled defaults to false
    assert answer.status == 503 and "error" in answer.body


def test_the_research_retrieve_step_finds_the_memory(answer_of: Callable[[str], Answer]) -> None:
    state = answer_of("ResearchStepFunction").payload
    assert state["iterations"] == 1 and len(state["memory_ids"]) >= 1
    assert state["query_trace"][0]["retrieved"] >= 1


def test_reflect_refuses_an_invalid_request(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("ReflectFunction")
    assert answer.status in (400, 422) and "error" in answer.body


def test_consolidation_status(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("ConsolidateFunction")
    assert answer.status == 200
    assert "last_run_at" in answer.body


def test_the_document_base_reports_its_status(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("DocumentsFunction")
    assert answer.status == 200, answer.payload
    assert "total_documents" in answer.body


def test_the_documents_fail_step_fails_the_job(answer_of: Callable[[str], Answer], cloud: dict[str, Any]) -> None:
    answer = answer_of("DocumentsStepFunction")
    job_id = answer.event["job_id"]
    assert answer.payload == {"job_id": job_id, "wait": False, "done": True, "status": "failed"}
    from zengram.adapters.dynamodb.documents import DynamoDBDocumentTables

    from infra.local_cloud import provision

    job = DynamoDBDocumentTables(cloud["tables"]["documents"],
                                 client=provision.client("dynamodb", cloud["moto_url"])).jobs.get(job_id)
    assert job is not None and job.status.value == "failed" and "ran out of memory" in (job.error or "")


def test_the_watch_function_reads_bucket_events_of_no_watched_folder(answer_of: Callable[[str], Answer]) -> None:
    """Its sample batch names two objects under handbook/, which no test indexes with watch_mode auto."""
    assert answer_of("DocumentsWatchFunction").payload == {"changed_folders": [], "queued_jobs": []}


def test_chat_state_is_stored(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("ChatFunction")
    assert answer.status in (200, 201), answer.payload
    assert answer.body["value"] == {"step": 3, "next": "book hotels"}


def test_chat_memory_is_stored(answer_of: Callable[[str], Answer]) -> None:
    answer = answer_of("ChatDataFunction")
    assert answer.status in (200, 201), answer.payload
    assert answer.body["text"] == "User is vegetarian and enjoys Italian cuisine"


def test_the_learning_sweep_finds_no_due_job(answer_of: Callable[[str], Answer]) -> None:
    payload = answer_of("ChatLearningFunction").payload
    assert isinstance(payload, dict) and "errorMessage" not in payload


def test_the_index_bootstrap_answers_cloudformation(answer_of: Callable[[str], Answer], cloud: dict[str, Any]) -> None:
    from infra.local_cloud import provision

    answer = answer_of("IndexBootstrapFunction")
    reply = provision.read_answer(cloud["moto_url"], answer.event["answer_key"])
    assert reply["Status"] == "SUCCESS", reply
    assert reply["PhysicalResourceId"] == f"zengram-{cloud['stage']}-memories"


