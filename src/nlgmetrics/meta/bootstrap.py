"""Bootstrap confidence intervals for meta-evaluation correlations, resampling documents.

Documents (input items) are the unit of resampling, as in Deutsch, Dror & Roth (2021, "A
Statistical Analysis of Summarization Evaluation Metrics using Resampling Methods",
*boot-inputs*): every resample draws documents with replacement and keeps all their system
outputs, then recomputes the text-level or system-level correlation. Percentile intervals.

:func:`paired_bootstrap` compares two metrics on the *same* resamples: the interval of the
difference and the one-sided p-value ``P(diff <= 0)`` (is metric A better than metric B?).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> human = rng.random((20, 5))
>>> metric = human + 0.1 * rng.random((20, 5))
>>> ci = bootstrap_ci(metric, human, level="text", method="pearson", n_resamples=200)
>>> ci.low <= ci.value <= ci.high
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nlgmetrics.meta.correlation import (
    LEVELS,
    METHODS,
    correlate,
    per_document_correlations,
)
from nlgmetrics.validation import check_choice


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimate, percentile interval and the resampled values' count."""

    value: float
    low: float
    high: float
    confidence: float
    n_resamples: int


@dataclass(frozen=True)
class PairedBootstrapResult:
    """Difference (A - B) of two metrics' correlations with its interval and one-sided p-value."""

    diff: float
    low: float
    high: float
    p_value: float  # one-sided: fraction of resamples where A is worse than B (ties count half)
    confidence: float
    n_resamples: int


def one_sided_p(diffs: np.ndarray) -> float:
    """Bootstrap p-value of "A better than B" from resampled differences A - B.

    Ties count half, so two identical metrics get 0.5 (no evidence either way), not 1.

    >>> one_sided_p(np.array([0.1, 0.2, -0.1, 0.0]))
    0.375
    """
    diffs = diffs[~np.isnan(diffs)]
    if diffs.size == 0:
        return math.nan
    return float((diffs < 0).mean() + 0.5 * (diffs == 0).mean())


def _resample_indices(n_docs: int, n_resamples: int, seed: int) -> np.ndarray:
    if n_docs < 2:
        raise ValueError(f"bootstrap needs at least 2 documents, got {n_docs}.")
    if n_resamples < 1:
        raise ValueError(f"n_resamples={n_resamples}; use a positive number (e.g. 1000).")
    return np.random.default_rng(seed).integers(0, n_docs, size=(n_resamples, n_docs))


def _statistic_samples(metric: np.ndarray, human: np.ndarray, level: str, method: str, indices: np.ndarray) -> np.ndarray:
    """The correlation recomputed on each resample of documents (``nan`` where undefined)."""
    if level == "text":
        # Per-document correlations do not change under resampling: compute them once.
        per_doc = per_document_correlations(metric, human, method)
        picked = per_doc[indices]
        counts = (~np.isnan(picked)).sum(axis=1)
        sums = np.nansum(picked, axis=1)
        # A resample with no defined document gives nan (counted by _interval), not a warning.
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    m, h = resampled_system_means(metric, indices), resampled_system_means(human, indices)
    if np.isnan(m).any() or np.isnan(h).any():
        # A system absent from a resample: fall back to the per-resample loop (rare).
        out = np.empty(indices.shape[0])
        for k in range(indices.shape[0]):
            present = ~(np.isnan(m[k]) | np.isnan(h[k]))
            out[k] = correlate(m[k, present], h[k, present], method)
        return out
    return batched_correlate(m, h, method)


def resampled_system_means(matrix: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``[resample, system]`` means over each resample's documents (nan cells ignored), vectorised."""
    picked = np.asarray(matrix, dtype=float)[indices]  # [resample, document, system]
    present = ~np.isnan(picked)
    counts = present.sum(axis=1)
    sums = np.where(present, picked, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def batched_correlate(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    """Row-wise correlation of two ``[rows, n]`` matrices, equal to :func:`correlate` per row.

    Vectorised because system-level bootstraps need thousands of small correlations. Kendall is
    tau-b (ties corrected), as ``scipy.stats.kendalltau``.

    >>> import numpy as np
    >>> batched_correlate(np.array([[1., 2, 3, 4]]), np.array([[1., 3, 2, 4]]), "kendall").round(4)
    array([0.6667])
    """
    from scipy.stats import rankdata

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
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
    constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0) | (x.shape[1] < 3)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = numerator / denominator
    out = np.clip(out, -1.0, 1.0)
    out[constant] = np.nan
    return out


def _point(metric: np.ndarray, human: np.ndarray, level: str, method: str) -> float:
    identity = np.arange(metric.shape[0])[None, :]
    return float(_statistic_samples(metric, human, level, method, identity)[0])


def _interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    finite = samples[~np.isnan(samples)]
    if finite.size == 0:
        return math.nan, math.nan
    alpha = (1 - confidence) / 2
    return float(np.quantile(finite, alpha)), float(np.quantile(finite, 1 - alpha))


def _check(metric, human, level, method, confidence):
    check_choice("level", level, LEVELS)
    check_choice("method", method, METHODS)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence}; use a fraction such as 0.95.")
    metric = np.asarray(metric, dtype=float)
    human = np.asarray(human, dtype=float)
    if metric.ndim != 2 or metric.shape != human.shape:
        raise ValueError(f"expected [document, system] matrices of one shape, got {metric.shape} and {human.shape}.")
    return metric, human


def bootstrap_ci(
    metric: np.ndarray,
    human: np.ndarray,
    level: str = "text",
    method: str = "pearson",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapResult:
    """Percentile bootstrap interval of a text- or system-level correlation (documents resampled)."""
    metric, human = _check(metric, human, level, method, confidence)
    indices = _resample_indices(metric.shape[0], n_resamples, seed)
    samples = _statistic_samples(metric, human, level, method, indices)
    low, high = _interval(samples, confidence)
    return BootstrapResult(_point(metric, human, level, method), low, high, confidence, n_resamples)


def paired_bootstrap(
    metric_a: np.ndarray,
    metric_b: np.ndarray,
    human: np.ndarray,
    level: str = "text",
    method: str = "pearson",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedBootstrapResult:
    """Is A's correlation higher than B's? Same document resamples for both metrics.

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> human = rng.random((30, 6))
    >>> good, bad = human + 0.05 * rng.random((30, 6)), rng.random((30, 6))
    >>> paired_bootstrap(good, bad, human, n_resamples=200).p_value < 0.05
    True
    """
    metric_a, human = _check(metric_a, human, level, method, confidence)
    metric_b, _ = _check(metric_b, human, level, method, confidence)
    indices = _resample_indices(human.shape[0], n_resamples, seed)
    diffs = _statistic_samples(metric_a, human, level, method, indices) - _statistic_samples(
        metric_b, human, level, method, indices
    )
    finite = diffs[~np.isnan(diffs)]
    low, high = _interval(diffs, confidence)
    point = _point(metric_a, human, level, method) - _point(metric_b, human, level, method)
    p_value = one_sided_p(finite)
    return PairedBootstrapResult(point, low, high, p_value, confidence, n_resamples)
