"""The FFLM formula: three components from five floored per-token probability lists.

Per token ``i``, with ``loss = -log p``::

    Delta_prior(Y) = mean_i (lm_loss_i     - s2s_loss_i)     * exp(1 - s2s_i)
    Delta_cond(Y)  = mean_i (prefix_loss_i - s2s_loss_i)     * exp(1 - s2s_i)
    Delta_prior(X) = mean_i (lm_doc_loss_i - s2s_doc_loss_i) * exp(1 - s2s_doc_i)

Probabilities come from a float32 softmax, as in the authors' scorer; one that is exactly 0 there
(an underflow) is replaced by :data:`PROBABILITY_FLOOR` (1e-6) before the logs.

Range: a kept probability is at least the smallest float32 subnormal (log ~ -103.28) and at most 1,
so each log-probability difference lies within about +-103.28, and the weight ``exp(1 - p)`` lies in
[1, e): every component (and FFLM, a convex combination of them) lies within +-280.8,
:data:`COMPONENT_BOUND` (281, which leaves room for float32 rounding of log-probabilities just
above 0 and for weights that sum to 1 within 1e-6). In practice the values lie within about +-10.

>>> p = np.array([0.5]); q = np.array([0.25])  # ln(0.5 / 0.25) * exp(1 - 0.5) = 1.142807
>>> [round(v, 6) for v in fflm_components(p, q, p, p, q)]
[1.142807, 1.142807, 0.0]
>>> floored_probabilities(np.array([0.0, -200.0])).tolist()  # -200 underflows in float32
[1.0, 1e-06]
"""

from __future__ import annotations

import math

import numpy as np

#: The authors replace a probability of exactly 0 (an underflowed softmax) by this value.
PROBABILITY_FLOOR = 1e-6
#: log of the smallest float32 subnormal (~ -103.28): the authors' float32 softmax gives exactly 0
#: below it, so exactly those probabilities are floored.
FLOAT32_UNDERFLOW_LOGPROB = math.log(float(np.nextafter(np.float32(0), np.float32(1))))
#: |component| <= |FLOAT32_UNDERFLOW_LOGPROB| * e ~ 280.8 (see the module docstring), rounded up.
COMPONENT_BOUND = 281.0


def floored_probabilities(logprobs: np.ndarray) -> np.ndarray:
    """exp(logprobs) in float64, with the authors' floor: a probability that is 0 in float32 becomes 1e-6.

    Raises RuntimeError on NaN log-probabilities (float16 overflow), which would otherwise give a
    plausible-looking wrong score.
    """
    logprobs = np.asarray(logprobs, dtype=np.float64)
    if np.isnan(logprobs).any():
        raise RuntimeError(
            "the model produced NaN log-probabilities (often float16 overflow); "
            "rerun with dtype='float32' or 'bfloat16'."
        )
    probs = np.exp(logprobs)
    return np.where(logprobs < FLOAT32_UNDERFLOW_LOGPROB, PROBABILITY_FLOOR, probs)


def fflm_components(
    s2s: np.ndarray,
    lm: np.ndarray,
    prefix: np.ndarray,
    s2s_doc: np.ndarray,
    lm_doc: np.ndarray,
) -> tuple[float, float, float]:
    """(Delta_prior(Y), Delta_prior(X), Delta_cond(Y)) from the five floored probability lists.

    A component over an empty list is 0.0 (no token, no probability change), never NaN.
    """
    prior_y, prior_x, cond_y = fflm_token_terms(s2s, lm, prefix, s2s_doc, lm_doc)
    return _mean_or_zero(prior_y), _mean_or_zero(prior_x), _mean_or_zero(cond_y)


def fflm_token_terms(
    s2s: np.ndarray,
    lm: np.ndarray,
    prefix: np.ndarray,
    s2s_doc: np.ndarray,
    lm_doc: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The per-token terms whose means are the three components (summary, document, summary tokens).

    >>> p = np.array([0.5]); q = np.array([0.25])
    >>> [t.round(6).tolist() for t in fflm_token_terms(p, q, p, p, q)]
    [[1.142807], [1.142807], [0.0]]
    """
    s2s_loss = -np.log(s2s)
    s2s_weight = np.exp(1.0 - s2s)
    prior_y = (-np.log(lm) - s2s_loss) * s2s_weight
    cond_y = (-np.log(prefix) - s2s_loss) * s2s_weight
    prior_x = (-np.log(lm_doc) + np.log(s2s_doc)) * np.exp(1.0 - s2s_doc)
    return prior_y, prior_x, cond_y


def _mean_or_zero(values: np.ndarray) -> float:
    return float(np.mean(values)) if values.size else 0.0
