"""BLEU: corpus and sentence BLEU with sacrebleu's numbers (tokenizers 13a/intl/char/none/zh,
ja-mecab/ko-mecab with the extras ``nlgmetrics[ja]`` / ``nlgmetrics[ko]``, and spBLEU's
flores101/flores200 with the packages ``sacrebleu`` and ``sentencepiece``).

Public API (stable, ``__all__``):

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
  its own ``effective_order``, ``score()`` = :func:`bleu`);
* :func:`bleu_statistics` / :func:`bleu_from_statistics`: per-example sufficient statistics and
  BLEU from their sum (how ``compare`` resamples BLEU);
* :func:`refusals`: what BLEU refuses and why.

Also here, outside ``__all__``: :func:`~nlgmetrics.bleu.api.clear_caches` (empties every cache of
the package), :func:`~nlgmetrics.bleu.tokenizers.get_tokenizer` and the option names
``SMOOTH_METHODS`` and ``TOKENIZER_NAMES``.

>>> bleu(["the cat is on the mat"], [["the cat is on the mat"]]).main_score
100.0
"""

from nlgmetrics.bleu.api import BleuScorer, bleu, corpus_bleu, sentence_bleu
from nlgmetrics.bleu.refusals import refusals
from nlgmetrics.bleu.result import BleuResult
from nlgmetrics.bleu.score import BleuScore
from nlgmetrics.bleu.statistics import bleu_from_statistics, bleu_statistics

# Not in __all__, importable here because the protocol's option choices, the card, the benchmarks
# and the tests name them here; each belongs to the module it is imported from.
from nlgmetrics.bleu.api import SMOOTH_METHODS, TOKENIZER_NAMES, clear_caches
from nlgmetrics.bleu.refusals import RULES
from nlgmetrics.bleu.tokenizers import get_tokenizer

__all__ = [
    "BleuResult",
    "BleuScore",
    "BleuScorer",
    "bleu",
    "bleu_from_statistics",
    "bleu_statistics",
    "corpus_bleu",
    "refusals",
    "sentence_bleu",
]
