"""Stores LoCoMo turns through the public HTTP API of a real embedded Zengram and asks every question."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import httpx
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.settings import Settings

from bench.paths import DATA, MODEL_CACHE
from bench.recall.data import Conversation
from bench.recall.metrics import Outcome
from bench.stores import wait_for_keyword_postings, wait_for_vector_graph

API_KEY = "recall-key"
SOURCE_AGENT = "locomo"
CACHE_DIR = DATA / "recall-cache"
ROOT = Path(__file__).resolve().parents[2]
# Settings read when a memory is indexed; any other setting only changes searches, so a store built
# under the same index-time settings (and the same indexing code) can be reused.
INDEX_TIME_PREFIXES = ("index_", "retrieval_profile", "embedder", "minilm_model_dir", "minilm_runtime")
INDEX_CODE = (
    "shared/zengram/kernel/text.py", "shared/zengram/memory/domain/models.py",
    "shared/zengram/memory/domain/context.py",
    "shared/zengram/memory/domain/retrieval.py",
    "shared/zengram/memory/services/indexing.py", "shared/zengram/memory/services/context.py",
    "shared/zengram/adapters/sqlite/search_index.py", "shared/zengram/adapters/sqlite/index_file.py",
    "shared/zengram/adapters/sqlite/records.py",
    "bench/recall/data.py",
)


def index_fingerprint(overrides: dict[str, str], data_path: Path, *, speakers_as_people: bool = False) -> str:
    """Keyed by the effective index-time settings (so a changed default rebuilds), the data and the code."""
    settings = Settings(data_dir=CACHE_DIR, api_key=API_KEY, **overrides)  # type: ignore[arg-type]
    index_time = {k: v for k, v in settings.model_dump(mode="json").items() if k.startswith(INDEX_TIME_PREFIXES)}
    if speakers_as_people:  # the entities extracted at write time differ
        index_time["bench_speakers_as_people"] = True
    digest = hashlib.sha256()
    digest.update(json.dumps(index_time, sort_keys=True).encode())
    digest.update(hashlib.sha256(data_path.read_bytes()).digest())
    for name in INDEX_CODE:
        path = ROOT / name
        if path.exists():
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@contextmanager
def serve(data_dir: Path, overrides: dict[str, str]) -> Iterator[httpx.Client]:
    settings = Settings(data_dir=data_dir, api_key=API_KEY, rate_limit_enabled=False,  # ingest is thousands of POSTs
                        minilm_cache_dir=MODEL_CACHE, **overrides)  # type: ignore[arg-type]
    container = build_container(settings)
    try:
        wait_for_vector_graph(container)  # with vector_ann_min_rows=0: measure the graph, not the scan before it
        wait_for_keyword_postings(container)  # likewise keyword_memory_min_rows=0
        app = build_embedded_app(settings, container)
        with BackgroundServer(app) as server, httpx.Client(
            base_url=server.url, headers={"x-api-key": API_KEY}, timeout=120.0
        ) as client:
            yield client
    finally:
        container.close()


def ingest(client: httpx.Client, conversations: list[Conversation], progress: Callable[[str], None], *,
           speakers_as_people: bool = False) -> dict[str, dict[str, list[tuple[int, int]]]]:
    """POSTs every turn in order; returns conversation → memory id → the dia_ids stored as it.

    `speakers_as_people`: first registers each conversation as a client whose people are its speakers
    (PUT /clients/{id}), so entity extraction finds them in turns and questions (for the graph path)."""
    mapping: dict[str, dict[str, list[tuple[int, int]]]] = {}
    for conversation in conversations:
        if speakers_as_people:
            speakers = sorted({turn.speaker for turn in conversation.turns})
            client.put(f"/clients/{conversation.sample_id}", json={"people": speakers}).raise_for_status()
        ids: dict[str, list[tuple[int, int]]] = {}
        started = time.perf_counter()
        for turn in conversation.turns:
            response = client.post("/memory", json={
                "type": "event", "content": turn.content, "source_agent": SOURCE_AGENT,
                "client_id": conversation.sample_id, "valid_from": turn.session_date.isoformat(),
            })
            response.raise_for_status()
            ids.setdefault(response.json()["id"], []).append(turn.dia_id)
        mapping[conversation.sample_id] = ids
        progress(f"stored {conversation.sample_id}: {len(conversation.turns)} turns as {len(ids)} memories "
                 f"in {time.perf_counter() - started:.0f}s")
    return mapping


def prepared_store(conversations: list[Conversation], overrides: dict[str, str], data_path: Path,
                   progress: Callable[[str], None], *, fresh: bool, speakers_as_people: bool = False) -> Path:
    """A pristine store for these index-time settings: from the cache, or built now and cached."""
    cached = CACHE_DIR / index_fingerprint(overrides, data_path, speakers_as_people=speakers_as_people)
    if fresh and cached.exists():
        shutil.rmtree(cached)
    if (cached / "ids.json").exists():
        progress(f"reusing cached store {cached}")
        return cached
    building = Path(tempfile.mkdtemp(prefix="recall-build-"))
    with serve(building, overrides) as client:
        mapping = ingest(client, conversations, progress, speakers_as_people=speakers_as_people)
    (building / "ids.json").write_text(json.dumps(mapping))
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    if cached.exists():
        shutil.rmtree(cached)
    shutil.move(str(building), cached)
    return cached


def conversation_end(conversation: Conversation) -> datetime:
    """The conversation's "now": when its last session took place (LoCoMo questions carry no date)."""
    return max(turn.session_date for turn in conversation.turns)


def ask(pristine: Path, conversations: list[Conversation], overrides: dict[str, str], *,
        limit: int = 50, search_format: str = "index", reference_dates: bool = False,
        read_only: bool = False) -> list[Outcome]:
    """Asks every question against a scratch copy of the store (searches write access counts).

    `reference_dates`: each search passes `reference_date` = the conversation's end, the moment relative
    dates in questions ("last week", "in June") are resolved against by the temporal resolver. `read_only`: each
    search passes `read_only=true`, so no question is ranked on the hits of the questions before it."""
    mapping: dict[str, dict[str, list[list[int]]]] = json.loads((pristine / "ids.json").read_text())
    with tempfile.TemporaryDirectory(prefix="recall-run-") as scratch:
        work = Path(scratch) / "store"
        shutil.copytree(pristine, work)
        with serve(work, overrides) as client:
            return ask_through(client, conversations, mapping, limit=limit, search_format=search_format,
                               reference_dates=reference_dates, read_only=read_only)


def ask_through(client: httpx.Client, conversations: list[Conversation],
                mapping: Mapping[str, Mapping[str, Iterable[Sequence[int]]]], *,
                limit: int = 50, search_format: str = "index", reference_dates: bool = False,
                read_only: bool = False) -> list[Outcome]:
    """Asks every question through a running server's GET /memory/search, timing each on the client side.

    `mapping` is `ingest`'s answer: conversation → memory id → the dia_ids stored as it. `reference_dates`: as
    for `ask`.
    """
    client.get("/memory/search", params={"q": "warm up", "limit": 1})
    outcomes: list[Outcome] = []
    for conversation in conversations:
        dia = {memory_id: frozenset((s, t) for s, t in ids)
               for memory_id, ids in mapping[conversation.sample_id].items()}
        params: dict[str, str | int] = {"client_id": conversation.sample_id, "limit": limit, "format": search_format}
        if reference_dates:
            params["reference_date"] = conversation_end(conversation).isoformat()
        if read_only:
            params["read_only"] = "true"
        for question in conversation.questions:
            started = time.perf_counter()
            response = client.get("/memory/search", params={"q": question.text, **params})
            elapsed = (time.perf_counter() - started) * 1000
            response.raise_for_status()
            ranked = [dia.get(hit["id"], frozenset()) for hit in response.json()["results"]]
            outcomes.append(Outcome(question.category, question.evidence, ranked, elapsed))
    return outcomes
