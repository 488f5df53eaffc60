"""How far pseudo-relevance feedback may move a query: as far as its best blocks agree.

Feedback (Rocchio) moves the query vector towards the mean of its best blocks, on
the premise that they are about one topic, the query's. In a conversation the best
turns of a question usually are (one exchange, one subject); in a home of short,
unrelated facts the three best lines of a paraphrased question are often three
topics, and their mean points at none of them. The blocks' own vectors say which
case a query is in: their mutual cosine. Search scales the feedback weight by it,
so agreeing blocks move the query as before and disagreeing ones barely move it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def coherence(vectors: Sequence[npt.NDArray[np.float32]]) -> float:
    """The mean pairwise cosine of ``vectors``, clipped to ``[0, 1]``; 1.0 for fewer than two.

    One block cannot disagree with itself; zero vectors count as disagreeing.
    """
    if len(vectors) < 2:
        return 1.0
    matrix = np.stack([np.asarray(v, dtype=np.float64) for v in vectors])
    norms = np.linalg.norm(matrix, axis=1)
    unit = matrix / np.where(norms > 0.0, norms, 1.0)[:, None]
    cosines = unit @ unit.T
    n = len(vectors)
    mean = (float(cosines.sum()) - float(np.trace(cosines))) / (n * (n - 1))
    return min(1.0, max(0.0, mean))
