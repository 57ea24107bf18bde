"""ROUGE family: ROUGE-N, -L, -Lsum, -W, -S, -SU with rouge-score / ROUGE-1.5.5 numbers.

Public API (stable):

* :func:`rouge_family` - the metric: per-example columns ``T`` (F-measure), ``T_precision``,
  ``T_recall`` for each requested type ``T``, aggregates with confidence bounds and a signature,
  as a :class:`RougeResult`.
* :func:`tokenize` - the tokenizer (rouge-score's default, optional stemming / stopwords);
  :data:`TOKENIZER_NAMES` - the named word splitters of ``tokenizer=`` (``default``,
  ``whitespace``, ``unicode``, ``cjk``, ``char``; :mod:`nlgmetrics.rouge.tokenizers`).
* :func:`parse_rouge_type`, :data:`DEFAULT_ROUGE_TYPES`, :data:`MAX_ROUGE_N`,
  :data:`MAX_SKIP_GAP`,  :func:`rouge_w_weight_limit`, :class:`Score`, :func:`clear_cache`.

Building blocks with their own modules: :mod:`nlgmetrics.rouge.scoring` (P/R/F from match
statistics), :mod:`nlgmetrics.rouge.bootstrap`, :mod:`nlgmetrics.rouge.rouge155` (ROUGE-1.5.5's
printed averages), :mod:`nlgmetrics.rouge.lcs`, :mod:`nlgmetrics.rouge.ngrams`.

>>> rouge_family(["a b c"], ["a b d"], rouge_types=["rouge1"], n_bootstrap=0).scores["rouge1"]
[0.6666666666666666]
"""

from nlgmetrics.rouge.api import (
    AGGREGATIONS,
    MULTI_REF_MODES,
    ROUGE_W_NORMALIZATIONS,
    clear_cache,
    rouge_family,
    rouge_w_weight_limit,
)
from nlgmetrics.rouge.refusals import RULES, refusals
from nlgmetrics.rouge.result import RougeResult
from nlgmetrics.rouge.scoring import Score
from nlgmetrics.rouge.tokenize import tokenize
from nlgmetrics.rouge.tokenizers import TOKENIZER_NAMES
from nlgmetrics.rouge.types import DEFAULT_ROUGE_TYPES, MAX_ROUGE_N, MAX_SKIP_GAP, RougeType, parse_rouge_type

__all__ = [
    "AGGREGATIONS",
    "DEFAULT_ROUGE_TYPES",
    "MAX_ROUGE_N",
    "MAX_SKIP_GAP",
    "MULTI_REF_MODES",
    "ROUGE_W_NORMALIZATIONS",
    "RULES",
    "TOKENIZER_NAMES",
    "RougeResult",
    "RougeType",
    "Score",
    "clear_cache",
    "parse_rouge_type",
    "refusals",
    "rouge_family",
    "rouge_w_weight_limit",
    "tokenize",
]
