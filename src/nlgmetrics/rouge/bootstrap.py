"""Aggregate per-example scores: mean and a bootstrap confidence interval of the mean.

Same procedure as rouge-score's ``BootstrapAggregator`` and ROUGE-1.5.5 (resample the examples
with replacement ``n_samples`` times, take percentiles of the resampled means), but seeded
(reproducible) and vectorised in bounded chunks. ``mean`` is the plain mean of the examples;
``low``/``high`` are the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles.

>>> [agg] = bootstrap_columns(np.array([[0.0], [1.0], [0.5], [0.5]]), n_samples=200, seed=0)
>>> agg["mean"], agg["low"] <= agg["mean"] <= agg["high"]
(0.5, True)
"""

from __future__ import annotations

import numpy as np

from nlgmetrics.core.validation import check_int, shown_value

_CHUNK_CELLS = 4_000_000  # resample counts held at once (bounded memory on big corpora)


def bootstrap_columns(
    matrix: np.ndarray,
    n_samples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> list[dict[str, float]]:
    """Bootstrap every column of an ``(examples, k)`` matrix with the same resamples.

    A resample is stored as per-example counts, so all ``k`` resampled means come from one
    matrix product (and every column sees the same resampled examples). ``confidence`` is taken as
    checked by the caller (:func:`~nlgmetrics.core.validation.check_confidence`, as
    :func:`~nlgmetrics.rouge.rouge_family` does): a float strictly between 0 and 1.
    """
    n_samples = check_int("n_samples", n_samples, minimum=1,
                          message=f"n_samples={shown_value(n_samples)} must be a positive integer, e.g. 1000.")
    data = np.asarray(matrix, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError("matrix must be 2-D: one row per example, one column per measure.")
    n, k = data.shape
    if n == 0:
        return [{"mean": 0.0, "low": 0.0, "high": 0.0} for _ in range(k)]
    rng = np.random.default_rng(seed)
    per_chunk = max(1, _CHUNK_CELLS // n)
    means = np.empty((n_samples, k), dtype=np.float64)
    for done in range(0, n_samples, per_chunk):
        size = min(per_chunk, n_samples - done)
        idx = rng.integers(0, n, size=(size, n))
        flat = (idx + (np.arange(size) * n)[:, None]).ravel()
        counts = np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)
        means[done : done + size] = counts @ data / n
    tail = (1.0 - confidence) / 2.0
    bounds = np.percentile(means, [100.0 * tail, 100.0 * (1.0 - tail)], axis=0)
    column_means = data.mean(axis=0)
    return [
        {"mean": float(column_means[c]), "low": float(bounds[0, c]), "high": float(bounds[1, c])}
        for c in range(k)
    ]

