"""``rouge_family``: every ROUGE variant for a batch of predictions, per example and aggregated.

Each distinct text is tokenized, stemmed and counted once, in a bounded LRU cache shared by all
calls (in meta-evaluation the same reference is paired with every system), then each
(prediction, reference) pair is reduced to match statistics (:mod:`nlgmetrics.rouge.scoring`)
and references are combined per prediction. The result is a
:class:`~nlgmetrics.rouge.result.RougeResult`: per type ``T`` the columns ``T`` (F-measure),
``T_precision`` and ``T_recall``.

>>> r = rouge_family(["the cat sat"], [["the cat sat down", "a dog"]], rouge_types=("rouge1", "rougeL"))
>>> r.scores["rouge1_recall"], r.scores["rougeL_precision"]
([0.75], [1.0])
>>> r.main, round(r.main_score, 6)
('rouge1', 0.857143)
>>> r.signature
'rouge_family|aggregation:bootstrap|beta:1|confidence:0.95|multi_ref:best|n_bootstrap:1000|nrefs:2|rouge_types:rouge1,rougeL|seed:0|stemmer:no|stopwords:no|tokenize:rouge_score|version:0.1.0'
"""

from __future__ import annotations

import functools
import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nlgmetrics.core.corpus import reference_count
from nlgmetrics.core.signature import make_signature
from nlgmetrics.core.refusals import BEFORE_SCORING
from nlgmetrics.core.validation import (
    check_choice,
    check_confidence,
    check_int,
    check_real,
    check_reference_inputs,
    check_seed,
    check_switches,
    seed_rule,
    shown_value,
    switch_rule,
)
from nlgmetrics.rouge.bootstrap import bootstrap_columns
from nlgmetrics.rouge.lcs import lcs_length, match_masks, union_lcs_hits, wlcs_hits, wlcs_paper
from nlgmetrics.rouge.ngrams import ngram_counts, overlap, skip_bigram_counts
from nlgmetrics.rouge.result import RougeResult
from nlgmetrics.rouge.rouge155 import rouge155_average
from nlgmetrics.rouge.scoring import Stats, combine, pooled
from nlgmetrics.rouge.tokenize import STEMMERS, split_lines, tokenize
from nlgmetrics.rouge.tokenizers import (
    RougeTokenizer,
    default_drops_every_word,
    resolve_tokenizer,
    warn_dropped_words,
)
from nlgmetrics.rouge.types import DEFAULT_ROUGE_TYPES, RougeType, parse_rouge_type, type_columns

MULTI_REF_MODES = ("best", "average")
ROUGE_W_NORMALIZATIONS = ("rouge155", "paper")
AGGREGATIONS = ("bootstrap", "rouge155")
#: Most bootstrap resamples: the interval's percentiles settle long before (ROUGE-1.5.5 uses 1000),
#: and every resampled mean is held in memory (a larger count is a typo).
MAX_BOOTSTRAP = 1_000_000
# bool("no") is True: a string would silently turn stopword removal on or draw a progress bar.
SWITCH_RULE = switch_rule("remove_stopwords", "progress", stage=BEFORE_SCORING)
#: None: an unseeded bootstrap. numpy takes larger seeds, but every metric's seeds share one range.
SEED_RULE = seed_rule(allow_none=True, stage=BEFORE_SCORING)


@dataclass
class _Text:
    """Everything ROUGE needs about one distinct text, computed lazily and once."""

    tokens: tuple[str, ...]
    sentences: list[tuple[str, ...]]
    #: the default tokenizer found no token in a text with letters or digits (non-ASCII script)
    dropped: bool = False
    cache: dict[Any, Any] = field(default_factory=dict)

    def counts(self, key: tuple) -> tuple[Counter, int]:
        found = self.cache.get(key)
        if found is None:
            if key[0] == "n":
                counter = ngram_counts(self.tokens, key[1])
            else:
                counter = skip_bigram_counts(self.tokens, key[1], key[2])
            found = (counter, sum(counter.values()))
            self.cache[key] = found
        return found

    @property
    def masks(self) -> dict[str, int]:
        found = self.cache.get("masks")
        if found is None:
            found = self.cache["masks"] = match_masks(self.tokens)
        return found

    @property
    def sentence_masks(self) -> list[dict[str, int]]:
        found = self.cache.get("sentence_masks")
        if found is None:
            found = self.cache["sentence_masks"] = [match_masks(s) for s in self.sentences]
        return found

    @property
    def sentence_unigrams(self) -> Counter:
        """Token counts over the sentences' tokens: what ROUGE-Lsum and ROUGE-W clip their hits
        by. rouge-score and ROUGE-1.5.5 tokenize each sentence, and a callable tokenizer's tokens
        of the whole text may differ from those of its lines (``text.split(" ")`` makes
        ``"sat\\nthe"`` one token), so the whole text's counts are not these."""
        found = self.cache.get("sentence_unigrams")
        if found is None:
            found = self.cache["sentence_unigrams"] = Counter(token for line in self.sentences for token in line)
        return found

    @property
    def sentence_total(self) -> int:
        return sum(len(s) for s in self.sentences)


@functools.lru_cache(maxsize=1 << 16)
def _prepare(text: str, tokenizer: str, stem: bool | str, stopwords: bool, sentences: bool) -> _Text:
    """Tokens (and lines) of one distinct text under a named tokenizer; an LRU shared by all
    calls, so the references that every system is scored against are tokenized and counted
    once. Results never depend on it (``clear_cache()`` empties it)."""
    tokens = tokenize(text, stem, stopwords, tokenizer)
    lines = [tokenize(line, stem, stopwords, tokenizer) for line in split_lines(text)] if sentences else []
    dropped = tokenizer == "default" and not tokens and default_drops_every_word(text)
    return _Text(tokens, lines, dropped)


def _preparer(tokenizer: RougeTokenizer, stem: bool | str, stopwords: bool, sentences: bool) -> Callable[[str], _Text]:
    """text -> :class:`_Text` for one call. A callable tokenizer gets a cache of this call only:
    it may be a new lambda every call (or change between calls), and a shared cache keyed by it
    would keep every one alive."""
    key = tokenizer.key
    if key is not None:
        return lambda text: _prepare(text, key, stem, stopwords, sentences)
    split = tokenizer.split

    @functools.cache
    def prepare(text: str) -> _Text:
        lines = [tuple(split(line)) for line in split_lines(text)] if sentences else []
        return _Text(tuple(split(text)), lines)  # rouge-score: the callable's tokens, as they are

    return prepare


def _stemmer_name(use_stemmer: Any) -> bool | str:
    """``use_stemmer`` as the stemmer it selects: False, ``"porter"`` or ``"rouge155"``.

    A switch may be a Python or numpy bool (``np.bool_(True)`` from a config array); 0/1 and other
    strings are rejected, since ``1`` or ``"no"`` would silently select a stemmer.

    >>> _stemmer_name(True), _stemmer_name(False), _stemmer_name("rouge155")
    ('porter', False, 'rouge155')
    """
    if isinstance(use_stemmer, (bool, np.bool_)):
        return "porter" if bool(use_stemmer) else False
    if isinstance(use_stemmer, str) and use_stemmer in STEMMERS:
        return use_stemmer
    raise ValueError(f"Unknown use_stemmer={shown_value(use_stemmer)}; choose False, True, 'porter' or 'rouge155'.")


def _type_names(rouge_types: Any) -> list[Any]:
    """``rouge_types`` as a list of names (one string is one name); something that is not a
    collection of names (a number) is a ValueError saying so, not Python's "not iterable".

    >>> _type_names("rougeL"), _type_names(("rouge1", "rouge2"))
    (['rougeL'], ['rouge1', 'rouge2'])
    """
    if isinstance(rouge_types, str):
        return [rouge_types]
    try:
        return list(rouge_types)
    except TypeError:
        raise ValueError(f"`rouge_types` is {type(rouge_types).__name__} ({shown_value(rouge_types, 40)}), not a "
                         f"list of type names; pass e.g. ['rouge1', 'rougeL'].") from None


def clear_cache() -> None:
    """Empty the cache of tokenized texts (to bound memory, or to time cold runs)."""
    _prepare.cache_clear()


def _pair_stats(kind: RougeType, pred: _Text, ref: _Text, w: float, w_norm: str) -> Stats:
    """Match statistics of one (prediction, reference) pair for one ROUGE type."""
    if kind.kind in ("n", "S"):
        key = ("n", kind.n) if kind.kind == "n" else ("s", kind.max_gap, kind.unigrams)
        (ref_counts, ref_total), (pred_counts, pred_total) = ref.counts(key), pred.counts(key)
        return Stats(overlap(ref_counts, pred_counts), ref_total, pred_total)
    if kind.kind == "L":
        # iterate over the shorter text: LCS is symmetric
        a, b = (ref.tokens, pred) if len(ref.tokens) <= len(pred.tokens) else (pred.tokens, ref)
        return Stats(lcs_length(a, b.masks, len(b.tokens)), len(ref.tokens), len(pred.tokens))
    if kind.kind == "Lsum":
        ref_total, pred_total = ref.sentence_total, pred.sentence_total
        if not ref_total or not pred_total:  # a side without tokens has no LCS: 0 hits
            return Stats(0, ref_total, pred_total)
        hits = union_lcs_hits(ref.sentences, pred.sentences, pred.sentence_masks, ref.sentence_unigrams,
                              pred.sentence_unigrams)
        return Stats(hits, ref_total, pred_total)
    return _rouge_w_stats(pred, ref, w, w_norm)


#: ln of the largest float, less a margin of 1 (a factor e) for the rounding of sums.
_LOG_MAX = math.log(sys.float_info.max) - 1.0


def rouge_w_weight_limit(n_tokens: int, normalization: str = "rouge155", pooled: int = 1) -> float:
    """Largest ``rouge_w_weight`` whose ROUGE-W numbers stay finite for texts of up to ``n_tokens``
    (``pooled``: references whose counts are summed, ``multi_ref="average"``).

    ROUGE-W weighs a run of k consecutive matches ``k**w``. Every quantity it computes for a text
    of n tokens is at most ``n**w`` (a sum of ``k_i**w`` is at most ``(sum k_i)**w``), except the
    reference normaliser of ROUGE-1.5.5 (``normalization="rouge155"``), ``f(sum_i f(len_i))``,
    which is at most ``n**(w*w)``; pooling multiplies by the number of references. With ``M``
    the largest float divided by ``e`` (a margin for rounding) and ``L = ln(M / pooled)``,
    ``w <= L / ln(n)`` (``"paper"``) or ``w <= sqrt(L / ln(n))`` (``"rouge155"``) keeps every
    number finite; texts with several lines stay finite somewhat beyond it.

    >>> round(rouge_w_weight_limit(10), 2), round(rouge_w_weight_limit(10, "paper"), 1)
    (17.54, 307.8)
    >>> rouge_w_weight_limit(1)
    inf
    """
    if n_tokens <= 1:
        return math.inf  # 1**w == 1 for every w
    ratio = (_LOG_MAX - math.log(max(pooled, 1))) / math.log(n_tokens)
    return math.sqrt(ratio) if normalization == "rouge155" else ratio


class _WeightOverflow(ValueError):
    """ROUGE-W's numbers left the float range for texts of up to ``longest`` tokens (``pooled``:
    references whose statistics are summed); the caller adds which example."""

    def __init__(self, w: float, w_norm: str, longest: int, pooled: int = 1) -> None:
        limit = rouge_w_weight_limit(longest, w_norm, pooled)
        where = f" with {pooled} references pooled (multi_ref='average')" if pooled > 1 else ""
        super().__init__(
            f"rouge_w_weight={w:g} is too large for a text of {longest} tokens{where}: ROUGE-W weighs a run "
            f"of k words k**w, and with rouge_w_normalization={w_norm!r} its numbers leave the float range "
            f"(above 1.8e308). rouge_w_weight <= {limit:.4g} keeps them finite for texts of this length "
            f"(ROUGE-1.5.5 uses 1.2)."
        )


def _rouge_w_stats(pred: _Text, ref: _Text, w: float, w_norm: str) -> Stats:
    """ROUGE-W statistics of one pair; a ValueError (never inf, NaN or a bare OverflowError)
    when ``w`` is so large that a number leaves the float range."""
    ref_total, pred_total = ref.sentence_total, pred.sentence_total
    if not ref_total or not pred_total:
        return Stats(0.0, 0.0, 0.0)
    try:
        if w_norm == "rouge155":
            hits, base = wlcs_hits(ref.sentences, pred.sentences, w, ref.sentence_unigrams, pred.sentence_unigrams)
            # ROUGE-1.5.5 weights the reference length twice, f(sum_i f(len_i)), and the prediction
            # as one block, f(n): a perfect match of n words gets recall n**(1-w), not 1.
            stats = Stats(hits, base**w, float(pred_total) ** w)
        else:
            # "paper": WLCS values of Lin 2004, each side normalised by the sum of f(sentence length).
            ref_hits, pred_hits = wlcs_paper(ref.sentences, pred.sentences, w)
            ref_norm = sum(len(s) ** w for s in ref.sentences)
            pred_norm = sum(len(s) ** w for s in pred.sentences)
            # A sentence's WLCS is at most f(its length); the DP adds f(k) - f(k-1) step by step,
            # whose rounding can overshoot by an ulp (1.0000000000000002 for identical texts).
            ref_hits, pred_hits = min(ref_hits, ref_norm), min(pred_hits, pred_norm)
            stats = Stats(ref_hits, ref_norm, pred_norm, pred_hits)
        finite = stats.finite
    except OverflowError:  # float ** float raises instead of returning inf
        finite = False
    if not finite:
        raise _WeightOverflow(w, w_norm, max(ref_total, pred_total))
    return stats


def rouge_family(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    rouge_types: Sequence[str] = DEFAULT_ROUGE_TYPES,
    tokenizer: str | Callable[[str], Sequence[str]] | None = "default",
    use_stemmer: bool | str = False,
    remove_stopwords: bool = False,
    multi_ref: str = "best",
    beta: float = 1.0,
    rouge_w_weight: float = 1.2,
    rouge_w_normalization: str = "rouge155",
    aggregation: str = "bootstrap",
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
    progress: bool = False,
) -> RougeResult:
    """Score ``predictions`` against ``references`` with each ROUGE type.

    Args:
        predictions: one text per example. Lines (``\\n``) are sentences for rougeLsum/rougeW.
        references: per example, one text or a list of texts (ragged allowed).
        rouge_types: any of ``rouge1``..``rouge100`` (n-grams), ``rougeL`` (sentence LCS),
            ``rougeLsum`` (summary-level union LCS over lines), ``rougeW`` (weighted LCS over
            lines), ``rougeS*``/``rougeS<gap>`` (skip-bigrams), ``rougeSU*``/``rougeSU<gap>``.
            The first one is the headline (``main``).
        tokenizer: how texts are split into words (:mod:`nlgmetrics.rouge.tokenizers`):
            ``"default"`` (rouge-score's: ASCII ``[a-z0-9]`` runs; None means the same),
            ``"whitespace"`` (pre-tokenized text), ``"unicode"`` (letters, marks and digits of
            any script: Cyrillic, Greek, Arabic, Devanagari, accented Latin...), ``"cjk"`` (each
            Chinese/Japanese character a token, other runs as ``"unicode"``), ``"char"`` (each
            letter a token, any script); or a callable ``text -> list of str`` (or an object with
            a ``tokenize`` method, as rouge-score's ``RougeScorer(tokenizer=...)``) whose tokens
            are used as they are. The default tokenizer warns, once per call, when it finds no
            token in a text that has letters or digits (all in another script).
        use_stemmer: stem words longer than 3 characters: True or ``"porter"`` (NLTK's Porter,
            as rouge-score) or ``"rouge155"`` (ROUGE-1.5.5's Porter variant, Perl ``-m``). Both are
            English stemmers, applied to ASCII words only (with any named tokenizer).
            With a callable tokenizer stemming is the callable's job: an error.
        remove_stopwords: drop ROUGE-1.5.5's SMART stopwords (Perl ``-s``); not with a callable
            tokenizer (an error, as for stemming).
        multi_ref: ``"best"`` (highest F per type, rouge-score ``score_multi``) or ``"average"``
            (ROUGE-1.5.5 ``-f A``: hits and counts pooled over references).
        beta: F-beta weight of recall, any finite number > 0 (ROUGE-1.5.5 ``-p alpha`` is
            ``1 / (1 + beta**2)``). Where ``beta**2`` overflows, F is its limit, the recall.
        rouge_w_weight: ``w`` of ROUGE-W's ``f(k) = k**w`` (Perl ``-w``), a number >= 1. A weight
            so large that ROUGE-W's numbers leave the float range for some text is a ValueError
            naming the largest weight for that text's length (:func:`rouge_w_weight_limit`).
        rouge_w_normalization: ``"rouge155"`` reproduces ROUGE-1.5.5, whose recall divides by
            ``f(sum_i f(len_i))`` (so a perfect match of n words has recall ``n**(1-w)``);
            ``"paper"`` uses Lin 2004's WLCS (runs consecutive in both texts), best-matching
            sentence per side, recall over ``sum_i f(len_i)`` of the reference sentences and
            precision over the same sum for the prediction (a perfect match scores 1).
        aggregation: ``"bootstrap"`` (plain mean; seeded numpy bootstrap interval) or
            ``"rouge155"`` (the exact ``Average_R/P/F`` and interval that ROUGE-1.5.5 prints,
            see :mod:`nlgmetrics.rouge.rouge155`; use with ``multi_ref="average"``).
        n_bootstrap: bootstrap resamples of the confidence interval (ROUGE-1.5.5 uses 1000).
            ``0`` computes no interval (no ``_low``/``_high`` entries, and no resampling time);
            ``aggregation="rouge155"`` needs at least 1, its averages are means of resamples; at
            most ``MAX_BOOTSTRAP`` (1,000,000).
        confidence: the interval's level, strictly between 0 and 1.
        seed: the bootstrap's seed (an integer in ``[0, 2**64 - 1]``, every metric's seed range,
            reproducible; None: unseeded). ROUGE-1.5.5's own seeds are used with
            ``aggregation="rouge155"``.
        progress: show a progress bar over examples (True or False).

    Returns:
        :class:`~nlgmetrics.rouge.result.RougeResult`: per type ``T`` the per-example columns
        ``T`` (F-measure), ``T_precision`` and ``T_recall``, all in [0, 1] (a prediction or
        reference without tokens scores 0, never NaN); ``aggregate()`` adds each column's
        ``_low``/``_high`` bounds; ``signature`` records every option that changes a number.

    Example:
        >>> r = rouge_family(["a b"], ["a b"], rouge_types=["rouge2"], n_bootstrap=0)
        >>> r.scores["rouge2"], r.aggregate()
        ([1.0], {'rouge2': 1.0, 'rouge2_precision': 1.0, 'rouge2_recall': 1.0})
    """
    preds, refs = check_reference_inputs(predictions, references)
    types = [parse_rouge_type(name) for name in _type_names(rouge_types)]
    if not types:
        raise ValueError("`rouge_types` is empty; pass at least one, e.g. ['rouge1', 'rougeL'].")
    if len({t.name for t in types}) != len(types):
        raise ValueError(f"`rouge_types` has duplicates: {[t.name for t in types]}; list each type once.")
    check_choice("multi_ref", multi_ref, MULTI_REF_MODES)
    check_choice("rouge_w_normalization", rouge_w_normalization, ROUGE_W_NORMALIZATIONS)
    check_choice("aggregation", aggregation, AGGREGATIONS)
    stem = _stemmer_name(use_stemmer)
    remove_stopwords, progress = check_switches(
        SWITCH_RULE, remove_stopwords=remove_stopwords, progress=progress).values()
    splitter = resolve_tokenizer(tokenizer)
    if splitter.key is None and (stem or remove_stopwords):  # a callable tokenizer
        # rouge-score's RougeScorer ignores use_stemmer when given a tokenizer; we refuse instead
        # of silently scoring something else than asked.
        asked = f"use_stemmer={shown_value(use_stemmer)}" if stem else "remove_stopwords=True"
        raise ValueError(
            f"{asked} with a callable tokenizer ({splitter.name}): its tokens are used as they are "
            f"(rouge-score's RougeScorer ignores use_stemmer when given a tokenizer). Stem or filter "
            f"inside the callable, or use a named tokenizer (e.g. tokenizer='unicode')."
        )
    # numpy's default_rng(seed) would fail with a bare TypeError ("SeedSequence expects int...").
    seed = check_seed(seed, allow_none=True, rule=SEED_RULE)
    # Plain floats (numpy scalars accepted): the signature and the numbers do not depend on the type.
    beta = check_real(beta, minimum=0, exclusive_minimum=True,
                      message=f"beta={shown_value(beta)} must be a finite positive number (1.0 gives F1).")
    w = check_real(rouge_w_weight, minimum=1, message=(
        f"rouge_w_weight={shown_value(rouge_w_weight)} must be a finite number >= 1 (ROUGE-1.5.5 uses 1.2)."))
    n_bootstrap = check_int("n_bootstrap", n_bootstrap, minimum=0, maximum=MAX_BOOTSTRAP, message=(
        f"n_bootstrap={shown_value(n_bootstrap)} must be a non-negative integer (ROUGE-1.5.5 uses 1000; "
        f"0: no confidence interval), at most {MAX_BOOTSTRAP:,}."))
    if aggregation == "rouge155" and n_bootstrap == 0:
        raise ValueError(
            "aggregation='rouge155' needs n_bootstrap >= 1: ROUGE-1.5.5's averages are means of "
            "bootstrap resamples (it uses 1000); use aggregation='bootstrap' for plain means without interval."
        )
    confidence = check_confidence(confidence)  # both aggregations take it as checked here

    prepare = _preparer(splitter, stem, remove_stopwords, any(t.kind in ("Lsum", "W") for t in types))
    dropped: dict[str, list[tuple[int, str]]] = {"predictions": [], "references": []}
    transform_w = (lambda x: x ** (1.0 / w)) if any(t.kind == "W" for t in types) else None
    scores: dict[str, list[float]] = {name: [] for t in types for name in type_columns(t.name)}
    iterator: Any = zip(preds, refs)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, total=len(preds), desc="rouge")
    for index, (pred_text, ref_texts) in enumerate(iterator):
        pred = prepare(pred_text)
        ref_items = [prepare(r) for r in ref_texts]
        if pred.dropped:
            dropped["predictions"].append((index, pred_text))
        dropped["references"].extend((index, text) for text, ref in zip(ref_texts, ref_items) if ref.dropped)
        for kind in types:
            try:
                per_ref = [_pair_stats(kind, pred, ref, w, rouge_w_normalization) for ref in ref_items]
                # multi_ref="average" sums ROUGE-W's statistics: an infinite sum would silently give 0
                if kind.kind == "W" and multi_ref == "average" and not pooled(per_ref).finite:
                    longest = max(text.sentence_total for text in (pred, *ref_items))
                    raise _WeightOverflow(w, rouge_w_normalization, longest, len(per_ref))
            except _WeightOverflow as error:
                raise ValueError(f"example {index}: {error}") from None
            score = combine(per_ref, multi_ref, beta, transform_w if kind.kind == "W" else None)
            f_column, p_column, r_column = type_columns(kind.name)
            scores[f_column].append(score.fmeasure)
            scores[p_column].append(score.precision)
            scores[r_column].append(score.recall)

    warn_dropped_words(dropped)
    options: dict[str, Any] = {
        "rouge_types": [t.name for t in types],
        "stemmer": stem,
        "stopwords": remove_stopwords,
        "multi_ref": multi_ref,
        "beta": beta,
        "tokenize": splitter.name,
        "nrefs": reference_count(refs),
        "aggregation": aggregation,
        "n_bootstrap": n_bootstrap,
    }
    if any(t.kind == "W" for t in types):
        options.update(rouge_w_weight=w, rouge_w_normalization=rouge_w_normalization)
    if n_bootstrap:
        options["confidence"] = confidence
    intervals: dict[str, tuple[float, float]] = {}
    averages: dict[str, float] = {}
    if aggregation == "rouge155":  # n_bootstrap >= 1, checked above
        alpha = 1.0 / (1.0 + beta * beta)  # 0.0 where beta**2 overflows: F is then the recall
        for t in types:
            columns = type_columns(t.name)
            recall, precision = scores[columns[2]], scores[columns[1]]
            printed = rouge155_average(recall, precision, alpha, n_bootstrap, 100 * confidence)
            for column, measure in zip(columns, ("fmeasure", "precision", "recall")):
                averages[column] = printed[measure]["mean"]
                intervals[column] = (printed[measure]["low"], printed[measure]["high"])
    elif n_bootstrap:
        options["seed"] = seed
        matrix = np.array(list(scores.values()), dtype=np.float64).T
        intervals = dict(zip(scores, bootstrap_columns(matrix, n_bootstrap, confidence, seed)))
    return RougeResult(scores=scores, signature=make_signature("rouge_family", options),
                       rouge_types=tuple(t.name for t in types), intervals=intervals, averages=averages)
