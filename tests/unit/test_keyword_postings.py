"""The embedded index's in-memory keyword postings (above `keyword_memory_min_rows`) answer exactly as FTS5 does:
the same hits in the same order with the same scores, for many queries and filters, before and after writes —
which hand their texts to a maintainer thread rather than tokenising them, and are searchable at once."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from zengram.adapters.sqlite import EmbeddedSearchIndex, keyword_postings
from zengram.adapters.sqlite.keyword_postings import FtsTokenizer, KeywordPostings
from zengram.adapters.sqlite.search_index import TOKENIZE
from zengram.kernel.search import IndexHit, SearchFilters

from tests.contract.test_search_index import EMBEDDER, T0, document

BUILD_TIMEOUT = 60.0
BUDGET = 120  # small enough that common words are left out of some queries
# Inflections (porter stems them together), capitals, diacritics (removed), a word FTS5 splits in two.
WORDS = ("run running runs ran runner coffee Coffee café cafe caffeine deploy deployed deploying deployment "
         "kubernetes cluster clusters meeting meetings Caroline caroline's painting paintings paint garden "
         "gardening weekly report reports alpha bravo charlie delta echo foxtrot golf hotel india juliet the a of "
         "and snake_case naïve naive résumé resume").split()
FILTER_SETS = [
    SearchFilters(), SearchFilters(client_id="client1"), SearchFilters(client_id="client2", type="fact"),
    SearchFilters(client_ids=("client3", "client4")), SearchFilters(include_inactive=True),
    SearchFilters(at_time=T0 + timedelta(days=10)), SearchFilters(client_id="nobody"), SearchFilters(type="fact"),
    SearchFilters(date_from=T0 + timedelta(days=5), date_to=T0 + timedelta(days=20)),
    SearchFilters(entity="person:caroline"), SearchFilters(scopes=("chunk:docs", "")),
]


def texts(rng: np.random.Generator, count: int) -> list[str]:
    """Lengths from 1 to 40 words, some words repeated: ties, saturation and length normalisation all occur."""
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 40)))) for _ in range(count)]


def seed(index: EmbeddedSearchIndex, rng: np.random.Generator, count: int, prefix: str = "d") -> None:
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    index.upsert([
        document(f"{prefix}{i:04}", text, client_id=f"client{i % 12}", type="fact" if i % 3 else "event",
                 active=i % 7 != 0, valid_from=T0 + timedelta(days=i % 30),
                 entities=("person:caroline",) if i % 5 == 0 else (), scope="chunk:docs" if i % 11 == 0 else "")
        for i, text in enumerate(texts(rng, count))
    ])


def queries(rng: np.random.Generator, count: int) -> list[str]:
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 7)))) for _ in range(count)]


def fts5_answers(path: Path, monkeypatch: pytest.MonkeyPatch, asked: list[tuple[str, SearchFilters]],
                 k: int) -> list[list[IndexHit]]:
    """The reference: FTS5 alone, always through its joined query (`ORDER BY bm25(docs_fts), docs.id`), on a
    fresh index object (its kept term counts know nothing of the other's writes)."""
    with monkeypatch.context() as patch:
        patch.setattr(EmbeddedSearchIndex, "_rank_then_filter", lambda *_: None)
        patch.setattr(EmbeddedSearchIndex, "_selected_documents", lambda *_: None)
        fts5 = EmbeddedSearchIndex(path, keyword_postings_budget=BUDGET, keyword_memory_min_rows=None)
        try:
            return [fts5.keyword_search(text, filters, k) for text, filters in asked]
        finally:
            fts5.close()


def assert_same_as_fts5(index: EmbeddedSearchIndex, path: Path, monkeypatch: pytest.MonkeyPatch,
                        rng: np.random.Generator, count: int = 60, k: int = 10) -> None:
    assert index.wait_for_keywords(BUILD_TIMEOUT)
    asked = [(text, FILTER_SETS[i % len(FILTER_SETS)]) for i, text in enumerate(queries(rng, count))]
    in_memory = [index.keyword_search(text, filters, k) for text, filters in asked]
    expected = fts5_answers(path, monkeypatch, asked, k)
    for (text, filters), got, wanted in zip(asked, in_memory, expected, strict=True):
        assert got == wanted, (text, filters)  # ids, order and scores, to the last bit
    assert sum(map(bool, in_memory)) > count // 2  # most queries find something: the comparison is not vacuous


def open_index(path: Path, min_rows: int | None = 0) -> EmbeddedSearchIndex:
    return EmbeddedSearchIndex(path, keyword_postings_budget=BUDGET, keyword_memory_min_rows=min_rows)


def test_in_memory_postings_rank_exactly_as_fts5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(18)
    path = tmp_path / "index.sqlite3"
    index = open_index(path)
    seed(index, rng, 500)
    assert_same_as_fts5(index, path, monkeypatch, rng, count=150)
    assert_same_as_fts5(index, path, monkeypatch, rng, count=30, k=200)  # long lists: ties beyond the first page
    index.close()


def test_postings_built_on_open_rank_exactly_as_fts5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(19)
    path = tmp_path / "index.sqlite3"
    writer = open_index(path, min_rows=None)
    seed(writer, rng, 400)
    writer.close()

    reopened = open_index(path)  # the postings are read from FTS5 in the background
    assert_same_as_fts5(reopened, path, monkeypatch, rng)
    reopened.close()


def test_postings_follow_writes_made_during_and_after_their_build(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(20)
    path = tmp_path / "index.sqlite3"
    writer = open_index(path, min_rows=None)
    seed(writer, rng, 300)
    writer.close()

    index = open_index(path)
    # Right after open, likely while the build runs: these land in its queue or after it, and must count.
    index.upsert([document(f"d{i:04}", text) for i, text in zip(range(0, 40), texts(rng, 40), strict=True)])
    index.delete([f"d{i:04}" for i in range(40, 60)])
    assert_same_as_fts5(index, path, monkeypatch, rng)

    index.set_texts({f"d{i:04}": text for i, text in zip(range(60, 120), texts(rng, 60), strict=True)})
    for round_number in range(12):  # the same rows rewritten again and again: dead postings pile up, then go
        index.set_texts({f"d{i:04}": text for i, text in zip(range(120, 140), texts(rng, 20), strict=True)})
        index.upsert([document(f"new{round_number}-{i}", text) for i, text in enumerate(texts(rng, 5))])
    index.delete([f"d{i:04}" for i in range(0, 20)])
    index.upsert([document("d0005", "coffee deploy kubernetes")])  # deleted, then back
    assert_same_as_fts5(index, path, monkeypatch, rng)

    index.clear()
    seed(index, rng, 200, prefix="after-clear")
    assert_same_as_fts5(index, path, monkeypatch, rng)
    index.close()


def test_a_word_fts5_splits_is_answered_by_fts5(tmp_path: Path) -> None:
    index = open_index(tmp_path / "index.sqlite3")
    index.bind_model(EMBEDDER.model_id, EMBEDDER.dimension)
    index.upsert([document("phrase", "rename to snake case"), document("joined", "snake_case names"),
                  document("apart", "case of the snake")])
    assert index.wait_for_keywords(BUILD_TIMEOUT)
    # "snake_case" is one word to the query parser but the phrase "snake case" to FTS5: only adjacent tokens match.
    assert {hit.id for hit in index.keyword_search("snake_case", SearchFilters(), k=10)} == {"phrase", "joined"}
    assert {hit.id for hit in index.keyword_search("snakes", SearchFilters(), k=10)} == {"phrase", "joined", "apart"}
    index.close()


def test_postings_exist_only_from_the_row_threshold_on(tmp_path: Path) -> None:
    rng = np.random.default_rng(21)
    index = open_index(tmp_path / "index.sqlite3", min_rows=50)
    seed(index, rng, 49)
    assert not index.wait_for_keywords(0)
    index.upsert([document("d0049", "coffee runs")])
    assert index.wait_for_keywords(BUILD_TIMEOUT)
    assert "d0049" in {hit.id for hit in index.keyword_search("coffee running", SearchFilters(), k=100)}
    index.close()

    never = open_index(tmp_path / "index.sqlite3", min_rows=None)
    assert not never.wait_for_keywords(0)
    never.close()


def test_searches_beside_writers_never_fail_and_end_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Searches read the postings without the writers' lock (arrays are replaced, never shrunk in place): under
    concurrent upserts, rewrites and deletes none fails, and the end state ranks exactly as FTS5."""
    rng = np.random.default_rng(22)
    path = tmp_path / "index.sqlite3"
    index = open_index(path)
    seed(index, rng, 200)
    assert index.wait_for_keywords(BUILD_TIMEOUT)
    written = threading.Event()
    failures: list[BaseException] = []
    searched = [0]

    def write() -> None:
        try:
            for round_number in range(40):
                index.upsert([document(f"w{round_number}-{i}", text) for i, text in enumerate(texts(rng, 10))])
                index.set_texts({f"d{(round_number * 7 + i) % 200:04}": text
                                 for i, text in enumerate(texts(rng, 5))})
                index.delete([f"w{round_number - 1}-{i}" for i in range(3)])
        except BaseException as failure:
            failures.append(failure)
        finally:
            written.set()

    def search(words: list[str]) -> None:
        try:
            while not written.is_set():
                for filters in FILTER_SETS[:4]:
                    index.keyword_search(" ".join(words), filters, 10)
                    searched[0] += 1
        except BaseException as failure:
            failures.append(failure)

    query_words = [list(rng.choice(WORDS, size=3)) for _ in range(2)]
    threads = [threading.Thread(target=write), *(threading.Thread(target=search, args=(w,)) for w in query_words)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and searched[0] > 0
    assert_same_as_fts5(index, path, monkeypatch, rng)
    index.close()


def test_a_write_tokenises_nothing_and_a_search_right_after_it_is_exact(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(23)
    path = tmp_path / "index.sqlite3"
    index = open_index(path)
    seed(index, rng, 300)
    assert index.wait_for_keywords(BUILD_TIMEOUT)
    release = threading.Event()
    tokenising_threads: list[str] = []
    original = FtsTokenizer.term_frequencies

    def watched(self: FtsTokenizer, texts: list[str]) -> list[dict[str, int]]:
        tokenising_threads.append(threading.current_thread().name)
        return original(self, texts)

    def held_maintainer(self: KeywordPostings) -> None:  # the maintainer waits; a search applies what waits
        if threading.current_thread().name == "zengram-keywords":
            release.wait(BUILD_TIMEOUT)
        held_apply(self)

    held_apply = KeywordPostings.apply_waiting
    monkeypatch.setattr(FtsTokenizer, "term_frequencies", watched)
    monkeypatch.setattr(KeywordPostings, "apply_waiting", held_maintainer)
    def write() -> None:
        index.upsert([document("fresh", "caffeine caffeine deploy naïve")])
        index.set_texts({"d0003": "garden gardening weekly"})
        index.delete(["d0004"])

    writer = threading.Thread(target=write, name="writer")
    writer.start()
    writer.join()
    assert "writer" not in tokenising_threads  # the write only queued its texts

    try:
        assert index.keyword_search("caffeine naive", SearchFilters(), k=1)[0].id == "fresh"
        assert_same_as_fts5(index, path, monkeypatch, rng)
    finally:
        release.set()
        index.close()
    assert not [thread for thread in threading.enumerate() if thread.name == "zengram-keywords"]


def fts5_term_counts(texts: list[str]) -> list[dict[str, int]]:
    """What FTS5 itself makes of each whole text (an independent table, no line splitting)."""
    import sqlite3  # tests may use sqlite3 directly to check the adapter against SQLite itself

    connection = sqlite3.connect(":memory:")
    connection.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, tokenize = '{TOKENIZE}')")
    connection.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    connection.executemany("INSERT INTO t (rowid, text) VALUES (?, ?)", enumerate(texts, start=1))
    counts: list[dict[str, int]] = [{} for _ in texts]
    for doc, term, count in connection.execute("SELECT doc, term, count(*) FROM v GROUP BY doc, term"):
        counts[doc - 1][term] = count
    connection.close()
    return counts


def test_term_counts_made_line_by_line_are_fts5s_counts_of_the_whole_texts() -> None:
    rng = np.random.default_rng(7)
    words = ["Deploy", "deploying", "naïve", "café", "x-ray", "O'Brien", "2026-12-03", "über", "rollback", "",
             "\x1e", "  ", "CAFÉ", "e-mail", "jalapeño", "runs", "running"]
    texts = ["\n".join(" ".join(rng.choice(words, size=rng.integers(0, 8))) for _ in range(rng.integers(1, 6)))
             for _ in range(300)]
    texts += ["own text\n\x1e\nprevious turn\nnext turn", "line one\r\nline two", "\n\n", ""]
    tokenizer = FtsTokenizer(TOKENIZE)

    assert tokenizer.term_frequencies(texts) == fts5_term_counts(texts)
    assert tokenizer.term_frequencies(texts[::-1]) == fts5_term_counts(texts[::-1])  # now from remembered lines


def test_only_lines_not_seen_before_are_tokenised(monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizer = FtsTokenizer(TOKENIZE)
    tokenizer.term_frequencies(["the deploy failed\n\x1e\nrollback started"])
    sent: list[list[str]] = []
    instances = tokenizer._instances

    def watched(texts: list[str], query: str) -> list[tuple[object, ...]]:
        sent.append(list(texts))
        return instances(texts, query)

    monkeypatch.setattr(tokenizer, "_instances", watched)
    counts = tokenizer.term_frequencies(["rollback started\n\x1e\nthe deploy failed\npager quiet"])

    assert sent == [["pager quiet"]]
    assert counts == fts5_term_counts(["rollback started\n\x1e\nthe deploy failed\npager quiet"])


def test_the_maintainer_tokenises_texts_written_close_together_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_postings, "GATHER_SECONDS", 1.0)  # wide, so a loaded host cannot split the pair
    postings = KeywordPostings(FtsTokenizer(TOKENIZE))
    passes: list[list[str]] = []
    original = FtsTokenizer.term_frequencies

    def watched(self: FtsTokenizer, texts: list[str]) -> list[dict[str, int]]:
        passes.append(list(texts))
        return original(self, texts)

    monkeypatch.setattr(FtsTokenizer, "term_frequencies", watched)
    postings.start_build(lambda: (keyword_postings._EMPTY_BLOCK, {}), background=False)
    try:
        postings.changed({0: "the deploy failed"})
        time.sleep(0.05)  # the maintainer is awake by now, gathering
        postings.changed({1: "rollback started"})
        assert postings.wait_until_applied(BUILD_TIMEOUT)
    finally:
        postings.close()

    assert passes == [["the deploy failed", "rollback started"]]
    view = postings.view(["deploy", "rollback"])
    assert view is not None and view.row_count == 2


def test_a_remembered_line_still_in_use_survives_the_memory_making_room(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_postings, "_LINES_CACHED", 4)
    tokenizer = FtsTokenizer(TOKENIZE)
    tokenizer.term_frequencies(["the deploy failed\n\x1e"])  # remembered first: the oldest lines
    # Four new lines push the memory past its size while this text still needs the two oldest.
    text = "the deploy failed\n\x1e\nrollback started\npager quiet\ncoffee break\nrunning late"

    assert tokenizer.term_frequencies([text]) == fts5_term_counts([text])
    assert tokenizer.term_frequencies(["the deploy failed"]) == fts5_term_counts(["the deploy failed"])


def test_postings_that_fail_to_apply_a_text_hand_keyword_searches_back_to_fts5(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    rng = np.random.default_rng(22)
    path = tmp_path / "index.sqlite3"
    index = open_index(path)
    seed(index, rng, 200)
    assert index.wait_for_keywords(BUILD_TIMEOUT)
    assert index.keyword_search("coffee", SearchFilters(), k=1)  # the seeded texts are applied by now

    def broken(self: FtsTokenizer, texts: list[str]) -> list[dict[str, int]]:
        raise RuntimeError("tokenizer broke")

    monkeypatch.setattr(FtsTokenizer, "term_frequencies", broken)
    index.upsert([document("late", "zebra crossing coffee")])
    hits = index.keyword_search("zebra", SearchFilters(), k=10)  # applies the waiting text first: that fails

    assert [hit.id for hit in hits] == ["late"]  # FTS5 answered, the new text included
    assert not index.wait_for_keywords(0)  # the postings are out of use for good, not half-current
    assert "keyword searches go back to FTS5" in caplog.text
    index.upsert([document("later", "zebra stripes")])
    assert not index._keywords._waiting  # nothing will apply them: not kept (a store taking writes would grow)
    monkeypatch.undo()
    assert_same_as_fts5_without_postings(index, path, monkeypatch, rng)
    index.close()


def assert_same_as_fts5_without_postings(index: EmbeddedSearchIndex, path: Path, monkeypatch: pytest.MonkeyPatch,
                                         rng: np.random.Generator, count: int = 30, k: int = 10) -> None:
    asked = [(text, FILTER_SETS[i % len(FILTER_SETS)]) for i, text in enumerate(queries(rng, count))]
    answered = [index.keyword_search(text, filters, k) for text, filters in asked]
    assert answered == fts5_answers(path, monkeypatch, asked, k)


def test_postings_stay_exact_while_the_tokenizers_line_memory_turns_over(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_postings, "_LINES_CACHED", 16)  # turned over many times by the turns below
    rng = np.random.default_rng(23)
    path = tmp_path / "index.sqlite3"
    index = open_index(path)
    seed(index, rng, 100)
    turns = texts(rng, 300)
    for number, turn in enumerate(turns):  # a thread's turns, each indexed with its neighbours as context lines
        context = "\n".join(turns[max(0, number - 2):number])
        index.upsert([document(f"turn{number:03}", f"{turn}\n\x1e\n{context}" if context else turn)])
        if number % 25 == 0:
            assert index.keyword_search(turn, SearchFilters(), k=5)

    assert_same_as_fts5(index, path, monkeypatch, rng)
    assert index.wait_for_keywords(0)  # still the in-memory postings answering, not FTS5 after a failure
    index.close()


def test_postings_whose_build_failed_keep_no_written_texts() -> None:
    def unreadable() -> keyword_postings.BuiltPostings:
        raise RuntimeError("fts5vocab unreadable")

    postings = KeywordPostings(FtsTokenizer(TOKENIZE))
    postings.start_build(unreadable, background=False)
    try:
        postings.changed({0: "the deploy failed"})

        assert not postings.ready.is_set()  # FTS5 answers every keyword search
        assert not postings._waiting  # and no text is kept for an apply that will never come
    finally:
        postings.close()
