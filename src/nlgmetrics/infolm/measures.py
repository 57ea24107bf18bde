"""Information measures between discrete distributions over a vocabulary (InfoLM's contrast functions).

Every function compares a *reference* distribution ``p`` with a *candidate* distribution ``q``
(tensors ``[..., V]`` whose last axis sums to 1) and returns ``[...]`` in float64. Every measure is
a divergence or a distance: 0 when ``p == q``, never negative, **lower means more similar**;
:data:`MEASURE_RANGES` gives each one's range. Definitions, parameters, ranges and the sign
difference from ``torchmetrics`` (whose ``kl_divergence`` and ``alpha_divergence`` are the negatives
of ours): the model card, metrics/infolm/README.md. Rounding noise (~1e-16) that would leave a value
a hair outside its range is clamped into it.

Numerics (float64): probabilities are floored at ``PROBABILITY_FLOOR`` (1e-300) before the logs, so
every log-probability lies in [-690.8, 0]; that fixes the parameters float64 can evaluate
(:func:`check_measure`: ``1e-300 <= |alpha|, |beta|, |alpha+beta| <= 1e300``, and
``max(|alpha|, |beta|) >= AB_MIN_SCALE`` for AB), and the formulas keep their precision next to
the excluded points (``alpha -> 1``, ``alpha -> 0``, ``beta -> 0``, ``alpha + beta -> 0``). Only
the alpha divergence can exceed float64, for alpha outside :data:`ALPHA_DIVERGENCE_FINITE_RANGE`
(derived beside it): :func:`nlgmetrics.infolm.infolm` then refuses the setting, never a clamped number.

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

from nlgmetrics.core.measure_names import INFORMATION_MEASURES, InformationMeasureName
from nlgmetrics.core.refusals import WHILE_SCORING, Refusal
from nlgmetrics.core.validation import check_real, shown_value

#: Measures that read ``alpha`` / ``beta``; the others ignore them (and the signature records "none").
NEEDS_ALPHA = frozenset({"alpha_divergence", "ab_divergence", "renyi_divergence"})
NEEDS_BETA = frozenset({"beta_divergence", "ab_divergence"})

#: Smallest probability used inside logarithms (float64 keeps ~1e-308 normal numbers).
PROBABILITY_FLOOR = 1e-300
#: log(PROBABILITY_FLOOR): every log-probability lies in [LOG_FLOOR, 0].
LOG_FLOOR = math.log(PROBABILITY_FLOOR)
#: Largest |alpha|, |beta|, |alpha + beta|: t * log p (|log p| <= 690.8) stays below float64's
#: largest number (1.8e308) with room for the sums.
MAX_PARAMETER = 1e300
#: Smallest non-zero |alpha|, |beta|, |alpha + beta|: below, t * log p is a subnormal float64 and
#: loses its digits.
MIN_PARAMETER = 1e-300
#: The AB divergence needs max(|alpha|, |beta|) >= this: its value is a difference of two averages
#: of log-ratios (each up to 690.8 in magnitude) divided by the larger parameter, so the rounding
#: error is about 1e-16 * 690.8 / max(|alpha|, |beta|); at 1e-6 that is below 1e-7.
AB_MIN_SCALE = 1e-6
#: The alphas for which every alpha-divergence value is at most 1 / (2 PROBABILITY_FLOOR) = 5e299,
#: whatever the distributions. Derivation:
#: Only the alpha divergence can exceed the float64 range. With every ratio p/q at most 1 /
#: PROBABILITY_FLOOR = 1e300, its sum S = sum p (p/q)^(alpha-1) is at most 1e300^(alpha-1) for
#: alpha > 1, so its value is at most B(alpha) = (1e300^(alpha-1) - 1) / (alpha (alpha - 1)); B
#: grows with alpha (its log-derivative is at least 690.8 / 2 - 1 / alpha > 0), so on ``(1, 2]``
#: the value stays below B(2) = 1e300 / 2; the identity D_alpha(p || q) = D_(1-alpha)(q || p)
#: carries that bound to ``[-1, 0)``, and on (0, 1) 1 - S <= alpha KL(q || p) and 1 - S <= (1 -
#: alpha) KL(p || q) (as e^x - 1 >= x) keep it below 1382. Hence
#: :data:`ALPHA_DIVERGENCE_FINITE_RANGE`: for alpha in [-1, 2] every value, for any pair of
#: distributions, is at most 5e299. Outside it the value grows like exp(|alpha| * the largest log-
#: ratio) and exceeds float64 (1.8e308) as soon as some probability is small enough (alpha = 50
#: needs only a ratio p/q of a few million): :func:`information_measure` then returns ``inf``, and
#: :func:`nlgmetrics.infolm.infolm` refuses the setting with an error naming this range (never a
#: clamped number): whether it happens depends on the model's probabilities, not on alpha alone.
ALPHA_DIVERGENCE_FINITE_RANGE = (-1.0, 2.0)

#: [minimum, maximum] of every measure (for any admissible alpha, beta): the divergences but JS are
#: unbounded above, the distances and JS bounded.
MEASURE_RANGES: dict[str, tuple[float, float]] = {
    **dict.fromkeys(INFORMATION_MEASURES, (0.0, math.inf)),
    "l1_distance": (0.0, 2.0),
    "l2_distance": (0.0, math.sqrt(2.0)),
    "l_infinity_distance": (0.0, 1.0),
    "fisher_rao_distance": (0.0, math.pi),
    "js_divergence": (0.0, math.log(2.0)),
}

#: torchmetrics value = TORCHMETRICS_SIGN[measure] * our value (same alpha, beta; both on the same
#: pair of distributions): only its KL and alpha divergences have the opposite sign. js_divergence
#: does not exist in torchmetrics.
TORCHMETRICS_SIGN: dict[str, int] = {
    m: -1 if m in ("kl_divergence", "alpha_divergence") else 1
    for m in INFORMATION_MEASURES if m != "js_divergence"
}

# What the checks below refuse, and why (listed by nlgmetrics.infolm.refusals for the model card).
UNKNOWN_MEASURE_RULE = Refusal(
    ("information_measure",), f"an `information_measure` other than {', '.join(INFORMATION_MEASURES)}",
    "no other measure is implemented")
MISSING_PARAMETER_RULE = Refusal(
    ("alpha", "beta"), "`alpha` left out for the alpha, AB and Rényi divergences, or `beta` for the beta "
    "and AB divergences", "their formulas depend on it and there is no neutral default")
PARAMETER_TYPE_RULE = Refusal(
    ("alpha", "beta"), "an `alpha` or `beta` that is not a finite real number", "the formulas take a number")
EXCLUDED_PARAMETER_RULE = Refusal(
    ("alpha", "beta"), "alpha 0 or 1 (alpha divergence), beta 0 or -1 (beta divergence), alpha, beta or "
    "alpha + beta equal to 0 (AB divergence), alpha <= 0 or alpha = 1 (Rényi divergence)",
    "each formula divides by zero there (the limits at 1 are the KL divergence: use kl_divergence), and a "
    "Rényi 'divergence' of order <= 0 is not a divergence")
PARAMETER_SCALE_RULE = Refusal(
    ("alpha", "beta"), f"|alpha|, |beta| or (AB) |alpha + beta| outside [{MIN_PARAMETER:g}, {MAX_PARAMETER:g}]",
    f"log-probabilities reach {LOG_FLOOR:.1f} and the parameter times them must stay a normal float64")
AB_SCALE_RULE = Refusal(
    ("alpha", "beta"), f"an AB divergence with max(|alpha|, |beta|) < {AB_MIN_SCALE:g}",
    "float64 rounding (about 1e-16 * 690.8 / max(|alpha|, |beta|)) would dominate the value")
ALPHA_OVERFLOW_RULE = Refusal(
    ("alpha", "temperature"), "an alpha divergence whose value exceeds the float64 range (possible only for "
    f"alpha outside [{ALPHA_DIVERGENCE_FINITE_RANGE[0]:g}, {ALPHA_DIVERGENCE_FINITE_RANGE[1]:g}], with "
    "probabilities next to 0, e.g. at a sharp temperature)",
    "there is no number to report (a clamp to the largest float would look like a measurement); alpha in "
    f"[{ALPHA_DIVERGENCE_FINITE_RANGE[0]:g}, {ALPHA_DIVERGENCE_FINITE_RANGE[1]:g}] is finite for every input, "
    "and renyi_divergence is the logarithm of the same sum", WHILE_SCORING)
#: Every rule of this module, in the order the checks apply them.
MEASURE_RULES = (UNKNOWN_MEASURE_RULE, MISSING_PARAMETER_RULE, PARAMETER_TYPE_RULE, EXCLUDED_PARAMETER_RULE,
                 PARAMETER_SCALE_RULE, AB_SCALE_RULE, ALPHA_OVERFLOW_RULE)


def _parameter(name: str, value: object, measure: str) -> float:
    """``alpha`` or ``beta`` of a measure that reads it: a finite real number (numpy scalars too)."""
    if value is None:
        raise MISSING_PARAMETER_RULE.error(
            f"information_measure={measure!r} needs `{name}`; pass e.g. {name}=0.5.")
    with PARAMETER_TYPE_RULE.enforced():
        value = check_real(value, finite=False, message=(
            f"`{name}` must be a real number for information_measure={measure!r}, got {shown_value(value)}; "
            f"pass e.g. {name}=0.5."))
    if not math.isfinite(value):
        raise PARAMETER_TYPE_RULE.error(f"`{name}`={value} is not finite; pass a finite number.")
    return value


def check_measure(
    measure: str, alpha: float | None = None, beta: float | None = None
) -> tuple[float | None, float | None]:
    """Validate ``measure`` and its parameters; return ``(alpha, beta)`` as floats (None if unused).

    Raises ValueError naming the measure, the bad value and the allowed range (the module
    docstring derives the float64 limits).

    >>> check_measure("ab_divergence", 1, 0.5)
    (1.0, 0.5)
    >>> check_measure("fisher_rao_distance", alpha=3)
    (None, None)
    >>> check_measure("alpha_divergence", alpha=1e308)
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: alpha_divergence with alpha=1e+308 is outside what float64 can evaluate: use 1e-300 <= |alpha| <= 1e+300 (log-probabilities reach -690.8, and alpha times them must stay a normal float64).
    """
    if measure not in INFORMATION_MEASURES:
        raise UNKNOWN_MEASURE_RULE.error(f"Unknown information_measure={shown_value(measure)}; "
                                         f"choose one of {list(INFORMATION_MEASURES)}.")
    a = _parameter("alpha", alpha, measure) if measure in NEEDS_ALPHA else None
    b = _parameter("beta", beta, measure) if measure in NEEDS_BETA else None
    if measure == "alpha_divergence" and a in (0.0, 1.0):
        raise EXCLUDED_PARAMETER_RULE.error(
            f"alpha_divergence is undefined for alpha={a:g} (division by alpha*(alpha-1)); "
            f"pass alpha not in {{0, 1}} (for alpha -> 1 use kl_divergence).")
    if measure == "beta_divergence" and b in (0.0, -1.0):
        raise EXCLUDED_PARAMETER_RULE.error(
            f"beta_divergence is undefined for beta={b:g}; pass beta not in {{0, -1}}.")
    if measure == "ab_divergence" and (a == 0.0 or b == 0.0 or a + b == 0.0):
        raise EXCLUDED_PARAMETER_RULE.error(
            f"ab_divergence is undefined for alpha={a:g}, beta={b:g}: alpha, beta and alpha+beta "
            f"must all be non-zero.")
    if measure == "renyi_divergence" and (a <= 0.0 or a == 1.0):
        raise EXCLUDED_PARAMETER_RULE.error(
            f"renyi_divergence is defined for alpha > 0, alpha != 1, got alpha={a:g} "
            f"(alpha <= 0 is not a divergence; for alpha -> 1 use kl_divergence).")
    ab_sum = a + b if measure == "ab_divergence" else None
    for label, value in (("alpha", a), ("beta", b), ("alpha+beta", ab_sum)):
        # Each non-zero parameter (and the AB sum) within what float64 evaluates.
        if value is not None and not MIN_PARAMETER <= abs(value) <= MAX_PARAMETER:
            raise PARAMETER_SCALE_RULE.error(
                f"{measure} with {label}={value:g} is outside what float64 can evaluate: "
                f"use {MIN_PARAMETER:g} <= |{label}| <= {MAX_PARAMETER:g} (log-probabilities reach "
                f"{LOG_FLOOR:.1f}, and {label} times them must stay a normal float64).")
    if measure == "ab_divergence" and max(abs(a), abs(b)) < AB_MIN_SCALE:
        raise AB_SCALE_RULE.error(
            f"ab_divergence with alpha={a:g}, beta={b:g}: float64 rounding (about 1e-16 * 690.8 / "
            f"max(|alpha|, |beta|)) would dominate the value; use max(|alpha|, |beta|) >= {AB_MIN_SCALE:g}.")
    return a, b


def _logs(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return p.clamp_min(PROBABILITY_FLOOR).log(), q.clamp_min(PROBABILITY_FLOOR).log()


def _kl(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    log_p, log_q = _logs(p, q)
    # 0 * log(0 / q) = 0 by convention: the floored log of 0 is finite, times p = 0 gives 0.
    return (p * (log_p - log_q)).sum(-1)


def _weighted_expm1_sum(base: torch.Tensor, log_base: torch.Tensor, exponent: torch.Tensor) -> torch.Tensor:
    """sum base * (exp(exponent) - 1), accurate when it is small: expm1 where |exponent| <= 1
    (no cancellation), exp(log base + exponent) - base elsewhere (no overflow of exp(exponent)
    alone when base is tiny). Only called where the sum itself cannot overflow."""
    small = exponent.abs() <= 1.0
    near = base * torch.expm1(exponent.clamp(-1.0, 1.0))
    far = torch.exp(log_base + exponent) - base
    return torch.where(small, near, far).sum(-1)


def _power_sum(p: torch.Tensor, q: torch.Tensor, a: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log S, S - 1)`` for S = sum p^a q^(1-a) (floored p, q).

    log S by logsumexp (no overflow for |a| <= MAX_PARAMETER). S - 1 without cancellation: with
    r = log p - log q, S - 1 = sum p (exp((a-1) r) - 1) (as sum p = 1; precise for a near 1) or
    sum q (exp(a r) - 1) (as sum q = 1; precise for a near 0), whichever multiplier is smaller;
    ``inf`` where S itself would overflow (log S > 700).
    """
    p_f, q_f = p.clamp_min(PROBABILITY_FLOOR), q.clamp_min(PROBABILITY_FLOOR)
    log_p, log_q = p_f.log(), q_f.log()
    r = log_p - log_q
    log_s = torch.logsumexp(log_p + (a - 1.0) * r, dim=-1)  # a log p + (1 - a) log q
    if abs(a - 1.0) <= abs(a):
        s_minus_1 = _weighted_expm1_sum(p_f, log_p, (a - 1.0) * r)
    else:
        s_minus_1 = _weighted_expm1_sum(q_f, log_q, a * r)
    overflow = log_s > 700.0
    return log_s, torch.where(overflow, torch.full_like(log_s, math.inf), s_minus_1)


def _alpha(p: torch.Tensor, q: torch.Tensor, a: float) -> torch.Tensor:
    log_s, s_minus_1 = _power_sum(p, q, a)
    # Divide twice: a * (a - 1) alone overflows for |a| > 1.3e154.
    direct = s_minus_1 / a / (a - 1.0)
    # S > e^700: (S - 1) / (a (a - 1)) = exp(log S - log|a| - log|a - 1|) (S - 1 = S to 1e-304);
    # reached only where a (a - 1) > 0, and inf when the value itself exceeds float64.
    huge = torch.exp(log_s - math.log(abs(a)) - math.log(abs(a - 1.0)))
    return torch.where(log_s > 700.0, huge, direct)


def _renyi(p: torch.Tensor, q: torch.Tensor, a: float) -> torch.Tensor:
    log_s, s_minus_1 = _power_sum(p, q, a)
    # log1p(S - 1) keeps the digits of log S next to 0 (a near 1, or p near q), where the
    # logsumexp value is only accurate to ~1e-16 absolute; elsewhere logsumexp is as good.
    near = log_s.abs() < 0.5
    log_s = torch.where(near, torch.log1p(torch.where(near, s_minus_1, torch.zeros_like(s_minus_1))), log_s)
    return log_s / (a - 1.0)


def _cumulant_over_t(log_w: torch.Tensor, r: torch.Tensor, t: float) -> torch.Tensor:
    """g(t) = log(sum w exp(-t r)) / t for a distribution w (given by log w), computed with
    log1p / expm1 where |t r| <= 1 everywhere (t -> 0: g -> -sum w r), logsumexp elsewhere.
    g(t) is an average of -r under a tilted w, so |g| <= max |r|."""
    x = -t * r
    small = x.abs().amax(-1) <= 1.0
    w = log_w.exp()
    near = torch.log1p((w * torch.expm1(x.clamp(-1.0, 1.0))).sum(-1))
    far = torch.logsumexp(log_w + x, dim=-1)
    return torch.where(small, near, far) / t


def _ab(p: torch.Tensor, q: torch.Tensor, a: float, b: float) -> torch.Tensor:
    """The AB log-divergence without the cancellation of its three-term form.

    With s = a + b, r = log p - log q and the escort distribution w = p^s / sum p^s, the three
    logarithms share log(sum p^s), which cancels exactly:
    D = (g(s) - g(b)) / a with g(t) = log(sum w exp(-t r)) / t. Swapping (p, a) with (q, b) gives
    the same D (the formula is symmetric under that swap); the form that divides by the larger of
    |a|, |b| is used, so a -> 0, b -> 0 and a + b -> 0 all keep their digits.
    """
    log_p, log_q = _logs(p, q)
    if abs(a) < abs(b):
        log_p, log_q, a, b = log_q, log_p, b, a
    s = a + b
    log_w = torch.log_softmax(s * log_p, dim=-1)
    r = log_p - log_q
    return (_cumulant_over_t(log_w, r, s) - _cumulant_over_t(log_w, r, b)) / a


def _fisher_rao(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    # Rounding can push the Bhattacharyya coefficient a hair above 1; arccos needs [-1, 1].
    return 2.0 * torch.arccos(torch.sqrt(p * q).sum(-1).clamp(0.0, 1.0))


def _js(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    m = 0.5 * (p + q)
    return 0.5 * _kl(p, m) + 0.5 * _kl(q, m)


def information_measure(
    measure: InformationMeasureName | str, reference: torch.Tensor, candidate: torch.Tensor,
    alpha: float | None = None, beta: float | None = None,
) -> torch.Tensor:
    """``measure(p=reference, q=candidate)`` over the last axis, in float64 (see module docstring),
    within :data:`MEASURE_RANGES` (``inf`` only for an alpha divergence beyond float64, possible
    only for alpha outside :data:`ALPHA_DIVERGENCE_FINITE_RANGE`).

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
    low, high = MEASURE_RANGES[measure]
    return functions[measure]().clamp(low, high)
