"""Meta-evaluation: how well do metric scores agree with human judgments?

- :mod:`nlgmetrics.meta.correlation`: text-level (per document, averaged) and system-level
  Pearson / Spearman / Kendall correlations;
- :mod:`nlgmetrics.meta.coefficients`: the three coefficients for many rows at once (shared by
  the two modules above and below);
- :mod:`nlgmetrics.meta.bootstrap`: confidence intervals resampling documents, paired comparison;
- :mod:`nlgmetrics.meta.williams`: Williams test for two dependent correlations;
- :mod:`nlgmetrics.meta.data`: REALSumm and WebNLG 2020 loaders (via ``datasets``);
- :mod:`nlgmetrics.meta.metrics`, :mod:`nlgmetrics.meta.cache`: the metric runs of the benchmark
  and their on-disk per-example cache;
- :mod:`nlgmetrics.meta.runner`: the benchmark runner (``nlgmetrics meta-eval``).

>>> from nlgmetrics.meta import correlate
>>> correlate([1, 2, 3], [2, 4, 7], "kendall")
1.0
"""

from nlgmetrics.meta.bootstrap import BootstrapResult, PairedBootstrapResult, bootstrap_ci, paired_bootstrap
from nlgmetrics.meta.correlation import (
    CorrelationResult,
    correlate,
    correlation,
    pivot,
    system_level,
    text_level,
)
from nlgmetrics.meta.williams import WilliamsResult, williams_from_scores, williams_test

__all__ = [
    "BootstrapResult",
    "CorrelationResult",
    "PairedBootstrapResult",
    "WilliamsResult",
    "bootstrap_ci",
    "correlate",
    "correlation",
    "paired_bootstrap",
    "pivot",
    "system_level",
    "text_level",
    "williams_from_scores",
    "williams_test",
]
