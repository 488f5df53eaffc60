"""BM25 ranked in memory: ``KeywordRanker``, the engine over ``file_terms``.

Why not FTS5's ``bm25()``: it costs about 1.8 us for every row it ranks, and every
statement first counts the rows of each phrase for its idf. A question made of
common words has 100k-300k matching rows in a 1.13M-unit index, so ranking them
took 147 ms per search even with exact pruning. Here each query term's postings
are numpy slices and the scores of every matching unit are summed in one
``bincount``: under 2 ms at 113k units, where FTS5 took 22 ms.

The scores are FTS5's: the same terms, counts and unit lengths (``file_terms`` is
tokenised by FTS5 itself), the same row count, average length, idf floor and
constants, and the same arithmetic in the same order (query term by query term, a
repeated term counting twice), so they equal ``-bm25()`` of the OR of the query's
tokens bit for bit, and ties go to the lower unit id as in FTS5: the tests hold the
lists to FTS5's own ranking.

Layout: arrays indexed by unit id (kind code, -1 for no live unit; source code;
length in tokens) and *segments*, each the postings of some units sorted by term:
``keys`` (distinct term hashes), ``starts``, ``docs``, ``counts``. Catching up with
a changed file drops the units it no longer has and adds a segment with the postings
of its new ones (a unit kept by a rewrite keeps its id and its postings). Segments
merge size-tiered (a segment joins the one before it while it is at least a quarter
of its size), so catching up costs about the size of what changed and the segment
count stays logarithmic; dead units are skipped at query time and dropped when their
segment merges.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memdir.store.contracts import UNIT_KINDS, KeywordQuery, UnitKind
from memdir.store.sqlite.changelog import Position
from memdir.store.sqlite.keywords.terms import FileTerms, Tokens, count_postings, read_terms
from memdir.store.sqlite.rows import tokenizer_of

K1 = 1.2  # FTS5 bm25() constants
B = 0.75
IDF_FLOOR = 1e-6  # what FTS5 uses for an idf <= 0 (a term in half the rows or more)
MAX_CACHED_WORDS = 10_000  # query terms whose tokens are remembered
MERGE_RATIO = 4  # a segment merges into the one before it once it is a quarter of its size

Ranked = list[tuple[int, float]]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Segment:
    """Postings of some units, grouped by term hash (ascending)."""

    keys: IntArray  # distinct term hashes, ascending
    starts: IntArray  # postings of keys[i]: docs[starts[i]:starts[i + 1]]
    docs: npt.NDArray[np.int32]
    counts: npt.NDArray[np.int32]

    @classmethod
    def build(
        cls, docs: npt.NDArray[np.int32], terms: IntArray, counts: npt.NDArray[np.int32]
    ) -> Segment:
        """A segment of these postings; ``terms`` is sorted in place (the caller gives it up).

        Units within a term stay in input order: nothing depends on it (sums are per
        unit, ties are broken by unit id), and a stable sort by term alone is the
        cheapest (2.6 s for 28M postings, lexsort by term and unit 4.5 s). Sorting
        ``terms`` in place keeps one copy of it, not two (224 MB at 28M postings), and
        needs no stable sort: equal keys are equal values (numpy's in-place quicksort of
        28M int64: 0.3 s; its stable sort: 5.5 s).
        """
        order = np.argsort(terms, kind="stable")
        terms.sort()
        edges = np.flatnonzero(terms[1:] != terms[:-1]) + 1
        starts = np.concatenate([[0], edges, [len(terms)]] if len(terms) else [[0]])
        starts = starts.astype(np.int64)
        docs = np.ascontiguousarray(docs[order])
        counts = np.ascontiguousarray(counts[order])
        del order
        return cls(keys=terms[starts[:-1]], starts=starts, docs=docs, counts=counts)

    @property
    def size(self) -> int:
        return len(self.docs)

    def postings(self, term: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        at = int(np.searchsorted(self.keys, term))
        if at == len(self.keys) or int(self.keys[at]) != term:
            return self.docs[:0], self.counts[:0]
        low, high = int(self.starts[at]), int(self.starts[at + 1])
        return self.docs[low:high], self.counts[low:high]

    def terms(self) -> IntArray:
        """The term hash of every posting (the inverse of ``keys``/``starts``)."""
        return np.repeat(self.keys, np.diff(self.starts))


def merge_segments(segments: Sequence[Segment], live: npt.NDArray[np.bool_]) -> Segment:
    """One segment holding the live postings of ``segments``."""
    docs = np.concatenate([s.docs for s in segments])
    terms = np.concatenate([s.terms() for s in segments])
    counts = np.concatenate([s.counts for s in segments])
    keep = live[docs]
    return Segment.build(docs[keep], terms[keep], counts[keep])


class Postings:
    """Postings gathered file by file into arrays of a size known beforehand (grown
    if more come, as when a writer slips in between the count and the read)."""

    def __init__(self, expected: int) -> None:
        self.size = 0
        self.docs = np.empty(expected, dtype=np.int32)
        self.terms = np.empty(expected, dtype=np.int64)
        self.counts = np.empty(expected, dtype=np.int32)

    def add(self, item: FileTerms) -> None:
        low, high = self.size, self.size + len(item.terms)
        if high > len(self.terms):
            grown = max(high, 2 * len(self.terms))
            self.docs = np.resize(self.docs, grown)
            self.terms = np.resize(self.terms, grown)
            self.counts = np.resize(self.counts, grown)
        self.docs[low:high] = np.repeat(item.units, item.sizes)
        self.terms[low:high] = item.terms
        self.counts[low:high] = item.counts
        self.size = high

    def segment(self) -> Segment:
        n = self.size
        docs, terms, counts = self.docs[:n], self.terms[:n], self.counts[:n]
        self.size = 0  # the segment owns the arrays now
        self.docs, self.counts = np.empty(0, np.int32), np.empty(0, np.int32)
        self.terms = np.empty(0, np.int64)
        return Segment.build(docs, terms, counts)


class KeywordRanker:
    """This process's in-memory BM25 index of the units' kept terms (an engine of the
    change log, ``changelog.py``), and the query tokens it ranks by."""

    def __init__(self, tokenizer: str = "porter") -> None:
        self.full_loads = 0
        self.position: Position | None = None
        self.tokens = Tokens(tokenizer)
        self._words: dict[str, tuple[int, ...]] = {}
        self._reset()

    def _reset(self) -> None:
        self.kinds = np.full(0, -1, dtype=np.int8)  # by unit id; -1: no live unit
        self.sources = np.zeros(0, dtype=np.int16)
        self.lengths = np.zeros(0, dtype=np.float64)
        self.segments: list[Segment] = []
        self.rows = 0
        self.tokens_total = 0
        self._files: dict[int, IntArray] = {}
        self._code_of: dict[str, int] = {}
        self._scratch = np.empty(0, dtype=np.int32)
        self._dead = 0  # units dropped whose postings may still be in a segment

    @property
    def files_held(self) -> int:
        return len(self._files)

    @property
    def nbytes(self) -> int:
        """Memory held by the index's arrays (about 6 bytes per posting)."""
        held = self.kinds.nbytes + self.sources.nbytes + self.lengths.nbytes
        held += self._scratch.nbytes + sum(
            s.keys.nbytes + s.starts.nbytes + s.docs.nbytes + s.counts.nbytes for s in self.segments
        )
        return held + sum(u.nbytes + 100 for u in self._files.values())

    def use_tokenizer(self, tokenizer: str) -> None:
        """Tokenise queries as the index does (its tokenizer is recorded in ``meta``)."""
        if self.tokens.spec != Tokens(tokenizer).spec:
            self.tokens = Tokens(tokenizer)
            self._words.clear()

    # -- following the tables ----------------------------------------------------------------

    def reload(self, conn: sqlite3.Connection) -> None:
        """Load every unit's terms into one segment, file by file into arrays sized
        beforehand (holding every file's row at once, then concatenating, took several
        times the memory the segment keeps)."""
        self.use_tokenizer(tokenizer_of(conn))
        self._reset()
        self.full_loads += 1
        postings = Postings(count_postings(conn))
        for item in read_terms(conn, None):
            self._files[item.file_id] = np.array(item.units)
            self._add_units(item)
            postings.add(item)
        if postings.size:
            self.segments.append(postings.segment())

    def apply(self, conn: sqlite3.Connection, file_ids: list[int]) -> None:
        """Drop the units changed files no longer have; add the postings of their new ones."""
        rows = {item.file_id: item for item in read_terms(conn, file_ids)}
        added: list[FileTerms] = []
        for file_id in file_ids:
            before = self._files.get(file_id, np.zeros(0, dtype=np.int64))
            item = rows.get(file_id)
            after = item.units if item is not None else np.zeros(0, dtype=np.int64)
            self._drop_units(np.setdiff1d(before, after, assume_unique=True))
            if item is None:
                self._files.pop(file_id, None)
                continue
            fresh = item.only(~np.isin(after, before, assume_unique=True))
            self._files[file_id] = np.array(after)
            if len(fresh.units):
                self._add_units(fresh)
                added.append(fresh)
        if added:
            self._add_segment(added)

    def _drop_units(self, units: IntArray) -> None:
        if len(units) == 0:
            return
        self.rows -= len(units)
        self.tokens_total -= int(self.lengths[units].sum())
        self.kinds[units] = -1
        self._dead += len(units)

    def _add_units(self, item: FileTerms) -> None:
        """Take in new units of one file (their postings follow in a segment)."""
        units = item.units
        if len(units) == 0:
            return
        self._reserve(int(units.max()) + 1)
        self.kinds[units] = item.kinds
        self.sources[units] = self._code_of.setdefault(item.source, len(self._code_of))
        self.lengths[units] = item.lengths
        self.rows += len(units)
        self.tokens_total += int(item.lengths.sum())

    def _add_segment(self, found: Iterable[FileTerms]) -> None:
        items = list(found)
        docs = np.concatenate([np.repeat(i.units, i.sizes) for i in items]).astype(np.int32)
        terms = np.concatenate([i.terms for i in items])
        counts = np.concatenate([i.counts for i in items])
        self.segments.append(Segment.build(docs, terms, counts))
        live = self.kinds >= 0
        while len(self.segments) > 1 and (
            MERGE_RATIO * self.segments[-1].size >= self.segments[-2].size
        ):
            last = self.segments.pop()
            self.segments[-1] = merge_segments([self.segments[-1], last], live)
        if len(self.segments) == 1:
            self._dead = 0  # every segment merged: no dead postings are left

    def _reserve(self, size: int) -> None:
        if size <= len(self.kinds):
            return
        capacity = max(size, len(self.kinds) + len(self.kinds) // 2, 1024)
        grow = capacity - len(self.kinds)
        self.kinds = np.concatenate([self.kinds, np.full(grow, -1, dtype=np.int8)])
        self.sources = np.concatenate([self.sources, np.zeros(grow, dtype=np.int16)])
        self.lengths = np.concatenate([self.lengths, np.zeros(grow, dtype=np.float64)])

    # -- queries -------------------------------------------------------------------------------

    def terms_of(self, conn: sqlite3.Connection, query: KeywordQuery) -> list[int]:
        """The term hashes of the query's tokens, term by term, in order (repeats kept)."""
        unknown = [w for w in dict.fromkeys(query.terms) if w not in self._words]
        if unknown:
            if len(self._words) > MAX_CACHED_WORDS:
                self._words.clear()
            for word, tokens in zip(unknown, self.tokens.of_texts(conn, unknown), strict=True):
                self._words[word] = tuple(self.tokens.hash(t) for t in tokens)
        return [term for word in query.terms for term in self._words[word]]

    # -- search ------------------------------------------------------------------------------

    def search(
        self,
        terms: Sequence[int],
        sources: Sequence[str],
        kinds: Sequence[UnitKind],
        limit: int,
    ) -> dict[UnitKind, Ranked]:
        """The top ``limit`` units of each kind in ``sources`` for the OR of ``terms``.

        ``terms`` are the query's term hashes in order (repeats count twice, as in
        FTS5). Scores are ``-bm25()``; see the module docstring.
        """
        found: dict[UnitKind, Ranked] = {kind: [] for kind in kinds}
        codes = [self._code_of[s] for s in sources if s in self._code_of]
        if not codes or self.rows == 0 or limit <= 0:
            return found
        docs, weights = self._score_parts(terms)
        if not docs:
            return found
        matched, scores = self._sum_by_unit(np.concatenate(docs), np.concatenate(weights))
        if len(self._code_of) > len(codes):
            keep = np.isin(self.sources[matched], codes)
            matched, scores = matched[keep], scores[keep]
        unit_kinds = self.kinds[matched]
        for kind in kinds:
            mine = unit_kinds == UNIT_KINDS.index(kind)
            found[kind] = best_first(matched[mine], scores[mine], limit)
        return found

    def _sum_by_unit(
        self, docs: npt.NDArray[np.int32], weights: npt.NDArray[np.float64]
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
        """The distinct units of ``docs`` and the sum of their ``weights``, in input order.

        Linear in the postings, with no pass over every unit of the index: each posting
        finds its unit's last posting through a scratch array indexed by unit id (never
        cleared: only slots written just now are read), and ``bincount`` sums onto it.
        """
        if len(self._scratch) < len(self.kinds):
            self._scratch = np.empty(len(self.kinds), dtype=np.int32)
        at = np.arange(len(docs), dtype=np.int32)
        self._scratch[docs] = at  # the last posting of each unit wins
        owner = self._scratch[docs]
        sums = np.bincount(owner, weights=weights, minlength=len(docs))
        last = owner == at
        return docs[last], sums[last]

    def _score_parts(
        self, terms: Sequence[int]
    ) -> tuple[list[npt.NDArray[np.int32]], list[npt.NDArray[np.float64]]]:
        """Per query term: the live units holding it and what it adds to their scores."""
        avgdl = self.tokens_total / self.rows
        all_docs: list[npt.NDArray[np.int32]] = []
        all_weights: list[npt.NDArray[np.float64]] = []
        for term in terms:
            docs, counts = self._live_postings(term)
            if len(docs) == 0:
                continue
            idf = fts5_idf(len(docs), self.rows)
            freq = counts.astype(np.float64)
            norm = K1 * (1 - B + B * self.lengths[docs] / avgdl)
            all_docs.append(docs)
            all_weights.append(idf * ((freq * (K1 + 1.0)) / (freq + norm)))
        return all_docs, all_weights

    def _live_postings(self, term: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """The live units holding ``term`` and its count in each."""
        parts = [segment.postings(term) for segment in self.segments]
        if not parts:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
        docs, counts = parts[0] if len(parts) == 1 else _joined(parts)
        if self._dead:
            live = self.kinds[docs] >= 0
            docs, counts = docs[live], counts[live]
        return docs, counts

    def coverage(self, terms: Sequence[int], unit_ids: Sequence[int]) -> dict[int, float]:
        """For each unit, the share of the query's information it holds: the summed
        ``smoothed_idf`` of the query terms in it over that of every query term."""
        ids = np.asarray(unit_ids, dtype=np.int32)
        held = np.zeros(len(ids), dtype=np.float64)
        total = 0.0
        for term in dict.fromkeys(terms):
            docs = self._live_postings(term)[0]
            weight = smoothed_idf(len(docs), self.rows)
            total += weight
            held += weight * np.isin(ids, docs)
        shares = held / total if total > 0.0 else held
        return {int(unit): float(share) for unit, share in zip(ids, shares, strict=True)}


def fts5_idf(frequency: int, rows: int) -> float:
    """FTS5's idf of a term held by ``frequency`` of ``rows`` rows (floored above 0)."""
    idf = math.log((rows - frequency + 0.5) / (frequency + 0.5))
    return idf if idf > 0.0 else IDF_FLOOR


def smoothed_idf(frequency: int, rows: int) -> float:
    """BM25's idf with Lucene's ``1 +``: ``log(1 + (rows - n + 0.5) / (n + 0.5))``, above 0
    for every term. FTS5's idf floors a term held by half the rows or more to almost 0,
    which in a memory of a few notes makes its words count for nothing; what share of a
    query a unit holds (``KeywordRanker.coverage``) needs every word to weigh something."""
    return math.log(1.0 + (rows - frequency + 0.5) / (frequency + 0.5))


def _joined(
    parts: Sequence[tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]],
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def best_first(rows: IntArray, scores: npt.NDArray[np.float64], limit: int) -> Ranked:
    """The ``limit`` best (unit id, score): higher score first, ties to the lower id."""
    if len(rows) > limit:
        kth = -np.partition(-scores, limit - 1)[limit - 1]
        keep = scores >= kth
        rows, scores = rows[keep], scores[keep]
    order = np.lexsort((rows, -scores))[:limit]
    return [(int(rows[i]), float(scores[i])) for i in order]
