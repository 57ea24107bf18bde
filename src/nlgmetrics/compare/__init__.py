"""Paired significance tests between systems, for any metric: "is system A better than B?"

Public API:

* :func:`compare_systems` - every system's score with its 95% bootstrap interval, and each
  system's difference to a baseline with the p-values of the paired bootstrap and of approximate
  randomization (sacrebleu's ``--paired-bs`` / ``--paired-ar``, same seed and counts, same numbers);
* :class:`ComparisonResult`, :class:`SystemScore` - the result (``to_dict()``, ``signature``);
* :func:`format_table`, :func:`write_csv`, :func:`plot` - a text table, a CSV file, a PNG.

Any registered metric can be compared (:mod:`nlgmetrics.registry`); a corpus-level one is resampled
through the sufficient statistics its protocol declares (:class:`~nlgmetrics.core.protocol.Resampling`).

>>> result = compare_systems({"a": ["a b c", "d e f"], "b": ["a b c", "d e f"]}, ["a b c", "d e x"],
...                          metric="rouge_family", n_bootstrap=50, n_permutations=50)
>>> result["b"].delta, result["b"].p_bootstrap, result["b"].p_randomization  # identical systems
(0.0, 1.0, 1.0)
"""

from nlgmetrics.compare.api import compare_systems
from nlgmetrics.compare.result import ComparisonResult, SystemScore
from nlgmetrics.compare.table import format_table, plot, write_csv

__all__ = [
    "ComparisonResult",
    "SystemScore",
    "compare_systems",
    "format_table",
    "plot",
    "write_csv",
]
