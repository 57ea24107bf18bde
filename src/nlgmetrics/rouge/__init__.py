"""ROUGE family: ROUGE-N, -L, -Lsum, -W, -S, -SU with rouge-score / ROUGE-1.5.5 numbers.

Public API (stable):

* :func:`rouge_scores` - per-example P/R/F, bootstrap aggregates and a signature.
* :func:`tokenize` - the tokenizer (rouge-score's default, optional stemming / stopwords).
* :func:`parse_rouge_type`, :data:`DEFAULT_ROUGE_TYPES`, :class:`Score`, :func:`clear_cache`.

>>> rouge_scores(["a b c"], ["a b d"], rouge_types=["rouge1"], aggregate=False)["scores"]["rouge1"]["fmeasure"]
[0.6666666666666666]
"""

from nlgmetrics.rouge.api import DEFAULT_ROUGE_TYPES, MULTI_REF_MODES, clear_cache, parse_rouge_type, rouge_scores
from nlgmetrics.rouge.scoring import Score
from nlgmetrics.rouge.tokenize import tokenize

__all__ = [
    "DEFAULT_ROUGE_TYPES",
    "MULTI_REF_MODES",
    "Score",
    "clear_cache",
    "parse_rouge_type",
    "rouge_scores",
    "tokenize",
]
