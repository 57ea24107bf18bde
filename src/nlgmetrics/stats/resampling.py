"""The random draws of the paired tests, made as sacrebleu makes them, and the scores of the
resampled corpora.

sacrebleu seeds ``numpy.random.default_rng(seed)`` and draws, for the paired bootstrap,
``rng.choice(n, size=(B, n), replace=True)`` (example indices of B resampled test sets, the same
ones for every system, the baseline included) and, for approximate randomization,
``rng.integers(2, size=(T, n), dtype=bool)`` (for each of T trials, which examples keep their
system's output). Same seed, same counts: the same draws here.

>>> bootstrap_indices(5, 2, seed=12345).shape, swap_masks(5, 3, seed=12345).dtype
((2, 5), dtype('bool'))
>>> stats = np.array([[1.0], [2.0], [3.0]])
>>> bootstrap_scores(stats, np.array([[0, 0, 2], [1, 1, 1]]), lambda s: float(s[0]), "float64").tolist()
[5.0, 6.0]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nlgmetrics.core.corpus import score_rows

ScoreFunction = Callable[[np.ndarray], float]


def bootstrap_indices(n_examples: int, n_resamples: int, seed: int | None) -> np.ndarray:
    """``(n_resamples, n_examples)`` example indices drawn with replacement (sacrebleu's draw)."""
    return np.random.default_rng(seed).choice(n_examples, size=(n_resamples, n_examples), replace=True)


def swap_masks(n_examples: int, n_trials: int, seed: int | None) -> np.ndarray:
    """``(n_trials, n_examples)`` booleans: True keeps the example's outputs in place, False swaps
    the two systems' outputs (sacrebleu's draw)."""
    return np.random.default_rng(seed).integers(2, size=(n_trials, n_examples), dtype=bool)


def bootstrap_scores(stats: np.ndarray, indices: np.ndarray, score: ScoreFunction, dtype: str) -> np.ndarray:
    """The score of every resampled test set: the rows of ``stats`` at each row of ``indices``,
    summed in ``dtype`` (one resample at a time, as sacrebleu sums them, so float sums agree
    to the last bit), then ``score``."""
    rows = np.asarray(stats, dtype=dtype)
    return np.array([score(rows[sample].sum(0)) for sample in indices], dtype=np.float64)


def _masked_sums(masks: np.ndarray, baseline: np.ndarray, system: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sacrebleu's sums ``a = masks @ baseline + ~masks @ system`` and
    ``b = ~masks @ baseline + masks @ system``.

    Integer statistics: ``a = masks @ (baseline - system) + sum(system)`` and
    ``b = sum(baseline) + sum(system) - a``, one float64 (BLAS) product instead of four integer
    ones (numpy has no fast integer product); exact, hence equal to sacrebleu's, while every
    partial sum stays below 2**53, which is checked. Float statistics: sacrebleu's expressions as
    they are (the summation order decides the last bits).
    """
    if np.issubdtype(baseline.dtype, np.integer) and np.issubdtype(system.dtype, np.integer):
        base_total, system_total = baseline.sum(axis=0), system.sum(axis=0)
        bound = float(np.abs(baseline).sum(axis=0).max() + np.abs(system).sum(axis=0).max())
        if bound < 2.0**53:
            moved = masks @ (baseline - system).astype(np.float64)
            sums_a = np.rint(moved).astype(np.int64) + system_total
            return sums_a, base_total + system_total - sums_a
    return masks @ baseline + ~masks @ system, ~masks @ baseline + masks @ system


def swapped_scores(
    baseline: np.ndarray, system: np.ndarray, masks: np.ndarray, score: ScoreFunction
) -> tuple[np.ndarray, np.ndarray]:
    """The scores of the two pseudo-systems of every trial: ``a`` takes the baseline's statistics
    where the mask is True and the system's elsewhere, ``b`` the rest (sacrebleu's sums,
    ``mask @ baseline + ~mask @ system``, in the statistics' own dtype).

    The sums reach ``score`` as Python numbers (:func:`~nlgmetrics.core.corpus.score_rows`): the
    same arithmetic as numpy's int64/float64 scalars, several times faster.
    """
    sums_a, sums_b = _masked_sums(masks, np.asarray(baseline), np.asarray(system))
    return score_rows(sums_a, score), score_rows(sums_b, score)
