"""BLANC's result, :class:`BlancResult`: one score per example and the counts it came from.

Its own module so that both variants (:mod:`~nlgmetrics.blanc.help`, :mod:`~nlgmetrics.blanc.tune`)
and the entry point that dispatches to them (:mod:`~nlgmetrics.blanc.api`) can import it without
importing each other.

>>> result = BlancResult.from_counts([[[5, 3], [1, 1]], [[0, 0], [0, 0]]], "relative", "blanc")
>>> result.scores, result.main_score
({'blanc': [0.2, 0.0]}, 0.1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from nlgmetrics.blanc.counts import Counts, score_from_counts
from nlgmetrics.core.result import Column, MetricResult


@dataclass(frozen=True)
class BlancResult(MetricResult):
    """Per-example BLANC scores (column ``blanc``), their counts, and the signature.

    ``counts[i]`` is ``[[S00, S01], [S10, S11]]``: masked tokens by whether they were predicted
    right without (first index) and with (second index) the summary's help (BLANC-help) or the
    summary-tuned model (BLANC-tune).
    """

    metric: ClassVar[str] = "blanc"
    main: ClassVar[str] = "blanc"
    columns: ClassVar[Mapping[str, Column]] = {
        "blanc": Column(True, -1.0, 1.0, "BLANC score: measure 'relative' (S01 - S10) / total in "
                        "[-1, 1], or 'improve' S01 / (S00 + S01 + S11) in [0, 1]; 0 when nothing "
                        "was masked"),
    }

    counts: list[Counts] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.counts) != len(self):
            raise ValueError(f"blanc: {len(self.counts)} count tables for {len(self)} examples")

    @classmethod
    def from_counts(cls, counts: list[Counts], measure: str, signature: str) -> BlancResult:
        """The result of either variant: each example's score is ``measure`` of its counts."""
        return cls(
            scores={"blanc": [score_from_counts(c, measure) for c in counts]},
            signature=signature,
            counts=counts,
        )

    def details(self) -> dict[str, Any]:
        """``{"counts": [[[S00, S01], [S10, S11]], ...]}``, one table per example."""
        return {"counts": [[list(row) for row in table] for table in self.counts]}
