"""TER (translation edit rate, Snover et al. 2006) with sacrebleu's numbers.

Public API (stable, ``__all__``):

* :func:`ter` - the metric: corpus TER (the headline, 0-100+, lower is better) and sentence TER
  per example, as a :class:`TerResult` (``aggregate()``: ``ter``, ``num_edits``, ``ref_length``,
  mean ``sentence_ter``); options ``normalized``, ``no_punct``, ``asian_support``,
  ``case_sensitive``, ``normalize_references_twice`` (sacrebleu's second normalisation of the
  references, off by default: see :mod:`nlgmetrics.ter.api`);
* :func:`ter_statistics` / :func:`ter_from_statistics` - per-example ``[edits, mean reference
  length]`` and the corpus TER of their sums (for paired significance tests);
* :func:`refusals` - what TER refuses and why.

Also here, outside ``__all__``: :func:`~nlgmetrics.ter.tokenize.tercom_words` (the
normalisation) and :func:`~nlgmetrics.ter.shifts.shifted_edits` (the edit count).

>>> ter(["the cat is on the mat"], [["the cat is on the mat"]]).main_score
0.0
"""

from nlgmetrics.ter.api import ter, ter_from_statistics, ter_statistics
from nlgmetrics.ter.refusals import refusals
from nlgmetrics.ter.result import TerResult

# Not in __all__, importable here because the tests name them here; each belongs to the module
# it is imported from.
from nlgmetrics.ter.refusals import RULES
from nlgmetrics.ter.shifts import shifted_edits
from nlgmetrics.ter.tokenize import tercom_words

__all__ = ["TerResult", "refusals", "ter", "ter_from_statistics", "ter_statistics"]
