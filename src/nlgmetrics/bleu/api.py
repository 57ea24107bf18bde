"""``bleu``: corpus BLEU and sentence BLEU per example, with sacrebleu's numbers.

References are given per example (a string, or a list of strings; ragged allowed), like
``evaluate``'s BLEU, not as sacrebleu's reference streams. Tokenized texts and merged reference
statistics are kept in bounded LRU caches shared by all calls with the same options, so scoring
many systems against one test set tokenizes and counts each reference once (the idea of
sacrebleu's ``BLEU(references=...)``, without having to ask for it). ``clear_caches()`` empties
them; results never depend on them.

:func:`bleu` is the metric (a :class:`~nlgmetrics.bleu.result.BleuResult`). The building blocks
return a :class:`~nlgmetrics.bleu.score.BleuScore` (score, precisions, bp, lengths, counts):
:class:`BleuScorer` (fixed options; ``corpus()`` and ``sentences()``, the latter with the
scorer's own ``effective_order``), :func:`corpus_bleu` and :func:`sentence_bleu` (sacrebleu's
functions of the same names, references per example).

>>> r = bleu(["the cat sat on the mat"], [["the cat sat on the mat", "a cat sat"]])
>>> r.main_score, r.bp, r.sys_len, r.ref_len, r.scores["sentence_bleu"]
(100.0, 1.0, 6, 6, [100.0])
>>> r.signature
'bleu|case:mixed|effective_order:no|max_ngram_order:4|nrefs:2|smooth:exp|tokenize:13a|version:0.1.0'
>>> round(sentence_bleu("a cat sat", ["the cat sat on the mat"]).score, 4)
20.2452
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any

from nlgmetrics.bleu.ngrams import ReferenceStats, reference_stats, segment_stats
from nlgmetrics.bleu.result import BleuResult
from nlgmetrics.bleu.score import SMOOTH_DEFAULTS, BleuScore, bleu_from_stats
from nlgmetrics.bleu.tokenizers import TOKENIZERS, get_tokenizer, tokenizer_signature
from nlgmetrics.core.signature import make_signature
from nlgmetrics.core.validation import check_bool, check_choice, check_int, check_real, check_reference_inputs

SMOOTH_METHODS = tuple(SMOOTH_DEFAULTS)
TOKENIZER_NAMES = tuple(TOKENIZERS)
#: Defaults of every BLEU entry point (sacrebleu's).
DEFAULT_TOKENIZE = "13a"
DEFAULT_SMOOTH_METHOD = "exp"
DEFAULT_MAX_NGRAM_ORDER = 4


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


def _nrefs(refs: Sequence[Sequence[str]]) -> int | str:
    counts = {len(r) for r in refs}
    return counts.pop() if len(counts) == 1 else "var"


class BleuScorer:
    """BLEU with fixed options (validated once); see the module docstring for caching.

    >>> scorer = BleuScorer(tokenize="13a", smooth_method="exp")
    >>> refs = [["a b c d"], ["e f g h"]]
    >>> scorer.corpus(["a b c d", "e f g x"], refs).score > scorer.corpus(["a b c x", "e f g x"], refs).score
    True
    """

    def __init__(
        self,
        *,
        tokenize: str = DEFAULT_TOKENIZE,
        lowercase: bool = False,
        smooth_method: str = DEFAULT_SMOOTH_METHOD,
        smooth_value: float | None = None,
        max_ngram_order: int = DEFAULT_MAX_NGRAM_ORDER,
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

    def signature(self, nrefs: int | str) -> str:
        """The options that change the number, sacrebleu-style (``effective_order`` is the
        corpus option; sentence BLEU always uses effective order)."""
        smooth = self.smooth_method
        default = SMOOTH_DEFAULTS[smooth]
        if default is not None:
            value = default if self.smooth_value is None else self.smooth_value
            smooth = f"{smooth}[{value:.2f}]"
        return make_signature(
            "bleu",
            {
                "case": "lc" if self.lowercase else "mixed",
                "effective_order": self.effective_order,
                # sacrebleu's tok: the name, plus MeCab's version and dictionary for ja/ko-mecab
                "tokenize": tokenizer_signature(self.tokenize),
                "smooth": smooth,
                "max_ngram_order": self.max_ngram_order,
                "nrefs": nrefs,
            },
        )

    def _inputs(
        self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]
    ) -> tuple[list[str], list[list[str]]]:
        return check_reference_inputs(predictions, references)

    def _stats(
        self, predictions: Sequence[str], references: Sequence[Sequence[str]]
    ) -> Iterator[tuple[int, int, list[int], list[int]]]:
        order = self.max_ngram_order
        for prediction, refs in zip(predictions, references):
            reference = _reference(self.tokenize, self.lowercase, order, tuple(refs))
            yield segment_stats(_tokens(self.tokenize, self.lowercase, prediction), reference, order)

    def _score(self, correct: Sequence[int], total: Sequence[int], sys_len: int, ref_len: int,
               effective_order: bool) -> BleuScore:
        return bleu_from_stats(correct, total, sys_len, ref_len, self.smooth_method, self.smooth_value,
                               effective_order, self.max_ngram_order)

    # -- scores ----------------------------------------------------------------------------
    def score(self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]) -> BleuResult:
        """The metric (:func:`bleu`): corpus BLEU with this scorer's options, and sentence BLEU of
        each example with the same options but always effective order."""
        preds, refs = self._inputs(predictions, references)
        order = self.max_ngram_order
        sys_len = ref_len = 0
        correct = [0] * order
        total = [0] * order
        sentences: list[float] = []
        hyp_lens: list[int] = []
        closest_lens: list[int] = []
        for hyp_len, closest, seg_correct, seg_total in self._stats(preds, refs):
            sentences.append(self._score(seg_correct, seg_total, hyp_len, closest, True).score)
            hyp_lens.append(hyp_len)
            closest_lens.append(closest)
            sys_len += hyp_len
            ref_len += closest
            for k in range(order):
                correct[k] += seg_correct[k]
                total[k] += seg_total[k]
        corpus = self._score(correct, total, sys_len, ref_len, self.effective_order)
        return BleuResult(
            scores={"sentence_bleu": sentences},
            signature=self.signature(_nrefs(refs)),
            bleu=corpus.score,
            bp=corpus.bp,
            sys_len=sys_len,
            ref_len=ref_len,
            precisions=tuple(corpus.precisions),
            counts=tuple(corpus.counts),
            totals=tuple(corpus.totals),
            sentence_sys_len=tuple(hyp_lens),
            sentence_ref_len=tuple(closest_lens),
        )

    def corpus(self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]) -> BleuScore:
        """Corpus BLEU: statistics summed over segments, then one BLEU."""
        preds, refs = self._inputs(predictions, references)
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
        return self._score(correct, total, sys_len, ref_len, self.effective_order)

    def sentences(
        self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]
    ) -> list[BleuScore]:
        """One BLEU per example, with this scorer's ``effective_order`` (sacrebleu's
        ``sentence_score`` with the same options)."""
        preds, refs = self._inputs(predictions, references)
        return [
            self._score(correct, total, hyp_len, closest, self.effective_order)
            for hyp_len, closest, correct, total in self._stats(preds, refs)
        ]


def bleu(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    tokenize: str = DEFAULT_TOKENIZE,
    smooth_method: str = DEFAULT_SMOOTH_METHOD,
    smooth_value: float | None = None,
    lowercase: bool = False,
    max_ngram_order: int = DEFAULT_MAX_NGRAM_ORDER,
    effective_order: bool = False,
) -> BleuResult:
    """Corpus BLEU and sentence BLEU per example (sacrebleu's ``corpus_bleu`` and
    ``sentence_bleu`` numbers).

    Args:
        predictions: one hypothesis per example.
        references: per example, one reference or a list of references (ragged allowed).
        tokenize: ``"13a"`` (default), ``"intl"``, ``"char"``, ``"none"``, ``"zh"``, or
            ``"ja-mecab"`` / ``"ko-mecab"`` (MeCab; ``pip install "nlgmetrics[ja]"`` / ``[ko]``).
        smooth_method: ``"exp"`` (default), ``"none"``, ``"floor"`` or ``"add-k"``.
        smooth_value: for ``floor`` (default 0.1) and ``add-k`` (default 1).
        lowercase: lower-case before tokenizing.
        max_ngram_order: the largest n-gram order N (default 4).
        effective_order: for the corpus score, stop the geometric mean at the highest order that
            has hypothesis n-grams. The per-example sentence BLEU always uses effective order
            (sacrebleu's sentence default), whatever this option.

    Returns:
        :class:`~nlgmetrics.bleu.result.BleuResult`: ``aggregate()["bleu"]`` is corpus BLEU
        (0-100), with ``bp``, ``ratio``, ``precision_1..N``, ``sys_len``, ``ref_len`` and the mean
        ``sentence_bleu``; ``scores["sentence_bleu"]`` per example (0-100).

    Example:
        >>> r = bleu(["a b c d e", "a b"], ["a b c d e", "a b"])
        >>> r.main_score, r.scores["sentence_bleu"]
        (100.0, [100.0, 100.0])
    """
    scorer = BleuScorer(
        tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method, smooth_value=smooth_value,
        max_ngram_order=max_ngram_order, effective_order=effective_order,
    )
    return scorer.score(predictions, references)


def corpus_bleu(predictions: Sequence[str], references: Sequence[str | Sequence[str]], **options: Any) -> BleuScore:
    """Corpus BLEU alone (sacrebleu ``corpus_bleu``; references per example; the keyword
    options of :class:`BleuScorer`). :func:`bleu` gives the same number with the sentence scores
    and the signature.

    Example:
        >>> corpus_bleu(["a b c d e"], ["a b c d e"]).score
        100.0
    """
    return BleuScorer(**options).corpus(predictions, references)


def sentence_bleu(prediction: str, references: str | Sequence[str], **options: Any) -> BleuScore:
    """BLEU of one prediction (sacrebleu ``sentence_bleu``: the keyword options of
    :class:`BleuScorer`, with ``effective_order=True`` unless given).

    Example:
        >>> sentence_bleu("a b", ["a b"]).score
        100.0
    """
    if not isinstance(prediction, str):
        raise ValueError(
            f"`prediction` is {type(prediction).__name__}, not a string; for many predictions use "
            f"bleu(predictions, references).scores['sentence_bleu']."
        )
    options.setdefault("effective_order", True)
    return BleuScorer(**options).sentences([prediction], [references])[0]
