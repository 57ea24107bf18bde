"""Precision, recall and F-measure from ROUGE match statistics; multi-reference combination.

Every ROUGE variant reduces one (prediction, reference) pair to :class:`Stats`: ``hits`` and the
two denominators. Two ways to combine several references:

* ``"best"`` - score each reference, keep the one with the highest F (first on ties), as
  rouge-score's ``RougeScorer.score_multi`` does;
* ``"average"`` - ROUGE-1.5.5's default "model average" (``-f A``): hits and denominators are
  summed over the references, then P/R/F are computed once (a hit on every reference counts).

>>> s = Stats(hits=2, ref_total=4, pred_total=2)
>>> to_score(s)
Score(precision=1.0, recall=0.5, fmeasure=0.6666666666666666)
>>> combine([Stats(1, 2, 2), Stats(2, 2, 2)], "average")
Score(precision=0.75, recall=0.75, fmeasure=0.75)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple


class Score(NamedTuple):
    """Precision, recall and F-measure of one prediction (all in [0, 1])."""

    precision: float
    recall: float
    fmeasure: float


@dataclass(frozen=True)
class Stats:
    """Sufficient statistics of one pair: ``hits`` over ``ref_total`` (recall) and ``pred_total``.

    ``pred_hits`` is the precision numerator when it differs from ``hits`` (the paper's
    summary-level ROUGE-W matches each side's sentences separately); None means ``hits``.
    """

    hits: float
    ref_total: float
    pred_total: float
    pred_hits: float | None = None

    @property
    def precision_hits(self) -> float:
        return self.hits if self.pred_hits is None else self.pred_hits

    @property
    def finite(self) -> bool:
        values = (self.hits, self.ref_total, self.pred_total, self.precision_hits)
        return all(math.isfinite(v) for v in values)


def pooled(per_reference: Sequence[Stats]) -> Stats:
    """Hits and denominators summed over the references (``multi_ref="average"``)."""
    fields = ("hits", "ref_total", "pred_total", "precision_hits")
    return Stats(*(sum(getattr(s, name) for s in per_reference) for name in fields))


def fmeasure(precision: float, recall: float, beta: float = 1.0) -> float:
    """F-beta, ``(1 + beta**2) P R / (R + beta**2 P)``; 0 when P or R is 0.

    For beta=1 this is rouge-score's exact expression. For every other finite beta > 0 it stays
    finite and between min(P, R) and max(P, R) (F-beta is a weighted harmonic mean of the two):
    where ``beta**2`` overflows (beta above about 1.34e154) F is its limit, the recall, instead
    of ``inf / inf``; where it underflows to 0, the formula gives the other limit, the precision.

    >>> fmeasure(0.5, 0.25, beta=1e200), fmeasure(0.5, 0.25, beta=1e-200)
    (0.25, 0.5)
    """
    if beta == 1.0:
        return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    if precision <= 0.0 or recall <= 0.0:
        return 0.0
    beta2 = beta * beta
    if math.isinf(beta2):
        return recall
    value = (1 + beta2) * precision * recall / (recall + beta2 * precision)
    # Rounding may step an ulp outside [min(P, R), max(P, R)]; the exact value never does.
    return min(max(value, min(precision, recall)), max(precision, recall))


def _ratio(hits: float, total: float, transform: Callable[[float], float] | None) -> float:
    if total <= 0:
        return 0.0
    return transform(hits / total) if transform is not None else hits / total


def to_score(stats: Stats, beta: float = 1.0, transform: Callable[[float], float] | None = None) -> Score:
    """P/R/F of one pair; an empty side gives 0 (never NaN). ``transform`` maps ratios (ROUGE-W)."""
    precision = _ratio(stats.precision_hits, stats.pred_total, transform)
    recall = _ratio(stats.hits, stats.ref_total, transform)
    return Score(precision, recall, fmeasure(precision, recall, beta))


def combine(
    per_reference: Sequence[Stats],
    mode: str,
    beta: float = 1.0,
    transform: Callable[[float], float] | None = None,
) -> Score:
    """Combine the statistics of one prediction against each of its references."""
    if len(per_reference) == 1:
        return to_score(per_reference[0], beta, transform)
    if mode == "average":
        return to_score(pooled(per_reference), beta, transform)
    best: Score | None = None
    for stats in per_reference:  # the first of equals, as rouge-score's score_multi
        score = to_score(stats, beta, transform)
        if best is None or score.fmeasure > best.fmeasure:
            best = score
    assert best is not None
    return best
