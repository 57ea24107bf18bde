"""The corpus-statistics table: how to resample a corpus-level metric.

A corpus-level metric (BLEU, chrF, TER) is not the mean of per-example scores, so resampling
examples means resampling each example's *sufficient statistics* and recomputing the corpus score
from their sum, as sacrebleu's paired tests do. Each entry of :data:`CORPUS_STATISTICS` names two
functions (import paths, resolved lazily, so that a metric package is imported only when used):

- ``statistics(predictions, references, **options) -> ndarray (n, k)``: one row per example;
- ``from_statistics(summed, **options) -> float``: the corpus score from a sum of rows,

where ``options`` are the metric's own options (those of its library function). A metric without
an entry is compared through the mean of one of its per-example columns.

>>> entry = corpus_statistics("bleu")
>>> stats = entry.statistics(["a b c d"], [["a b c d"]])
>>> entry.score(stats.sum(axis=0))
100.0
>>> corpus_statistics("rouge_family") is None
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlgmetrics.apps.registry import resolve as _resolve  # cached: scores are computed per resample


@dataclass(frozen=True)
class CorpusStatistics:
    """How one corpus-level metric is resampled (see the module docstring).

    ``bootstrap_dtype``: the dtype the paired bootstrap sums resampled rows in; ``float32`` is
    what sacrebleu does (``np.array(stats, dtype="float32")``), kept for equal numbers. The
    approximate randomization test sums the rows as :attr:`statistics` returns them (sacrebleu:
    the integer or float statistics unconverted).
    """

    statistics_path: str
    from_statistics_path: str
    bootstrap_dtype: str = "float32"

    def statistics(self, predictions: Sequence[str], others: Sequence[Any], **options: Any) -> np.ndarray:
        """Per-example statistics, a 2-D array (one row per example)."""
        rows = np.asarray(_resolve(self.statistics_path)(predictions, others, **options))
        if rows.ndim != 2 or rows.shape[0] != len(predictions):
            raise ValueError(
                f"{self.statistics_path} returned shape {rows.shape}; expected ({len(predictions)}, k): "
                f"one row of statistics per example. This is a bug in nlgmetrics, please report it."
            )
        return rows

    def score(self, summed: Any, **options: Any) -> float:
        """The corpus score of summed statistics."""
        return float(_resolve(self.from_statistics_path)(summed, **options))


#: Metric name (as in :mod:`nlgmetrics.apps.registry`) -> how to resample it.
CORPUS_STATISTICS: dict[str, CorpusStatistics] = {
    "bleu": CorpusStatistics("nlgmetrics.compare.bleu_statistics:bleu_statistics",
                             "nlgmetrics.compare.bleu_statistics:bleu_from_statistics"),
}

#: Corpus-level metrics whose packages provide the two functions under these names; they are
#: added to :data:`CORPUS_STATISTICS` when their package can be imported.
_PLANNED: Mapping[str, tuple[str, str]] = {
    "chrf": ("nlgmetrics.chrf:chrf_statistics", "nlgmetrics.chrf:chrf_from_statistics"),
    "ter": ("nlgmetrics.ter:ter_statistics", "nlgmetrics.ter:ter_from_statistics"),
}


def register_corpus_statistics(
    metric: str, statistics: str, from_statistics: str, *, bootstrap_dtype: str = "float32"
) -> CorpusStatistics:
    """Add (or replace) the entry of ``metric``: import paths ``"module:function"`` of its
    statistics and from-statistics functions.

    >>> entry = register_corpus_statistics("toy_bleu", "nlgmetrics.compare.bleu_statistics:bleu_statistics",
    ...                                    "nlgmetrics.compare.bleu_statistics:bleu_from_statistics")
    >>> corpus_statistics("toy_bleu") is entry
    True
    >>> _ = CORPUS_STATISTICS.pop("toy_bleu")
    """
    for label, path in (("statistics", statistics), ("from_statistics", from_statistics)):
        if not isinstance(path, str) or ":" not in path:
            raise ValueError(f"{label}={path!r}: give an import path 'package.module:function'.")
    entry = CorpusStatistics(statistics, from_statistics, bootstrap_dtype)
    CORPUS_STATISTICS[metric] = entry
    return entry


def _has_functions(paths: tuple[str, str]) -> bool:
    try:
        for path in paths:
            _resolve(path)
    except (ImportError, AttributeError):
        return False
    return True


def corpus_statistics(metric: str) -> CorpusStatistics | None:
    """The entry of ``metric``, or None for a metric compared through per-example scores.

    A planned entry (chrF, TER) is added the first time it is asked for, if its package provides
    the two functions.
    """
    if metric not in CORPUS_STATISTICS and metric in _PLANNED and _has_functions(_PLANNED[metric]):
        register_corpus_statistics(metric, *_PLANNED[metric])
    return CORPUS_STATISTICS.get(metric)
