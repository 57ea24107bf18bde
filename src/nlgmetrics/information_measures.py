"""Information measures between discrete distributions over a vocabulary (InfoLM's contrast functions).

Every function compares a *reference* distribution ``p`` with a *candidate* distribution ``q``
(tensors ``[..., V]`` whose last axis sums to 1) and returns ``[...]`` in float64. Every measure is
a divergence or a distance: it is 0 when ``p == q`` and **lower means more similar**.

Definitions (natural logarithms; ``p`` = reference, ``q`` = candidate; sums over the vocabulary):

============================  =====================================================================
``kl_divergence``             KL(p || q) = sum p log(p / q)
``alpha_divergence``          (sum p^a q^(1-a) - 1) / (a (a - 1)),                a not in {0, 1}
``beta_divergence``           ``ab_divergence`` with a = 1,                      b not in {0, -1}
``ab_divergence``             log(sum p^(a+b)) / (b (a+b)) + log(sum q^(a+b)) / (a (a+b))
                              - log(sum p^a q^b) / (a b),                         a, b, a+b != 0
``renyi_divergence``          log(sum p^a q^(1-a)) / (a - 1),                     a > 0, a != 1
``l1_distance``               sum |p - q|
``l2_distance``               sqrt(sum (p - q)^2)
``l_infinity_distance``       max |p - q|
``fisher_rao_distance``       2 arccos(sum sqrt(p q))                              (in [0, pi])
``js_divergence``             KL(p || m) / 2 + KL(q || m) / 2 with m = (p + q) / 2 (in [0, log 2])
============================  =====================================================================

Relation to ``torchmetrics`` (1.9) ``InfoLM``: its ``kl_divergence`` returns sum q_ref log(p_cand/q_ref),
i.e. **minus** KL(reference || candidate), and its ``alpha_divergence`` returns
(1 - sum ...)/(a(a-1)), i.e. **minus** the alpha divergence above. All its other measures equal
ours. ``js_divergence`` is in the InfoLM paper but not in torchmetrics.

Numerics: everything is computed in float64; probabilities are floored at ``PROBABILITY_FLOOR``
(1e-300) before taking logarithms, so an exact zero (an fp underflow at extreme temperatures) gives
a large finite value instead of ``inf``/``NaN``; the floor changes no value above ~1e-290.

>>> import torch
>>> p = torch.tensor([0.5, 0.5]); q = torch.tensor([0.9, 0.1])
>>> round(float(information_measure("kl_divergence", p, q)), 6)
0.510826
>>> float(information_measure("fisher_rao_distance", p, p))
0.0
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from nlgmetrics.measure_names import INFORMATION_MEASURES, InformationMeasureName
from nlgmetrics.validation import check_real

#: Measures that read ``alpha`` / ``beta``; the others ignore them (and the signature records "none").
NEEDS_ALPHA = frozenset({"alpha_divergence", "ab_divergence", "renyi_divergence"})
NEEDS_BETA = frozenset({"beta_divergence", "ab_divergence"})

#: Smallest probability used inside logarithms (float64 keeps ~1e-308 normal numbers).
PROBABILITY_FLOOR = 1e-300

#: torchmetrics value = TORCHMETRICS_SIGN[measure] * our value (same alpha, beta; both on the same
#: pair of distributions). Measures missing here (js_divergence) do not exist in torchmetrics.
TORCHMETRICS_SIGN: dict[str, int] = {
    "kl_divergence": -1,
    "alpha_divergence": -1,
    "beta_divergence": 1,
    "ab_divergence": 1,
    "renyi_divergence": 1,
    "l1_distance": 1,
    "l2_distance": 1,
    "l_infinity_distance": 1,
    "fisher_rao_distance": 1,
}


def _as_real(name: str, value: object, measure: str) -> float:
    # numpy scalars (np.float32 from a sweep) are real numbers too.
    value = check_real(name, value, finite=False, message=(
        f"`{name}` must be a real number for information_measure={measure!r}, got {value!r}; "
        f"pass e.g. {name}=0.5."))
    if not math.isfinite(value):
        raise ValueError(f"`{name}`={value} is not finite; pass a finite number.")
    return value


def check_measure(
    measure: str, alpha: float | None = None, beta: float | None = None
) -> tuple[float | None, float | None]:
    """Validate ``measure`` and its parameters; return ``(alpha, beta)`` as floats (None if unused).

    Raises ValueError naming the measure, the bad value and the allowed range.

    >>> check_measure("ab_divergence", 1, 0.5)
    (1.0, 0.5)
    >>> check_measure("fisher_rao_distance", alpha=3)
    (None, None)
    """
    if measure not in INFORMATION_MEASURES:
        raise ValueError(
            f"Unknown information_measure={measure!r}; choose one of {list(INFORMATION_MEASURES)}."
        )
    a = b = None
    if measure in NEEDS_ALPHA:
        if alpha is None:
            raise ValueError(f"information_measure={measure!r} needs `alpha`; pass e.g. alpha=0.5.")
        a = _as_real("alpha", alpha, measure)
    if measure in NEEDS_BETA:
        if beta is None:
            raise ValueError(f"information_measure={measure!r} needs `beta`; pass e.g. beta=0.5.")
        b = _as_real("beta", beta, measure)
    if measure == "alpha_divergence" and a in (0.0, 1.0):
        raise ValueError(
            f"alpha_divergence is undefined for alpha={a:g} (division by alpha*(alpha-1)); "
            f"pass alpha not in {{0, 1}} (for alpha -> 1 use kl_divergence)."
        )
    if measure == "beta_divergence" and b in (0.0, -1.0):
        raise ValueError(
            f"beta_divergence is undefined for beta={b:g}; pass beta not in {{0, -1}}."
        )
    if measure == "ab_divergence" and (a == 0.0 or b == 0.0 or a + b == 0.0):
        raise ValueError(
            f"ab_divergence is undefined for alpha={a:g}, beta={b:g}: alpha, beta and alpha+beta "
            f"must all be non-zero."
        )
    if measure == "renyi_divergence" and (a <= 0.0 or a == 1.0):
        raise ValueError(
            f"renyi_divergence is defined for alpha > 0, alpha != 1, got alpha={a:g} "
            f"(alpha <= 0 is not a divergence; for alpha -> 1 use kl_divergence)."
        )
    return a, b


def _logs(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return p.clamp_min(PROBABILITY_FLOOR).log(), q.clamp_min(PROBABILITY_FLOOR).log()


def _log_sum_pow(log_p: torch.Tensor, a: float, log_q: torch.Tensor | None = None, b: float = 0.0):
    """log(sum p^a q^b), computed with logsumexp so large or negative exponents do not overflow."""
    exponent = a * log_p if log_q is None else a * log_p + b * log_q
    return torch.logsumexp(exponent, dim=-1)


def _kl(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    log_p, log_q = _logs(p, q)
    # 0 * log(0 / q) = 0 by convention: the floored log of 0 is finite, times p = 0 gives 0.
    return (p * (log_p - log_q)).sum(-1)


def _ab(p: torch.Tensor, q: torch.Tensor, a: float, b: float) -> torch.Tensor:
    log_p, log_q = _logs(p, q)
    s = a + b
    return (
        _log_sum_pow(log_p, s) / (b * s)
        + _log_sum_pow(log_q, s) / (a * s)
        - _log_sum_pow(log_p, a, log_q, b) / (a * b)
    )


def _alpha(p: torch.Tensor, q: torch.Tensor, a: float) -> torch.Tensor:
    log_p, log_q = _logs(p, q)
    # expm1 keeps precision when the sum is close to 1 (similar texts), where 1 - sum cancels.
    return torch.expm1(_log_sum_pow(log_p, a, log_q, 1.0 - a)) / (a * (a - 1.0))


def _renyi(p: torch.Tensor, q: torch.Tensor, a: float) -> torch.Tensor:
    log_p, log_q = _logs(p, q)
    return _log_sum_pow(log_p, a, log_q, 1.0 - a) / (a - 1.0)


def _fisher_rao(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    # Rounding can push the Bhattacharyya coefficient a hair above 1; arccos needs [-1, 1].
    return 2.0 * torch.arccos(torch.sqrt(p * q).sum(-1).clamp(0.0, 1.0))


def _js(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    m = 0.5 * (p + q)
    return 0.5 * _kl(p, m) + 0.5 * _kl(q, m)


def information_measure(
    measure: InformationMeasureName | str,
    reference: torch.Tensor,
    candidate: torch.Tensor,
    alpha: float | None = None,
    beta: float | None = None,
) -> torch.Tensor:
    """``measure(p=reference, q=candidate)`` over the last axis, in float64 (see module docstring).

    ``reference`` and ``candidate`` broadcast against each other (e.g. ``[n, V]`` and ``[n, V]``, or
    ``[k, V]`` references against one ``[V]`` candidate).

    >>> import torch
    >>> p = torch.tensor([0.2, 0.8]); q = torch.tensor([0.6, 0.4])
    >>> round(float(information_measure("l1_distance", p, q)), 6)
    0.8
    >>> round(float(information_measure("renyi_divergence", p, q, alpha=2.0)), 6)
    0.510826
    """
    a, b = check_measure(measure, alpha, beta)
    p = reference.to(torch.float64)
    q = candidate.to(torch.float64)
    functions: dict[str, Callable[[], torch.Tensor]] = {
        "kl_divergence": lambda: _kl(p, q),
        "alpha_divergence": lambda: _alpha(p, q, a),
        "beta_divergence": lambda: _ab(p, q, 1.0, b),
        "ab_divergence": lambda: _ab(p, q, a, b),
        "renyi_divergence": lambda: _renyi(p, q, a),
        "l1_distance": lambda: (p - q).abs().sum(-1),
        "l2_distance": lambda: (p - q).pow(2).sum(-1).sqrt(),
        "l_infinity_distance": lambda: (p - q).abs().amax(-1),
        "fisher_rao_distance": lambda: _fisher_rao(p, q),
        "js_divergence": lambda: _js(p, q),
    }
    return functions[measure]()
