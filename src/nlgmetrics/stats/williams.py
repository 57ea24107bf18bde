"""Williams test for the difference between two dependent correlations sharing one variable.

Used in MT/summarisation meta-evaluation (Graham & Baldwin 2014, "Testing for Significance of
Increased Correlation with Human Judgment", EMNLP) and in the InfoLM paper: is metric A's
correlation with human judgment ``r12`` significantly higher than metric B's ``r13``, given that
the two metrics are themselves correlated (``r23``) on the same ``n`` items?

    t = (r12 - r13) * sqrt((n - 1)(1 + r23))
        / sqrt(2 K (n - 1)/(n - 3) + ((r12 + r13)/2)^2 (1 - r23)^3),
    K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23,

with ``n - 3`` degrees of freedom (Williams 1959; Steiger 1980, eq. 7). The test assumes Pearson
correlations; applying it to Spearman/Kendall coefficients is a common approximation.

>>> result = williams_test(0.4, 0.5, 0.1, 103, alternative="two-sided")
>>> round(result.t, 2), round(result.p_value, 2)   # psych::r.test(103, .4, .5, .1)
(-0.89, 0.37)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from nlgmetrics.core.validation import check_choice, check_int, check_real
from nlgmetrics.stats.coefficients import TIE_TOLERANCE
from nlgmetrics.stats.correlation import correlate

ALTERNATIVES = ("greater", "less", "two-sided")


@dataclass(frozen=True)
class WilliamsResult:
    """``t`` statistic, degrees of freedom and p-value of the Williams test."""

    t: float
    df: int
    p_value: float
    r12: float
    r13: float
    r23: float
    n: int


def williams_test(r12: float, r13: float, r23: float, n: int, alternative: str = "greater") -> WilliamsResult:
    """Test H0: rho12 == rho13. ``alternative="greater"`` asks whether r12 > r13 (one-sided).

    ``r12``: metric A vs human; ``r13``: metric B vs human; ``r23``: metric A vs metric B, each a
    finite number in [-1, 1] (numpy scalars welcome: a float32 correlation is used in float64, like
    a Python float, not in float32 arithmetic); the three must be possible together (correlations
    of one set of items: ``K >= 0``). ``r12`` and ``r13`` closer than
    :data:`~nlgmetrics.stats.coefficients.TIE_TOLERANCE` are a tie: t = 0. ``n``: the number of
    items the correlations were computed on, an integer > 3 (a NaN or a fractional ``n`` would
    give a NaN or a wrong p-value).

    >>> williams_test(np.float32(0.4), 0.5, 0.1, np.int64(103)).df
    100
    >>> williams_test(0.4, 0.5, 0.1, float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: `n` must be an integer > 3 (the number of items both correlations were computed on; the test has n - 3 degrees of freedom), got nan.
    """
    check_choice("alternative", alternative, ALTERNATIVES)
    r12, r13, r23 = (
        check_real(r, minimum=-1, maximum=1, message=(
            f"`{name}` must be a correlation: a finite number in [-1, 1], got {r!r}."))
        for name, r in (("r12", r12), ("r13", r13), ("r23", r23))
    )
    n = check_int("n", n, message=(
        f"`n` must be an integer > 3 (the number of items both correlations were computed on; "
        f"the test has n - 3 degrees of freedom), got {n!r}."), minimum=4)
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    if k < -1e-12:  # rounding of a K = 0 triple (r23 = 1, r12 = r13) stays far above this
        # K is the determinant of the 3x3 correlation matrix: negative, no data has these three
        # correlations, and the formula would still return a p-value for them.
        raise ValueError(
            f"r12={r12!r}, r13={r13!r}, r23={r23!r} cannot be correlations of one set of items "
            f"(K = {k:.3g} < 0: their correlation matrix is not positive semi-definite); compute all "
            f"three on the same n items."
        )
    df = n - 3
    if abs(r12 - r13) <= TIE_TOLERANCE:
        # Equal correlations (up to rounding): t = 0, no evidence either way. Computed, t would be
        # rounding noise, and 0/0 for two identical metrics (r23 = 1, K = 0).
        t = 0.0
    else:
        denominator = 2 * k * (n - 1) / (n - 3) + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
        if denominator <= 0:
            # Only reachable for degenerate inputs (r23 = 1 with r12 != r13 cannot come from data).
            raise ValueError("Williams test undefined: the two metrics are perfectly correlated (r23 = 1).")
        t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denominator)
    p = {"greater": stats.t.sf(t, df), "less": stats.t.cdf(t, df), "two-sided": 2 * stats.t.sf(abs(t), df)}
    return WilliamsResult(float(t), df, float(p[alternative]), float(r12), float(r13), float(r23), int(n))


#: The fewest items the test is defined on (it has n - 3 degrees of freedom).
MIN_ITEMS = 4


def williams_undefined_reason(
    metric_a: Sequence[float], metric_b: Sequence[float], human: Sequence[float],
    names: tuple[str, str] = ("metric_a", "metric_b"), unit: str = "items",
) -> str | None:
    """Why the Williams test on these score vectors is undefined, naming the vector (``names``
    for the two metrics, ``human``), or ``None`` when it is defined.

    >>> williams_undefined_reason([1, 2, 3, 4], [4, 4, 4, 4], [1, 3, 2, 4], names=("m", "bleu"))
    'bleu constant'
    """
    a, b, h = (np.asarray(v, dtype=float) for v in (metric_a, metric_b, human))
    if h.size < MIN_ITEMS:
        return f"fewer than {MIN_ITEMS} {unit} (the test has n - 3 degrees of freedom)"
    constant = [name for name, v in ((names[0], a), (names[1], b), ("human scores", h)) if np.ptp(v) == 0]
    # Every vector varies and has >= 4 items: the three correlations are defined.
    return " and ".join(constant) + " constant" if constant else None


def williams_from_scores(
    metric_a: Sequence[float],
    metric_b: Sequence[float],
    human: Sequence[float],
    method: str = "pearson",
    alternative: str = "greater",
) -> WilliamsResult:
    """Williams test on raw score vectors (e.g. per-system means): is A's correlation higher than B's?

    >>> human = [1, 2, 3, 4, 5, 6]
    >>> res = williams_from_scores([1, 2, 3, 4, 6, 5], [2, 1, 4, 3, 5, 7], human)
    >>> res.r12 > res.r13
    True
    """
    a, b, h = (np.asarray(v, dtype=float) for v in (metric_a, metric_b, human))
    if not (a.shape == b.shape == h.shape):
        raise ValueError(f"metric_a, metric_b and human must have the same length, got {a.shape}, {b.shape}, {h.shape}.")
    reason = williams_undefined_reason(a, b, h)
    if reason is not None:
        raise ValueError(f"Williams test undefined: {reason}.")
    r12, r13, r23 = correlate(a, h, method), correlate(b, h, method), correlate(a, b, method)
    return williams_test(r12, r13, r23, len(h), alternative)
