"""BLANC's formula: a score from the counts ``S[base correct][help correct]`` of masked tokens.

Every masked token of the document falls in one cell of ``[[S00, S01], [S10, S11]]`` (blanc's
"relative-counts"): ``b`` says whether the model unmasked it right without the summary's help
(the filler input for BLANC-help, the original model for BLANC-tune), ``h`` whether it did with it.

- ``relative`` (default): ``(S01 - S10) / (S00 + S01 + S10 + S11)``, in [-1, 1];
- ``improve``: ``S01 / (S00 + S01 + S11)``, in [0, 1].

Both are 0.0 when their denominator is 0 (blanc's convention: nothing was masked).

>>> relative_score([[5, 3], [1, 1]]), improve_score([[5, 3], [1, 1]])
(0.2, 0.3333333333333333)
>>> score_from_counts([[0, 2], [0, 0]], "relative")
1.0
"""

from __future__ import annotations

from typing import Literal

Measure = Literal["relative", "improve"]
#: The two measures of blanc, in its order.
MEASURES: tuple[str, ...] = ("relative", "improve")
#: blanc's default measure.
DEFAULT_MEASURE: Measure = "relative"

Counts = list[list[int]]  # [[S00, S01], [S10, S11]], as blanc's "relative-counts"


def relative_score(counts: Counts) -> float:
    """``(S01 - S10) / total``; 0.0 when no token was masked (blanc's convention).

    >>> relative_score([[0, 0], [0, 0]])
    0.0
    """
    total = counts[0][0] + counts[0][1] + counts[1][0] + counts[1][1]
    return 0.0 if total == 0 else (counts[0][1] - counts[1][0]) / total


def improve_score(counts: Counts) -> float:
    """``S01 / (S00 + S01 + S11)``; 0.0 when that denominator is 0 (blanc's convention).

    >>> improve_score([[1, 1], [4, 0]])
    0.5
    """
    denominator = counts[0][0] + counts[0][1] + counts[1][1]
    return 0.0 if denominator == 0 else counts[0][1] / denominator


def score_from_counts(counts: Counts, measure: str) -> float:
    """Apply ``measure`` ('relative' or 'improve') to ``[[S00, S01], [S10, S11]]``."""
    return float(relative_score(counts) if measure == "relative" else improve_score(counts))
