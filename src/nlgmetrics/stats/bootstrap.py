"""Bootstrap confidence intervals of correlations with human judgments, resampling documents.

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
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlgmetrics.core.validation import check_choice, check_confidence, check_int
from nlgmetrics.stats.coefficients import METHODS, MIN_POINTS, TIE_TOLERANCE, batched_correlate
from nlgmetrics.stats.correlation import (
    LEVEL_FUNCTIONS,
    LEVELS,
    check_matrices,
    correlate,
    per_document_correlations,
    present_mean,
    significant_document_correlations,
)
from nlgmetrics.stats.resampling import bootstrap_indices


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimate, percentile interval and the resampled values' count.

    ``reason``: why the interval is ``nan`` (the point's own reason when the correlation is
    undefined on the data, e.g. ``"human scores constant"``); ``None`` when it is defined.
    """

    value: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    reason: str | None = None


@dataclass(frozen=True)
class PairedBootstrapResult:
    """Difference (A - B) of two metrics' correlations with its interval and one-sided p-value.

    ``reason``: why ``p_value`` is ``nan`` (which metric's correlation is undefined, and why);
    ``None`` when it is defined.
    """

    diff: float
    low: float
    high: float
    p_value: float  # one-sided: fraction of resamples where A is worse than B (ties count half)
    confidence: float
    n_resamples: int
    reason: str | None = None


#: Why an interval is undefined when the correlation is defined on the data but not on any resample.
NO_DEFINED_RESAMPLE = "undefined on every resample (documents drawn with replacement)"


def interval_reason(samples: np.ndarray, why_point: str | None) -> str | None:
    """Why :func:`percentile_interval` of ``samples`` is ``(nan, nan)``, or ``None`` when it is not.

    ``why_point``: the reason of the correlation on the data (``CorrelationResult.reason``),
    which is also the interval's when the correlation is undefined there.

    >>> interval_reason(np.array([np.nan, np.nan]), "human scores constant")
    'human scores constant'
    >>> interval_reason(np.array([np.nan, 0.5]), None) is None
    True
    """
    if not np.isnan(np.asarray(samples, dtype=float)).all():
        return None
    return why_point or NO_DEFINED_RESAMPLE


def paired_reason(
    samples_a: np.ndarray, samples_b: np.ndarray, why_a: str | None, why_b: str | None,
    names: tuple[str, str] = ("metric_a", "metric_b"),
) -> str | None:
    """Why the paired comparison of A and B has no p-value (no resample where both correlations
    are defined), naming the metric (``names``) whose correlation is undefined; ``None`` when it has one.

    >>> paired_reason(np.array([np.nan]), np.array([0.2]), "metric constant", None, ("m", "bleu"))
    "m's correlation is undefined: metric constant"
    """
    a, b = np.asarray(samples_a, dtype=float), np.asarray(samples_b, dtype=float)
    if (~np.isnan(a - b)).any():
        return None
    undefined = [f"{name}'s correlation is undefined: {why or NO_DEFINED_RESAMPLE}"
                 for name, samples, why in ((names[0], a, why_a), (names[1], b, why_b)) if np.isnan(samples).all()]
    return "; ".join(undefined) or "the two correlations are never defined on the same resample"


def one_sided_p(diffs: np.ndarray) -> float:
    """Bootstrap p-value of "A better than B" from resampled differences A - B.

    Ties (``|diff| <=`` :data:`~nlgmetrics.stats.coefficients.TIE_TOLERANCE`) count half, so two identical metrics get 0.5 (no evidence
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


def resample_indices(n_docs: int, n_resamples: int, seed: int | None) -> np.ndarray:
    """``[resample, document]`` indices: each resample draws ``n_docs`` documents with replacement.

    >>> resample_indices(3, 2, seed=0).shape
    (2, 3)
    """
    n_resamples, seed = check_resampling(n_resamples, seed)
    n_docs = check_int("n_docs", n_docs, minimum=2, message=(
        f"the bootstrap needs at least 2 documents, got {n_docs!r}; score more documents."))
    # The draw of the system comparisons (sacrebleu's ``rng.choice``), which numpy makes with the
    # very ``integers(0, n_docs, size)`` call this module made before: one draw, the same numbers.
    return bootstrap_indices(n_docs, n_resamples, seed)


def statistic_samples(
    metric: np.ndarray, human: np.ndarray, level: str, method: str, indices: np.ndarray, memo: dict | None = None,
) -> np.ndarray:
    """The correlation recomputed on each resample of documents (``nan`` where undefined).

    ``memo``: a dict kept by a caller that asks for several coefficients of the same matrices and
    indices (the tables): the resampled system means are then computed once per matrix, not once
    per coefficient. It is keyed by object identity, so the caller must keep the arrays alive and
    unchanged while it uses the dict.

    ``indices``: from :func:`resample_indices`; the same indices for several metrics make their
    samples paired (:func:`paired_bootstrap`, the meta-evaluation tables). ``level`` and ``method``
    are taken as checked by the caller (:func:`bootstrap_ci`, :func:`paired_bootstrap`, the tables).

    >>> human = np.array([[1.0, 2, 3], [3, 1, 2], [2, 3, 1]])
    >>> statistic_samples(human, human, "text", "kendall", resample_indices(3, 4, seed=0))
    array([1., 1., 1., 1.])
    """
    if level in ("text", "text_sig"):
        # Per-document correlations (and p-values) do not change under resampling: compute them
        # once. ``text_sig``: a document that is not significant stays out of every resample too.
        per_doc = (per_document_correlations if level == "text" else significant_document_correlations)(
            metric, human, method)
        # A resample with no defined document gives nan (left out by percentile_interval), not a warning.
        return present_mean(per_doc[indices], axis=1)
    if level == "pooled":
        return pooled_samples(metric, human, method, indices, memo)
    m, h = _memo_means(metric, indices, memo), _memo_means(human, indices, memo)
    if np.isnan(m).any() or np.isnan(h).any():
        # A system absent from a resample: fall back to the per-resample loop (rare).
        return _correlate_each(zip(m, h), method)
    return batched_correlate(m, h, method)


def _correlate_each(pairs: Iterable[tuple[np.ndarray, np.ndarray]], method: str) -> np.ndarray:
    """:func:`correlate` of each ``(x, y)`` over the entries where neither is nan."""
    out = []
    for x, y in pairs:
        present = ~(np.isnan(x) | np.isnan(y))
        out.append(correlate(x[present], y[present], method))
    return np.array(out, dtype=np.float64)


def pooled_samples(
    metric: np.ndarray, human: np.ndarray, method: str, indices: np.ndarray, memo: dict | None = None,
) -> np.ndarray:
    """Pooled correlation (every output of the resampled documents at once) on each resample.

    A resample is a multiset of documents: each scored cell counts as many times as its document
    was drawn. The three coefficients are computed exactly from those multiplicities (no resample
    is materialised): Pearson from per-document sums, Spearman from average ranks of the weighted
    values, Kendall tau-b from per-document-pair sums of the pairwise concordance and tie signs, so
    that thousands of resamples of ~3,000 outputs take seconds. Equal to :func:`correlate` on the
    resampled rows (tested against that naive computation). ``memo``: as in
    :func:`statistic_samples` (the human side is then prepared once for every metric).

    >>> human = np.array([[1.0, 2], [3, 4], [5, 6]])
    >>> pooled_samples(human, human, "kendall", resample_indices(3, 2, seed=0)).round(6)
    array([1., 1.])
    """
    metric, human = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    n_docs, n_resamples = metric.shape[0], indices.shape[0]
    present = ~(np.isnan(metric) | np.isnan(human))
    doc_of_cell = np.nonzero(present)[0]  # cells in document order (row-major)
    x, y = metric[present], human[present]
    if method == "kendall" and metric.size > MAX_PAIRWISE_CELLS:
        resampled = ((metric[sample].ravel(), human[sample].ravel()) for sample in indices)
        return _correlate_each(resampled, method)
    # counts[k, d]: how often resample k drew document d.
    flat = (np.arange(n_resamples)[:, None] * n_docs + indices).ravel()
    counts = np.bincount(flat, minlength=n_resamples * n_docs).reshape(n_resamples, n_docs).astype(float)
    memo = {} if memo is None else memo
    if method == "kendall":
        out = _pooled_kendall(metric, human, counts, memo, id(indices))
    elif method == "spearman":
        weights = counts[:, doc_of_cell]  # [resample, cell]
        # The human side depends on which cells are present too: keyed by their positions.
        human_key = ("ranks", id(human), id(indices), present.tobytes())
        if human_key not in memo:
            memo[human_key] = _weighted_ranks(y, doc_of_cell, counts)
        x = _weighted_ranks(x, doc_of_cell, counts)
        out = _weighted_pearson(x, memo[human_key], weights)
    else:
        out = _pooled_pearson(x - x.mean(), y - y.mean(), doc_of_cell, counts, n_docs)
    n_cells = counts[:, doc_of_cell].sum(axis=1)
    out[n_cells < MIN_POINTS] = np.nan
    return out


def _pooled_pearson(x: np.ndarray, y: np.ndarray, doc_of_cell: np.ndarray, counts: np.ndarray, n_docs: int) -> np.ndarray:
    """Pearson of each resample from per-document sums (x, y centred on the full data's means)."""
    sums = np.stack([np.bincount(doc_of_cell, weights=w, minlength=n_docs)
                     for w in (np.ones_like(x), x, y, x * x, y * y, x * y)], axis=1)
    return _pearson_from_sums(*(counts @ sums).T)


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Row-wise Pearson of ``[resample, cell]`` values, each cell counted ``w`` times."""
    wx, wy = w * x, w * y
    sums = np.einsum("rn,rn->r", wx, x), np.einsum("rn,rn->r", wy, y), np.einsum("rn,rn->r", wx, y)
    return _pearson_from_sums(w.sum(axis=1), wx.sum(axis=1), wy.sum(axis=1), *sums)


def _pearson_from_sums(
    n: np.ndarray, sx: np.ndarray, sy: np.ndarray, sxx: np.ndarray, syy: np.ndarray, sxy: np.ndarray
) -> np.ndarray:
    """Pearson of each resample from its weighted count, sums, sums of squares and cross sum."""
    with np.errstate(invalid="ignore", divide="ignore"):
        vx, vy = sxx - sx * sx / n, syy - sy * sy / n
        out = (sxy - sx * sy / n) / np.sqrt(vx * vy)
    # A constant resample (spread at rounding level) has no defined correlation.
    out[(vx <= 1e-12 * np.maximum(sxx, 1e-300)) | (vy <= 1e-12 * np.maximum(syy, 1e-300))] = np.nan
    return np.clip(out, -1.0, 1.0)


def _weighted_ranks(values: np.ndarray, doc_of_cell: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``[resample, cell]`` average ranks (ties share their mean rank) of the resampled multiset."""
    _, inverse = np.unique(values, return_inverse=True)
    order = np.argsort(inverse, kind="stable")  # cells sorted by value: each group is a run
    starts = np.flatnonzero(np.r_[True, inverse[order][1:] != inverse[order][:-1]])
    size = np.add.reduceat(counts[:, doc_of_cell[order]], starts, axis=1)  # [resample, group]: copies of each value
    below = np.cumsum(size, axis=1) - size
    return (below + (size + 1.0) / 2.0)[:, inverse]


#: Pooled Kendall keeps two ``[cell, cell]`` int8 sign matrices in memory: beyond this many cells
#: (~36 MB each) it falls back to one scipy call per resample.
MAX_PAIRWISE_CELLS = 6000


def _pooled_kendall(metric: np.ndarray, human: np.ndarray, counts: np.ndarray, memo: dict, indices_id: int) -> np.ndarray:
    """tau-b = sum over pairs of sx*sy / sqrt(#pairs untied in x * #pairs untied in y), each cell
    counted as often as its document was drawn: the pair sums are taken once per document pair,
    then each resample is a quadratic form in its document counts."""
    n_docs, n_systems = metric.shape
    present = ~(np.isnan(metric) | np.isnan(human)).ravel()

    def signs(matrix: np.ndarray) -> np.ndarray:
        values = np.where(present, matrix.ravel(), 0.0)
        ranks = np.unique(values, return_inverse=True)[1].astype(np.int32)  # exact order, small ints
        out = np.sign(ranks[:, None] - ranks[None, :]).astype(np.int8)
        out[~present, :] = 0  # a missing cell takes part in no pair
        out[:, ~present] = 0
        return out

    def doc_pair_sums(pairwise: np.ndarray) -> np.ndarray:
        return pairwise.reshape(n_docs, n_systems, n_docs, n_systems).sum(axis=(1, 3), dtype=np.int64).astype(float)

    def form(matrix: np.ndarray) -> np.ndarray:
        return ((counts @ matrix) * counts).sum(axis=1)

    human_key = ("signs", id(human), indices_id, present.tobytes())
    if human_key not in memo:
        sy = signs(human)
        memo[human_key] = (sy, form(doc_pair_sums(np.abs(sy))))
    sy, untied_y = memo[human_key]
    sx = signs(metric)
    concordance = form(doc_pair_sums(sx * sy))
    untied_x = form(doc_pair_sums(np.abs(sx)))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = concordance / np.sqrt(untied_x * untied_y)
    return np.clip(out, -1.0, 1.0)


def _memo_means(matrix: np.ndarray, indices: np.ndarray, memo: dict | None) -> np.ndarray:
    """``[resample, system]`` means over each resample's documents (nan cells ignored), once per
    matrix and indices with a ``memo``."""
    memo = {} if memo is None else memo
    key = (id(matrix), id(indices))
    if key not in memo:
        # [resample, document, system] -> [resample, system]
        memo[key] = present_mean(np.asarray(matrix, dtype=float)[indices], axis=1)
    return memo[key]


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval of the defined (non-nan) resampled values; ``(nan, nan)`` if none.
    ``confidence``: a fraction, as :func:`~nlgmetrics.core.validation.check_confidence` returns it
    (every caller checks it first).

    >>> percentile_interval(np.array([0.1, 0.2, np.nan, 0.3]), 0.5)
    (0.15000000000000002, 0.25)
    """
    samples = np.asarray(samples, dtype=float)
    finite = samples[~np.isnan(samples)]
    if finite.size == 0:
        return math.nan, math.nan
    alpha = (1 - confidence) / 2
    return float(np.quantile(finite, alpha)), float(np.quantile(finite, 1 - alpha))


#: Defaults of :func:`bootstrap_ci` and :func:`paired_bootstrap`.
DEFAULT_LEVEL = "text"
DEFAULT_METHOD = "pearson"
DEFAULT_N_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 0


def _point_and_samples(
    metrics: list[Any], human: Any, level: str, method: str, n_resamples: Any, confidence: Any, seed: Any,
) -> tuple[list[tuple[float, np.ndarray, str | None]], float, int]:
    """What both bootstraps do: check every argument, draw one set of document resamples, and give
    per metric its correlation on the data, why it is undefined there (None when defined) and its
    value on each resample (paired across the metrics), with the checked ``confidence`` and
    ``n_resamples`` (:func:`resample_indices` checks it and ``seed``)."""
    confidence = check_confidence(confidence)
    check_choice("level", level, LEVELS)
    check_choice("method", method, METHODS)
    pairs = [check_matrices(metric, human) for metric in metrics]
    n_docs = pairs[0][1].shape[0]
    indices, identity = resample_indices(n_docs, n_resamples, seed), np.arange(n_docs)[None, :]
    values = []
    for m, h in pairs:
        value = float(statistic_samples(m, h, level, method, identity)[0])
        why = LEVEL_FUNCTIONS[level](m, h, method).reason if math.isnan(value) else None
        values.append((value, statistic_samples(m, h, level, method, indices), why))
    return values, confidence, len(indices)


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
    [(value, samples, why)], confidence, n_resamples = _point_and_samples(
        [metric], human, level, method, n_resamples, confidence, seed)
    low, high = percentile_interval(samples, confidence)
    return BootstrapResult(value, low, high, confidence, n_resamples, interval_reason(samples, why))


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
    [(value_a, samples_a, why_a), (value_b, samples_b, why_b)], confidence, n_resamples = _point_and_samples(
        [metric_a, metric_b], human, level, method, n_resamples, confidence, seed)
    diffs = samples_a - samples_b
    low, high = percentile_interval(diffs, confidence)
    return PairedBootstrapResult(value_a - value_b, low, high, one_sided_p(diffs), confidence, n_resamples,
                                 paired_reason(samples_a, samples_b, why_a, why_b))
