"""The values search returns: options in, hits and results out."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from memdir.errors import InvalidInputError
from memdir.search.calibration import Calibration
from memdir.store.fact_records import RetiredLine

FusionMode = Literal["relative", "rrf", "weighted"]


@dataclass(frozen=True)
class SearchOptions:
    """How one search ranks and cuts its hits.

    ``fusion`` is ``"relative"`` (each signal scaled between its floor and the query's
    best value, then ``text_weight`` * BM25 + ``vector_weight`` * cosine, so margins
    count), ``"rrf"`` (reciprocal-rank fusion, constant ``rrf_k``: ranks only) or
    ``"weighted"`` (``vector_weight`` * cosine + ``text_weight`` * ``x / (1 + x)`` of BM25).
    ``chunk_share`` is the part of a block's relevance inherited from the best
    chunk that contains it. ``recency_max_boost`` bounds the date boost
    (0 turns it off); ``mmr_lambda`` turns on MMR diversity when set. ``feedback``
    is the Rocchio weight of pseudo-relevance feedback: the query vector moves
    towards the mean of its three best blocks for a second block vector search
    (0 turns it off). ``neighbour_share`` adds to a block this share of the relevance
    of a candidate block up to two blocks before it (half of it from one after it); such
    neighbours join the candidates, and one with no relevance of its own becomes a hit of
    its own rather than widening the hit beside it (0 turns it off). ``answer_share``
    gives the block right after a candidate that asks a question (a ``?``) at least this
    share of the question's relevance. ``attribution_demote`` scales by ``1 - value``
    the blocks whose leading label (``- Name: ...``, ``- **user**: ...``) is not the
    one the query names, when it names one a candidate carries (0 turns it off;
    ``memdir.search.attribution``). A touching block at least ``absorb_ratio`` as
    relevant as a hit is folded into it. ``candidates`` is the length of each store list.
    ``keyword_gate`` (low, high) scales the keyword list's weight in fusion by the largest
    share of the query's information one keyword candidate holds: none at or below
    ``low``, all from ``high`` (``hybrid.keyword_strength``; None keeps it whole).
    ``feedback_coherence`` scales the feedback weight by the mean mutual cosine of the
    best blocks (``memdir.search.feedback``): disagreeing blocks barely move the query.
    """

    max_results: int = 6
    min_score: float = 0.0
    fusion: FusionMode = "relative"
    rrf_k: int = 10
    vector_weight: float = 0.35
    text_weight: float = 0.65
    chunk_share: float = 0.3
    neighbour_share: float = 0.2
    answer_share: float = 0.8
    attribution_demote: float = 0.5
    absorb_ratio: float = 0.5
    recency_half_life_days: float = 30.0
    recency_max_boost: float = 0.1
    mmr_lambda: float | None = None
    feedback: float = 0.6
    feedback_coherence: bool = True
    candidates: int = 40
    keyword_gate: tuple[float, float] | None = (1.0 / 6.0, 1.0 / 3.0)
    max_terms: int = 24
    calibration: Calibration | None = None
    include_history: bool = False

    def __post_init__(self) -> None:
        checks: list[tuple[str, object, bool]] = [
            ("max_results", self.max_results, 1 <= self.max_results <= 1000),
            ("min_score", self.min_score, 0.0 <= self.min_score <= 2.0),
            ("fusion", self.fusion, self.fusion in ("relative", "rrf", "weighted")),
            ("rrf_k", self.rrf_k, self.rrf_k >= 1),
            ("vector_weight", self.vector_weight, self.vector_weight >= 0.0),
            ("text_weight", self.text_weight, self.text_weight >= 0.0),
            ("chunk_share", self.chunk_share, 0.0 <= self.chunk_share <= 1.0),
            ("neighbour_share", self.neighbour_share, 0.0 <= self.neighbour_share <= 1.0),
            ("answer_share", self.answer_share, 0.0 <= self.answer_share <= 1.0),
            (
                "attribution_demote",
                self.attribution_demote,
                0.0 <= self.attribution_demote <= 1.0,
            ),
            (
                "recency_half_life_days",
                self.recency_half_life_days,
                self.recency_half_life_days > 0.0,
            ),
            ("absorb_ratio", self.absorb_ratio, 0.0 <= self.absorb_ratio <= 1.0),
            ("recency_max_boost", self.recency_max_boost, 0.0 <= self.recency_max_boost <= 1.0),
            (
                "mmr_lambda",
                self.mmr_lambda,
                self.mmr_lambda is None or 0.0 <= self.mmr_lambda <= 1.0,
            ),
            ("feedback", self.feedback, 0.0 <= self.feedback <= 4.0),
            ("candidates", self.candidates, 1 <= self.candidates <= 10_000),
            ("max_terms", self.max_terms, 1 <= self.max_terms <= 256),
            (
                "keyword_gate",
                self.keyword_gate,
                self.keyword_gate is None
                or 0.0 <= self.keyword_gate[0] < self.keyword_gate[1] <= 1.0,
            ),
        ]
        for name, value, ok in checks:
            if not ok:
                raise InvalidInputError(
                    f"search option {name}={value!r} is out of range; "
                    "see SearchOptions in memdir.search for the allowed values"
                )
        if self.fusion != "rrf" and self.vector_weight + self.text_weight <= 0.0:
            raise InvalidInputError(
                f"{self.fusion} fusion needs vector_weight + text_weight > 0; "
                f"got {self.vector_weight!r} and {self.text_weight!r}"
            )


@dataclass(frozen=True)
class SearchHit:
    """A cited span of one memory file with its score and how the score was made.

    ``path`` is the path of the file as the searching session reads it back: relative to
    the workspace ``source`` names, and from ``Memory.search`` with a ``global:`` or
    ``agent:<id>:`` prefix when that is not the session's own (``memdir.workspace.sources``).
    """

    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    score: float
    breakdown: dict[str, float] = field(default_factory=dict, compare=False)
    retired: RetiredLine | None = None  # with include_history: a line of a retired fact

    @property
    def citation(self) -> str:
        """``path:start-end`` (prefixed for another workspace): what ``memory_get`` reads."""
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass(frozen=True)
class Evidence:
    """A query's best absolute evidence (``memdir.search.calibration``): the top block
    cosine and the largest share of the query's information one block holds; None where
    unmeasured."""

    cosine: float | None = None
    keyword: float | None = None
    unseen_names: tuple[str, ...] = ()  # words the query names that no indexed unit holds


@dataclass(frozen=True)
class SearchResults:
    """Ranked hits; ``notice`` explains an empty result (empty string otherwise).

    ``confidence`` is the calibrated confidence that memory holds something relevant
    (the top hit's score), None when scores are relative (an uncalibrated embedder);
    ``below_floor`` says that ``min_score`` hid every match (a lower one shows them).
    """

    hits: tuple[SearchHit, ...] = ()
    notice: str = ""
    confidence: float | None = None
    evidence: Evidence = field(default_factory=Evidence)
    below_floor: bool = False  # nothing returned, but weaker matches exist below min_score
    searched_files: int | None = None  # how many files the search covered (None: not counted)

    @property
    def calibrated(self) -> bool:
        """Whether scores are calibrated confidences (comparable across queries)."""
        return self.confidence is not None

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> SearchHit:
        return self.hits[index]
