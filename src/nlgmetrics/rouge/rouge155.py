"""ROUGE-1.5.5's printed corpus averages, reproduced exactly (``Average_R/P/F`` and intervals).

The Perl script does not print the plain mean. For each measure it (1) rounds every example's
R and P to 5 decimals and computes F from the *rounded* values, (2) draws ``n_samples`` bootstrap
resamples, resample ``i`` seeded with ``srand(i)`` (Perl's drand48 generator, reproduced here),
over the examples sorted by their ``"<EVAL ID>.<peer>"`` string, (3) prints the mean of the
sorted resampled means and two order statistics as the interval, all rounded to 5 decimals.

This module replays those steps so that published ROUGE-1.5.5 averages can be reproduced without
Perl. EVAL IDs are taken as ``1..N`` in input order (pass ``eval_ids`` otherwise).

>>> avg = rouge155_average([0.5, 1.0], [0.5, 0.5], n_samples=10)
>>> avg["precision"]
{'mean': 0.5, 'low': 0.5, 'high': 0.5}
>>> 0.5 <= avg["recall"]["low"] <= avg["recall"]["mean"] <= avg["recall"]["high"] <= 1.0
True
"""

from __future__ import annotations

from collections.abc import Sequence

from nlgmetrics.core.validation import check_int

_MASK48 = (1 << 48) - 1


def _perl_rand_indices(seed: int, count: int, size: int) -> list[int]:
    """``srand(seed); int(rand(size))`` repeated ``count`` times, as Perl >= 5.20 computes it."""
    state = (0x330E + (seed << 16)) & _MASK48
    out = []
    for _ in range(count):
        state = (state * 0x5DEECE66D + 0xB) & _MASK48
        out.append(int(size * (state / 281474976710656.0)))  # 2**48
    return out


def _round5(value: float) -> float:
    """Perl ``sprintf("%7.5f", x)`` read back as a number."""
    return float(f"{value:.5f}")


def rouge155_average(
    recall: Sequence[float],
    precision: Sequence[float],
    alpha: float = 0.5,
    n_samples: int = 1000,
    confidence: float = 95,
    eval_ids: Sequence[str] | None = None,
) -> dict[str, dict[str, float]]:
    """ROUGE-1.5.5's ``Average_{R,P,F}`` and confidence interval from per-example R and P.

    Args:
        recall, precision: unrounded per-example scores (e.g. the ``T_recall`` and
            ``T_precision`` columns of ``rouge_family(..., multi_ref="average")``).
        alpha: Perl ``-p`` (0.5 = F1).
        n_samples: Perl ``-r`` (default 1000). confidence: Perl ``-c`` in percent (default 95).
        eval_ids: the EVAL ID of each example (default ``"1".."N"``).

    Returns:
        ``{"recall"|"precision"|"fmeasure": {"mean", "low", "high"}}`` as the script prints them.
    """
    n = len(recall)
    if n != len(precision):
        raise ValueError(f"recall has {n} values and precision {len(precision)}; pass one of each per example.")
    message = "n_samples must be >= 1 and confidence within [0, 100] (Perl -r and -c)."
    n_samples = check_int("n_samples", n_samples, minimum=1, message=message)
    if not 0 <= confidence <= 100:
        raise ValueError(message)
    ids = [str(i + 1) for i in range(n)] if eval_ids is None else [str(e) for e in eval_ids]
    rows = []
    for r, p in zip(recall, precision):
        r5, p5 = _round5(r), _round5(p)
        denominator = (1 - alpha) * p5 + alpha * r5
        f5 = _round5((p5 * r5) / denominator) if denominator > 0 else 0.0
        rows.append((r5, p5, f5))
    # Perl sorts the test IDs "<eval>.<peer>" as strings; the peer is the same for all.
    table = [rows[i] for i in sorted(range(n), key=lambda i: f"{ids[i]}.A")]
    samples: list[list[float]] = [[], [], []]
    for seed in range(n_samples):
        sums = [0.0, 0.0, 0.0]
        for index in _perl_rand_indices(seed, n, n):
            for k, value in enumerate(table[index]):
                sums[k] += value  # 0.0 + x is x: the first row's values, as Perl starts its sums
        for k in range(3):
            samples[k].append(sums[k] / n if n else 0.0)
    delta = n_samples * ((100 - confidence) / 2.0) / 100.0
    upper_a = int(n_samples - delta - 1)
    lower_a = int(delta)
    ratio = n_samples - delta - 1 - upper_a
    result = {}
    for k, name in enumerate(("recall", "precision", "fmeasure")):
        # The interpolation may read one past the last resample: Perl reads that undef as 0.
        ranked = [*sorted(samples[k]), 0.0]
        total = 0.0
        for value in ranked[:-1]:  # left to right, as Perl adds (sum() compensates from Python 3.12)
            total += value
        result[name] = {
            "mean": _round5(total / n_samples),
            "low": _round5(ranked[lower_a] + (ranked[lower_a + 1] - ranked[lower_a]) * ratio),
            "high": _round5(ranked[upper_a] + (ranked[upper_a + 1] - ranked[upper_a]) * ratio),
        }
    return result
