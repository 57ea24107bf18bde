"""The three Shannon scores of one (document, summary) pair from its raw components (Egan, Vasilyev &
Bohannon, AAAI 2022): the one place they are computed; what they mean, with their formulas, is in
metrics/shannon_score/README.md ("Metric Description").

>>> shannon_ratios(-10.0, -7.0, -4.0, [[5, 3], [1, 1]])
(0.5, 3.0, 0.2)
"""

from __future__ import annotations

from collections.abc import Sequence


def shannon_ratios(
    ll_base: float, ll_help: float, ll_full: float, s: Sequence[Sequence[int]]
) -> tuple[float, float, float]:
    """(Shannon Score, Information Difference, BLANC-Shannon) from the raw components.

    ``s[b][h]`` counts the document tokens predicted right (1) / wrong (0) without (``b``) and with
    (``h``) the summary. Degenerate denominators give 0.0, never NaN: ``ll_full == ll_base``
    (nothing to recover, e.g. an empty document) and an empty ``S`` table.

    >>> shannon_ratios(-10.0, -7.0, -4.0, [[5, 3], [1, 1]])
    (0.5, 3.0, 0.2)
    >>> shannon_ratios(0.0, 0.0, 0.0, [[0, 0], [0, 0]])
    (0.0, 0.0, 0.0)
    """
    information_difference = ll_help - ll_base
    span = ll_full - ll_base
    score = information_difference / span if span != 0 else 0.0
    total = s[0][0] + s[0][1] + s[1][0] + s[1][1]
    blanc = (s[0][1] - s[1][0]) / total if total else 0.0
    # "+ 0.0" turns -0.0 (0 / negative span) into 0.0, so equal inputs print equal results.
    return float(score) + 0.0, float(information_difference) + 0.0, float(blanc) + 0.0
