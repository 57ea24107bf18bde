"""N-gram and skip-bigram counts, and their clipped overlap (ROUGE-N, ROUGE-S, ROUGE-SU).

Counting is done by ``collections.Counter`` over ``zip`` iterators (C speed); the counts of each
distinct text are computed once per call by the caller and reused for every pair it appears in.

>>> ngram_counts(("a", "b", "a", "b"), 2)[("a", "b")]
2
>>> overlap(ngram_counts(("a", "b", "c"), 1), ngram_counts(("a", "a", "c"), 1))
2
>>> sorted(skip_bigram_counts(("a", "b", "c"), max_gap=0))
[('a', 'b'), ('b', 'c')]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def ngram_counts(tokens: Sequence[str], n: int) -> Counter:
    """Counts of the contiguous ``n``-grams (as tuples; unigrams as plain tokens)."""
    if n == 1:
        return Counter(tokens)
    if n > len(tokens):  # no n-gram; and no n slices of the text to build first
        return Counter()
    return Counter(zip(*(tokens[k:] for k in range(n))))


def skip_bigram_counts(tokens: Sequence[str], max_gap: int | None = None, unigrams: bool = False) -> Counter:
    """Counts of ordered word pairs at most ``max_gap`` words apart (None: any gap).

    Follows ROUGE-1.5.5 ``createSkipBigram`` exactly, including one quirk of the reference:
    with ``unigrams=True`` (ROUGE-SU) the unigram of the *last* token is not counted (the Perl
    loop stops one token early), so a one-word text has no ROUGE-SU units at all.
    """
    counts: Counter = Counter()
    n = len(tokens)
    if unigrams and n > 1:
        counts.update(tokens[: n - 1])
    span = n if max_gap is None or max_gap < 0 else max_gap + 1
    for offset in range(1, min(span, n - 1) + 1):
        counts.update(zip(tokens, tokens[offset:]))
    return counts


def overlap(reference: Counter, prediction: Counter) -> int:
    """Clipped matches: sum over units of min(count in reference, count in prediction)."""
    if len(prediction) < len(reference):
        reference, prediction = prediction, reference
    hits = 0
    get = prediction.get
    for unit, count in reference.items():
        other = get(unit)
        if other:
            hits += count if count < other else other
    return hits

