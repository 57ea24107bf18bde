"""The result of :func:`nlgmetrics.rouge.rouge_family`: three columns per ROUGE type.

For each requested type ``T`` (``rouge1``, ``rougeL``, ``rougeSU4``...): ``T`` (F-measure),
``T_precision`` and ``T_recall``, one value per example, all in [0, 1], higher is better. The
headline (``main``) is the F-measure of the first requested type.

``aggregate()``: the mean of every column (or, with ``aggregation="rouge155"``, the averages
that ROUGE-1.5.5 prints), then ``<column>_low`` / ``<column>_high``, the confidence interval of
each (absent when ``n_bootstrap=0``).

>>> r = RougeResult(scores={"rouge2": [1.0, 0.5], "rouge2_precision": [1.0, 0.5],
...                         "rouge2_recall": [1.0, 0.5]},
...                 signature="rouge_family|version:0.1.0", rouge_types=("rouge2",),
...                 intervals={"rouge2": (0.5, 1.0)})
>>> r.main, r.main_score, r.aggregate()["rouge2_low"]
('rouge2', 0.75, 0.5)
>>> r.column("rouge2_recall").range_text(), r.column("rougeSU4").higher_is_better
('[0, 1]', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from nlgmetrics.core.result import Column, MetricResult
from nlgmetrics.rouge.types import DEFAULT_ROUGE_TYPES, column_type, type_columns

_MEASURE_WORDS = {"": "F-measure (F-beta)", "precision": "precision", "recall": "recall"}


def describe_column(name: str) -> Column:
    """Direction, range and meaning of one ROUGE column (``T``, ``T_precision``, ``T_recall``); the
    callers pass only names that :func:`~nlgmetrics.rouge.types.column_type` resolves.

    >>> describe_column("rougeLsum_precision").description
    'rougeLsum precision of the prediction against its reference(s)'
    """
    rouge_type = column_type(name)
    words = _MEASURE_WORDS[name[len(rouge_type) + 1:] if name != rouge_type else ""]
    return Column(True, 0.0, 1.0, f"{rouge_type} {words} of the prediction against its reference(s)")


@dataclass(frozen=True)
class RougeResult(MetricResult):
    """Per-example ROUGE columns, their aggregates and the signature (see the module docstring).

    Fields beyond the base: ``rouge_types`` (the requested types, in order), ``intervals``
    (``{column: (low, high)}``, the confidence bounds; empty with ``n_bootstrap=0``) and
    ``averages`` (``{column: value}``, ROUGE-1.5.5's printed averages with
    ``aggregation="rouge155"``, which replace the plain means in :meth:`aggregate`; else empty).
    """

    metric: ClassVar[str] = "rouge_family"
    #: The columns of the default types; :meth:`column` describes the columns of every type.
    columns: ClassVar[Mapping[str, Column]] = {
        name: describe_column(name) for rouge_type in DEFAULT_ROUGE_TYPES for name in type_columns(rouge_type)
    }

    rouge_types: tuple[str, ...] = ()
    intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    averages: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        types = tuple(self.rouge_types) or tuple(dict.fromkeys(column_type(n) for n in self.scores))
        object.__setattr__(self, "rouge_types", types)
        object.__setattr__(self, "intervals", {k: (float(lo), float(hi)) for k, (lo, hi) in self.intervals.items()})
        object.__setattr__(self, "averages", {k: float(v) for k, v in self.averages.items()})

    @property
    def main(self) -> str:  # type: ignore[override]  # per result: the first requested type
        """The F-measure column of the first requested type, e.g. ``rouge1``."""
        return self.rouge_types[0]

    def column(self, name: str) -> Column:
        """Direction and range of any ROUGE column, resolved from its name (the base's KeyError for
        another name)."""
        return describe_column(name) if column_type(name) else super().column(name)

    def aggregate(self) -> dict[str, Any]:
        """Column means (or ROUGE-1.5.5's averages), then each column's ``_low`` and ``_high``."""
        bounds = {f"{name}_{side}": value for name, interval in self.intervals.items()
                  for side, value in zip(("low", "high"), interval)}
        return {**self.mean(), **self.averages, **bounds}
