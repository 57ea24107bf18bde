"""BLEU from n-gram counts (:meth:`BleuScore.from_counts`): brevity penalty, smoothing, effective order.

Smoothing methods (Chen & Cherry 2014, as named by sacrebleu):

* ``none``  - a zero precision makes BLEU 0 (``log 0`` is floored at -9999999999, so the score is
  0.0 up to float underflow, never NaN);
* ``floor`` - a zero match count is replaced by ``smooth_value`` (default 0.1);
* ``add-k`` - ``smooth_value`` (default 1) is added to matches and totals for orders >= 2;
* ``exp``   - the k-th zero-match order gets precision ``1 / (2**k * total)`` (NIST / mteval).

With ``effective_order`` the geometric mean stops at the highest order that has any hypothesis
n-gram (for sentence BLEU of short segments). Scores and precisions are percentages (0-100),
like sacrebleu.

>>> r = BleuScore.from_counts([3, 1, 0, 0], [3, 2, 1, 0], sys_len=3, ref_len=4, smooth_method="none")
>>> r.score, round(r.bp, 4)
(0.0, 0.7165)
>>> BleuScore.from_counts([3, 2, 1], [3, 2, 1], 3, 3, max_order=3).score
100.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1.0, "exp": None}
_LOG_ZERO = -9999999999.0  # sacrebleu's floor for log(0)


@dataclass(frozen=True)
class BleuScore:
    """One BLEU value (a corpus, or one sentence) with the statistics it was computed from.

    ``score`` and ``precisions`` are percentages (0-100). ``counts``/``totals`` are the raw
    matched and hypothesis n-gram counts per order (before any add-k smoothing). This is the
    building block; the metric's result, with the signature, is
    :class:`nlgmetrics.bleu.result.BleuResult`.
    """

    score: float
    precisions: list[float]
    bp: float
    sys_len: int
    ref_len: int
    counts: list[int]
    totals: list[int]

    @property
    def ratio(self) -> float:
        """Hypothesis / reference length (0 when the reference length is 0)."""
        return self.sys_len / self.ref_len if self.ref_len else 0.0

    @classmethod
    def from_counts(
        cls,
        correct: Sequence[int],
        total: Sequence[int],
        sys_len: int,
        ref_len: int,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        effective_order: bool = False,
        max_order: int | None = None,
    ) -> BleuScore:
        """BLEU (0-100) from matches and totals per order and the two corpus lengths (sacrebleu's
        ``BLEU.compute_bleu``). The options are not checked here: every caller passes a
        :class:`~nlgmetrics.bleu.api.BleuScorer`'s validated ones. The public way to score summed
        statistics is :func:`nlgmetrics.bleu.bleu_from_statistics`.

        A perfect score is 100.0: in floating point ``exp(log(100))`` is 100.00000000000004 (what
        sacrebleu returns); the score is capped at 100 so that it stays in its documented range.
        """
        order = len(correct) if max_order is None else max_order
        value = SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else smooth_value
        bp = 1.0 if sys_len >= ref_len else math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
        precisions = [0.0] * order
        raw_counts, raw_totals = list(correct), list(total)
        if not any(correct):
            return cls(0.0, precisions, bp, sys_len, ref_len, raw_counts, raw_totals)
        halvings = 1.0
        used_order = order
        for n in range(1, order + 1):
            matched, count = correct[n - 1], total[n - 1]
            if smooth_method == "add-k" and n > 1:
                matched += value
                count += value
            if count == 0:
                break
            if effective_order:
                used_order = n
            if matched == 0:
                if smooth_method == "exp":
                    halvings *= 2
                    precisions[n - 1] = 100.0 / (halvings * count)
                elif smooth_method == "floor":
                    precisions[n - 1] = 100.0 * value / count
            else:
                precisions[n - 1] = 100.0 * matched / count
        log_sum = sum(math.log(p) if p != 0.0 else _LOG_ZERO for p in precisions[:used_order])
        score = min(bp * math.exp(log_sum / used_order), 100.0)
        return cls(score, precisions, bp, sys_len, ref_len, raw_counts, raw_totals)
