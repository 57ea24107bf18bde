"""A bootstrap confidence interval of the mean of per-example scores.

Same procedure as rouge-score's ``BootstrapAggregator`` and ROUGE-1.5.5 (resample the examples
with replacement ``n_samples`` times, take percentiles of the resampled means), but seeded
(reproducible) and vectorised in bounded chunks. The bounds are the ``(1 - confidence) / 2`` and
``(1 + confidence) / 2`` percentiles of the resampled means.

>>> [(low, high)] = bootstrap_columns(np.array([[0.0], [1.0], [0.5], [0.5]]), n_samples=200, seed=0)
>>> low <= 0.5 <= high
True
"""

from __future__ import annotations

import numpy as np

_CHUNK_CELLS = 4_000_000  # resample counts held at once (bounded memory on big corpora)


def bootstrap_columns(
    matrix: np.ndarray,
    n_samples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> list[tuple[float, float]]:
    """The ``(low, high)`` bootstrap bounds of the mean of every column of an ``(examples, k)``
    matrix, all columns with the same resamples.

    A resample is stored as per-example counts, so all ``k`` resampled means come from one
    matrix product (and every column sees the same resampled examples). The arguments are taken as
    checked by the caller, :func:`~nlgmetrics.rouge.rouge_family`: a float64 matrix of at least one
    example and one column, ``n_samples >= 1``, ``confidence`` a float strictly between 0 and 1.
    """
    n, k = matrix.shape
    rng = np.random.default_rng(seed)
    per_chunk = max(1, _CHUNK_CELLS // n)
    means = np.empty((n_samples, k), dtype=np.float64)
    for done in range(0, n_samples, per_chunk):
        size = min(per_chunk, n_samples - done)
        idx = rng.integers(0, n, size=(size, n))
        flat = (idx + (np.arange(size) * n)[:, None]).ravel()
        counts = np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)
        means[done : done + size] = counts @ matrix / n
    tail = (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [100.0 * tail, 100.0 * (1.0 - tail)], axis=0)
    return [(float(lo), float(hi)) for lo, hi in zip(low, high)]

