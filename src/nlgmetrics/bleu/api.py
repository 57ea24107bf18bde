"""``bleu``: corpus BLEU and sentence BLEU per example, with sacrebleu's numbers.

Two reference layouts, one per face:

* :func:`bleu` (the metric) and :class:`BleuScorer` take references *per example* (a string, or a
  list of strings; ragged allowed), like ``evaluate``'s BLEU;
* :func:`corpus_bleu` and :func:`sentence_bleu` carry sacrebleu's names, so they take sacrebleu's
  arguments and layout: ``corpus_bleu(hypotheses, [refs_a, refs_b])`` with reference *streams*
  (stream ``k`` holds the ``k``-th reference of every hypothesis, ``None`` where one is missing).
  A call that does not fit that layout (a flat list of strings, a stream whose length is not the
  number of hypotheses) is refused with an error naming it (:mod:`nlgmetrics.bleu.streams`).

Every entry point shares bounded LRU caches of tokenized texts and merged reference statistics, so
scoring many systems against one test set counts each reference once (sacrebleu's
``BLEU(references=...)`` without asking); ``clear_caches()`` empties them, results never depend
on them. :func:`bleu` returns a :class:`~nlgmetrics.bleu.result.BleuResult`; the building blocks
(:class:`BleuScorer`, :func:`corpus_bleu`, :func:`sentence_bleu`) a
:class:`~nlgmetrics.bleu.score.BleuScore` with sacrebleu's ``BLEUScore`` fields.

>>> r = bleu(["the cat sat on the mat"], [["the cat sat on the mat", "a cat sat"]])
>>> r.main_score, r.bp, r.sys_len, r.ref_len, r.scores["sentence_bleu"]
(100.0, 1.0, 6, 6, [100.0])
>>> r.signature
'bleu|case:mixed|effective_order:no|max_ngram_order:4|nrefs:2|smooth:exp|tokenize:13a|version:0.1.0'
>>> corpus_bleu(["the cat sat on the mat"], [["the cat sat on the mat"], ["a cat sat"]]).score
100.0
>>> round(sentence_bleu("a cat sat", ["the cat sat on the mat"]).score, 4)
20.2452
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from nlgmetrics.bleu.ngrams import ReferenceStats, reference_stats, segment_stats
from nlgmetrics.bleu.result import BleuResult
from nlgmetrics.bleu.score import SMOOTH_DEFAULTS, BleuScore
from nlgmetrics.bleu.streams import examples_from_streams, references_of_one
from nlgmetrics.bleu.tokenizers import TOKENIZERS, get_tokenizer, tokenizer_signature
from nlgmetrics.core.corpus import MAX_NGRAM_ORDER, score_examples
from nlgmetrics.core.refusals import BEFORE_SCORING
from nlgmetrics.core.signature import make_signature
from nlgmetrics.core.validation import (
    as_texts,
    check_choice,
    check_int,
    check_real,
    check_switches,
    shown_value,
    switch_rule,
)

SMOOTH_METHODS = tuple(SMOOTH_DEFAULTS)
TOKENIZER_NAMES = tuple(TOKENIZERS)
#: The switches of every BLEU entry point (sacrebleu's names among them).
SWITCH_RULE = switch_rule("lowercase", "effective_order", "use_effective_order", "force", stage=BEFORE_SCORING)
#: Defaults of every BLEU entry point (sacrebleu's).
DEFAULT_TOKENIZE = "13a"
DEFAULT_SMOOTH_METHOD = "exp"
DEFAULT_MAX_NGRAM_ORDER = 4
#: One example's sufficient statistics: hypothesis length, closest reference length, matched
#: n-grams per order, hypothesis n-grams per order.
SegmentStats = tuple[int, int, list[int], list[int]]


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
    """Empty the caches every BLEU entry point fills: tokenized texts, merged reference statistics
    and validated options (e.g. to bound memory or to time cold runs). Loaded tokenizer models
    (MeCab, SentencePiece) stay loaded."""
    _tokens.cache_clear()
    _reference.cache_clear()
    _scorer_of.cache_clear()


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
        get_tokenizer(tokenize)  # an unknown name, a missing extra or model fails here, before scoring
        check_choice("smooth_method", smooth_method, SMOOTH_METHODS)
        # Plain Python values (numpy scalars accepted), so the signature does not depend on the type.
        lowercase, effective_order = check_switches(
            SWITCH_RULE, lowercase=lowercase, effective_order=effective_order).values()
        max_ngram_order = check_int("max_ngram_order", max_ngram_order, minimum=1, maximum=MAX_NGRAM_ORDER, message=(
            f"max_ngram_order={shown_value(max_ngram_order)} must be a positive integer (BLEU uses 4), "
            f"at most {MAX_NGRAM_ORDER}."))
        smooth_value = check_real(smooth_value, minimum=0, allow_none=True, message=(
            f"smooth_value={shown_value(smooth_value)} must be a non-negative number or None (default)."))
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
        return make_signature("bleu", {
            "case": "lc" if self.lowercase else "mixed",
            "effective_order": self.effective_order,
            # sacrebleu's tok: the name, plus MeCab's version and dictionary for ja/ko-mecab
            "tokenize": tokenizer_signature(self.tokenize),
            "smooth": smooth,
            "max_ngram_order": self.max_ngram_order,
            "nrefs": nrefs,
        })

    def segment(self, prediction: str, references: Sequence[str]) -> SegmentStats:
        """``(hypothesis length, closest reference length, matches per order, hypothesis n-grams
        per order)`` of one example: the sufficient statistics that corpus BLEU sums."""
        order = self.max_ngram_order
        reference = _reference(self.tokenize, self.lowercase, order, tuple(references))
        return segment_stats(_tokens(self.tokenize, self.lowercase, prediction), reference, order)

    def _corpus(self, segments: Sequence[SegmentStats]) -> BleuScore:
        """Corpus BLEU: the segments' statistics summed, then one BLEU with this scorer's options."""
        hyp_lens, closest, correct, total = zip(*segments)  # every caller has at least one segment
        return self._score([sum(counts) for counts in zip(*correct)], [sum(counts) for counts in zip(*total)],
                           sum(hyp_lens), sum(closest), self.effective_order)

    def _score(self, correct: Sequence[int], total: Sequence[int], sys_len: int, ref_len: int,
               effective_order: bool) -> BleuScore:
        return BleuScore.from_counts(correct, total, sys_len, ref_len, self.smooth_method, self.smooth_value,
                                     effective_order, self.max_ngram_order)

    # -- scores ----------------------------------------------------------------------------
    def score(self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]) -> BleuResult:
        """The metric (:func:`bleu`): corpus BLEU with this scorer's options, and sentence BLEU of
        each example with the same options but always effective order."""
        segments, nrefs = score_examples(self.segment, predictions, references)
        corpus = self._corpus(segments)
        hyp_lens, closest, _, _ = zip(*segments)
        return BleuResult(
            scores={"sentence_bleu": [self._score(correct, total, hyp_len, closest, True).score
                                      for hyp_len, closest, correct, total in segments]},
            signature=self.signature(nrefs),
            bleu=corpus.score,
            **{name: getattr(corpus, name)
               for name in ("bp", "sys_len", "ref_len", "precisions", "counts", "totals")},
            sentence_sys_len=hyp_lens,
            sentence_ref_len=closest,
        )

    def corpus(self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]) -> BleuScore:
        """Corpus BLEU: statistics summed over segments, then one BLEU."""
        return self._corpus(score_examples(self.segment, predictions, references)[0])

    def sentences(
        self, predictions: Sequence[str], references: Sequence[str | Sequence[str]]
    ) -> list[BleuScore]:
        """One BLEU per example, with this scorer's ``effective_order`` (sacrebleu's
        ``sentence_score`` with the same options)."""
        segments, _ = score_examples(self.segment, predictions, references)
        return [self._score(correct, total, hyp_len, closest, self.effective_order)
                for hyp_len, closest, correct, total in segments]


@functools.lru_cache(maxsize=64)
def _scorer_of(options: tuple[tuple[str, Any], ...]) -> BleuScorer:
    return BleuScorer(**dict(options))


def scorer_with(**options: Any) -> BleuScorer:
    """A :class:`BleuScorer` with ``options``, validated once per distinct options (cached:
    ``compare`` scores every resample with the same options)."""
    try:
        return _scorer_of(tuple(sorted(options.items())))
    except TypeError:  # an unhashable value: BleuScorer says what is wrong with it
        return BleuScorer(**options)


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
        tokenize: ``"13a"`` (default), ``"intl"``, ``"char"``, ``"none"``, ``"zh"``,
            ``"ja-mecab"`` / ``"ko-mecab"`` (MeCab; ``pip install "nlgmetrics[ja]"`` / ``[ko]``), or
            ``"flores101"`` / ``"flores200"`` (spBLEU: sacrebleu's SentencePiece models; ``pip install
            sacrebleu sentencepiece``, and the model file sacrebleu downloads on first use).
        smooth_method: ``"exp"`` (default), ``"none"``, ``"floor"`` or ``"add-k"``.
        smooth_value: for ``floor`` (default 0.1) and ``add-k`` (default 1).
        lowercase: lower-case before tokenizing.
        max_ngram_order: the largest n-gram order N (default 4; at most ``MAX_NGRAM_ORDER``, 100).
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
    return BleuScorer(
        tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method, smooth_value=smooth_value,
        max_ngram_order=max_ngram_order, effective_order=effective_order,
    ).score(predictions, references)


def _sacrebleu_scorer(smooth_method: str, smooth_value: float | None, lowercase: bool, tokenize: str | None,
                      use_effective_order: bool, max_ngram_order: int) -> BleuScorer:
    """A scorer from sacrebleu's function arguments (``tokenize=None`` is sacrebleu's default, 13a)."""
    return BleuScorer(
        tokenize=DEFAULT_TOKENIZE if tokenize is None else tokenize, lowercase=lowercase,
        smooth_method=smooth_method, smooth_value=smooth_value, max_ngram_order=max_ngram_order,
        effective_order=check_switches(SWITCH_RULE, use_effective_order=use_effective_order)["use_effective_order"],
    )


def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str | None]],
    smooth_method: str = DEFAULT_SMOOTH_METHOD,
    smooth_value: float | None = None,
    force: bool = False,
    lowercase: bool = False,
    tokenize: str | None = DEFAULT_TOKENIZE,
    use_effective_order: bool = False,
    *,
    max_ngram_order: int = DEFAULT_MAX_NGRAM_ORDER,
) -> BleuScore:
    """sacrebleu's ``corpus_bleu``: its arguments (names, order, defaults), its reference layout,
    its numbers.

    Args:
        hypotheses: one hypothesis per segment.
        references: reference *streams*: a list of lists, stream ``k`` holding the ``k``-th
            reference of every hypothesis (so each stream is as long as ``hypotheses``); ``None``
            where a hypothesis has fewer references (dropped, as in sacrebleu; ``""`` is kept as a
            reference of length 0). Anything that does not fit this layout (a flat list of
            strings, a stream of another length: references given per example) is a ValueError
            naming the layout. For references per example use :func:`bleu`.
        smooth_method, smooth_value, lowercase, tokenize, use_effective_order: as in sacrebleu
            (``tokenize=None`` means 13a, sacrebleu's default).
        force: accepted for sacrebleu's signature; it only silences sacrebleu's warning about
            tokenized input, which we never print, so it changes nothing.
        max_ngram_order: keyword only (sacrebleu's ``BLEU(max_ngram_order=...)``).

    Returns:
        a :class:`~nlgmetrics.bleu.score.BleuScore` with sacrebleu's ``BLEUScore`` fields:
        ``score``, ``counts``, ``totals``, ``precisions``, ``bp``, ``sys_len``, ``ref_len``
        (and ``ratio``). :func:`bleu` gives the same number with per-example scores and a signature.
        ``counts``/``totals`` are the raw n-gram counts; with ``smooth_method="add-k"``
        sacrebleu's own score object reports them with ``k`` added for orders >= 2 (its smoothing
        adds it in place), every other field is the same.

    Example:
        >>> hypotheses = ["the cat sat on the mat", "there is a dog"]
        >>> refs_a = ["the cat is on the mat", "there is a big dog"]
        >>> refs_b = ["a cat sat on the mat", None]          # the second hypothesis has one reference
        >>> round(corpus_bleu(hypotheses, [refs_a, refs_b]).score, 2)
        66.5
    """
    check_switches(SWITCH_RULE, force=force)
    hyps = as_texts("hypotheses", hypotheses)
    refs = examples_from_streams(references, len(hyps), "corpus_bleu")
    scorer = _sacrebleu_scorer(smooth_method, smooth_value, lowercase, tokenize, use_effective_order, max_ngram_order)
    return scorer.corpus(hyps, refs)


def sentence_bleu(
    hypothesis: str,
    references: Sequence[str | None],
    smooth_method: str = DEFAULT_SMOOTH_METHOD,
    smooth_value: float | None = None,
    lowercase: bool = False,
    tokenize: str | None = DEFAULT_TOKENIZE,
    use_effective_order: bool = True,
    *,
    max_ngram_order: int = DEFAULT_MAX_NGRAM_ORDER,
) -> BleuScore:
    """sacrebleu's ``sentence_bleu``: BLEU of one hypothesis against its list of references, with
    sacrebleu's arguments (names, order, defaults: effective order on) and numbers.

    ``references`` is a list of reference strings (``None`` entries dropped, as in sacrebleu); a
    single string is read as one reference. For many hypotheses use
    ``bleu(predictions, references).scores["sentence_bleu"]``.

    Example:
        >>> sentence_bleu("a b", ["a b"]).score
        100.0
        >>> round(sentence_bleu("a cat sat", ["the cat sat on the mat", None]).score, 4)
        20.2452
    """
    if not isinstance(hypothesis, str):
        raise ValueError(
            f"`hypothesis` is {type(hypothesis).__name__}, not a string; for many hypotheses use "
            f"bleu(predictions, references).scores['sentence_bleu']."
        )
    refs = references_of_one(references, "sentence_bleu")
    scorer = _sacrebleu_scorer(smooth_method, smooth_value, lowercase, tokenize, use_effective_order, max_ngram_order)
    return scorer.sentences([hypothesis], [refs])[0]
