"""The result every metric returns (:class:`MetricResult`), one rule for every metric:

- ``result.scores``: ``{column: [float, ...]}``, one value per example, in input order;
- ``result.mean()``: a ``dict`` of floats, the mean of every column;
- ``result.aggregate()``: the headline numbers, a ``dict`` of floats: ``mean()`` for a metric
  defined per example; a corpus-level metric (BLEU) or one with confidence intervals (ROUGE) adds
  or replaces entries, documented on its result class;
- ``result.main`` names the headline entry of ``aggregate()``; ``result.main_score`` is its value;
- ``result.signature``: every option that changes the numbers (:mod:`nlgmetrics.core.signature`);
- ``result.column(name)``: a :class:`Column` (higher or lower is better, the range);
- ``result.to_dict()``: plain lists and numbers (JSON-ready).

Values are plain Python floats and always finite: a NaN or an infinity fails loudly here instead
of returning a plausible wrong number.

>>> from typing import ClassVar
>>> class ToyResult(MetricResult):
...     metric: ClassVar[str] = "toy"
...     main: ClassVar[str] = "toy"
...     columns: ClassVar[dict[str, Column]] = {"toy": Column(True, 0.0, 1.0, "a toy score")}
>>> r = ToyResult(scores={"toy": [0.5, 1]}, signature="toy|version:0.1.0")
>>> r.mean(), r.main_score, r.column("toy").higher_is_better
({'toy': 0.75}, 0.75, True)
>>> ToyResult(scores={"toy": [float("nan")]}, signature="toy")
Traceback (most recent call last):
...
FloatingPointError: toy: column 'toy' is nan at example 0; this is a bug in nlgmetrics, please report it with the inputs and options.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class Column:
    """What one per-example column means."""

    higher_is_better: bool
    minimum: float  #: smallest possible value (``-math.inf`` when unbounded)
    maximum: float  #: largest possible value (``math.inf`` when unbounded)
    description: str

    def range_text(self) -> str:
        """The range as an interval, e.g. ``[0, 1]`` or ``(-inf, inf)``."""
        low = "(-inf" if math.isinf(self.minimum) else f"[{self.minimum:g}"
        high = "inf)" if math.isinf(self.maximum) else f"{self.maximum:g}]"
        return f"{low}, {high}"


def exact_mean(values: Sequence[float]) -> float:
    """Exact (``math.fsum``) mean of ``values``; 0.0 when empty. Finite values always give a
    finite mean: where their sum would overflow, each value is divided by the count first (the
    mean of values up to the largest float is itself at most the largest float).

    >>> exact_mean([0.5, 1.0, 0.0]), exact_mean([]), exact_mean([1.7e308, 1.7e308]) == 1.7e308
    (0.5, 0.0, True)
    """
    if not values:
        return 0.0
    try:
        total = math.fsum(values)
    except OverflowError:  # an intermediate partial sum left the float range
        total = math.inf
    if math.isfinite(total):
        return total / len(values)
    # Scale by a power of two (exact) so that the sum of n values cannot overflow, divide, scale back.
    scale = 2.0 ** -(math.ceil(math.log2(len(values))) + 1)
    mean = math.fsum(v * scale for v in values) / len(values) / scale
    return math.copysign(min(abs(mean), sys.float_info.max), mean)


@dataclass(frozen=True)
class MetricResult:
    """Base of every metric's result (see the module docstring).

    Subclasses set the class attributes ``metric`` (registered name), ``main`` (headline key of
    :meth:`aggregate`) and ``columns`` (``{name: Column}``), add their own detail fields (after
    ``signature``, with defaults), and may extend :meth:`aggregate` and :meth:`details`.
    """

    scores: Mapping[str, list[float]]
    signature: str

    metric: ClassVar[str] = ""
    main: ClassVar[str] = ""
    columns: ClassVar[Mapping[str, Column]] = {}

    def __post_init__(self) -> None:
        scores: dict[str, list[float]] = {}
        for name, values in self.scores.items():
            self.column(name)  # an undeclared column is a programming error
            floats = [float(v) for v in values]
            for index, value in enumerate(floats):
                if not math.isfinite(value):
                    raise FloatingPointError(
                        f"{self.metric}: column {name!r} is {value} at example {index}; this is a bug "
                        f"in nlgmetrics, please report it with the inputs and options."
                    )
            scores[name] = floats
        lengths = {len(floats) for floats in scores.values()}
        if len(lengths) > 1:
            raise ValueError(f"{self.metric}: columns of different lengths {sorted(lengths)}")
        object.__setattr__(self, "scores", scores)

    def __len__(self) -> int:
        """Number of examples."""
        return len(next(iter(self.scores.values()), []))

    def column(self, name: str) -> Column:
        """Direction and range of column ``name``."""
        try:
            return self.columns[name]
        except KeyError:
            raise KeyError(f"{self.metric} has no column {name!r}; its columns: {list(self.scores)}") from None

    def mean(self) -> dict[str, float]:
        """Mean of every per-example column."""
        return {name: exact_mean(values) for name, values in self.scores.items()}

    def aggregate(self) -> dict[str, float]:
        """The headline numbers (``main`` among them); the column means unless a metric says otherwise."""
        return self.mean()

    @property
    def main_score(self) -> float:
        """``aggregate()[main]``: the one number to report."""
        return self.aggregate()[self.main]

    @property
    def higher_is_better(self) -> bool:
        """Direction of the headline number."""
        return self.column(self.main).higher_is_better

    def details(self) -> dict[str, Any]:
        """Per-example detail beyond the score columns (counts, token numbers), as plain values."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain lists and numbers."""
        return {
            "metric": self.metric,
            "main": self.main,
            "aggregate": self.aggregate(),
            "scores": {name: list(values) for name, values in self.scores.items()},
            "details": self.details(),
            "signature": self.signature,
        }
