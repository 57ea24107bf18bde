"""chrF from sufficient statistics: the character (and word) n-gram F-beta score, 0-100.

``stats`` holds ``[hyp, ref, match]`` for each n-gram order (characters first, then words), for
one sentence or summed over a corpus. Per order, precision ``match / hyp`` and recall
``match / ref`` (an order without n-grams on a side gets ``EPS`` there). Two ways to combine the
orders, as in sacrebleu:

* default (``eps_smoothing=False``, sacrebleu >= 2.0): average precision and recall over the
  *effective* orders (those with n-grams in both hypothesis and reference), then one F-beta,
  ``(1 + beta^2) P R / (beta^2 P + R)``; 0 when no order is effective or nothing matches
  (``beta = 0`` gives the precision ``P``: recall is not weighed);
* ``eps_smoothing=True`` (Popović's chrF++.py, NLTK, Moses): the mean over all orders of each
  order's F-beta, with ``EPS`` for an order whose F-beta is undefined.

The second example by hand: P = (3/4 + 1/3) / 2, R = (3/5 + 1/4) / 2, F = 5PR / (4P + R) = 0.4441.
Operations are done in sacrebleu's order on Python ints and floats, so the numbers are the same
to the last bit.

>>> chrf_score([3, 3, 3, 2, 2, 2], beta=2.0, eps_smoothing=False)
100.0
>>> round(chrf_score([4, 5, 3, 3, 4, 1], beta=2.0, eps_smoothing=False), 4)
44.4132
>>> chrf_score([0, 0, 0, 0, 0, 0], beta=2.0, eps_smoothing=False)
0.0
"""

from __future__ import annotations

from collections.abc import Sequence

#: The value of an undefined precision, recall or per-order F (sacrebleu's and chrF++.py's).
EPS = 1e-16


def chrf_score(stats: Sequence[int], beta: float, eps_smoothing: bool) -> float:
    """chrF (0-100) of one row of ``[hyp, ref, match] * n_orders`` (Python numbers)."""
    factor = beta ** 2
    n_orders = len(stats) // 3
    score = 0.0
    effective = 0
    sum_precision = sum_recall = 0.0
    for k in range(0, 3 * n_orders, 3):
        n_hyp, n_ref, n_match = stats[k], stats[k + 1], stats[k + 2]
        precision = n_match / n_hyp if n_hyp > 0 else EPS
        recall = n_match / n_ref if n_ref > 0 else EPS
        denominator = factor * precision + recall
        score += ((1 + factor) * precision * recall / denominator) if denominator > 0 else EPS
        if n_hyp > 0 and n_ref > 0:
            sum_precision += precision
            sum_recall += recall
            effective += 1
    if eps_smoothing:
        return 100 * score / n_orders
    if effective == 0:
        return 0.0
    precision = sum_precision / effective
    recall = sum_recall / effective
    if not precision + recall:
        return 0.0
    return 100 * ((1 + factor) * precision * recall / ((factor * precision) + recall))
