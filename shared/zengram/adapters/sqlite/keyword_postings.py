"""BM25 over in-memory postings: the keyword twin of the embedded index's vector matrix (ADR 0037).

FTS5 scores every posting of a query's terms through its B-tree (~8–10 ms for 20,000 postings at 100k
documents); the same postings as numpy arrays score in well under a millisecond. The postings are derived from
the FTS5 table, never the source: built from its `fts5vocab` 'instance' view in a background thread when the
store opens, then kept current by a maintainer thread that tokenises every written text with a private in-memory
FTS5 table with the same tokenizer — the terms are FTS5's own, porter stemming included (ADR 0038: a search first
applies the texts still waiting, so it never scores a stale posting). `bm25_scores` reproduces FTS5's bm25()
to the last bit (same N, average length, IDF clamp, k1, b and order of summation), so rankings are identical.

Rows are the vector matrix's rows. The postings built on open are one compact CSR block (every term's rows and
term frequencies); a text written later goes to a per-term growable tail. Each row has a generation: a posting is
live while it carries its row's generation, so replacing or deleting a text is a counter increment, and dead
postings are dropped when a tail is full.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

# FTS5's bm25() constants (sqlite/ext/fts5/fts5_aux.c): k1, b, and the IDF given to terms in over half the rows.
K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
_BASE_GENERATION = 0  # the generation of every row's postings in the block built on open
_TOKENS_CACHED = 50_000  # query words whose FTS5 tokens are remembered
# How long the maintainer waits, once a text arrives, for the next few writes' texts, so that one wake-up and one
# FTS5 tokenising pass serve several writes (one per write cost the maintainer ~65 % more on a busy host). A search
# applies whatever is still waiting first, so the wait never changes a result.
GATHER_SECONDS = 0.02
_LINES_CACHED = 4_096  # lines of recently written texts whose term counts are remembered (a thread's recent turns)


class FtsTokenizer:
    """Texts tokenised exactly as an FTS5 table with `tokenize` does: inserted into a private in-memory FTS5
    table (never committed) and read back through its `fts5vocab` 'instance' view."""

    def __init__(self, tokenize: str) -> None:
        self._connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self._connection.execute(f"CREATE VIRTUAL TABLE texts USING fts5(text, tokenize = '{tokenize}')")
        self._connection.execute("CREATE VIRTUAL TABLE instances USING fts5vocab(texts, instance)")
        self._lock = threading.Lock()
        self._word_tokens: dict[str, tuple[str, ...]] = {}
        self._line_terms: dict[str, dict[str, int]] = {}  # recent lines' term counts, oldest first
        self._lines_lock = threading.Lock()

    def term_frequencies(self, texts: Sequence[str]) -> list[dict[str, int]]:
        """Each text's terms with how often each occurs.

        Counted line by line: a line break separates tokens, so a text's counts are the sum of its lines'. A turn's
        indexed text is its own lines followed by its neighbours' (`with_context`), so nearly every line of a
        write's texts was tokenised for an earlier write and is remembered; only new lines go to FTS5."""
        lines_of = [text.split("\n") for text in texts]
        with self._lines_lock:
            return self._counted_by_line(lines_of)

    def _counted_by_line(self, lines_of: list[list[str]]) -> list[dict[str, int]]:
        known = self._line_terms
        fresh = list(dict.fromkeys(line for lines in lines_of for line in lines if line not in known))
        if fresh:
            counted: list[dict[str, int]] = [{} for _ in fresh]
            for doc, term, count in self._instances(fresh, "SELECT doc, term, count(*) FROM instances "
                                                           "GROUP BY doc, term"):
                counted[doc][term] = count
            known.update(zip(fresh, counted, strict=True))
        counts = [_summed(known[line] for line in lines) for lines in lines_of]
        while len(known) > _LINES_CACHED:  # only now: these texts may need the oldest lines (dicts keep order)
            del known[next(iter(known))]
        return counts

    def tokens_of_words(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The tokens FTS5 makes of each word quoted in a query (`"word"`): usually one, none for a word the
        tokenizer drops, several for one it splits (a phrase)."""
        known = self._word_tokens
        found = {word: known[word] for word in words if word in known}
        missing = [word for word in words if word not in found]
        if missing:
            tokens: list[list[str]] = [[] for _ in missing]
            for doc, term in self._instances(missing, "SELECT doc, term FROM instances ORDER BY doc, offset"):
                tokens[doc].append(term)
            fresh = {word: tuple(word_tokens) for word, word_tokens in zip(missing, tokens, strict=True)}
            if len(known) < _TOKENS_CACHED:
                known.update(fresh)
            found.update(fresh)
        return found

    def close(self) -> None:
        self._connection.close()

    def _instances(self, texts: Sequence[str], query: str) -> list[tuple[Any, ...]]:
        with self._lock:
            self._connection.execute("BEGIN")
            try:
                self._connection.executemany("INSERT INTO texts (rowid, text) VALUES (?, ?)", enumerate(texts))
                return [tuple(row) for row in self._connection.execute(query)]
            finally:
                self._connection.execute("ROLLBACK")


def _summed(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for terms in counts:
        for term, count in terms.items():
            total[term] = total.get(term, 0) + count
    return total


@dataclass(frozen=True)
class PostingsBlock:
    """The postings built on open: term `t`'s rows are `rows[offsets[t]:offsets[t + 1]]` (ascending)."""

    term_numbers: dict[str, int]
    offsets: npt.NDArray[np.int64]
    rows: npt.NDArray[np.int32]
    frequencies: npt.NDArray[np.int32]

    def postings(self, term: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        number = self.term_numbers.get(term)
        if number is None:
            return _NO_ROWS, _NO_ROWS
        start, end = self.offsets[number], self.offsets[number + 1]
        return self.rows[start:end], self.frequencies[start:end]

    @property
    def nbytes(self) -> int:
        return self.offsets.nbytes + self.rows.nbytes + self.frequencies.nbytes


_NO_ROWS: npt.NDArray[np.int32] = np.empty(0, dtype=np.int32)
BuiltPostings = tuple[PostingsBlock, dict[int, int]]  # the block, and each row's token count
_EMPTY_BLOCK = PostingsBlock({}, np.zeros(1, dtype=np.int64), _NO_ROWS, _NO_ROWS)


class _Tail:
    """One term's postings written after the block: rows, term frequencies and the row generation they carry."""

    def __init__(self) -> None:
        self.rows = np.empty(8, dtype=np.int32)
        self.frequencies = np.empty(8, dtype=np.int32)
        self.generations = np.empty(8, dtype=np.int32)
        self.size = 0

    def append(self, row: int, frequency: int, generation: int, row_generations: npt.NDArray[np.int32]) -> None:
        if self.size == self.rows.size:
            self._make_room(row_generations)
        self.rows[self.size], self.frequencies[self.size], self.generations[self.size] = row, frequency, generation
        self.size += 1

    def view(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        return self.rows[: self.size], self.frequencies[: self.size], self.generations[: self.size]

    def _make_room(self, row_generations: npt.NDArray[np.int32]) -> None:
        """Drops the dead postings into new arrays (searches may hold the old ones), doubled when still over
        half full."""
        rows, frequencies, generations = self.view()
        live = generations == row_generations[rows]
        kept = int(np.count_nonzero(live))
        capacity = self.rows.size * 2 if kept * 2 > self.rows.size else self.rows.size
        for name, values in (("rows", rows), ("frequencies", frequencies), ("generations", generations)):
            grown = np.empty(capacity, dtype=np.int32)
            grown[:kept] = values[live]
            setattr(self, name, grown)
        self.size = kept


@dataclass(frozen=True)
class TermPostings:
    """A term's live postings at one moment: its rows and the term's frequency in each."""

    rows: npt.NDArray[np.int32]
    frequencies: npt.NDArray[np.int32]


@dataclass(frozen=True)
class PostingsView:
    """What one search reads, gathered under the lock: live postings per term, each row's length, and the
    collection statistics FTS5 keeps (row count, total tokens)."""

    terms: dict[str, TermPostings]
    lengths: npt.NDArray[np.int32]
    row_count: int
    token_count: int

    def document_count(self, term: str) -> int:
        postings = self.terms.get(term)
        return 0 if postings is None else int(postings.rows.size)

    def bm25_scores(self, phrase_terms: Sequence[str]) -> npt.NDArray[np.float64]:
        """Each row's score for a query whose phrases are these single terms, in the query's order: FTS5's
        -bm25(); 0 for rows matching none. Summed per row in phrase order, as FTS5 sums, so the floats agree."""
        if self.row_count == 0:
            return np.zeros(0, dtype=np.float64)
        average_length = float(self.token_count) / float(self.row_count)
        rows: list[npt.NDArray[np.int32]] = []
        contributions: list[npt.NDArray[np.float64]] = []
        for term in phrase_terms:
            postings = self.terms.get(term)
            if postings is None or postings.rows.size == 0:
                continue  # FTS5 adds 0.0 for a phrase a row lacks
            hits = postings.rows.size
            idf = math.log((self.row_count - hits + 0.5) / (hits + 0.5))  # C's log, as FTS5's
            if idf <= 0.0:
                idf = IDF_FLOOR
            frequency = postings.frequencies.astype(np.float64)
            length = self.lengths[postings.rows].astype(np.float64)
            # fts5_aux.c: aIDF[i] * ((aFreq[i] * (k1 + 1.0)) / (aFreq[i] + k1 * (1 - b + b * D / avgdl)))
            saturation = frequency + K1 * (1 - B + B * length / average_length)
            contributions.append(idf * ((frequency * (K1 + 1.0)) / saturation))
            rows.append(postings.rows)
        if not rows:
            return np.zeros(0, dtype=np.float64)
        # bincount adds the weights in array order: per row, the phrases' terms in query order.
        scores = np.bincount(np.concatenate(rows), weights=np.concatenate(contributions), minlength=self.lengths.size)
        return scores.astype(np.float64, copy=False)


class KeywordPostings:
    """Every document's FTS5 terms as postings by matrix row; see the module docstring.

    A write hands over its texts untokenised (`changed`): one maintainer thread tokenises and applies them off
    the write path (~0.3 ms a write at 100k rows, texts gathered for 20 ms per pass), and a search first
    applies whatever is still waiting, so it scores exactly what FTS5 holds. `_waiting` (texts by row, in order)
    is guarded by the condition `_arrivals`; `_applying` serialises taking and applying them; `_lock` guards the
    postings themselves."""

    def __init__(self, tokenizer: FtsTokenizer) -> None:
        self.tokenizer = tokenizer
        self._lock = threading.Lock()
        self._block = _EMPTY_BLOCK
        self._tails: dict[str, _Tail] = {}
        self._generations = np.zeros(1024, dtype=np.int32)
        self._lengths = np.full(1024, -1, dtype=np.int32)  # tokens per row; -1: no document
        self._row_count = 0
        self._token_count = 0
        self._arrivals = threading.Condition()
        self._waiting: dict[int, str | None] = {}  # texts written and not yet applied (None: document removed)
        self._applying = threading.Lock()
        self._stopping = threading.Event()
        self.ready = threading.Event()
        self._abandoned = False  # the build or an apply failed: FTS5 answers from now on, texts are not kept
        self._thread: threading.Thread | None = None

    # -- build --------------------------------------------------------------------------------------------

    def start_build(self, read: Callable[[], BuiltPostings], *, background: bool) -> None:
        """Builds the block from `read()` (postings by row, and each row's length), in the maintainer thread
        when `background`; texts written meanwhile wait, and are applied once it ends."""
        if not background:
            self._build(read)
        self._thread = threading.Thread(target=self._maintain, args=(read if background else None,),
                                        name="zengram-keywords", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stopping.set()
        with self._arrivals:
            self._arrivals.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def _build(self, read: Callable[[], BuiltPostings]) -> None:
        try:
            block, lengths = read()
            if self._stopping.is_set():
                return
            with self._lock:
                self._block = block
                for row, length in lengths.items():
                    self._set_length(row, length)
            self.ready.set()  # texts written since `read()` began are waiting: applied before any search scores
        except Exception:  # FTS5 keeps answering: a failed build costs speed, never results
            self._abandon()
            logger.exception("building the in-memory keyword postings failed; keyword searches stay on FTS5")

    def _maintain(self, read: Callable[[], BuiltPostings] | None) -> None:
        if read is not None:
            self._build(read)
        while self.ready.is_set() and not self._stopping.is_set():
            with self._arrivals:
                self._arrivals.wait_for(lambda: bool(self._waiting) or self._stopping.is_set())
            self._stopping.wait(GATHER_SECONDS)  # the next few writes' texts: tokenised in one FTS5 pass with these
            self.apply_waiting()

    # -- writes -------------------------------------------------------------------------------------------

    def changed(self, texts: Mapping[int, str | None]) -> None:
        """Rows whose text is now this (or that lost their document: None). Costs the write a dict insertion."""
        with self._arrivals:
            if self._abandoned:
                return  # nothing will apply them
            for row, text in texts.items():
                self._waiting.pop(row, None)  # re-queued at the end: applied after the rows written before it
                self._waiting[row] = text
            self._arrivals.notify()

    def apply_waiting(self) -> None:
        """Tokenises and applies every text written so far (the maintainer's work; a search's first step). If
        that fails, the postings lack texts FTS5 has: they go out of use for good (`ready` cleared)."""
        with self._applying:
            with self._arrivals:
                waiting, self._waiting = self._waiting, {}
                self._arrivals.notify_all()
            if not waiting:
                return
            try:
                texts = [text for text in waiting.values() if text is not None]
                frequencies = iter(self.tokenizer.term_frequencies(texts))
                with self._lock:
                    for row, text in waiting.items():
                        self._apply(row, None if text is None else next(frequencies))
            except Exception:  # FTS5 holds every text: a failure here costs speed, never results
                self._abandon()
                logger.exception("applying written texts to the in-memory keyword postings failed; "
                                 "keyword searches go back to FTS5")

    def _abandon(self) -> None:
        """Out of use for good: searches ask FTS5, and written texts are no longer kept for an apply."""
        self.ready.clear()
        with self._arrivals:
            self._abandoned = True
            self._waiting.clear()
            self._arrivals.notify_all()

    def wait_until_applied(self, timeout: float) -> bool:
        """Whether the postings are built and hold every text written so far, waiting up to `timeout` seconds
        (benchmarks and tests; a search never needs to wait: it applies what is waiting)."""
        if not self.ready.wait(timeout):
            return False
        with self._arrivals:
            self._arrivals.wait_for(lambda: not self._waiting, timeout)
        with self._applying:  # the last batch taken is applied
            return not self._waiting

    def _apply(self, row: int, terms: dict[str, int] | None) -> None:
        self._reserve(row)
        self._set_length(row, -1)
        self._generations[row] += 1
        if terms is None:
            return
        self._set_length(row, sum(terms.values()))
        generation = int(self._generations[row])
        tails = self._tails
        for term, frequency in terms.items():
            tail = tails.get(term)
            if tail is None:  # not setdefault: a _Tail built for every posting cost ~0.3 ms per write at 100k
                tail = tails[term] = _Tail()
            tail.append(row, frequency, generation, self._generations)

    def _set_length(self, row: int, length: int) -> None:
        """Sets a row's token count, keeping the row and token totals FTS5's bm25() reads."""
        self._reserve(row)
        previous = int(self._lengths[row])
        if previous >= 0:
            self._row_count -= 1
            self._token_count -= previous
        if length >= 0:
            self._row_count += 1
            self._token_count += length
        self._lengths[row] = length

    def _reserve(self, row: int) -> None:
        """Room for `row` in the per-row arrays: new arrays (searches may hold the old ones)."""
        if row < self._lengths.size:
            return
        capacity = max(self._lengths.size * 2, row + 1)
        generations = np.zeros(capacity, dtype=np.int32)
        generations[: self._generations.size] = self._generations
        lengths = np.full(capacity, -1, dtype=np.int32)
        lengths[: self._lengths.size] = self._lengths
        self._generations, self._lengths = generations, lengths

    # -- reads --------------------------------------------------------------------------------------------

    def view(self, terms: Iterable[str]) -> PostingsView | None:
        """The postings of `terms` as FTS5 holds them now: every text written before this call included; None
        when the postings are out of use (a text failed to apply: only FTS5 has it)."""
        terms = tuple(terms)
        self.apply_waiting()
        if not self.ready.is_set():
            return None
        with self._lock:
            block, generations, lengths = self._block, self._generations, self._lengths
            row_count, token_count = self._row_count, self._token_count
            tails = {term: tail.view() for term in terms if (tail := self._tails.get(term)) is not None}
            wanted = set(terms) | set(tails)
        gathered: dict[str, TermPostings] = {}
        for term in wanted:
            rows, frequencies = block.postings(term)
            live = generations[rows] == _BASE_GENERATION
            rows, frequencies = rows[live], frequencies[live]
            if term in tails:
                tail_rows, tail_frequencies, tail_generations = tails[term]
                live = tail_generations == generations[tail_rows]
                rows = np.concatenate([rows, tail_rows[live]])
                frequencies = np.concatenate([frequencies, tail_frequencies[live]])
            gathered[term] = TermPostings(rows, frequencies)
        return PostingsView(gathered, lengths, row_count, token_count)

    def memory_bytes(self) -> int:
        with self._lock:
            tails = sum(tail.rows.nbytes * 3 for tail in self._tails.values())
            return self._block.nbytes + tails + self._generations.nbytes + self._lengths.nbytes


def read_fts_postings(connection: sqlite3.Connection, fts: str, table: str,
                      row_of: Callable[[str], int | None]) -> BuiltPostings:
    """Every posting of FTS5 table `fts` by matrix row (`row_of` a document id of `table`, skipped when None),
    and each document's token count, read in one transaction from its `fts5vocab` views: the 'row' view lists
    the terms in index order with their instance counts; the 'instance' view lists every instance's document in
    the same order, read as one text (2 s at 100k documents, against 15 s as rows)."""
    for view, kind in (("terms", "row"), ("instances", "instance")):
        connection.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{fts}_{view} USING fts5vocab(main, {fts}, {kind})")
    connection.execute("BEGIN")
    try:
        terms = connection.execute(f"SELECT term, cnt FROM temp.{fts}_terms").fetchall()
        listed = connection.execute(f"SELECT group_concat(doc) FROM temp.{fts}_instances").fetchone()[0]
        documents = connection.execute(f"SELECT rowid, id FROM {table}").fetchall()
    finally:
        connection.execute("COMMIT")
    instance_docs = np.fromstring(listed, dtype=np.int64, sep=",") if listed else np.empty(0, dtype=np.int64)
    instance_counts = np.array([count for _, count in terms], dtype=np.int64)
    if int(instance_counts.sum()) != instance_docs.size:
        raise RuntimeError("the fts5vocab 'row' and 'instance' views disagree")
    term_starts = np.concatenate([[0], np.cumsum(instance_counts)])
    # One posting per run of a document's instances within a term.
    posting_start = np.ones(instance_docs.size, dtype=bool)
    posting_start[1:] = instance_docs[1:] != instance_docs[:-1]
    posting_start[term_starts[:-1][instance_counts > 0]] = True
    starts = np.flatnonzero(posting_start)
    frequencies = np.diff(np.append(starts, instance_docs.size))
    rowids = instance_docs[starts]
    tokens_per_rowid = np.bincount(instance_docs)
    row_of_rowid = np.full(max(tokens_per_rowid.size, 1 + max((r for r, _ in documents), default=0)), -1,
                           dtype=np.int64)
    lengths: dict[int, int] = {}
    for rowid, document_id in documents:
        row = row_of(document_id)
        if row is not None:
            row_of_rowid[rowid] = row
            lengths[row] = int(tokens_per_rowid[rowid]) if rowid < tokens_per_rowid.size else 0
    rows = row_of_rowid[rowids]
    known = rows >= 0
    # Postings per term, counted among those whose document has a row.
    term_of_posting = np.searchsorted(term_starts, starts, side="right") - 1
    offsets = np.concatenate([[0], np.cumsum(np.bincount(term_of_posting[known], minlength=len(terms)))])
    block = PostingsBlock({term: number for number, (term, _) in enumerate(terms)}, offsets.astype(np.int64),
                   rows[known].astype(np.int32), frequencies[known].astype(np.int32))
    return block, lengths
