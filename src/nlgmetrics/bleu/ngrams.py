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
    merged: dict = {}
    for index, tokens in enumerate(references):
        counts = all_counts(tokens, max_order)
        if index == 0:
            merged = counts
            continue
        if index == 1:
            merged = dict(merged)  # never modify a Counter another segment may share
        get = merged.get
        for gram, count in counts.items():
            if count > get(gram, 0):
                merged[gram] = count
    return ReferenceStats(merged, tuple(len(tokens) for tokens in references))


def closest_ref_len(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """Reference length closest to the hypothesis length; ties go to the shorter reference."""
    best_len = -1
    best_diff = -1
    for ref_len in ref_lens:
        diff = abs(hyp_len - ref_len)
        if best_diff == -1 or diff < best_diff or (diff == best_diff and ref_len < best_len):
            best_diff, best_len = diff, ref_len
    return best_len


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
