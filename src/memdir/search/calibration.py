"""What a search score means: the confidence that memory holds something relevant.

Ranking inside one query is relative (``fusion``: each signal is scaled to the query's
best), so the best hit of any query would score about 1.0. To tell a hit from a miss,
search also measures the query's best *absolute* evidence:

* ``cosine``: the highest cosine between the query and a single block (a list item or
  paragraph). Blocks are embedded without their headings (``memdir.index.chunking``),
  so the figure means the same for every query.
* ``keyword``: the largest share of the query's information that one block holds
  (``IndexReader.keyword_coverage``): the idf of the query words the block contains over
  that of every query word. A word memory has never seen keeps its full idf, so a
  question about someone or something absent scores low however common its other words
  are; the idf is smoothed so that in a memory of a few notes every word still counts.

``evidence = w * cosine + (1 - w) * keyword`` and the confidence is Platt scaling of it,
``1 / (1 + exp(-slope * (evidence - midpoint)))``, fitted by logistic regression on
LoCoMo questions asked of their own conversation's memory (answerable) and of the next
conversation's (unanswerable): ``memdir bench calibrate`` reproduces the fit.

A question that *names* something memory has never seen (a capitalised word past the
first that no indexed unit holds: "What did Dmitri say ...?" when no note mentions
Dmitri) is about something memory does not hold, and needs the evidence above. One that
names nothing unseen is asked in words memory may simply not use (a paraphrase: "my pet"
for "my cat"), and its midpoint is lower by ``familiar_shift``. On LoCoMo the unanswerable
questions name another conversation's people (755 of 760), so its figures do not move; on
small homes, coding transcripts and mixed workspaces, where paraphrased questions reach a
cosine of 0.3 to 0.5 (docs/benchmarks.md, "Memory shapes"), fewer answerable questions are
told "nothing found". A hit's
score is the confidence times the hit's relevance relative to the best hit, so the top
hit carries the confidence and ``search.min_score`` is one threshold for every query.

The constants belong to an embedding model: cosines of another model live on another
scale. Models without constants here (and ``search.calibration`` unset) keep relative
scores, and search says so (``SearchResults.calibrated``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memdir.errors import InvalidInputError


@dataclass(frozen=True)
class Calibration:
    """Platt scaling of one evidence mix; ``cosine_weight`` 0 uses keywords alone, 1 cosine."""

    cosine_weight: float
    midpoint: float
    slope: float
    familiar_shift: float = 0.0

    def __post_init__(self) -> None:
        if (
            not 0.0 <= self.cosine_weight <= 1.0
            or self.slope <= 0.0
            or not 0.0 <= self.familiar_shift <= 0.5
        ):
            raise InvalidInputError(
                f"calibration {self!r} is out of range: cosine_weight must be in [0, 1], "
                "slope above 0 and familiar_shift in [0, 0.5]"
            )

    def confidence(
        self, cosine: float | None, keyword: float | None, names_unseen: bool = True
    ) -> float:
        """The confidence for a query's best cosine and keyword share (None counts as 0);
        ``names_unseen`` False (the query names nothing memory never saw) lowers the
        midpoint by ``familiar_shift``."""
        evidence = self.cosine_weight * (cosine or 0.0) + (1.0 - self.cosine_weight) * min(
            1.0, keyword or 0.0
        )
        midpoint = self.midpoint if names_unseen else self.midpoint - self.familiar_shift
        z = self.slope * (evidence - midpoint)
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


@dataclass(frozen=True)
class ModelCalibration:
    """The calibrations of one embedding model: with keyword evidence, and without it
    (stores that do not measure keyword coverage, such as PostgreSQL's)."""

    hybrid: Calibration
    vector: Calibration


KEYWORD_ONLY = Calibration(cosine_weight=0.0, midpoint=0.373, slope=17.0)
"""Search without an embedder: the keyword share alone."""

MODELS: dict[tuple[str, str], ModelCalibration] = {
    ("local", "all-MiniLM-L6-v2-onnx-int8"): ModelCalibration(
        hybrid=Calibration(cosine_weight=0.78, midpoint=0.472, slope=53.0, familiar_shift=0.15),
        vector=Calibration(cosine_weight=1.0, midpoint=0.492, slope=43.0, familiar_shift=0.15),
    ),
}
"""Fitted constants per (provider, model) of the embedder."""


def choose_calibration(
    provider: str | None, model: str | None, has_keyword: bool
) -> Calibration | None:
    """The calibration for an embedder (None: keyword-only search), or None when the
    model has none and scores stay relative."""
    if provider is None:
        return KEYWORD_ONLY if has_keyword else None
    known = MODELS.get((provider, model or ""))
    if known is None:
        return None
    return known.hybrid if has_keyword else known.vector
