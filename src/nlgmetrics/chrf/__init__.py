"""chrF and chrF++: character (and word) n-gram F-score with sacrebleu's numbers.

Public API (stable, ``__all__``):

* :func:`chrf` - the metric: corpus chrF (the headline, 0-100) and sentence chrF per example, as
  a :class:`ChrfResult` (``aggregate()``: ``chrf``, mean ``sentence_chrf``;
  ``scores["sentence_chrf"]``; ``signature``); options ``char_order`` (6), ``word_order`` (0;
  2 is chrF++), ``beta`` (2), ``lowercase``, ``whitespace``, ``eps_smoothing``;
* :func:`chrf_plus_plus` - :func:`chrf` with ``word_order=2`` (sacrebleu ``CHRF(word_order=2)``);
* :func:`chrf_statistics` / :func:`chrf_from_statistics` - per-example sufficient statistics
  (summable) and the corpus score from their sums (for paired significance tests);
* :func:`refusals`: what chrF refuses and why.

Also here, outside ``__all__``: :func:`~nlgmetrics.chrf.api.clear_caches`; the defaults are
constants of :mod:`nlgmetrics.chrf.api`.

>>> chrf(["the cat is on the mat"], [["the cat is on the mat"]]).main_score
100.0
"""

from nlgmetrics.chrf.api import chrf, chrf_from_statistics, chrf_plus_plus, chrf_statistics
from nlgmetrics.chrf.refusals import refusals
from nlgmetrics.chrf.result import ChrfResult

# Not in __all__, importable here because the benchmarks and the tests name them here.
from nlgmetrics.chrf.api import clear_caches
from nlgmetrics.chrf.refusals import RULES

__all__ = [
    "ChrfResult",
    "chrf",
    "chrf_from_statistics",
    "chrf_plus_plus",
    "chrf_statistics",
    "refusals",
]
