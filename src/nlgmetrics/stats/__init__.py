"""The statistics a user calls on their own scores: one module for meta-evaluation and ``compare``.

Correlation with human judgments (a ``[document, system]`` matrix of metric scores against one of
human scores; build both with :func:`pivot`):

- :func:`correlation` at a level (``text``, ``text_sig``, ``pooled``, ``system``), or
  :func:`text_level`, :func:`text_level_significant`, :func:`pooled_level`, :func:`system_level`;
  :func:`correlate` for two vectors (Pearson, Spearman, Kendall tau-b). An undefined correlation
  is ``nan`` with its ``reason`` (``"human scores constant"``, ...), never a silent ``nan``;
- :func:`bootstrap_ci`: percentile interval resampling documents; :func:`paired_bootstrap`: is
  metric A's correlation higher than B's, on the same resamples;
- :func:`williams_test`, :func:`williams_from_scores`: Williams' test of two dependent correlations.

Comparing systems on one test set, with sacrebleu's definitions (used by
:func:`nlgmetrics.compare.compare_systems`, outside ``__all__``): the draws in
:mod:`~nlgmetrics.stats.resampling`, the interval and p-values in
:mod:`~nlgmetrics.stats.significance`.

Modules: :mod:`~nlgmetrics.stats.coefficients` (the three coefficients, many rows at once),
:mod:`~nlgmetrics.stats.correlation`, :mod:`~nlgmetrics.stats.bootstrap`,
:mod:`~nlgmetrics.stats.williams`, :mod:`~nlgmetrics.stats.resampling`,
:mod:`~nlgmetrics.stats.significance`.

>>> from nlgmetrics.stats import correlate
>>> correlate([1, 2, 3], [2, 4, 7], "kendall")
1.0
"""

from nlgmetrics.stats.bootstrap import BootstrapResult, PairedBootstrapResult, bootstrap_ci, paired_bootstrap
from nlgmetrics.stats.correlation import (
    CorrelationResult,
    correlate,
    correlation,
    pivot,
    pooled_level,
    system_level,
    text_level,
    text_level_significant,
)
from nlgmetrics.stats.williams import WilliamsResult, williams_from_scores, williams_test

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
    "pooled_level",
    "system_level",
    "text_level",
    "text_level_significant",
    "williams_from_scores",
    "williams_test",
]
