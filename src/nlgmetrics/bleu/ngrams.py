"""BLEU sufficient statistics: clipped n-gram matches, n-gram totals and lengths.

References of one segment are merged once into the maximum count of each n-gram over the
references (Papineni et al.'s clipping; all orders in one dictionary), plus the list of
reference lengths. A hypothesis then needs one ``Counter`` and one dictionary lookup per
distinct n-gram. Unigrams are kept as plain strings (cheaper to hash than 1-tuples).

>>> ref = reference_stats([["the", "cat", "sat"], ["a", "cat", "sat", "down"]], 2)
>>> segment_stats(["the", "cat", "sat", "down"], ref, 2)
(4, 4, [4, 3], [4, 3])
>>> closest_ref_len(3, [2, 4])
2
"""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain


def all_counts(tokens: Sequence[str], max_order: int) -> Counter:
    """Counts of every n-gram of order 1..``max_order`` in one ``Counter``.

    Unigrams are strings and longer n-grams tuples, so orders never collide; one C-level count
    per text instead of one per order.
    """
    streams = [tokens]
    for n in range(2, max_order + 1):
        if len(tokens) < n:
            break
        streams.append(zip(*(tokens[k:] for k in range(n))))
    return Counter(chain.from_iterable(streams))


@dataclass(frozen=True)
class ReferenceStats:
    """Merged (max over references) n-gram counts, and each reference's length."""

    max_counts: dict
    lengths: tuple[int, ...]


def reference_stats(references: Sequence[Sequence[str]], max_order: int) -> ReferenceStats:
    """Merge the tokenized references of one segment."""
    # Counter's | keeps the larger count of each n-gram (a new Counter: none is modified)
    merged = functools.reduce(operator.or_, (all_counts(tokens, max_order) for tokens in references))
    return ReferenceStats(merged, tuple(len(tokens) for tokens in references))


def closest_ref_len(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """Reference length closest to the hypothesis length; ties go to the shorter reference."""
    return min(ref_lens, key=lambda ref_len: (abs(hyp_len - ref_len), ref_len), default=-1)


def segment_stats(
    tokens: Sequence[str], ref: ReferenceStats, max_order: int
) -> tuple[int, int, list[int], list[int]]:
    """``(hyp_len, closest ref_len, matches per order, hypothesis n-grams per order)``."""
    hyp_len = len(tokens)
    correct = [0] * (max_order + 1)  # index = order; index 0 unused
    ref_counts = ref.max_counts
    if ref_counts:
        get = ref_counts.get
        for gram, count in all_counts(tokens, max_order).items():
            limit = get(gram)
            if limit:
                correct[1 if gram.__class__ is str else len(gram)] += count if count < limit else limit
    total = [max(hyp_len - n + 1, 0) for n in range(1, max_order + 1)]
    return hyp_len, closest_ref_len(hyp_len, ref.lengths), correct[1:], total
