"""BLEU: corpus and sentence BLEU with sacrebleu's numbers (tokenizers 13a/intl/char/none/zh).

Public API (stable):

* :func:`corpus_bleu`, :func:`sentence_bleu`, :func:`sentence_bleu_batch` -> :class:`BLEUResult`
  (``score`` and ``precisions`` in percent, ``bp``, ``sys_len``, ``ref_len``, ``counts``,
  ``totals``, ``signature``);
* :class:`BleuScorer` - fixed options, caches references across calls (many systems, one test set);
* :func:`get_tokenizer`, :data:`SMOOTH_METHODS`, :data:`TOKENIZER_NAMES`.

>>> round(corpus_bleu(["the cat is on the mat"], [["the cat is on the mat"]]).score, 9)
100.0
"""

from nlgmetrics.bleu.api import (
    SMOOTH_METHODS,
    TOKENIZER_NAMES,
    BleuScorer,
    clear_caches,
    corpus_bleu,
    sentence_bleu,
    sentence_bleu_batch,
)
from nlgmetrics.bleu.score import BLEUResult, bleu_from_stats
from nlgmetrics.bleu.tokenizers import get_tokenizer

__all__ = [
    "BLEUResult",
    "BleuScorer",
    "SMOOTH_METHODS",
    "TOKENIZER_NAMES",
    "bleu_from_stats",
    "clear_caches",
    "corpus_bleu",
    "get_tokenizer",
    "sentence_bleu",
    "sentence_bleu_batch",
]
