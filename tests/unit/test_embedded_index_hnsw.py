"""The embedded index's HNSW graph (above `ann_min_rows`): its answers match the exact scan's, filters and deletes
hold, it is built in the background on open and follows writes made during and after the build — off the write
path: a row not yet in the graph is still found, scored exactly, and a removed or replaced one is never stale."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from zengram.adapters.sqlite import EmbeddedSearchIndex, ann
from zengram.adapters.sqlite.ann import GraphRows, HnswGraph
from zengram.kernel.search import IndexAttributes, IndexDocument, IndexHit, SearchFilters

DIMENSION = 48
ROWS = 3000
BUILD_TIMEOUT = 120.0  # generous: a wait, never a speed assertion
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def clustered_vectors(count: int, seed: int) -> npt.NDArray[np.float32]:
    """Unit vectors around a few dozen centres, like embeddings of related texts (uniform noise is unrealistic)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, DIMENSION))
    vectors = centres[rng.integers(0, len(centres), count)] + rng.normal(scale=0.6, size=(count, DIMENSION))
    unit: npt.NDArray[np.float32] = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return unit


def documents(vectors: npt.NDArray[np.float32], start: int = 0) -> list[IndexDocument]:
    return [IndexDocument(f"m{start + i:05d}", f"text {start + i}", vector,
                          IndexAttributes(type="event", source_agent="agent", client_id=f"c{(start + i) % 2}",
                                          category="episodic", valid_from=T0, created_at=T0))
            for i, vector in enumerate(vectors)]


def open_index(path: Path, ann_min_rows: int | None) -> EmbeddedSearchIndex:
    index = EmbeddedSearchIndex(path, ann_min_rows=ann_min_rows)
    index.bind_model("test:random", DIMENSION)
    return index


@pytest.fixture
def stored(tmp_path: Path) -> npt.NDArray[np.float32]:
    """ROWS vectors written to `tmp_path/index.sqlite3` by an index without a graph."""
    vectors = clustered_vectors(ROWS, seed=1)
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=None)
    index.upsert(documents(vectors))
    index.close()
    return vectors


@pytest.fixture
def graph_searches(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One entry per vector search that asked the graph: whether it answered (False while building)."""
    asked: list[bool] = []
    original = HnswGraph.nearest_rows

    def recording(self: HnswGraph, query: npt.NDArray[np.float32], count: int) -> npt.NDArray[np.int64] | None:
        rows = original(self, query, count)
        asked.append(rows is not None)
        return rows

    monkeypatch.setattr(HnswGraph, "nearest_rows", recording)
    return asked


def exact_top(vectors: npt.NDArray[np.float32], query: npt.NDArray[np.float32], k: int,
              keep: Callable[[int], bool] = lambda _: True) -> list[str]:
    order = np.argsort(-(vectors @ query), kind="stable")
    return [f"m{row:05d}" for row in order if keep(int(row))][:k]


def test_graph_answers_match_the_exact_scan(tmp_path: Path, stored: npt.NDArray[np.float32],
                                            graph_searches: list[bool]) -> None:
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert index.wait_for_graph(BUILD_TIMEOUT)
    queries = clustered_vectors(60, seed=2)
    found = 0
    for query in queries:
        hits = index.vector_search(query, SearchFilters(), k=10)
        assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
        found += len({hit.id for hit in hits} & set(exact_top(stored, query, 10)))
    index.close()
    assert found / (10 * len(queries)) >= 0.95
    assert graph_searches and all(graph_searches)


def test_graph_hits_are_rescored_exactly_and_honour_filters(tmp_path: Path, stored: npt.NDArray[np.float32],
                                                            graph_searches: list[bool]) -> None:
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert index.wait_for_graph(BUILD_TIMEOUT)
    query = clustered_vectors(1, seed=3)[0]
    hits = index.vector_search(query, SearchFilters(client_id="c1"), k=10)  # half the rows: a broad filter
    index.close()
    assert graph_searches == [True]
    assert all(int(hit.id[1:]) % 2 == 1 for hit in hits)
    for hit in hits:
        assert hit.score == pytest.approx(float(stored[int(hit.id[1:])] @ query), abs=1e-5)
    assert len(set(ids(hits)) & set(exact_top(stored, query, 10, keep=lambda row: row % 2 == 1))) >= 9


def test_too_few_graph_candidates_past_the_filters_fall_back_to_the_exact_scan(
        tmp_path: Path, stored: npt.NDArray[np.float32], graph_searches: list[bool]) -> None:
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert index.wait_for_graph(BUILD_TIMEOUT)
    query = clustered_vectors(1, seed=4)[0]
    # ask for more rows than the graph's over-fetch can bring back past a filter that keeps half of them
    hits = index.vector_search(query, SearchFilters(client_id="c0"), k=ROWS // 2)
    index.close()
    assert graph_searches == [True]
    assert sorted(ids(hits)) == sorted(f"m{row:05d}" for row in range(0, ROWS, 2))


def test_deletes_and_new_vectors_reach_the_graph(tmp_path: Path, stored: npt.NDArray[np.float32],
                                                 graph_searches: list[bool]) -> None:
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert index.wait_for_graph(BUILD_TIMEOUT)
    query = stored[7]
    assert ids(index.vector_search(query, SearchFilters(), k=1)) == ["m00007"]
    index.delete(["m00007"])
    assert "m00007" not in ids(index.vector_search(query, SearchFilters(), k=10))
    moved = documents(stored[[42]], start=11)  # m00011 re-embedded: it now has m00042's vector
    index.upsert(moved)
    assert set(ids(index.vector_search(stored[42], SearchFilters(), k=2))) == {"m00011", "m00042"}
    assert "m00011" not in ids(index.vector_search(stored[11], SearchFilters(), k=10))
    index.close()
    assert graph_searches and all(graph_searches)


def test_writes_made_while_the_graph_builds_are_applied_after_it(
        tmp_path: Path, stored: npt.NDArray[np.float32], monkeypatch: pytest.MonkeyPatch,
        graph_searches: list[bool]) -> None:
    read, release = threading.Event(), threading.Event()
    original = HnswGraph.start_build

    def held(self: HnswGraph, rows: Callable[[], GraphRows], *, background: bool, saved: Path | None = None) -> None:
        def read_then_wait() -> GraphRows:  # the build has read the rows it starts from; it waits after that
            seen = rows()
            read.set()
            release.wait(BUILD_TIMEOUT)
            return seen

        original(self, read_then_wait, background=background, saved=saved)

    monkeypatch.setattr(HnswGraph, "start_build", held)
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=1000)
    assert read.wait(BUILD_TIMEOUT)
    new = clustered_vectors(1, seed=5)
    index.upsert(documents(new, start=ROWS))
    index.delete(["m00007"])
    index.upsert(documents(stored[[42]], start=11))
    assert ids(index.vector_search(new[0], SearchFilters(), k=1)) == [f"m{ROWS:05d}"]  # the exact scan meanwhile
    assert graph_searches == [False]
    release.set()
    assert index.wait_for_graph(BUILD_TIMEOUT)
    assert ids(index.vector_search(new[0], SearchFilters(), k=1)) == [f"m{ROWS:05d}"]
    assert "m00007" not in ids(index.vector_search(stored[7], SearchFilters(), k=10))
    assert set(ids(index.vector_search(stored[42], SearchFilters(), k=2))) == {"m00011", "m00042"}
    index.close()
    assert graph_searches[1:] == [True, True, True]


@pytest.fixture
def held_maintainer(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Holds the graph's maintainer before it applies queued rows, until the test sets the event it yields."""
    release = threading.Event()
    original = HnswGraph._apply_batch

    def held(self: HnswGraph, batch: tuple[int, ...]) -> None:
        release.wait(BUILD_TIMEOUT)
        original(self, batch)

    monkeypatch.setattr(HnswGraph, "_apply_batch", held)
    yield release
    release.set()  # never leave the maintainer waiting: close() joins it


def test_rows_written_before_the_graph_takes_them_in_are_found_and_scored_exactly(
        tmp_path: Path, stored: npt.NDArray[np.float32], held_maintainer: threading.Event,
        graph_searches: list[bool]) -> None:
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert index.wait_for_graph(BUILD_TIMEOUT)
    new = clustered_vectors(3, seed=7)
    index.upsert(documents(new, start=ROWS))
    index.delete(["m00007"])
    index.upsert(documents(stored[[42]], start=11))  # m00011 now has m00042's vector: the graph still has its old
    assert not index.wait_for_graph_writes(0)  # the maintainer is held: none of these is in the graph yet

    for offset, vector in enumerate(new):
        hits = index.vector_search(vector, SearchFilters(), k=1)
        assert ids(hits) == [f"m{ROWS + offset:05d}"]
        assert hits[0].score == pytest.approx(float(vector @ vector), abs=1e-5)
    assert "m00007" not in ids(index.vector_search(stored[7], SearchFilters(), k=10))
    assert set(ids(index.vector_search(stored[42], SearchFilters(), k=2))) == {"m00011", "m00042"}
    assert "m00011" not in ids(index.vector_search(stored[11], SearchFilters(), k=10))
    assert graph_searches and all(graph_searches)  # the graph answered, with the waiting rows beside its own

    held_maintainer.set()
    assert index.wait_for_graph_writes(BUILD_TIMEOUT)
    assert ids(index.vector_search(new[0], SearchFilters(), k=1)) == [f"m{ROWS:05d}"]
    assert "m00007" not in ids(index.vector_search(stored[7], SearchFilters(), k=10))
    index.close()


def test_searches_beside_concurrent_writers_find_every_row_written_before_them(
        tmp_path: Path, stored: npt.NDArray[np.float32], graph_searches: list[bool]) -> None:
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert index.wait_for_graph(BUILD_TIMEOUT)
    new = clustered_vectors(200, seed=8)
    missed: list[str] = []

    def write_then_search(part: int) -> None:
        for offset in range(part, len(new), 2):
            index.upsert(documents(new[[offset]], start=ROWS + offset))
            if ids(index.vector_search(new[offset], SearchFilters(), k=1)) != [f"m{ROWS + offset:05d}"]:
                missed.append(f"m{ROWS + offset:05d}")

    writers = [threading.Thread(target=write_then_search, args=(part,)) for part in (0, 1)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert index.wait_for_graph_writes(BUILD_TIMEOUT)
    assert len(index._graph or ()) == ROWS + len(new)  # every row reached the graph in the end
    index.close()
    assert missed == []
    assert graph_searches and all(graph_searches)


def test_a_graph_that_fails_to_take_a_row_in_hands_searches_back_to_the_exact_scan(
        tmp_path: Path, stored: npt.NDArray[np.float32], monkeypatch: pytest.MonkeyPatch,
        graph_searches: list[bool]) -> None:
    def failing(self: HnswGraph, row: int, current: GraphRows) -> None:
        raise RuntimeError("usearch refused the row")

    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert index.wait_for_graph(BUILD_TIMEOUT)
    monkeypatch.setattr(HnswGraph, "_apply", failing)
    new = clustered_vectors(1, seed=9)
    index.upsert(documents(new, start=ROWS))
    graph = index._graph
    assert graph is not None
    assert graph.wait_until_applied(BUILD_TIMEOUT) is False  # the graph is not ready any more

    assert ids(index.vector_search(new[0], SearchFilters(), k=1)) == [f"m{ROWS:05d}"]
    index.upsert(documents(clustered_vectors(1, seed=10), start=ROWS + 1))
    assert graph.unapplied_rows() == []  # nothing will apply them: not kept (a store taking writes would grow)
    index.close()
    assert graph_searches[-1] is False  # answered by the exact scan


def test_a_graph_whose_build_failed_keeps_no_changed_rows() -> None:
    def unreadable() -> GraphRows:
        raise RuntimeError("the matrix is gone")

    graph = HnswGraph(4, ann.HnswParameters())
    graph.start_build(unreadable, background=False)
    try:
        graph.changed([0, 1])

        assert not graph.ready.is_set()  # exact scans answer
        assert graph.unapplied_rows() == []
    finally:
        graph.close()


def test_closing_with_rows_still_queued_ends_the_maintainer(tmp_path: Path, stored: npt.NDArray[np.float32]) -> None:
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert index.wait_for_graph(BUILD_TIMEOUT)
    index.upsert(documents(clustered_vectors(500, seed=10), start=ROWS))
    index.close()  # the autouse check below fails if its thread outlives close()


def test_the_graph_starts_once_the_store_reaches_the_threshold(tmp_path: Path) -> None:
    vectors = clustered_vectors(300, seed=6)
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=200)
    index.upsert(documents(vectors[:150]))
    assert not index.wait_for_graph(0)
    index.upsert(documents(vectors[150:], start=150))
    assert index.wait_for_graph(BUILD_TIMEOUT)
    index.close()


def test_without_a_threshold_there_is_no_graph(tmp_path: Path, stored: npt.NDArray[np.float32]) -> None:
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=None)
    assert not index.wait_for_graph(0)
    index.close()


def test_a_process_exiting_while_its_graph_takes_rows_in_ends_cleanly(tmp_path: Path) -> None:
    """Without close(): the maintainer is inside usearch when the interpreter exits (it used to abort)."""
    script = f"""
from pathlib import Path
from tests.unit.test_embedded_index_hnsw import clustered_vectors, documents, open_index
index = open_index(Path({str(tmp_path / "index.sqlite3")!r}), ann_min_rows=0)
assert index.wait_for_graph(60)
for start in range(0, 3000, 100):
    index.upsert(documents(clustered_vectors(100, seed=start), start=start))
assert not index.wait_for_graph_writes(0)
"""
    exited = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True,
                            cwd=Path(__file__).parents[2])
    assert exited.returncode == 0, exited.stderr
    assert "terminate" not in exited.stderr


def graph_over(vectors: npt.NDArray[np.float32]) -> tuple[HnswGraph, list[tuple[int, ...]]]:
    """A graph built (in the caller's thread) over `vectors`, and the row batches its maintainer applies."""
    graph = HnswGraph(DIMENSION)
    batches: list[tuple[int, ...]] = []
    original = graph._apply_batch

    def recorded(batch: tuple[int, ...]) -> None:
        batches.append(batch)
        original(batch)

    graph._apply_batch = recorded  # type: ignore[method-assign]
    graph.start_build(lambda: GraphRows(len(vectors), vectors, np.ones(len(vectors), dtype=bool)), background=False)
    return graph, batches


def test_rows_changed_close_together_are_applied_in_one_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ann, "GATHER_SECONDS", 1.0)  # wide, so a loaded host cannot split the pair
    graph, batches = graph_over(clustered_vectors(100, seed=12))
    try:
        graph.changed([98])
        time.sleep(0.05)  # the maintainer is awake by now, gathering
        graph.changed([99])
        assert graph.wait_until_applied(BUILD_TIMEOUT)
    finally:
        graph.close()
    assert batches == [(98, 99)]


def test_a_full_batch_is_applied_without_gathering(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ann, "GATHER_SECONDS", BUILD_TIMEOUT)  # a gather would outlast the wait below
    graph, batches = graph_over(clustered_vectors(100, seed=13))
    try:
        graph.changed(range(ann._APPLY_BATCH))
        assert graph.wait_until_applied(BUILD_TIMEOUT / 4)
    finally:
        graph.close()
    assert batches == [tuple(range(ann._APPLY_BATCH))]


def test_usearch_then_onnxruntime_import_cleanly() -> None:
    """usearch 2.26.2-2.26.6 made a later `import onnxruntime` crash the process (the embedder loads after the
    index); the pinned version must not."""
    pytest.importorskip("onnxruntime")
    imports = subprocess.run([sys.executable, "-c", "import usearch.index; import onnxruntime"], check=False)
    assert imports.returncode == 0


def ids(hits: list[IndexHit]) -> list[str]:
    return [hit.id for hit in hits]


@pytest.fixture(autouse=True)
def _no_build_thread_left() -> Iterator[None]:
    yield
    assert not [thread for thread in threading.enumerate() if thread.name == "zengram-hnsw"]


def loads_and_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """'loaded' or 'not loaded' per saved graph offered to a build (#38: a clean close saves it for the next open)."""
    happened: list[str] = []
    original_load = HnswGraph._load

    def load(self: HnswGraph, path: Path, alive: int) -> bool:
        loaded = original_load(self, path, alive)
        happened.append("loaded" if loaded else "not loaded")
        return loaded

    monkeypatch.setattr(HnswGraph, "_load", load)
    return happened


def test_a_clean_close_saves_the_graph_and_the_next_open_loads_it(
        tmp_path: Path, stored: npt.NDArray[np.float32], monkeypatch: pytest.MonkeyPatch) -> None:
    happened = loads_and_builds(monkeypatch)
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert index.wait_for_graph(BUILD_TIMEOUT)
    extra = clustered_vectors(5, seed=9)
    index.upsert(documents(extra, start=ROWS))  # a write after the build reaches the saved graph too
    index.close()
    assert (tmp_path / "index.hnsw").is_file()
    reopened = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert reopened.wait_for_graph(BUILD_TIMEOUT)
    assert happened == ["loaded"]
    assert ids(reopened.vector_search(extra[2], SearchFilters(), k=1)) == [f"m{ROWS + 2:05d}"]
    found = sum(len({hit.id for hit in reopened.vector_search(query, SearchFilters(), k=10)}
                    & set(exact_top(stored, query, 10))) for query in clustered_vectors(30, seed=2))
    reopened.close()
    assert found / 300 >= 0.95


def test_a_graph_saved_before_a_delete_or_a_crash_is_not_loaded(
        tmp_path: Path, stored: npt.NDArray[np.float32], monkeypatch: pytest.MonkeyPatch) -> None:
    happened = loads_and_builds(monkeypatch)
    index = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert index.wait_for_graph(BUILD_TIMEOUT)
    index.delete(["m00007"])  # a dead row: the next open numbers every later row one lower
    index.close()
    crashed = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)  # nothing saved: built
    assert crashed.wait_for_graph(BUILD_TIMEOUT)
    crashed._drop_graph()  # as if the process died: no clean close saves the graph
    crashed.close()
    again = open_index(tmp_path / "index.sqlite3", ann_min_rows=0)
    assert again.wait_for_graph(BUILD_TIMEOUT)
    assert happened == []  # never offered a file: no stamp fits
    query = stored[8]
    assert ids(again.vector_search(query, SearchFilters(), k=1)) == ["m00008"]
    again.close()
