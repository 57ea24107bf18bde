"""BLANC's result, :class:`BlancResult`: one score per example and the counts it came from.

Its own module so that both variants (:mod:`~nlgmetrics.blanc.help`, :mod:`~nlgmetrics.blanc.tune`)
and the entry point that dispatches to them (:mod:`~nlgmetrics.blanc.api`) can import it without
importing each other.

>>> result = BlancResult.from_counts([[[5, 3], [1, 1]], [[0, 0], [0, 0]]], "relative", "blanc")
>>> result.scores, result.main_score
({'blanc': [0.2, 0.0]}, 0.1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from nlgmetrics.blanc.counts import Counts, score_from_counts
from nlgmetrics.blanc.explain import Outcome, blanc_breakdown
from nlgmetrics.core.explanations import TokenBreakdown
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
    #: ``explain=True``: per example ``{"blanc": TokenBreakdown}`` (:mod:`nlgmetrics.blanc.explain`).
    explanations: list[dict[str, TokenBreakdown]] | None = field(default=None, repr=False)

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

    def with_explanations(self, tokenizer: Any, split: Any, summaries: Sequence[str], documents: Sequence[str],
                          outcomes: Sequence[Sequence[Outcome]], variant: str, measure: str) -> BlancResult:
        """This result with its per-token breakdowns (``outcomes[i]``: example i's masked tokens)."""
        return replace(self, explanations=[
            {"blanc": blanc_breakdown(tokenizer, split, summaries[i], documents[i], outcomes[i], variant,
                                      measure, self.scores["blanc"][i], self.signature)}
            for i in range(len(self))])

    def details(self) -> dict[str, Any]:
        """``{"counts": [[[S00, S01], [S10, S11]], ...]}``, one table per example."""
        return {"counts": [[list(row) for row in table] for table in self.counts]}
