"""The three correlation coefficients, computed for many rows at once.

Shared by :mod:`nlgmetrics.stats.correlation` (one coefficient per document) and
:mod:`nlgmetrics.stats.bootstrap` (one per resample): it imports neither, so neither imports the
other for it.

>>> import numpy as np
>>> batched_correlate(np.array([[1., 2, 3, 4]]), np.array([[1., 3, 2, 4]]), "kendall").round(4)
array([0.6667])
"""

from __future__ import annotations

import numpy as np

from nlgmetrics.core.validation import check_choice

METHODS = ("pearson", "spearman", "kendall")
MIN_POINTS = 3  # a correlation over 2 points is always +-1: meaningless, so it is undefined (nan)
#: Two correlations (values in [-1, 1]) closer than this are equal: the difference is float
#: rounding, not evidence. Two metrics equal up to rounding (a library and its reference
#: implementation, 100.0 vs 100.00000000000004) give correlations ~1e-16 apart; the paired
#: bootstrap and the Williams test count them as ties (p = 0.5) instead of reading signs of noise.
TIE_TOLERANCE = 1e-12


def batched_correlate(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    """Row-wise correlation of two ``[rows, n]`` matrices, equal to ``correlate`` per row.

    ``nan`` for a row where the coefficient is undefined (a constant row, fewer than
    :data:`MIN_POINTS` columns). Vectorised because system-level bootstraps need thousands of small
    correlations. Kendall is tau-b (ties corrected), as ``scipy.stats.kendalltau``.

    >>> import numpy as np
    >>> batched_correlate(np.array([[1., 2, 3], [1., 1, 1]]), np.array([[1., 2, 4], [1., 2, 3]]), "spearman")
    array([ 1., nan])
    """
    from scipy.stats import rankdata

    check_choice("method", method, METHODS)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 2 or x.shape != y.shape:
        raise ValueError(f"batched_correlate needs two [rows, n] matrices of one shape, got {x.shape} and {y.shape}.")
    if method == "spearman":
        x, y = rankdata(x, axis=1), rankdata(y, axis=1)
    if method in ("pearson", "spearman"):
        xc = x - x.mean(axis=1, keepdims=True)
        yc = y - y.mean(axis=1, keepdims=True)
        denominator = np.sqrt((xc**2).sum(axis=1) * (yc**2).sum(axis=1))
        numerator = (xc * yc).sum(axis=1)
    else:
        iu = np.triu_indices(x.shape[1], k=1)
        dx = np.sign(x[:, :, None] - x[:, None, :])[:, iu[0], iu[1]]
        dy = np.sign(y[:, :, None] - y[:, None, :])[:, iu[0], iu[1]]
        numerator = (dx * dy).sum(axis=1)
        denominator = np.sqrt((dx != 0).sum(axis=1) * (dy != 0).sum(axis=1).astype(float))
    constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0) | (x.shape[1] < MIN_POINTS)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = numerator / denominator
    out = np.clip(out, -1.0, 1.0)
    out[constant] = np.nan
    return out
