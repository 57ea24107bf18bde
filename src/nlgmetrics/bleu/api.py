"""Corpus and sentence BLEU with sacrebleu's numbers.

References are given per example (a string, or a list of strings; ragged allowed), like
``evaluate``'s BLEU, not as sacrebleu's reference streams. Tokenized texts and merged reference
statistics are kept in bounded LRU caches shared by all calls with the same options, so scoring
many systems against one test set tokenizes and counts each reference once (the idea of
sacrebleu's ``BLEU(references=...)``, without having to ask for it). ``clear_caches()`` empties
them; results never depend on them.

>>> r = corpus_bleu(["the cat sat on the mat"], [["the cat sat on the mat", "a cat sat"]])
>>> round(r.score, 9), r.bp, r.sys_len, r.ref_len
(100.0, 1.0, 6, 6)
>>> r.signature
'bleu|case:mixed|eff:no|nrefs:2|order:4|smooth:exp|tok:13a|version:0.1.0'
>>> round(sentence_bleu("a cat sat", ["the cat sat on the mat"]).score, 4)
20.2452
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from nlgmetrics.bleu.ngrams import ReferenceStats, reference_stats, segment_stats
from nlgmetrics.bleu.score import SMOOTH_DEFAULTS, BLEUResult, bleu_from_stats
from nlgmetrics.bleu.tokenizers import TOKENIZERS, get_tokenizer
from nlgmetrics.signature import make_signature
from nlgmetrics.validation import as_reference_lists, as_texts, check_bool, check_choice, check_int, check_real

SMOOTH_METHODS = tuple(SMOOTH_DEFAULTS)


@functools.lru_cache(maxsize=1 << 17)
def _tokens(tokenize: str, lowercase: bool, text: str) -> tuple[str, ...]:
    """Tokens of one segment (sacrebleu's order: lower-case, right-strip, tokenize)."""
    line = text.lower() if lowercase else text
    return tuple(get_tokenizer(tokenize)(line.rstrip()))


@functools.lru_cache(maxsize=1 << 16)
def _reference(tokenize: str, lowercase: bool, max_order: int, refs: tuple[str, ...]) -> ReferenceStats:
    """Merged statistics of one segment's references (cached: shared by every system)."""
    return reference_stats([_tokens(tokenize, lowercase, r) for r in refs], max_order)


def clear_caches() -> None:
    """Empty the tokenization and reference caches (e.g. to bound memory or to time cold runs)."""
    _tokens.cache_clear()
    _reference.cache_clear()


class BleuScorer:
    """BLEU with fixed options (validated once); see the module docstring for caching.

    >>> scorer = BleuScorer(tokenize="13a", smooth_method="exp")
    >>> refs = [["a b c d"], ["e f g h"]]
    >>> scorer.corpus(["a b c d", "e f g x"], refs).score > scorer.corpus(["a b c x", "e f g x"], refs).score
    True
    """

    def __init__(
        self,
        tokenize: str = "13a",
        lowercase: bool = False,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        max_ngram_order: int = 4,
        effective_order: bool = False,
    ) -> None:
        self._tokenizer = get_tokenizer(tokenize)
        check_choice("smooth_method", smooth_method, SMOOTH_METHODS)
        # Plain Python values (numpy scalars accepted), so the signature does not depend on the type.
        lowercase = check_bool("lowercase", lowercase, message=f"lowercase={lowercase!r} must be True or False.")
        # bool("no") is True: a string here would silently turn effective order on.
        effective_order = check_bool("effective_order", effective_order,
                                     message=f"effective_order={effective_order!r} must be True or False.")
        max_ngram_order = check_int("max_ngram_order", max_ngram_order, minimum=1, message=(
            f"max_ngram_order={max_ngram_order!r} must be a positive integer (BLEU uses 4)."))
        smooth_value = check_real("smooth_value", smooth_value, minimum=0, allow_none=True, message=(
            f"smooth_value={smooth_value!r} must be a non-negative number or None (default)."))
        self.tokenize = tokenize
        self.lowercase = lowercase
        self.smooth_method = smooth_method
        self.smooth_value = smooth_value
        self.max_ngram_order = max_ngram_order
        self.effective_order = effective_order

    def signature(self, nrefs: int | str, effective_order: bool | None = None) -> str:
        """The options that change the number, sacrebleu-style."""
        smooth = self.smooth_method
        default = SMOOTH_DEFAULTS[smooth]
        if default is not None:
            value = default if self.smooth_value is None else self.smooth_value
            smooth = f"{smooth}[{value:.2f}]"
        return make_signature(
            "bleu",
            {
                "case": "lc" if self.lowercase else "mixed",
                "eff": self.effective_order if effective_order is None else effective_order,
                "tok": self.tokenize,
                "smooth": smooth,
                "order": self.max_ngram_order,
                "nrefs": nrefs,
            },
        )

    def _stats(self, predictions: Sequence[str], references: Sequence[Sequence[str]]):
        order = self.max_ngram_order
        for prediction, refs in zip(predictions, references):
            reference = _reference(self.tokenize, self.lowercase, order, tuple(refs))
            yield segment_stats(_tokens(self.tokenize, self.lowercase, prediction), reference, order)

    # -- scores ----------------------------------------------------------------------------
    def corpus(self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]) -> BLEUResult:
        """Corpus BLEU: statistics summed over segments, then one BLEU."""
        preds = as_texts("predictions", predictions)
        refs = as_reference_lists(references, n=len(preds))
        order = self.max_ngram_order
        sys_len = ref_len = 0
        correct = [0] * order
        total = [0] * order
        for hyp_len, closest, seg_correct, seg_total in self._stats(preds, refs):
            sys_len += hyp_len
            ref_len += closest
            for k in range(order):
                correct[k] += seg_correct[k]
                total[k] += seg_total[k]
        nrefs = {len(r) for r in refs}
        return bleu_from_stats(
            correct, total, sys_len, ref_len, self.smooth_method, self.smooth_value,
            self.effective_order, order, self.signature(nrefs.pop() if len(nrefs) == 1 else "var"),
        )

    def sentences(
        self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]
    ) -> list[BLEUResult]:
        """One BLEU per example (use ``effective_order=True`` for sentence BLEU)."""
        preds = as_texts("predictions", predictions)
        refs = as_reference_lists(references, n=len(preds))
        results = []
        for (hyp_len, closest, correct, total), ref_list in zip(self._stats(preds, refs), refs):
            results.append(
                bleu_from_stats(
                    correct, total, hyp_len, closest, self.smooth_method, self.smooth_value,
                    self.effective_order, self.max_ngram_order, self.signature(len(ref_list)),
                )
            )
        return results


def corpus_bleu(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    max_ngram_order: int = 4,
    effective_order: bool = False,
) -> BLEUResult:
    """Corpus BLEU (sacrebleu ``corpus_bleu`` numbers; references given per example).

    Example:
        >>> round(corpus_bleu(["a b c d e"], ["a b c d e"]).score, 9)
        100.0
    """
    scorer = BleuScorer(tokenize, lowercase, smooth_method, smooth_value, max_ngram_order, effective_order)
    return scorer.corpus(predictions, references)


def sentence_bleu(
    prediction: str,
    references: str | Sequence[str],
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    max_ngram_order: int = 4,
    effective_order: bool = True,
) -> BLEUResult:
    """BLEU of one prediction (sacrebleu ``sentence_bleu`` numbers; effective order on by default).

    Example:
        >>> round(sentence_bleu("a b", ["a b"]).score, 9)
        100.0
    """
    if not isinstance(prediction, str):
        raise ValueError(
            f"`prediction` is {type(prediction).__name__}, not a string; for many predictions use "
            f"sentence_bleu_batch(predictions, references)."
        )
    scorer = BleuScorer(tokenize, lowercase, smooth_method, smooth_value, max_ngram_order, effective_order)
    return scorer.sentences([prediction], [references])[0]


def sentence_bleu_batch(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    **options: Any,
) -> list[BLEUResult]:
    """:func:`sentence_bleu` for each example (same keyword options; shared caches).

    Example:
        >>> [round(r.score, 1) for r in sentence_bleu_batch(["a b", "c"], ["a b", "d"])]
        [100.0, 0.0]
    """
    options.setdefault("effective_order", True)
    return BleuScorer(**options).sentences(predictions, references)


TOKENIZER_NAMES = tuple(TOKENIZERS)
