"""ROUGE family: ROUGE-N, -L, -Lsum, -W, -S, -SU with rouge-score / ROUGE-1.5.5 numbers.

Public API (stable, ``__all__``):

* :func:`rouge_family` - the metric: per-example columns ``T`` (F-measure), ``T_precision``,
  ``T_recall`` for each requested type ``T``, aggregates with confidence bounds and a signature,
  as a :class:`RougeResult`; :func:`refusals` - what it refuses and why.

Also here, outside ``__all__``: :func:`~nlgmetrics.rouge.tokenize.tokenize` (rouge-score's
tokenizer, optional stemming / stopwords), ``TOKENIZER_NAMES`` (the word splitters of
``tokenizer=``: ``default``, ``whitespace``, ``unicode``, ``cjk``, ``char``),
:func:`~nlgmetrics.rouge.api.rouge_w_weight_limit`, :class:`~nlgmetrics.rouge.scoring.Score`,
:func:`~nlgmetrics.rouge.api.clear_cache`; the types and limits are in :mod:`nlgmetrics.rouge.types`.

Building blocks with their own modules: :mod:`nlgmetrics.rouge.scoring` (P/R/F from match
statistics), :mod:`nlgmetrics.rouge.bootstrap`, :mod:`nlgmetrics.rouge.rouge155` (ROUGE-1.5.5's
printed averages), :mod:`nlgmetrics.rouge.lcs`, :mod:`nlgmetrics.rouge.ngrams`.

>>> rouge_family(["a b c"], ["a b d"], rouge_types=["rouge1"], n_bootstrap=0).scores["rouge1"]
[0.6666666666666666]
"""

from nlgmetrics.rouge.api import rouge_family
from nlgmetrics.rouge.refusals import refusals
from nlgmetrics.rouge.result import RougeResult

# Not in __all__, importable here because the protocol's option choices, the card, the benchmarks
# and the tests name them here; each belongs to the module it is imported from.
from nlgmetrics.rouge.api import AGGREGATIONS, MULTI_REF_MODES, clear_cache, rouge_w_weight_limit
from nlgmetrics.rouge.refusals import RULES
from nlgmetrics.rouge.scoring import Score
from nlgmetrics.rouge.tokenize import tokenize
from nlgmetrics.rouge.tokenizers import TOKENIZER_NAMES

__all__ = [
    "RougeResult",
    "refusals",
    "rouge_family",
]
