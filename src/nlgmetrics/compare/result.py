"""What a comparison returns: every system's score, interval and p-values, and the signature.

>>> row = SystemScore("b", score=31.0, bootstrap_mean=30.9, ci_low=29.0, ci_high=33.0, is_baseline=False,
...                   delta=1.5, p_bootstrap=0.01, p_randomization=0.02)
>>> row.ci_half_width, row.to_dict()["p_randomization"]
(2.0, 0.02)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from nlgmetrics import __version__
from nlgmetrics.core.signature import format_value


@dataclass(frozen=True)
class SystemScore:
    """One system: its score, the bootstrap mean and 95% interval, and (not for the baseline) the
    difference to the baseline with the p-value of each test that was run."""

    name: str
    #: the metric's own number on the whole test set (corpus BLEU; the mean of a per-example column)
    score: float
    #: the mean of the bootstrap scores (sacrebleu's ``μ``)
    bootstrap_mean: float
    #: the 95% bootstrap interval (sorted bootstrap scores at B//40 and B - B//40 - 1)
    ci_low: float
    ci_high: float
    is_baseline: bool
    #: ``score - baseline score`` (None for the baseline)
    delta: float | None = None
    #: paired bootstrap p-value (None for the baseline, or when the test was not run)
    p_bootstrap: float | None = None
    #: approximate randomization p-value (None for the baseline, or when the test was not run)
    p_randomization: float | None = None

    @property
    def ci_half_width(self) -> float:
        """Half the interval's width: sacrebleu's ``± 95% CI``."""
        return 0.5 * (self.ci_high - self.ci_low)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ci_half_width": self.ci_half_width}


@dataclass(frozen=True)
class ComparisonResult:
    """The result of :func:`~nlgmetrics.compare.compare_systems`.

    ``systems`` are in the order given, the baseline among them; ``result["name"]`` is one of them.
    ``signature`` is the metric's signature with the test's settings added before the version
    (``bs``: bootstrap resamples, ``ar``: randomization trials (``none`` when not run),
    ``paired_seed``, ``ties``, and the
    compared ``column`` when it is not the metric's main score): two comparisons with equal
    signatures drew the same resamples.
    """

    metric: str
    #: the metric's main score (``result.main``)
    main: str
    #: the compared score: ``main`` unless another per-example column was asked for
    column: str
    higher_is_better: bool
    baseline: str
    systems: tuple[SystemScore, ...]
    n_examples: int
    n_bootstrap: int
    #: None when approximate randomization was not run
    n_permutations: int | None
    seed: int | None
    count_ties: bool
    tests: tuple[str, ...]
    metric_signature: str
    #: whether ``column`` is a corpus-level score recomputed from resampled statistics (BLEU)
    #: rather than the mean of a per-example column
    corpus_level: bool

    def __getitem__(self, name: str) -> SystemScore:
        for system in self.systems:
            if system.name == name:
                return system
        raise KeyError(f"no system {name!r}; the systems are {[s.name for s in self.systems]}")

    def __iter__(self) -> Iterator[SystemScore]:
        return iter(self.systems)

    def __len__(self) -> int:
        return len(self.systems)

    @property
    def signature(self) -> str:
        fields = self.metric_signature.split("|")
        version = [f for f in fields if f.startswith("version:")]
        fields = [f for f in fields if not f.startswith("version:")]
        # ``paired_seed``, not ``seed``: a metric may have a seed of its own (ROUGE's bootstrap).
        added = {"bs": self.n_bootstrap, "ar": self.n_permutations, "paired_seed": self.seed,
                 "ties": "count" if self.count_ties else "strict"}
        if self.column != self.main:
            added["column"] = self.column
        taken = {field.partition(":")[0] for field in fields} & set(added)
        if taken:
            raise ValueError(f"{self.metric}'s signature already has the key(s) {sorted(taken)}; "
                             f"this is a bug in nlgmetrics, please report it.")
        fields += [f"{key}:{format_value(value)}" for key, value in added.items()]
        return "|".join(fields + (version or [f"version:{__version__}"]))

    def to_dict(self) -> dict[str, Any]:
        """Plain values (JSON-ready)."""
        plain = ("metric", "column", "higher_is_better", "corpus_level", "baseline", "n_examples",
                 "n_bootstrap", "n_permutations", "seed", "count_ties")
        return {**{name: getattr(self, name) for name in plain}, "tests": list(self.tests),
                "signature": self.signature, "metric_signature": self.metric_signature,
                "systems": [system.to_dict() for system in self.systems]}
