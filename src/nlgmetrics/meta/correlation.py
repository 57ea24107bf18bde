"""Correlation of metric scores with human judgments, at text level and at system level.

Scores are arranged as a matrix with one row per document (input item) and one column per
system; a cell is ``nan`` where that system has no output (or no score) for that document.

- **Text level** (REALSumm's *summary level*, Bhandari et al. 2020): for every document,
  correlate metric and human scores across the systems, then average over documents.
  Documents where the metric or the human scores are constant (the correlation is undefined)
  or that have fewer than 3 scored systems are left out of the average and *counted*
  (``n_skipped``), never silently averaged as ``nan``.
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

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from nlgmetrics.core.validation import check_choice
from nlgmetrics.meta.coefficients import METHODS, MIN_POINTS, batched_correlate

LEVELS = ("text", "system")


@dataclass(frozen=True)
class CorrelationResult:
    """One correlation coefficient and what it was computed from.

    ``value`` is ``nan`` only when no document (text level) or not enough systems (system
    level) gave a defined correlation; ``n_used`` / ``n_skipped`` say how many groups counted.
    """

    value: float
    method: str
    level: str
    n_used: int
    n_skipped: int


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
    if method == "pearson":
        return float(stats.pearsonr(x, y)[0])
    if method == "spearman":
        return float(stats.spearmanr(x, y)[0])
    return float(stats.kendalltau(x, y)[0])


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
    doc_index: dict[Hashable, int] = {}
    sys_index: dict[Hashable, int] = {}
    for d in documents:
        doc_index.setdefault(d, len(doc_index))
    for s in systems:
        sys_index.setdefault(s, len(sys_index))
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


def _check_matrices(metric: np.ndarray, human: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    metric, human = _check_matrices(metric, human)
    out = np.full(metric.shape[0], np.nan)
    complete = ~(np.isnan(metric).any(axis=1) | np.isnan(human).any(axis=1))
    if complete.any():
        out[complete] = batched_correlate(metric[complete], human[complete], method)
    for i in np.flatnonzero(~complete):
        present = ~(np.isnan(metric[i]) | np.isnan(human[i]))
        out[i] = correlate(metric[i, present], human[i, present], method)
    return out


def text_level(metric: np.ndarray, human: np.ndarray, method: str = "pearson") -> CorrelationResult:
    """Average over documents of the per-document correlation across systems."""
    per_doc = per_document_correlations(metric, human, method)
    defined = per_doc[~np.isnan(per_doc)]
    value = float(defined.mean()) if defined.size else math.nan
    return CorrelationResult(value, method, "text", int(defined.size), int(per_doc.size - defined.size))


def system_means(matrix: np.ndarray) -> np.ndarray:
    """Mean score of each system over the documents it has a score for."""
    matrix = np.asarray(matrix, dtype=float)
    counts = (~np.isnan(matrix)).sum(axis=0)
    sums = np.nansum(matrix, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def system_level(metric: np.ndarray, human: np.ndarray, method: str = "pearson") -> CorrelationResult:
    """Correlation across systems of the per-system mean scores."""
    metric, human = _check_matrices(metric, human)
    m, h = system_means(metric), system_means(human)
    present = ~(np.isnan(m) | np.isnan(h))
    value = correlate(m[present], h[present], method)
    return CorrelationResult(value, method, "system", int(present.sum()), int((~present).sum()))


def correlation(metric: np.ndarray, human: np.ndarray, level: str = "text", method: str = "pearson") -> CorrelationResult:
    """Dispatch to :func:`text_level` or :func:`system_level`."""
    check_choice("level", level, LEVELS)
    return text_level(metric, human, method) if level == "text" else system_level(metric, human, method)
