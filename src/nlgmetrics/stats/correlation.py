"""Correlation of metric scores with human judgments, at text level and at system level.

Scores are arranged as a matrix with one row per document (input item) and one column per
system; a cell is ``nan`` where that system has no output (or no score) for that document.

- **Text level** (REALSumm's *summary level*, Bhandari et al. 2020): for every document,
  correlate metric and human scores across the systems, then average over documents.
  Documents where the metric or the human scores are constant (the correlation is undefined)
  or that have fewer than 3 scored systems are left out of the average and *counted*
  (``n_skipped``), never silently averaged as ``nan``.
- **Text level, significant documents only** (``text_sig``; REALSumm's own analysis code):
  the same average, but only over the documents whose per-document correlation is significant
  (scipy's p-value <= ``alpha``, 0.05); the number of documents kept is ``n_used``.
- **Pooled text level** (``pooled``; the WebNLG 2020 organisers' published correlations): one
  correlation over every scored output at once, all documents and systems together.
- **System level**: average each system's scores over the documents, then correlate the
  per-system means across systems.

Pearson, Spearman and Kendall (tau-b, as ``scipy.stats.kendalltau``) are supported.

>>> import numpy as np
>>> metric = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
>>> human = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
>>> text_level(metric, human, "pearson").value  # +1 on document 0, -1 on document 1
0.0
>>> system_level(metric, human, "kendall").value  # system means are all 0.2: undefined
nan
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from nlgmetrics.core.validation import check_choice
from nlgmetrics.stats.coefficients import METHODS, MIN_POINTS, batched_correlate

LEVELS = ("text", "text_sig", "pooled", "system")
#: Largest per-document p-value that ``text_sig`` keeps (REALSumm: p <= 0.05).
SIGNIFICANCE = 0.05
_SCIPY_TESTS = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


@dataclass(frozen=True)
class CorrelationResult:
    """One correlation coefficient and what it was computed from.

    ``value`` is ``nan`` only when no document (text level) or not enough systems (system
    level) gave a defined correlation; ``n_used`` / ``n_skipped`` say how many groups counted.
    ``reason`` says why ``value`` is ``nan`` (e.g. ``"human scores constant"``) and is ``None``
    whenever ``value`` is a number: an undefined correlation is never an unexplained ``nan``.
    """

    value: float
    method: str
    level: str
    n_used: int
    n_skipped: int
    reason: str | None = None


def correlate(x: Sequence[float], y: Sequence[float], method: str = "pearson") -> float:
    """Correlation of two equal-length vectors; ``nan`` when undefined (constant input, < 3 points).

    >>> round(correlate([1, 2, 3, 4], [1, 3, 2, 4], "spearman"), 3)
    0.8
    >>> correlate([1, 1, 1], [1, 2, 3])
    nan
    """
    check_choice("method", method, METHODS)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"correlate needs two 1-D vectors of equal length, got {x.shape} and {y.shape}.")
    if x.size < MIN_POINTS or np.ptp(x) == 0 or np.ptp(y) == 0:
        # Undefined: scipy would warn and return nan; callers count these cases explicitly.
        return math.nan
    return float(_SCIPY_TESTS[method](x, y)[0])


def undefined_reason(metric: Sequence[float], human: Sequence[float], unit: str = "points") -> str | None:
    """Why :func:`correlate` of ``metric`` and ``human`` is ``nan``, or ``None`` when it is defined.

    The same tests as :func:`correlate` (fewer than 3 points, a constant vector), in the words
    the tables print: ``"human scores constant"``, ``"metric constant"``, both, or ``"fewer than
    3 <unit>"``. ``unit`` names what the points are (systems, scored outputs).

    >>> undefined_reason([0.1, 0.2, 0.3], [2, 2, 2])
    'human scores constant'
    >>> undefined_reason([1, 2], [1, 2], unit="systems"), undefined_reason([1, 2, 3], [3, 1, 2])
    ('fewer than 3 systems', None)
    """
    metric, human = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    if metric.size < MIN_POINTS:
        return f"fewer than {MIN_POINTS} {unit}"
    constant = [name for name, values in (("metric", metric), ("human scores", human)) if np.ptp(values) == 0]
    return " and ".join(constant) + " constant" if constant else None


#: The reason given for a nan that none of :func:`undefined_reason`'s tests explains (a spread
#: lost to floating-point rounding, e.g. two values 1e-320 apart).
ROUNDING_REASON = "spread lost to floating-point rounding"


def pivot(
    values: Sequence[float], documents: Sequence[Hashable], systems: Sequence[Hashable]
) -> tuple[np.ndarray, list[Hashable], list[Hashable]]:
    """Arrange long-format scores into a ``[document, system]`` matrix (``nan`` where absent).

    Returns the matrix and the document and system keys in first-seen order.

    >>> m, docs, syss = pivot([1.0, 2.0, 3.0], ["d1", "d1", "d2"], ["a", "b", "a"])
    >>> m.tolist(), docs, syss
    ([[1.0, 2.0], [3.0, nan]], ['d1', 'd2'], ['a', 'b'])
    """
    if not (len(values) == len(documents) == len(systems)):
        raise ValueError(
            f"pivot: values ({len(values)}), documents ({len(documents)}) and systems "
            f"({len(systems)}) must have one item per scored output."
        )
    doc_index = {d: i for i, d in enumerate(dict.fromkeys(documents))}
    sys_index = {s: j for j, s in enumerate(dict.fromkeys(systems))}
    matrix = np.full((len(doc_index), len(sys_index)), np.nan)
    # Filled cells are tracked apart: a nan score (no score) followed by a second score for the
    # same cell is a duplicate key too, which testing the cell for nan would not see.
    filled = np.zeros(matrix.shape, dtype=bool)
    for value, d, s in zip(values, documents, systems):
        i, j = doc_index[d], sys_index[s]
        if filled[i, j]:
            raise ValueError(f"pivot: two scores for document {d!r} and system {s!r}; keys must be unique.")
        filled[i, j] = True
        matrix[i, j] = float(value)
    return matrix, list(doc_index), list(sys_index)


def check_matrices(metric: np.ndarray, human: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``metric`` and ``human`` as float ``[document, system]`` matrices of one shape, or a ValueError."""
    metric = np.asarray(metric, dtype=float)
    human = np.asarray(human, dtype=float)
    if metric.ndim != 2 or metric.shape != human.shape:
        raise ValueError(
            f"metric and human scores must be [document, system] matrices of the same shape, "
            f"got {metric.shape} and {human.shape}; build them with pivot()."
        )
    return metric, human


def per_document_correlations(metric: np.ndarray, human: np.ndarray, method: str = "pearson") -> np.ndarray:
    """One correlation per document across the systems scored for it (``nan`` if undefined)."""
    check_choice("method", method, METHODS)
    metric, human = check_matrices(metric, human)
    return _by_pattern(metric, human, lambda x, y: batched_correlate(x, y, method))


def _by_pattern(metric: np.ndarray, human: np.ndarray, batched) -> np.ndarray:
    """``batched(x, y)`` on the documents, grouped by which systems they have a score for: each
    group is a full ``[documents, systems present]`` matrix (documents with fewer than
    :data:`MIN_POINTS` systems get nan)."""
    out = np.full(metric.shape[0], np.nan)
    present = ~(np.isnan(metric) | np.isnan(human))
    patterns, group = np.unique(present, axis=0, return_inverse=True)
    for k, pattern in enumerate(patterns):
        rows = np.flatnonzero(group.ravel() == k)
        if pattern.sum() >= MIN_POINTS:
            out[rows] = batched(metric[np.ix_(rows, pattern)], human[np.ix_(rows, pattern)])
    return out


def per_document_p_values(metric: np.ndarray, human: np.ndarray, method: str = "pearson") -> np.ndarray:
    """scipy's two-sided p-value of each document's correlation across systems (``nan`` if undefined).

    Documents scored by every system are computed all at once with scipy's own formulas (Pearson:
    the beta distribution of r; Spearman: Student's t on rho; Kendall: the exact null distribution
    without ties and ``n <= 33``, else the tie-corrected normal approximation, as
    ``scipy.stats.kendalltau(method="auto")``), per group of documents scored by the same systems.
    """
    check_choice("method", method, METHODS)
    metric, human = check_matrices(metric, human)
    # The tables ask for the same p-values three times (point, bootstrap, comparison with the
    # baseline): keyed by the matrices' bytes, so an equal input is equal, whatever object holds it.
    return _memoised_p_values(method, metric.shape, metric.tobytes(), human.tobytes()).copy()


@functools.lru_cache(maxsize=64)
def _memoised_p_values(method: str, shape: tuple[int, ...], metric: bytes, human: bytes) -> np.ndarray:
    matrices = (np.frombuffer(metric).reshape(shape), np.frombuffer(human).reshape(shape))
    return _by_pattern(*matrices, lambda x, y: _batched_p_values(x, y, method))


def _batched_p_values(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    n = x.shape[1]
    r = batched_correlate(x, y, method)
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "pearson":
            ab = n / 2 - 1
            p = 2 * stats.beta.cdf(-np.abs(r), ab, ab, loc=-1, scale=2)
        elif method == "spearman":
            t = r * np.sqrt((n - 2) / ((r + 1.0) * (1.0 - r)))
            p = 2 * stats.t.sf(np.abs(t), n - 2)
        else:
            p = _kendall_p_values(x, y)
    p = np.clip(p, 0.0, 1.0)
    p[np.isnan(r)] = np.nan
    return p


def _kendall_p_values(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Two-sided p of tau per row, as ``scipy.stats.kendalltau(method="auto")`` computes it."""
    n = x.shape[1]
    sx, sy = np.sign(x[:, :, None] - x[:, None, :]), np.sign(y[:, :, None] - y[:, None, :])
    con_minus_dis = (sx * sy).sum(axis=(1, 2)) / 2
    tot = n * (n - 1) // 2

    def tie_stats(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # c: size of each element's tie group; sums over elements of f(c)/c are sums over groups of f.
        c = (v[:, :, None] == v[:, None, :]).sum(axis=2).astype(float)
        return ((c - 1) / 2).sum(axis=1), ((c - 1) * (c - 2)).sum(axis=1), ((c - 1) * (2 * c + 5)).sum(axis=1)

    xtie, x0, x1 = tie_stats(x)
    ytie, y0, y1 = tie_stats(y)
    m = n * (n - 1.0)
    var = (m * (2 * n + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (n - 2))
    p = 2 * stats.norm.sf(np.abs(con_minus_dis) / np.sqrt(var))
    joint_ties = ((sx == 0) & (sy == 0)).sum(axis=(1, 2)) / 2 - n / 2  # off-diagonal pairs tied in both
    dis = (tot - xtie - ytie + joint_ties - con_minus_dis) / 2
    no_ties = (np.rint(xtie) == 0) & (np.rint(ytie) == 0)
    exact = no_ties & ((n <= 33) | (np.minimum(dis, tot - dis) <= 1))
    for i in np.flatnonzero(exact):
        p[i] = _kendall_exact(n, int(round(tot - dis[i])))
    return p


@functools.lru_cache(maxsize=4096)
def _kendall_exact(n: int, concordant: int) -> float:
    """scipy's exact two-sided p-value of tau for ``n`` untied points with ``concordant`` pairs: that of
    ``kendalltau`` on a permutation with exactly ``tot - concordant`` inversions (Lehmer code)."""
    remaining, permutation, pool = n * (n - 1) // 2 - concordant, [], list(range(n))
    for position in range(n):
        k = min(remaining, n - 1 - position)
        permutation.append(pool.pop(k))
        remaining -= k
    return float(stats.kendalltau(np.arange(n), np.array(permutation), method="exact")[1])


def significant_document_correlations(
    metric: np.ndarray, human: np.ndarray, method: str = "pearson", alpha: float = SIGNIFICANCE
) -> np.ndarray:
    """:func:`per_document_correlations` with ``nan`` for every document whose p-value > ``alpha``."""
    per_doc = per_document_correlations(metric, human, method)
    p = per_document_p_values(metric, human, method)
    keep = ~np.isnan(p) & (p <= alpha)
    return np.where(keep, per_doc, np.nan)


def _mean_of_defined(per_doc: np.ndarray, method: str, level: str, reason=None) -> CorrelationResult:
    """The mean of the defined per-document correlations; ``reason()`` is asked only when none is."""
    defined = per_doc[~np.isnan(per_doc)]
    value = float(defined.mean()) if defined.size else math.nan
    return CorrelationResult(value, method, level, int(defined.size), int(per_doc.size - defined.size),
                             None if defined.size else reason())


def no_document_reason(metric: np.ndarray, human: np.ndarray) -> str:
    """Why no document has a defined correlation: one reason ``"... in every document"``, or each
    reason with its count of documents.

    >>> import numpy as np
    >>> no_document_reason(np.array([[1.0, 2, 3], [1, 2, 3]]), np.array([[5.0, 5, 5], [5, 5, 5]]))
    'human scores constant in every document'
    """
    metric, human = check_matrices(metric, human)
    present = ~(np.isnan(metric) | np.isnan(human))
    counts = Counter(undefined_reason(m[p], h[p], unit="systems scored") or ROUNDING_REASON
                     for m, h, p in zip(metric, human, present))
    if not counts:
        return "no document scored"
    if len(counts) == 1:
        return f"{next(iter(counts))} in every document"
    return "no document has a defined correlation (" + "; ".join(
        f"{reason}: {n} documents" for reason, n in counts.items()) + ")"


def text_level_significant(
    metric: np.ndarray, human: np.ndarray, method: str = "pearson", alpha: float = SIGNIFICANCE
) -> CorrelationResult:
    """Average of the per-document correlations over the documents where it is significant.

    REALSumm's analysis (Bhandari et al. 2020) averages summary-level correlations only over
    documents with p <= 0.05; ``n_used`` is the number of documents kept, ``n_skipped`` the others
    (not significant, or undefined). Metrics keep different documents: compare with care.

    >>> import numpy as np
    >>> human = np.array([[1.0, 2, 3, 4, 5], [1.0, 2, 3, 4, 5]])
    >>> metric = np.array([[1.0, 2, 3, 4, 5], [2.0, 1, 4, 3, 5]])  # r = 1 (p = 0); r = 0.8 (p = 0.10)
    >>> r = text_level_significant(metric, human, "pearson")
    >>> r.value, r.n_used, r.n_skipped
    (1.0, 1, 1)
    """
    def reason() -> str:
        if np.isnan(per_document_correlations(metric, human, method)).all():
            return no_document_reason(metric, human)
        return f"no document's correlation is significant (p <= {alpha})"

    return _mean_of_defined(significant_document_correlations(metric, human, method, alpha), method, "text_sig", reason)


def pooled_level(metric: np.ndarray, human: np.ndarray, method: str = "pearson") -> CorrelationResult:
    """One correlation over every (document, system) cell scored by both (``n_used`` cells).

    >>> import numpy as np
    >>> pooled_level(np.array([[1.0, 2], [3, np.nan]]), np.array([[1.0, 2], [4, 5]]), "spearman").value
    1.0
    """
    metric, human = check_matrices(metric, human)
    return _correlation_of_present(metric.ravel(), human.ravel(), method, "pooled", "scored outputs")


def _correlation_of_present(m: np.ndarray, h: np.ndarray, method: str, level: str,
                            unit: str) -> CorrelationResult:
    """:func:`correlate` of the entries of ``m`` and ``h`` where neither is nan (``unit`` names them)."""
    present = ~(np.isnan(m) | np.isnan(h))
    value = correlate(m[present], h[present], method)
    reason = None
    if math.isnan(value):
        reason = undefined_reason(m[present], h[present], unit) or ROUNDING_REASON
        # The test ran on the system means: name them when the scores themselves vary.
        reason += " across the system means" if level == "system" and reason.endswith("constant") else ""
    return CorrelationResult(value, method, level, int(present.sum()), int((~present).sum()), reason)


def text_level(metric: np.ndarray, human: np.ndarray, method: str = "pearson") -> CorrelationResult:
    """Average over documents of the per-document correlation across systems."""
    return _mean_of_defined(per_document_correlations(metric, human, method), method, "text",
                            lambda: no_document_reason(metric, human))


def present_mean(values: np.ndarray, axis: int) -> np.ndarray:
    """The mean along ``axis`` of the values that are not nan; nan where there is none."""
    counts = (~np.isnan(values)).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, np.nansum(values, axis=axis) / np.maximum(counts, 1), np.nan)


def system_means(matrix: np.ndarray) -> np.ndarray:
    """Mean score of each system over the documents it has a score for."""
    return present_mean(np.asarray(matrix, dtype=float), axis=0)


def system_level(metric: np.ndarray, human: np.ndarray, method: str = "pearson") -> CorrelationResult:
    """Correlation across systems of the per-system mean scores."""
    metric, human = check_matrices(metric, human)
    return _correlation_of_present(system_means(metric), system_means(human), method, "system", "systems")


def correlation(metric: np.ndarray, human: np.ndarray, level: str = "text", method: str = "pearson") -> CorrelationResult:
    """Dispatch on ``level``: ``text``, ``text_sig``, ``pooled`` or ``system`` (module docstring)."""
    check_choice("level", level, LEVELS)
    return LEVEL_FUNCTIONS[level](metric, human, method)


LEVEL_FUNCTIONS = {"text": text_level, "text_sig": text_level_significant, "pooled": pooled_level, "system": system_level}
