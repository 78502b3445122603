"""The document knowledge base's services end to end, on every record backend (SQLite, DynamoDB on moto):
indexing jobs, re-indexing without stale or duplicate chunks, path confinement, the five query modes and the
code graph. The embedder is the deterministic hashing one: these tests are about mechanics, not meaning."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from zengram.documents.domain.models import (
    FileRecord,
    IndexJobStatus,
    IndexOperation,
    IndexOptions,
    SourceType,
    chunk_id_for,
)
from zengram.documents.domain.query import DocumentQuery, QueryMode
from zengram.documents.services.query import IndexNotReady
from zengram.documents.wiring import DocumentsContainer
from zengram.kernel.errors import Conflict, Forbidden, InvalidInput

from tests.documents.backends import BACKENDS, documents_container
from tests.support import REPO_ROOT, HashingEmbedder

SAMPLE = REPO_ROOT / "tests" / "data" / "kb_sample"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(SAMPLE, folder / "sample")
    return folder


@pytest.fixture(params=BACKENDS)
def kb(request: pytest.FixtureRequest, tmp_path: Path, root: Path) -> Iterator[DocumentsContainer]:
    with documents_container(request.param, tmp_path, [root], HashingEmbedder()) as container:
        yield container


def index(kb: DocumentsContainer, folder: Path, operation: IndexOperation = IndexOperation.INDEX,
          **options: object) -> str:
    queued = kb.indexing.enqueue(str(folder), operation, IndexOptions(**options))  # type: ignore[arg-type]
    assert kb.launcher.wait_idle(60)  # type: ignore[attr-defined]
    job = kb.indexing.job(queued.job.id)
    assert job.status is IndexJobStatus.DONE, job.error
    return job.id


def ask(kb: DocumentsContainer, text: str, mode: QueryMode = QueryMode.HYBRID, **fields: object) -> list[str]:
    request = DocumentQuery(query=text, mode=mode, similarity_threshold=0.0, top_k=20, **fields)  # type: ignore[arg-type]
    return [f"{Path(result.source).name}:{result.metadata.get('symbol') or result.metadata.get('section') or ''}"
            for result in kb.queries.query(request).results]


def every_chunk_id(kb: DocumentsContainer, folder: Path) -> list[str]:
    """What the store holds for each file record (a file's ids from its record)."""
    records = list(kb.indexing._chunks.files_under(str(folder), recursive=True))
    return [chunk_id for record in records for chunk_id in record.chunk_ids()]


def test_a_query_before_any_index_is_503(kb: DocumentsContainer) -> None:
    with pytest.raises(IndexNotReady):
        kb.queries.query(DocumentQuery(query="anything"))
    assert not kb.queries.is_ready()


def test_indexing_a_mixed_folder(kb: DocumentsContainer, root: Path) -> None:
    job_id = index(kb, root / "sample")
    job = kb.indexing.job(job_id)
    status = kb.queries.status()
    assert status.counts.documents == 6 == job.total_documents
    assert status.counts.chunks == job.total_chunks == job.progress.chunks_created > 6
    assert status.counts.entities > 10 and status.counts.relationships > 20
    assert job.progress.files_processed == job.progress.files_total == 6
    assert [folder.folder_path for folder in status.indexed_folders] == [str(root / "sample")]
    assert kb.queries.is_ready() and not status.indexing_in_progress
    # the tests' hashing embedder has no calibrated scores: the BM25 ranking is read without a threshold
    pdf = kb.queries.query(DocumentQuery(query="paid leave vacation days", mode=QueryMode.BM25,
                                         similarity_threshold=0.0)).results[0]
    assert pdf.source.endswith("handbook.pdf") and pdf.metadata["page"] == 1 and pdf.source_type == "doc"
    guide = kb.queries.query(DocumentQuery(query="partial refunds card", mode=QueryMode.BM25,
                                           similarity_threshold=0.0)).results[0]
    assert guide.metadata["section"] == "Billing service guide > Invoices > Refunds"
    code = kb.queries.query(DocumentQuery(query="charge card gateway receipt", mode=QueryMode.BM25,
                                          similarity_threshold=0.0)).results[0]
    assert (code.metadata["symbol"], code.language, code.source_type) == ("charge_card", "python", "code")


def test_reindexing_an_unchanged_folder_skips_every_file(kb: DocumentsContainer, root: Path) -> None:
    index(kb, root / "sample")
    before = sorted(every_chunk_id(kb, root / "sample"))
    second = kb.indexing.job(index(kb, root / "sample"))
    assert second.progress.chunks_created == 0 and second.total_chunks == len(before)
    assert sorted(every_chunk_id(kb, root / "sample")) == before


def test_reindexing_after_an_edit_and_a_delete_leaves_no_stale_chunk(kb: DocumentsContainer, root: Path) -> None:
    sample = root / "sample"
    index(kb, sample)
    guide, cart = sample / "docs" / "guide.md", sample / "web" / "cart.ts"
    old_guide = kb.indexing._chunks.get_file(str(guide))
    assert old_guide is not None and old_guide.chunk_count > 1
    old_cart_ids = kb.indexing._chunks.get_file(str(cart)).chunk_ids()  # type: ignore[union-attr]
    guide.write_text("# Billing service guide\n\nNow one short paragraph about zebras.\n")
    cart.unlink()

    index(kb, sample)

    stale = [chunk_id_for(str(guide), n) for n in range(1, old_guide.chunk_count)] + old_cart_ids
    assert kb.indexing._chunks.get_chunks(stale) == {}
    assert kb.indexing._chunks.get_file(str(cart)) is None
    status = kb.queries.status()
    assert status.counts.chunks == len(every_chunk_id(kb, sample)) == kb.indexing._index.count()
    assert status.counts.documents == 5
    assert ask(kb, "zebras", QueryMode.BM25) == ["guide.md:Billing service guide"]
    assert not [hit for hit in ask(kb, "ShoppingCart subtotal addItem", QueryMode.BM25) if hit.startswith("cart.ts")]
    assert not [hit for hit in ask(kb, "what calls subtotal", QueryMode.GRAPH) if hit.startswith("cart.ts")]


def test_add_keeps_files_that_are_gone(kb: DocumentsContainer, root: Path) -> None:
    sample = root / "sample"
    index(kb, sample)
    (sample / "web" / "format.ts").unlink()
    index(kb, sample, IndexOperation.ADD)
    assert kb.indexing._chunks.get_file(str(sample / "web" / "format.ts")) is not None
    index(kb, sample)
    assert kb.indexing._chunks.get_file(str(sample / "web" / "format.ts")) is None


def test_a_file_left_half_indexed_is_redone_and_its_orphans_removed(kb: DocumentsContainer, root: Path) -> None:
    """A crash between writing chunks and committing the file leaves a record without hash and with the high
    water mark: the next run must remove every position past the new count."""
    sample = root / "sample"
    index(kb, sample)
    notes = sample / "docs" / "guide.md"
    record = kb.indexing._chunks.get_file(str(notes))
    assert record is not None
    orphans = [chunk_id_for(str(notes), n) for n in range(record.chunk_count, record.chunk_count + 3)]
    kb.indexing._chunks.put_file(record.model_copy(update={"content_hash": None,
                                                           "high_water": record.chunk_count + 3}))
    some = next(iter(kb.indexing._chunks.get_chunks([record.chunk_ids()[0]]).values()))
    kb.indexing._chunks.put_chunks([some.model_copy(update={"id": orphan}) for orphan in orphans])
    index(kb, sample)
    assert kb.indexing._chunks.get_chunks(orphans) == {}
    repaired = kb.indexing._chunks.get_file(str(notes))
    assert isinstance(repaired, FileRecord) and repaired.content_hash is not None
    assert repaired.high_water == repaired.chunk_count == record.chunk_count


def test_graph_mode_answers_what_calls_a_function(kb: DocumentsContainer, root: Path) -> None:
    index(kb, root / "sample")
    hits = ask(kb, "what calls compute_total", QueryMode.GRAPH)
    # The callers first (Invoice.total and MonthlyReport.summarize live in their classes' chunks), then the
    # definition itself, then callers of callers (checkout calls Invoice.total).
    assert set(hits[:2]) == {"billing.py:Invoice", "reports.py:MonthlyReport"}
    assert hits[2] == "billing.py:compute_total"
    assert "billing.py:checkout" in hits
    assert "billing.py:refund" not in hits and "billing.py:charge_card" not in hits[:4]
    response = kb.queries.query(DocumentQuery(query="what calls compute_total", mode=QueryMode.GRAPH, top_k=3,
                                              include_relationships=True))
    invoice = next(result for result in response.results if result.metadata.get("symbol") == "Invoice")
    assert invoice.graph_score is not None and invoice.graph_score >= 0.9
    assert any(rel.type == "CALLS" and rel.target == "compute_total" and rel.source_entity == "Invoice.total"
               for rel in invoice.relationships or [])


def test_graph_depth_limits_the_walk(kb: DocumentsContainer, root: Path) -> None:
    index(kb, root / "sample")
    near = ask(kb, "what calls compute_total", QueryMode.GRAPH, traversal_depth=1)
    assert "billing.py:checkout" not in near and "billing.py:Invoice" in near


def test_graph_follows_inheritance_and_typescript(kb: DocumentsContainer, root: Path) -> None:
    index(kb, root / "sample")
    assert ask(kb, "which classes inherit from BaseReport", QueryMode.GRAPH)[0] == "reports.py:MonthlyReport"
    assert ask(kb, "what extends BaseCart", QueryMode.GRAPH)[0] == "cart.ts:ShoppingCart"
    assert "cart.ts:checkoutCart" in ask(kb, "who calls formatMoney", QueryMode.GRAPH)[:2]


def test_every_mode_answers_and_multi_fuses_the_three_legs(kb: DocumentsContainer, root: Path) -> None:
    index(kb, root / "sample")
    for mode in QueryMode:
        assert ask(kb, "compute_total invoice", mode), mode
    multi = kb.queries.query(DocumentQuery(query="what calls compute_total", mode=QueryMode.MULTI, top_k=10,
                                           similarity_threshold=0.0)).results
    assert any(result.graph_score is not None and result.bm25_score is not None for result in multi)
    assert all(0.0 <= result.score <= 1.0 for result in multi)  # one relevance scale in every mode
    assert len({result.score for result in multi}) > 1
    assert [result.score for result in multi] == sorted((result.score for result in multi), reverse=True)


def test_filters(kb: DocumentsContainer, root: Path) -> None:
    index(kb, root / "sample")
    for mode in (QueryMode.VECTOR, QueryMode.BM25, QueryMode.HYBRID, QueryMode.MULTI):
        docs = kb.queries.query(DocumentQuery(query="invoice total card", mode=mode, similarity_threshold=0.0,
                                              source_types=[SourceType.DOC], top_k=50)).results
        assert docs and {result.source_type for result in docs} == {"doc"}, mode
        typescript = kb.queries.query(DocumentQuery(query="cart item price", mode=mode, similarity_threshold=0.0,
                                                    languages=["typescript"], top_k=50)).results
        assert typescript and {result.language for result in typescript} == {"typescript"}, mode
        markdown = kb.queries.query(DocumentQuery(query="invoice refund", mode=mode, similarity_threshold=0.0,
                                                  file_paths=["docs/*.md"], top_k=50)).results
        assert markdown and {Path(result.source).name for result in markdown} == {"guide.md"}, mode
    graph = kb.queries.query(DocumentQuery(query="what calls compute_total", mode=QueryMode.GRAPH,
                                           file_paths=["*/reports.py"])).results
    assert {Path(result.source).name for result in graph} == {"reports.py"}


def test_similarity_threshold_drops_weak_vector_hits(kb: DocumentsContainer, root: Path) -> None:
    index(kb, root / "sample")
    loose = kb.queries.query(DocumentQuery(query="invoice", mode=QueryMode.VECTOR, similarity_threshold=0.0)).results
    strict = kb.queries.query(DocumentQuery(query="invoice", mode=QueryMode.VECTOR, similarity_threshold=0.99)).results
    assert loose and len(strict) < len(loose)
    assert all(result.score >= 0.99 for result in strict)


def test_include_code_false_indexes_documents_only(kb: DocumentsContainer, root: Path) -> None:
    job = kb.indexing.job(index(kb, root / "sample", include_code=False))
    assert job.total_documents == 2 and job.progress.files_skipped == 4
    assert kb.queries.status().counts.entities == 0


def test_patterns_and_presets(kb: DocumentsContainer, root: Path) -> None:
    job = kb.indexing.job(index(kb, root / "sample", include_types=("python",), exclude_patterns=("*/reports.py",)))
    assert job.total_documents == 1
    with pytest.raises(InvalidInput, match="include_types"):
        kb.indexing.enqueue(str(root / "sample"), IndexOperation.INDEX, IndexOptions(include_types=("cobol",)))


def test_folders_outside_the_roots_are_forbidden(kb: DocumentsContainer, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nthe zanzibar protocol\n")
    (root / "sample" / "escape").symlink_to(outside, target_is_directory=True)
    for attempt in ("/etc", str(root / "sample" / ".." / ".."), "../outside", str(root / "sample" / "escape")):
        with pytest.raises(Forbidden):
            kb.indexing.enqueue(attempt, IndexOperation.INDEX, IndexOptions())
    with pytest.raises(InvalidInput, match="folder_path"):
        kb.indexing.enqueue(str(root / "missing"), IndexOperation.INDEX, IndexOptions())


def test_symlinks_out_of_the_roots_are_not_followed(kb: DocumentsContainer, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nthe zanzibar protocol\n")
    (root / "sample" / "docs" / "linked.md").symlink_to(outside / "secret.md")
    (root / "sample" / "linkdir").symlink_to(outside, target_is_directory=True)
    index(kb, root / "sample")
    assert ask(kb, "zanzibar", QueryMode.BM25) == []


def test_relative_folders_resolve_against_the_first_root(kb: DocumentsContainer, root: Path) -> None:
    queued = kb.indexing.enqueue("sample", IndexOperation.INDEX, IndexOptions())
    assert queued.job.folder_path == str(root / "sample")
    kb.launcher.wait_idle(60)  # type: ignore[attr-defined]


def test_cancel_a_pending_job_and_reset(kb: DocumentsContainer, root: Path) -> None:
    index(kb, root / "sample")
    job = kb.indexing.job(index(kb, root / "sample"))
    with pytest.raises(Conflict):
        kb.indexing.cancel(job.id)
    kb.indexing.reset()
    assert kb.queries.status().counts.chunks == 0 and kb.queries.status().counts.entities == 0
    assert not kb.queries.is_ready()
    with pytest.raises(IndexNotReady):
        kb.queries.query(DocumentQuery(query="invoice"))
    assert kb.indexing._index.count() == 0
    index(kb, root / "sample")
    assert kb.queries.status().counts.documents == 6


def test_cancelling_a_running_job_stops_it(kb: DocumentsContainer, root: Path) -> None:
    """The job is cancelled from inside its own run (after its first file): it stops at the next file."""
    indexing = kb.indexing
    original = indexing._index_file
    calls = []

    def cancel_after_first(*args: object) -> tuple[int, bool]:
        calls.append(args)
        if len(calls) == 1:
            indexing.cancel(args[0].id)  # type: ignore[attr-defined]
        return original(*args)  # type: ignore[arg-type]

    indexing._index_file = cancel_after_first  # type: ignore[method-assign]
    queued = indexing.enqueue(str(root / "sample"), IndexOperation.INDEX, IndexOptions())
    kb.launcher.wait_idle(60)  # type: ignore[attr-defined]
    job = indexing.job(queued.job.id)
    assert job.status is IndexJobStatus.CANCELLED and len(calls) == 1
    assert not kb.queries.is_ready() and indexing._jobs.slot_holder() is None


def test_delete_folder(kb: DocumentsContainer, root: Path) -> None:
    index(kb, root / "sample")
    total = kb.queries.status().counts.chunks
    assert kb.indexing.delete_folder(str(root / "sample") + "/") == total
    assert kb.queries.status().counts.chunks == 0 and kb.queries.status().indexed_folders == []


def test_jobs_listing_is_newest_first(kb: DocumentsContainer, root: Path) -> None:
    first = index(kb, root / "sample")
    second = index(kb, root / "sample" / "src")
    assert [job.id for job in kb.indexing.jobs(10, 0)] == [second, first]
    assert [job.id for job in kb.indexing.jobs(1, 1)] == [first]


def test_a_restart_fails_running_jobs_and_resumes_queued_ones(kb: DocumentsContainer, root: Path) -> None:
    jobs = kb.indexing._jobs
    from zengram.adapters.system import SystemClock
    from zengram.documents.domain.models import IndexJob
    from zengram.documents.services.indexing import new_job_id

    now = SystemClock().now()
    crashed = IndexJob(id=new_job_id(now), folder_path=str(root / "sample"), enqueued_at=now).start(now, 6)
    jobs.put(crashed)
    assert jobs.acquire_slot(crashed.id)
    queued = IndexJob(id=new_job_id(now) + "z", folder_path=str(root / "sample"), enqueued_at=now)
    jobs.put(queued)
    kb.indexing.recover()
    kb.launcher.wait_idle(60)  # type: ignore[attr-defined]
    assert kb.indexing.job(crashed.id).status is IndexJobStatus.FAILED
    assert kb.indexing.job(queued.id).status is IndexJobStatus.DONE
    assert os.path.basename(kb.queries.status().indexed_folders[0].folder_path) == "sample"


def test_credentials_in_indexed_files_are_scrubbed_before_anything_stores_them(kb: DocumentsContainer,
                                                                               root: Path) -> None:
    """A private key longer than a chunk and an AWS key pair: no chunk holds them, the indexes cannot find them, and
    the keyed placeholders (the memories' scrubber key) say what was there; the text around them stays."""
    from tests.data.credential_corpus import AWS_KEY_ID, AWS_SECRET, pem_body

    private_key = pem_body("kb-deploy-key", lines=12)  # ~780 characters: cut by any 300-character chunking
    folder = root / "secrets"
    folder.mkdir()
    (folder / "deploy.md").write_text(
        "# Deploy\n\nThe bastion key, pasted by mistake:\n\n-----BEGIN RSA PRIVATE KEY-----\n"
        f"{private_key}\n-----END RSA PRIVATE KEY-----\n\nThen run the release script.\n", encoding="utf-8")
    (folder / "settings.py").write_text(
        f'AWS_ACCESS_KEY_ID = "{AWS_KEY_ID}"\nAWS_SECRET_ACCESS_KEY = "{AWS_SECRET}"\n\n\n'
        "def region() -> str:\n    return 'eu-west-1'\n", encoding="utf-8")
    index(kb, folder, chunk_size=300, chunk_overlap=50, include_code=True)

    texts = [chunk.text for chunk in kb.indexing._chunks.get_chunks(every_chunk_id(kb, folder)).values()]
    stored = "\n".join(texts)
    secrets = [AWS_KEY_ID, AWS_SECRET, *private_key.splitlines()]
    assert not [secret for secret in secrets if secret in stored]
    assert "[REDACTED:private-key:" in stored and "[REDACTED:aws-access-key-id:" in stored
    assert "Then run the release script." in stored and "def region() -> str:" in stored
    for secret in (AWS_KEY_ID, private_key.splitlines()[5]):
        results = kb.queries.query(DocumentQuery(query=secret, mode=QueryMode.BM25, top_k=20)).results
        assert not any(secret in result.text for result in results)
    assert ask(kb, "release script", QueryMode.BM25)  # the rest is searchable as ever
