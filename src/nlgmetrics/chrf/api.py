"""``chrf``: corpus chrF / chrF++ and sentence chrF per example, with sacrebleu's numbers.

References are given per example (a string, or a list of strings; ragged allowed), like the BLEU
module, not as sacrebleu's reference streams. Several references: each example uses the one whose
sentence chrF is highest (the first of equal ones), and its statistics go into the corpus sums,
as in sacrebleu. The n-gram counts of each reference are kept in a bounded LRU cache shared by
all calls with the same options, so scoring many systems against one test set counts each
reference once; :func:`clear_caches` empties it (results never depend on it).

:func:`chrf_statistics` and :func:`chrf_from_statistics` are the sufficient statistics behind the
corpus score (for paired bootstrap or approximate randomization between systems):
``chrf_from_statistics(chrf_statistics(p, r).sum(axis=0)) == chrf(p, r).main_score``.

>>> r = chrf(["the cat sat on the mat"], [["the cat sat on the mat", "a cat"]])
>>> r.main_score, r.scores["sentence_chrf"]
(100.0, [100.0])
>>> r.signature
'chrf|beta:2|case:mixed|char_order:6|eps_smoothing:no|nrefs:2|whitespace:no|word_order:0|version:0.1.0'
>>> round(chrf(["the cat sat"], ["a cat sat down"], word_order=2).main_score, 4)
41.4225
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlgmetrics.chrf.ngrams import TextNgrams, pair_statistics, text_ngrams
from nlgmetrics.chrf.result import ChrfResult
from nlgmetrics.chrf.score import chrf_score
from nlgmetrics.core.corpus import (
    MAX_NGRAM_ORDER,
    check_summed_statistics,
    declared_options,
    score_examples,
    score_rows,
)
from nlgmetrics.core.refusals import BEFORE_SCORING
from nlgmetrics.core.signature import make_signature
from nlgmetrics.core.validation import check_int, check_real, check_switches, shown_value, switch_rule

#: Defaults of every chrF entry point (sacrebleu's ``CHRF()``); chrF++ is ``word_order=2``.
DEFAULT_CHAR_ORDER = 6
DEFAULT_WORD_ORDER = 0
DEFAULT_BETA = 2
CHRF_PLUS_PLUS_WORD_ORDER = 2
SWITCH_RULE = switch_rule("lowercase", "whitespace", "eps_smoothing", stage=BEFORE_SCORING)

#: Largest ``beta``: its square, the weight of precision in F-beta, must be a finite float.
MAX_BETA = 1e150


def _ngrams(text: str, lowercase: bool, char_order: int, word_order: int, whitespace: bool) -> TextNgrams:
    return text_ngrams(text.lower() if lowercase else text, char_order, word_order, whitespace)


#: The n-gram counts of one reference (cached: shared by every system scored against it).
_reference_ngrams = functools.lru_cache(maxsize=1 << 15)(_ngrams)


def clear_caches() -> None:
    """Empty the reference n-gram cache (e.g. to bound memory or to time cold runs)."""
    _reference_ngrams.cache_clear()


@dataclass(frozen=True)
class ChrfOptions:
    """The validated options of chrF (plain Python values, whatever numbers were passed).

    >>> ChrfOptions.checked(word_order=2).n_orders
    8
    >>> ChrfOptions.checked(beta=0).beta  # precision only, as sacrebleu's CHRF(beta=0)
    0
    >>> ChrfOptions.checked(beta=-2)
    Traceback (most recent call last):
    ...
    ValueError: beta=-2 must be a finite number >= 0 (recall is beta times as important as precision; 0 scores precision only; chrF uses 2).
    """

    char_order: int = DEFAULT_CHAR_ORDER
    word_order: int = DEFAULT_WORD_ORDER
    beta: float = DEFAULT_BETA
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False

    @classmethod
    def checked(cls, **options: Any) -> ChrfOptions:
        """The options of :func:`chrf` (the fields above; their defaults for those not given),
        each checked; clear errors naming the option and the valid values."""
        given = declared_options(cls, options, "chrF")
        char_order, word_order, beta = given["char_order"], given["word_order"], given["beta"]
        char_order = check_int("char_order", char_order, minimum=0, maximum=MAX_NGRAM_ORDER, message=(
            f"char_order={shown_value(char_order)} must be a non-negative integer (chrF uses 6), at most "
            f"{MAX_NGRAM_ORDER}."))
        word_order = check_int("word_order", word_order, minimum=0, maximum=MAX_NGRAM_ORDER, message=(
            f"word_order={shown_value(word_order)} must be a non-negative integer (0: chrF, 2: chrF++), at "
            f"most {MAX_NGRAM_ORDER}."))
        if char_order + word_order == 0:
            raise ValueError("char_order=0 and word_order=0 leave no n-grams to compare; "
                             "use char_order=6 (chrF), and word_order=2 for chrF++.")
        # 0 is allowed: F-beta is then the precision (sacrebleu and evaluate's chrf compute it). A
        # negative beta is refused although F-beta reads only beta**2: a negative weight of recall
        # has no meaning, so it is a mistake (a sign slip) rather than a setting.
        beta = check_real(beta, minimum=0, message=(
            f"beta={shown_value(beta)} must be a finite number >= 0 (recall is beta times as important as "
            f"precision; 0 scores precision only; chrF uses 2)."))
        if beta > MAX_BETA:  # F-beta weighs precision by beta**2, which must stay a float
            raise ValueError(f"beta={shown_value(beta)} is too large: beta**2 must fit a float, so beta <= {MAX_BETA:g} "
                             f"(recall is beta times as important as precision; chrF uses 2).")
        switches = check_switches(SWITCH_RULE, **{name: given[name] for name in SWITCH_RULE.options})
        # An integral beta stays an int: sacrebleu computes beta ** 2 on the int it is given.
        return cls(char_order, word_order, int(beta) if beta.is_integer() else beta, **switches)

    @property
    def n_orders(self) -> int:
        return self.char_order + self.word_order

    def signature(self, nrefs: int | str) -> str:
        """Every option that changes the number (``case`` as in the BLEU signature)."""
        return make_signature("chrf", {
            "case": "lc" if self.lowercase else "mixed",
            "char_order": self.char_order,
            "word_order": self.word_order,
            "beta": float(self.beta),
            "whitespace": self.whitespace,
            "eps_smoothing": self.eps_smoothing,
            "nrefs": nrefs,
        })

    def segment(self, prediction: str, references: Sequence[str]) -> tuple[list[int], float, int]:
        """``(statistics, sentence chrF, index of the best reference)`` of one example."""
        key = (self.lowercase, self.char_order, self.word_order, self.whitespace)
        hypothesis = _ngrams(prediction, *key)
        candidates = [pair_statistics(hypothesis, _reference_ngrams(ref, *key)) for ref in references]
        scores = [self.score(stats) for stats in candidates]
        best = scores.index(max(scores))  # the first of equal references wins (sacrebleu)
        return candidates[best], scores[best], best

    def score(self, stats: Sequence[int]) -> float:
        return chrf_score(stats, self.beta, self.eps_smoothing)


def chrf(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    char_order: int = DEFAULT_CHAR_ORDER,
    word_order: int = DEFAULT_WORD_ORDER,
    beta: float = DEFAULT_BETA,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
) -> ChrfResult:
    """Corpus chrF (Popović 2015) or chrF++ (``word_order=2``, Popović 2017) and sentence chrF per
    example: sacrebleu's ``CHRF(...).corpus_score`` and ``sentence_score`` numbers.

    Args:
        predictions: one hypothesis per example.
        references: per example, one reference or a list of references (ragged allowed).
        char_order: largest character n-gram order (default 6; at most ``MAX_NGRAM_ORDER``, 100).
        word_order: largest word n-gram order (default 0: chrF; 2: chrF++; at most 100).
        beta: recall is ``beta`` times as important as precision (default 2); a number in
            ``[0, MAX_BETA]`` (``beta**2`` must fit a float); 0 scores precision only (chrF0, as
            sacrebleu's ``CHRF(beta=0)``).
        lowercase: lower-case hypotheses and references first.
        whitespace: keep whitespace inside character n-grams (default: removed first).
        eps_smoothing: average the per-order F-scores with epsilon smoothing (chrF++.py, NLTK,
            Moses) instead of sacrebleu's default effective-order averaging of P and R.

    Returns:
        :class:`~nlgmetrics.chrf.result.ChrfResult`: ``aggregate()["chrf"]`` is corpus chrF
        (0-100) and ``aggregate()["sentence_chrf"]`` the mean sentence chrF;
        ``scores["sentence_chrf"]`` per example (0-100).

    Example:
        >>> r = chrf(["a cat", "hello"], ["a cat", "help"])
        >>> r.scores["sentence_chrf"][0], round(r.scores["sentence_chrf"][1], 4), round(r.main_score, 4)
        (100.0, 44.8893, 70.845)
    """
    options = ChrfOptions.checked(char_order=char_order, word_order=word_order, beta=beta, lowercase=lowercase,
                                  whitespace=whitespace, eps_smoothing=eps_smoothing)
    segments, nrefs = score_examples(options.segment, predictions, references)
    stats, sentence_scores, best_reference = zip(*segments)  # never empty: an empty input is refused
    totals = [sum(counts) for counts in zip(*stats)]
    return ChrfResult(
        scores={"sentence_chrf": list(sentence_scores)},
        signature=options.signature(nrefs),
        chrf=options.score(totals),
        statistics=tuple(totals),
        char_order=options.char_order,
        word_order=options.word_order,
        beta=float(options.beta),
        best_reference=best_reference,
    )


def chrf_plus_plus(predictions: Sequence[str], references: Sequence[str | Sequence[str]], **options: Any) -> ChrfResult:
    """chrF++ (Popović 2017): :func:`chrf` with ``word_order=2`` unless given (sacrebleu
    ``CHRF(word_order=2)``).

    Example:
        >>> chrf_plus_plus(["a cat"], ["a cat"]).signature.split("|")[-2]
        'word_order:2'
    """
    options.setdefault("word_order", CHRF_PLUS_PLUS_WORD_ORDER)
    return chrf(predictions, references, **options)


def chrf_statistics(predictions: Sequence[str], references: Sequence[str | Sequence[str]], **options: Any) -> np.ndarray:
    """Per-example sufficient statistics, shape ``(n_examples, 3 * (char_order + word_order))``
    (int64): ``[hyp, ref, match]`` per order, characters first, each example against its best
    reference. Column sums give the corpus chrF through :func:`chrf_from_statistics`; resampling
    rows gives bootstrap or randomization samples. ``options``: those of :func:`chrf`.

    Example:
        >>> stats = chrf_statistics(["a cat", "hello"], ["a cat", "help"])
        >>> stats.shape, chrf_from_statistics(stats.sum(axis=0)) == chrf(["a cat", "hello"], ["a cat", "help"]).main_score
        ((2, 18), True)
    """
    segments, _ = score_examples(ChrfOptions.checked(**options).segment, predictions, references)
    return np.array([stats for stats, _, _ in segments], dtype=np.int64)  # an empty input is refused


def chrf_from_statistics(summed_stats: Any, **options: Any) -> float | np.ndarray:
    """chrF (0-100) from statistics summed over examples (one row of :func:`chrf_statistics`'s
    width), with the options of :func:`chrf` (only ``beta``, ``eps_smoothing`` and the orders
    matter here). A 2-D array (one summed row per resample) gives one score per row.

    Example:
        >>> chrf_from_statistics([4, 5, 3, 3, 4, 1], char_order=2)
        44.41318327974276
    """
    checked = ChrfOptions.checked(**options)
    layout = (f"[hyp, ref, match] for each of the {checked.n_orders} orders (char_order={checked.char_order}, "
              f"word_order={checked.word_order})")
    array = check_summed_statistics(summed_stats, 3 * checked.n_orders, layout=layout, source="chrf_statistics",
                                    values="counts")
    return score_rows(array, checked.score)
