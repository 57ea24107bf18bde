"""ROUGE type names (``rouge1``, ``rougeL``, ``rougeSU4``...) and the score columns they give.

A type name is parsed once into a :class:`RougeType`. Each requested type ``T`` gives three
per-example columns: ``T`` (the F-measure), ``T_precision`` and ``T_recall``.

ROUGE-N accepts any order up to :data:`MAX_ROUGE_N`. Counting the n-grams of a text of ``L``
tokens stores ``L - N + 1`` tuples of ``N`` tokens (time and memory ``O(L * N)`` per distinct
text, and every distinct text is cached), and an order above a text's length scores 0 for it.
Published ROUGE stops at N = 4 and n-gram memorisation and contamination checks go up to about
50, so an order above 100 is a typo (``rouge999999999999999999999999999``) that would otherwise
cost minutes or all the memory, not a measurement: it is rejected.

ROUGE-S/SU with a skip distance (``rougeS4``: word pairs at most 4 words apart) accepts any
distance up to :data:`MAX_SKIP_GAP`. A distance at least a text's length counts every pair, as
``rougeS*`` does, and counting all pairs of a text of a million words is already beyond what
ROUGE-S is run on, so a larger number is a typo, rejected with the valid forms (``rougeS*``
for no limit) rather than a failure deep inside Python's integer conversion.

>>> parse_rouge_type("rougeSU4")
RougeType(name='rougeSU4', kind='S', n=0, max_gap=4, unigrams=True)
>>> column_type("rouge2_recall"), column_type("rougeL"), column_type("rougeL_f")
('rouge2', 'rougeL', None)
>>> parse_rouge_type("rouge101")
Traceback (most recent call last):
...
ValueError: rouge type 'rouge101' asks for 101-grams; ROUGE-N accepts n from 1 to 100 (published ROUGE uses n <= 4).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from nlgmetrics.core.validation import check_digits, shown_value

#: The types scored when none are given (rouge-score's and evaluate's usual set).
DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
#: Largest n of ROUGE-N (see the module docstring for why there is one).
MAX_ROUGE_N = 100
#: Largest skip distance of ROUGE-S/SU (see the module docstring).
MAX_SKIP_GAP = 1_000_000
#: Column suffixes of one type (the F-measure column is the bare type name).
MEASURE_SUFFIXES = ("", "_precision", "_recall")

_TYPE_RE = re.compile(r"^rouge(?:(?P<n>[1-9][0-9]*)|(?P<l>L|Lsum|W)|S(?P<su>U?)(?P<gap>[0-9]+|\*)?)$")


@dataclass(frozen=True)
class RougeType:
    """A parsed ROUGE type name (``rouge2``, ``rougeL``, ``rougeLsum``, ``rougeW``, ``rougeSU4``...)."""

    name: str
    kind: str  # "n", "L", "Lsum", "W", "S"
    n: int = 0
    max_gap: int | None = None
    unigrams: bool = False


def parse_rouge_type(name: Any) -> RougeType:
    """Parse one ROUGE type name; raise a ValueError listing the accepted forms."""
    match = _TYPE_RE.match(name) if isinstance(name, str) else None
    if match is None:
        raise ValueError(
            f"Unknown rouge type {shown_value(name)}; use rouge1..rouge{MAX_ROUGE_N} (n-grams), rougeL, rougeLsum, "
            f"rougeW, rougeS* / rougeS4 (skip-bigrams, max gap 4) or rougeSU* / rougeSU4."
        )
    if match.group("n"):
        n = check_digits(match.group("n"), minimum=1, maximum=MAX_ROUGE_N, message=(
            f"rouge type 'rouge{{shown}}' asks for {{shown}}-grams; ROUGE-N accepts n from 1 to "
            f"{MAX_ROUGE_N} (published ROUGE uses n <= 4)."))
        return RougeType(name, "n", n=n)
    if match.group("l"):
        return RougeType(name, match.group("l"))
    gap, su = match.group("gap", "su")
    if gap not in (None, "*"):
        gap = check_digits(gap, maximum=MAX_SKIP_GAP, message=(
            f"rouge type 'rougeS{su}{{shown}}' asks for skip-bigrams up to {{shown}} words apart; ROUGE-S "
            f"accepts rougeS<gap> / rougeSU<gap> with a gap from 0 to {MAX_SKIP_GAP} (rougeS4 and rougeSU4 "
            f"are the usual ones), or rougeS* / rougeSU* for any gap."))
    return RougeType(name, "S", max_gap=None if gap in (None, "*") else gap, unigrams=bool(su))


def column_type(column: str) -> str | None:
    """The ROUGE type a column belongs to (``rouge2_recall`` -> ``rouge2``), None for a name that
    is not a ROUGE column."""
    if not isinstance(column, str):
        return None
    base, _, suffix = column.rpartition("_")
    if not base or f"_{suffix}" not in MEASURE_SUFFIXES:
        base = column
    try:
        parse_rouge_type(base)
    except ValueError:
        return None
    return base


def type_columns(rouge_type: str) -> tuple[str, str, str]:
    """The three columns of one type: F-measure, precision, recall.

    >>> type_columns("rougeL")
    ('rougeL', 'rougeL_precision', 'rougeL_recall')
    """
    return (rouge_type, f"{rouge_type}_precision", f"{rouge_type}_recall")
