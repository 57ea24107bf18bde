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
from typing import Any

import numpy as np

from nlgmetrics.core.validation import check_choice, check_int, check_real
from nlgmetrics.meta.coefficients import METHODS, TIE_TOLERANCE, batched_correlate
from nlgmetrics.meta.correlation import LEVELS, correlate, per_document_correlations


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

    Ties (``|diff| <=`` :data:`~nlgmetrics.meta.coefficients.TIE_TOLERANCE`) count half, so two identical metrics get 0.5 (no evidence
    either way), not 1, and so do two metrics that differ only by float rounding.

    >>> one_sided_p(np.array([0.1, 0.2, -0.1, 0.0]))
    0.375
    >>> one_sided_p(np.array([1e-16, -2e-16, 0.0, 3e-17]))
    0.5
    """
    diffs = np.asarray(diffs, dtype=float)
    diffs = diffs[~np.isnan(diffs)]
    if diffs.size == 0:
        return math.nan
    tie = np.abs(diffs) <= TIE_TOLERANCE
    return float((~tie & (diffs < 0)).mean() + 0.5 * tie.mean())


def check_resampling(n_resamples: Any, seed: Any) -> tuple[int, int | None]:
    """``(n_resamples, seed)`` as plain ints, or a clear error naming the argument and the fix.

    A float count (``1e3``, ``10.5``), a bool, a negative seed or a float seed are refused here:
    numpy fails on most of them with an error that names neither argument (``'float' object
    cannot be interpreted as an integer``, ``expected non-negative integer``) and silently takes
    ``seed=True`` as seed 1. Numpy integers are accepted and returned as plain ints (they are
    recorded in results). ``seed=None`` draws fresh resamples (not reproducible).

    >>> check_resampling(np.int64(200), 0)
    (200, 0)
    >>> check_resampling(1000.0, 0)
    Traceback (most recent call last):
    ...
    ValueError: `n_resamples` must be a positive integer (bootstrap resamples, e.g. 1000), got 1000.0.
    >>> check_resampling(1000, -1)
    Traceback (most recent call last):
    ...
    ValueError: `seed` must be a non-negative integer or None (the seed of numpy.random.default_rng, e.g. 0), got -1.
    """
    n_resamples = check_int("n_resamples", n_resamples, minimum=1, message=(
        f"`n_resamples` must be a positive integer (bootstrap resamples, e.g. 1000), got {n_resamples!r}."))
    seed = check_int("seed", seed, minimum=0, allow_none=True, message=(
        f"`seed` must be a non-negative integer or None (the seed of numpy.random.default_rng, "
        f"e.g. 0), got {seed!r}."))
    return n_resamples, seed


def check_confidence(confidence: Any) -> float:
    """The interval's level as a plain float strictly between 0 and 1, or a clear error.

    A percentage (95) or a numpy scalar are the common slips: the first is refused, the second
    converted (float32 arithmetic on the quantile level would move the interval bounds).

    >>> check_confidence(np.float64(0.9))
    0.9
    >>> check_confidence(95)
    Traceback (most recent call last):
    ...
    ValueError: `confidence` must be a fraction strictly between 0 and 1 (e.g. 0.95 for a 95% interval), got 95.
    """
    message = (f"`confidence` must be a fraction strictly between 0 and 1 (e.g. 0.95 for a 95% "
               f"interval), got {confidence!r}.")
    value = check_real("confidence", confidence, minimum=0, exclusive_minimum=True, maximum=1, message=message)
    if value >= 1:
        raise ValueError(message)
    return value


def resample_indices(n_docs: int, n_resamples: int, seed: int | None) -> np.ndarray:
    """``[resample, document]`` indices: each resample draws ``n_docs`` documents with replacement.

    >>> resample_indices(3, 2, seed=0).shape
    (2, 3)
    """
    n_resamples, seed = check_resampling(n_resamples, seed)
    n_docs = check_int("n_docs", n_docs, minimum=2, message=(
        f"the bootstrap needs at least 2 documents, got {n_docs!r}; score more documents."))
    return np.random.default_rng(seed).integers(0, n_docs, size=(n_resamples, n_docs))


def statistic_samples(metric: np.ndarray, human: np.ndarray, level: str, method: str, indices: np.ndarray) -> np.ndarray:
    """The correlation recomputed on each resample of documents (``nan`` where undefined).

    ``indices``: from :func:`resample_indices`; the same indices for several metrics make their
    samples paired (:func:`paired_bootstrap`, the meta-evaluation tables).

    >>> human = np.array([[1.0, 2, 3], [3, 1, 2], [2, 3, 1]])
    >>> statistic_samples(human, human, "text", "kendall", resample_indices(3, 4, seed=0))
    array([1., 1., 1., 1.])
    """
    check_choice("level", level, LEVELS)
    if level == "text":
        # Per-document correlations do not change under resampling: compute them once.
        per_doc = per_document_correlations(metric, human, method)
        picked = per_doc[indices]
        counts = (~np.isnan(picked)).sum(axis=1)
        sums = np.nansum(picked, axis=1)
        # A resample with no defined document gives nan (left out by percentile_interval), not a warning.
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


def _point(metric: np.ndarray, human: np.ndarray, level: str, method: str) -> float:
    identity = np.arange(metric.shape[0])[None, :]
    return float(statistic_samples(metric, human, level, method, identity)[0])


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval of the defined (non-nan) resampled values; ``(nan, nan)`` if none.

    >>> percentile_interval(np.array([0.1, 0.2, np.nan, 0.3]), 0.5)
    (0.15000000000000002, 0.25)
    """
    confidence = check_confidence(confidence)
    samples = np.asarray(samples, dtype=float)
    finite = samples[~np.isnan(samples)]
    if finite.size == 0:
        return math.nan, math.nan
    alpha = (1 - confidence) / 2
    return float(np.quantile(finite, alpha)), float(np.quantile(finite, 1 - alpha))


def _check(metric: Any, human: Any, level: str, method: str) -> tuple[np.ndarray, np.ndarray]:
    check_choice("level", level, LEVELS)
    check_choice("method", method, METHODS)
    metric = np.asarray(metric, dtype=float)
    human = np.asarray(human, dtype=float)
    if metric.ndim != 2 or metric.shape != human.shape:
        raise ValueError(f"expected [document, system] matrices of one shape, got {metric.shape} and {human.shape}.")
    return metric, human


#: Defaults of :func:`bootstrap_ci` and :func:`paired_bootstrap`.
DEFAULT_LEVEL = "text"
DEFAULT_METHOD = "pearson"
DEFAULT_N_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 0


def _point_and_samples(
    metrics: list[Any], human: Any, level: str, method: str, n_resamples: Any, confidence: Any, seed: Any,
) -> tuple[list[tuple[float, np.ndarray]], float, int]:
    """What both bootstraps do: check every argument, draw one set of document resamples, and give
    per metric its correlation on the data and on each resample (paired across the metrics), with
    the checked ``confidence`` and ``n_resamples``."""
    confidence = check_confidence(confidence)
    n_resamples, seed = check_resampling(n_resamples, seed)
    checked = []
    for metric in metrics:
        metric, human = _check(metric, human, level, method)
        checked.append(metric)
    indices = resample_indices(human.shape[0], n_resamples, seed)
    values = [(_point(metric, human, level, method), statistic_samples(metric, human, level, method, indices))
              for metric in checked]
    return values, confidence, n_resamples


def bootstrap_ci(
    metric: np.ndarray,
    human: np.ndarray,
    level: str = DEFAULT_LEVEL,
    method: str = DEFAULT_METHOD,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> BootstrapResult:
    """Percentile bootstrap interval of a text- or system-level correlation (documents resampled).

    ``n_resamples`` and ``seed``: see :func:`check_resampling`; ``confidence``: a fraction.
    """
    [(value, samples)], confidence, n_resamples = _point_and_samples(
        [metric], human, level, method, n_resamples, confidence, seed)
    low, high = percentile_interval(samples, confidence)
    return BootstrapResult(value, low, high, confidence, n_resamples)


def paired_bootstrap(
    metric_a: np.ndarray,
    metric_b: np.ndarray,
    human: np.ndarray,
    level: str = DEFAULT_LEVEL,
    method: str = DEFAULT_METHOD,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> PairedBootstrapResult:
    """Is A's correlation higher than B's? Same document resamples for both metrics.

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> human = rng.random((30, 6))
    >>> good, bad = human + 0.05 * rng.random((30, 6)), rng.random((30, 6))
    >>> paired_bootstrap(good, bad, human, n_resamples=200).p_value < 0.05
    True
    """
    [(value_a, samples_a), (value_b, samples_b)], confidence, n_resamples = _point_and_samples(
        [metric_a, metric_b], human, level, method, n_resamples, confidence, seed)
    diffs = samples_a - samples_b
    low, high = percentile_interval(diffs, confidence)
    p_value = one_sided_p(diffs[~np.isnan(diffs)])
    return PairedBootstrapResult(value_a - value_b, low, high, p_value, confidence, n_resamples)
