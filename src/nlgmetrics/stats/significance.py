"""The two paired tests and the confidence interval, with sacrebleu's definitions.

- **Confidence interval** (:func:`bootstrap_interval`): the bootstrap scores sorted; the bounds
  are those at positions ``B // 40`` and ``B - B // 40 - 1`` (95%: 1/40 from each end); sacrebleu
  reports the bootstrap mean and half the width (``± 95% CI``).
- **Paired bootstrap** (Koehn 2004, sacrebleu ``--paired-bs``; :func:`paired_bootstrap_p`): the
  absolute differences of the two systems' scores on the same resampled test sets, centred on
  their mean (the null hypothesis: no difference), against the observed absolute difference.
- **Approximate randomization** (Riezler & Maxwell 2005, sacrebleu ``--paired-ar``;
  :func:`randomization_p`): the absolute differences of the pseudo-systems made by randomly
  swapping the two systems' outputs per example, against the observed absolute difference.
- **p-value** (:func:`p_value`): ``(c + 1) / (N + 1)``, where c counts the N null statistics at
  least as large as the observed one.

One documented difference: sacrebleu counts null statistics strictly *larger* than the observed
difference, so a trial that ties it exactly is not counted. Ties happen only in degenerate cases
(identical systems, systems that differ on one example, ...), where sacrebleu's strict count
gives the smallest possible p-value, ``1 / (N + 1)``, to two identical systems; counting ties
(the default, ``count_ties=True``) gives them p = 1. Without ties both counts are equal;
``count_ties=False`` is sacrebleu's count.

>>> p_value(np.array([0.0, 0.0, 0.0]), 0.0), p_value(np.array([0.0, 0.0, 0.0]), 0.0, count_ties=False)
(1.0, 0.25)
>>> bootstrap_interval(np.arange(80.0))
(39.5, 2.0, 77.0)
"""

from __future__ import annotations

import numpy as np


def p_value(null_statistics: np.ndarray, observed: float, *, count_ties: bool = True) -> float:
    """``(c + 1) / (N + 1)``: c null statistics >= ``observed`` (> with ``count_ties=False``)."""
    null_statistics = np.asarray(null_statistics)
    extreme = null_statistics >= observed if count_ties else null_statistics > observed
    return (int(np.sum(extreme)) + 1) / (len(null_statistics) + 1)


def bootstrap_interval(scores: np.ndarray) -> tuple[float, float, float]:
    """``(mean, low, high)`` of bootstrap scores: their mean and the 95% percentile bounds."""
    ordered = np.sort(np.asarray(scores, dtype=np.float64))
    lower = len(ordered) // 40
    return float(ordered.mean()), float(ordered[lower]), float(ordered[len(ordered) - lower - 1])


def paired_bootstrap_p(
    system_scores: np.ndarray, baseline_scores: np.ndarray, observed_difference: float, *, count_ties: bool = True
) -> float:
    """p-value of the paired bootstrap: both systems' scores on the same resampled test sets."""
    differences = np.abs(np.asarray(system_scores) - np.asarray(baseline_scores))
    return p_value(differences - differences.mean(), abs(observed_difference), count_ties=count_ties)


def randomization_p(
    scores_a: np.ndarray, scores_b: np.ndarray, observed_difference: float, *, count_ties: bool = True
) -> float:
    """p-value of approximate randomization: the two pseudo-systems of every trial."""
    differences = np.abs(np.asarray(scores_a) - np.asarray(scores_b))
    return p_value(differences, abs(observed_difference), count_ties=count_ties)
