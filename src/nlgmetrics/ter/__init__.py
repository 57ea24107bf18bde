"""TER (translation edit rate, Snover et al. 2006) with sacrebleu's numbers.

Public API (stable):

* :func:`ter` - the metric: corpus TER (the headline, 0-100+, lower is better) and sentence TER
  per example, as a :class:`TerResult` (``aggregate()``: ``ter``, ``num_edits``, ``ref_length``,
  mean ``sentence_ter``); options ``normalized``, ``no_punct``, ``asian_support``,
  ``case_sensitive``, ``normalize_references_twice`` (sacrebleu's second normalisation of the
  references, off by default: see :mod:`nlgmetrics.ter.api`);
* :func:`ter_statistics` / :func:`ter_from_statistics` - per-example ``[edits, mean reference
  length]`` and the corpus TER of their sums (for paired significance tests);
* :func:`tercom_words` (the normalisation) and :func:`shifted_edits` (the edit count).

>>> ter(["the cat is on the mat"], [["the cat is on the mat"]]).main_score
0.0
"""

from nlgmetrics.ter.api import TerOptions, ter, ter_from_statistics, ter_score, ter_statistics
from nlgmetrics.ter.refusals import RULES, refusals
from nlgmetrics.ter.result import TerResult
from nlgmetrics.ter.shifts import shifted_edits
from nlgmetrics.ter.tokenize import tercom_words

__all__ = ["RULES", "TerOptions", "TerResult", "refusals", "shifted_edits", "ter", "ter_from_statistics",
           "ter_score", "ter_statistics", "tercom_words"]
