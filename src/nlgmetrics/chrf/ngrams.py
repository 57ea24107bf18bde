"""chrF sufficient statistics: character and word n-gram counts, and their matches.

A text becomes one set of n-gram occurrences per order (:func:`_occurrences`): character
orders ``1..char_order`` first (the text without whitespace, or as it is with
``whitespace=True``), then word orders ``1..word_order`` (chrF++: words split on whitespace,
with one ASCII punctuation mark split off the end, or else the start, of every word longer than
one character, as in Popović's ``chrF++.py``). A hypothesis against one reference gives, per
order, the triple ``(hypothesis n-grams, reference n-grams, matches)``; the hypothesis count is 0
where the reference has no n-gram of that order (sacrebleu's convention: no hits without a
reference).

Matches are the clipped counts ``min(hyp[g], ref[g])`` summed over the n-grams both texts share,
computed as the size of the intersection of two sets of n-gram occurrences (one C-level operation
per order; see :func:`_occurrences`).

>>> grams = text_ngrams("ab a", char_order=2, word_order=1, whitespace=False)
>>> sorted(grams.occurrences[0], key=str), grams.totals
([('a', 2), 'a', 'b'], (3, 2, 2))
>>> pair_statistics(text_ngrams("ab", 2, 0, False), text_ngrams("abc", 2, 0, False))
[2, 3, 2, 1, 2, 1]
>>> split_punctuation("Hello, (world) it's 3.")
['Hello', ',', '(world', ')', "it's", '3', '.']
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import compress

#: ASCII punctuation (``string.punctuation``) that chrF++ splits off words.
PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_ONE = 1


def split_punctuation(text: str) -> list[str]:
    """Words of ``text`` for chrF++'s word n-grams: whitespace split, then one punctuation mark
    separated from the end of each word longer than one character, or else from its start."""
    words: list[str] = []
    for word in text.split():
        if len(word) > 1 and word[-1] in PUNCTUATION:
            words += (word[:-1], word[-1])
        elif len(word) > 1 and word[0] in PUNCTUATION:
            words += (word[0], word[1:])
        else:
            words.append(word)
    return words


def _occurrences(grams: list) -> frozenset:
    """The n-grams of one order as a set of *occurrences*: an n-gram seen ``k`` times is present
    as itself and as ``(gram, 2)`` .. ``(gram, k)``. The clipped match count
    ``sum(min(hyp[g], ref[g]))`` of two such sets is then the size of their intersection (the
    occurrences ``1..min`` are in both), one C-level operation instead of a loop over n-grams.
    The tags are tuples ending in an int, so they never equal an n-gram (a str, or a tuple of str).
    """
    distinct = frozenset(grams)
    if len(distinct) == len(grams):
        return distinct
    counts = Counter(grams)
    # The repeated n-grams are usually few: select them without a Python-level loop over all.
    repeated = compress(counts.keys(), map(_ONE.__lt__, counts.values()))
    return distinct.union([(gram, k) for gram in repeated for k in range(2, counts[gram] + 1)])


def _char_grams(line: str, order: int) -> list[list[str]]:
    length = len(line)
    return [[line[i:i + n] for i in range(length - n + 1)] for n in range(1, order + 1)]


def _word_grams(words: list[str], order: int) -> list[list]:
    # Tuples: words contain no whitespace, so a tuple is as exact as sacrebleu's ' '-joined key.
    return [list(words) if n == 1 else list(zip(*(words[k:] for k in range(n)))) for n in range(1, order + 1)]


@dataclass(frozen=True)
class TextNgrams:
    """The n-grams of one (pre-processed) text: per order, the set of occurrences (see
    :func:`_occurrences`), and the number of n-grams of that order."""

    occurrences: tuple[frozenset, ...]
    totals: tuple[int, ...]


def text_ngrams(text: str, char_order: int, word_order: int, whitespace: bool) -> TextNgrams:
    """Character n-grams of orders ``1..char_order`` then word n-grams ``1..word_order``."""
    line = text if whitespace else "".join(text.split())
    grams = _char_grams(line, char_order)
    if word_order:
        grams += _word_grams(split_punctuation(text), word_order)
    return TextNgrams(tuple(map(_occurrences, grams)), tuple(map(len, grams)))


def pair_statistics(hypothesis: TextNgrams, reference: TextNgrams) -> list[int]:
    """``[hyp, ref, match]`` per order, flattened (``3 * n_orders`` integers)."""
    stats: list[int] = []
    for hyp, ref, hyp_total, ref_total in zip(hypothesis.occurrences, reference.occurrences,
                                              hypothesis.totals, reference.totals):
        stats += (hyp_total if ref_total else 0, ref_total, len(hyp & ref))
    return stats
