"""BLEU: corpus and sentence BLEU with sacrebleu's numbers (tokenizers 13a/intl/char/none/zh,
ja-mecab/ko-mecab with the extras ``nlgmetrics[ja]`` / ``nlgmetrics[ko]``, and spBLEU's
flores101/flores200 with the packages ``sacrebleu`` and ``sentencepiece``).

Public API (stable):

* :func:`bleu` - the metric: corpus BLEU (the headline, 0-100) and sentence BLEU per example,
  as a :class:`BleuResult` (``aggregate()``: ``bleu``, ``bp``, ``ratio``, ``precision_1..N``,
  ``sys_len``, ``ref_len``, mean ``sentence_bleu``; ``scores["sentence_bleu"]``; ``signature``);
* building blocks returning a :class:`BleuScore` (``score`` and ``precisions`` in percent,
  ``bp``, ``sys_len``, ``ref_len``, ``counts``, ``totals``, ``ratio``: sacrebleu's ``BLEUScore``
  fields): :func:`corpus_bleu` and :func:`sentence_bleu`, sacrebleu's functions of the same names
  with sacrebleu's arguments and reference layout (reference *streams*:
  ``corpus_bleu(hypotheses, [refs_a, refs_b])``; a call in the per-example layout is refused with
  an error naming the expected one), and :class:`BleuScorer` (fixed options, references per
  example like :func:`bleu`, caches references across calls; ``corpus()``, ``sentences()`` with
  its own ``effective_order``, ``score()`` = :func:`bleu`); :func:`bleu_from_stats` (BLEU from
  sufficient statistics); :func:`bleu_statistics` / :func:`bleu_from_statistics` (per-example
  statistics and BLEU from their sum: how ``compare`` resamples BLEU);
* :func:`get_tokenizer`, :data:`SMOOTH_METHODS`, :data:`TOKENIZER_NAMES`, :func:`clear_caches`.

>>> bleu(["the cat is on the mat"], [["the cat is on the mat"]]).main_score
100.0
"""

from nlgmetrics.bleu.api import (
    DEFAULT_MAX_NGRAM_ORDER,
    DEFAULT_SMOOTH_METHOD,
    DEFAULT_TOKENIZE,
    SMOOTH_METHODS,
    TOKENIZER_NAMES,
    BleuScorer,
    bleu,
    clear_caches,
    corpus_bleu,
    sentence_bleu,
)
from nlgmetrics.bleu.refusals import RULES, refusals
from nlgmetrics.bleu.result import BleuResult
from nlgmetrics.bleu.score import BleuScore, bleu_from_stats
from nlgmetrics.bleu.statistics import bleu_from_statistics, bleu_statistics
from nlgmetrics.bleu.tokenizers import get_tokenizer

__all__ = [
    "DEFAULT_MAX_NGRAM_ORDER",
    "DEFAULT_SMOOTH_METHOD",
    "DEFAULT_TOKENIZE",
    "RULES",
    "SMOOTH_METHODS",
    "TOKENIZER_NAMES",
    "BleuResult",
    "BleuScore",
    "BleuScorer",
    "bleu",
    "bleu_from_statistics",
    "bleu_from_stats",
    "bleu_statistics",
    "clear_caches",
    "corpus_bleu",
    "get_tokenizer",
    "refusals",
    "sentence_bleu",
]
