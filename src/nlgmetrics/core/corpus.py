"""What the corpus-level metrics with references (BLEU, chrF, TER) share, declared once.

Such a metric scores each example against its references, sums per-example sufficient statistics
over the corpus and computes one headline number from the sums (not the mean of the sentence
scores). The shared pieces:

- :func:`declared_options`: the options given to a metric, over the defaults its options class
  declares (a frozen dataclass, one field per option), unknown names refused;
- :func:`score_examples`: the inputs checked (:func:`~nlgmetrics.core.validation.check_reference_inputs`),
  one value per example from a per-example function, and the reference count of the signature;
- :func:`reference_count`: the signature's ``nrefs``, sacrebleu's convention (the number of
  references per example, or ``"var"`` when it varies);
- :func:`check_summed_statistics` and :func:`score_rows`: the corpus score from statistics summed
  over the examples (one row), or from many such sums at once (one per resample);
- :class:`CorpusResult`: a result whose headline is that corpus number, with its own direction
  and range, and whose detail fields are tuples of plain Python numbers.

>>> values, nrefs = score_examples(lambda p, refs: len(refs), ["a", "b"], [["a", "x"], "b"])
>>> values, nrefs
([2, 1], 'var')
>>> score_rows(check_summed_statistics([[1, 2], [3, 4]], 2, layout="[a, b]", source="toy_statistics"), sum).tolist()
[3.0, 7.0]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from nlgmetrics.core.result import Column, MetricResult
from nlgmetrics.core.validation import check_reference_inputs

T = TypeVar("T")

#: Largest n-gram order of BLEU (``max_ngram_order``) and chrF (``char_order``, ``word_order``),
#: as of ROUGE-N (``rouge.MAX_ROUGE_N``): published scores use 4 (BLEU) and 6 (chrF), and a far
#: larger order is a typo that would cost minutes or all the memory (every order is counted).
MAX_NGRAM_ORDER = 100


def declared_options(options_class: type, given: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """Every field of the dataclass ``options_class`` (the metric's options, declared once with
    their defaults) with its value from ``given`` or its default, in declaration order; a name in
    ``given`` that is not a field is a TypeError naming the ``metric``'s options. The values are
    returned unchecked.

    >>> @dataclass(frozen=True)
    ... class ToyOptions:
    ...     order: int = 4
    ...     lowercase: bool = False
    >>> declared_options(ToyOptions, {"lowercase": True}, "toy")
    {'order': 4, 'lowercase': True}
    >>> declared_options(ToyOptions, {"tokenize": "13a"}, "toy")
    Traceback (most recent call last):
    ...
    TypeError: unexpected keyword argument 'tokenize': the options of toy are ['order', 'lowercase'].
    """
    fields = dataclasses.fields(options_class)
    names = [f.name for f in fields]
    unknown = [name for name in given if name not in names]
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}: the options of {metric} are {names}.")
    return {f.name: given.get(f.name, f.default) for f in fields}


def reference_count(references: Sequence[Sequence[str]]) -> int | str:
    """The signature's ``nrefs``: the number of references of every example, or ``"var"`` when
    examples have different numbers (sacrebleu's convention).

    >>> reference_count([["a"], ["b"]]), reference_count([["a", "b"], ["c"]])
    (1, 'var')
    """
    counts = {len(refs) for refs in references}
    return counts.pop() if len(counts) == 1 else "var"


def score_examples(
    score_one: Callable[[str, list[str]], T], predictions: Any, references: Any
) -> tuple[list[T], int | str]:
    """``([score_one(prediction, its references) for each example], nrefs)``.

    The inputs are checked first (a clear error for a bad shape or type); each example's
    references reach ``score_one`` as a non-empty list of strings (a single string is one
    reference). ``nrefs`` is :func:`reference_count` of the checked references.
    """
    preds, refs = check_reference_inputs(predictions, references)
    return [score_one(p, r) for p, r in zip(preds, refs)], reference_count(refs)


def check_summed_statistics(summed_stats: Any, width: int, *, layout: str, source: str,
                            values: str = "numbers", name: str = "summed_stats") -> np.ndarray:
    """``summed_stats`` as an array of shape ``(width,)`` (one corpus) or ``(n, width)`` (one
    summed row per resample), holding finite non-negative integers or floats; else a ValueError
    naming the expected ``layout`` and the function (``source``) whose rows sum to it. ``values``
    names what the entries are in the error (e.g. ``"counts"``), ``name`` the argument.

    Every metric scored from summed statistics (BLEU, chrF, TER) checks them here: a negative or
    NaN entry would otherwise reach a logarithm or a division ("math domain error", or a silently
    wrong number).

    >>> check_summed_statistics([1, 2, 3], 2, layout="[edits, reference length]", source="ter_statistics")
    Traceback (most recent call last):
    ...
    ValueError: summed_stats has shape (3,); expected (2,) or (n, 2): [edits, reference length], e.g. ter_statistics(...).sum(axis=0) with the same options.
    >>> check_summed_statistics([[1, 2], [3]], 2, layout="[a, b]", source="toy_statistics", name="summed")
    Traceback (most recent call last):
    ...
    ValueError: summed is not a table of numbers (rows of different lengths?); expected (2,) or (n, 2): [a, b], e.g. toy_statistics(...).sum(axis=0) with the same options.
    """
    expected = f"expected ({width},) or (n, {width}): {layout}, e.g. {source}(...).sum(axis=0) with the same options."
    try:
        array = np.asarray(summed_stats)
    except (ValueError, TypeError):  # ragged rows: numpy's own message names no argument
        raise ValueError(f"{name} is not a table of numbers (rows of different lengths?); {expected}") from None
    if array.ndim not in (1, 2) or array.shape[-1] != width:
        raise ValueError(f"{name} has shape {array.shape}; {expected}")
    # A bool array is neither integer nor floating to numpy, so it is refused here too; so is an
    # object array (e.g. integers beyond int64).
    numeric = np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    if not numeric or not np.isfinite(array).all() or (array < 0).any():
        raise ValueError(f"{name} must hold finite non-negative {values} (sums of {source} rows).")
    return array


def score_rows(array: np.ndarray, score: Callable[[list[Any]], float]) -> float | np.ndarray:
    """``score`` of a 1-D array of summed statistics (a float), or of each row of a 2-D one (a
    float64 array). ``score`` receives plain Python numbers (``tolist``), so integer counts stay
    ints, as in the unresampled corpus score."""
    if array.ndim == 1:
        return score(array.tolist())
    return np.array([score(row) for row in array.tolist()], dtype=np.float64)


@dataclass(frozen=True)
class CorpusResult(MetricResult):
    """A result whose headline (``aggregate()[main]``) is one corpus-level number, computed from
    statistics summed over the examples, rather than the mean of a per-example column.

    Subclasses set, besides the base's class attributes:

    - ``corpus_column``: what the headline means (direction, range), returned by
      ``column(main)``;
    - ``plain_tuples``: ``{field: int or float}``, their tuple fields, stored as tuples of plain
      Python numbers whatever sequence (of numpy scalars, say) was passed.
    """

    corpus_column: ClassVar[Column]
    plain_tuples: ClassVar[Mapping[str, type]] = {}

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, kind in self.plain_tuples.items():
            object.__setattr__(self, name, tuple(kind(v) for v in getattr(self, name)))

    def column(self, name: str) -> Column:
        """Direction and range of a column, or of the corpus headline ``main``."""
        return self.corpus_column if name == self.main else super().column(name)
