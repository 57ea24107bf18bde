"""``rouge_scores``: every ROUGE variant for a batch of predictions, per example and aggregated.

Each distinct text is tokenized, stemmed and counted once, in a bounded LRU cache shared by all
calls (in meta-evaluation the same reference is paired with every system), then each (prediction, reference) pair is reduced to
match statistics (:mod:`nlgmetrics.rouge.scoring`) and references are combined per prediction.

>>> out = rouge_scores(["the cat sat"], [["the cat sat down", "a dog"]], rouge_types=("rouge1", "rougeL"))
>>> out["scores"]["rouge1"]["recall"], out["scores"]["rougeL"]["precision"]
([0.75], [1.0])
>>> out["signature"]
'rouge|beta:1|bootstrap:1000x0.95/seed0|multi_ref:best|nrefs:2|stemmer:no|stopwords:no|tok:rouge_score|types:rouge1,rougeL|version:0.1.0'
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nlgmetrics.rouge.bootstrap import bootstrap_columns, check_confidence
from nlgmetrics.rouge.lcs import lcs_length, match_masks, union_lcs_hits, wlcs_hits, wlcs_paper
from nlgmetrics.rouge.ngrams import ngram_counts, overlap, skip_bigram_counts
from nlgmetrics.rouge.rouge155 import rouge155_average
from nlgmetrics.rouge.scoring import Stats, combine
from nlgmetrics.rouge.tokenize import STEMMERS, split_lines, tokenize
from nlgmetrics.signature import make_signature
from nlgmetrics.validation import (
    as_reference_lists,
    as_texts,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_same_length,
)

DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
MULTI_REF_MODES = ("best", "average")
ROUGE_W_NORMALIZATIONS = ("rouge155", "paper")
AGGREGATIONS = ("bootstrap", "rouge155")
MEASURES = ("precision", "recall", "fmeasure")

_TYPE_RE = re.compile(r"^rouge(?:(?P<n>[1-9][0-9]*)|(?P<l>L|Lsum|W)|S(?P<su>U?)(?P<gap>[0-9]+|\*)?)$")


@dataclass(frozen=True)
class RougeType:
    """A parsed ROUGE type name (``rouge2``, ``rougeL``, ``rougeLsum``, ``rougeW``, ``rougeSU4``...)."""

    name: str
    kind: str  # "n", "L", "Lsum", "W", "S"
    n: int = 0
    max_gap: int | None = None
    unigrams: bool = False


def parse_rouge_type(name: Any) -> RougeType:
    """Parse one ROUGE type name; raise a ValueError listing the accepted forms.

    >>> parse_rouge_type("rougeSU4")
    RougeType(name='rougeSU4', kind='S', n=0, max_gap=4, unigrams=True)
    """
    match = _TYPE_RE.match(name) if isinstance(name, str) else None
    if match is None:
        raise ValueError(
            f"Unknown rouge type {name!r}; use rouge1..rougeN (n-grams), rougeL, rougeLsum, "
            f"rougeW, rougeS* / rougeS4 (skip-bigrams, max gap 4) or rougeSU* / rougeSU4."
        )
    if match.group("n"):
        return RougeType(name, "n", n=int(match.group("n")))
    if match.group("l"):
        return RougeType(name, match.group("l"))
    gap = match.group("gap")
    return RougeType(
        name,
        "S",
        max_gap=None if gap in (None, "*") else int(gap),
        unigrams=bool(match.group("su")),
    )


@dataclass
class _Text:
    """Everything ROUGE needs about one distinct text, computed lazily and once."""

    tokens: tuple[str, ...]
    sentences: list[tuple[str, ...]]
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
    def unigrams(self) -> Counter:
        return self.counts(("n", 1))[0]


@functools.lru_cache(maxsize=1 << 16)
def _prepare(text: str, stem: bool | str, stopwords: bool, sentences: bool) -> _Text:
    """Tokens (and lines) of one distinct text; an LRU shared by all calls, so the references
    that every system is scored against are tokenized and counted once. Results never depend
    on it (``clear_cache()`` empties it)."""
    tokens = tokenize(text, stem, stopwords)
    lines = [tokenize(line, stem, stopwords) for line in split_lines(text)] if sentences else []
    return _Text(tokens, lines)


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
    raise ValueError(f"Unknown use_stemmer={use_stemmer!r}; choose False, True, 'porter' or 'rouge155'.")


def clear_cache() -> None:
    """Empty the cache of tokenized texts (to bound memory, or to time cold runs)."""
    _prepare.cache_clear()


def _pair_stats(kind: RougeType, pred: _Text, ref: _Text, w: float, w_norm: str) -> Stats:
    """Match statistics of one (prediction, reference) pair for one ROUGE type."""
    if kind.kind == "n" or kind.kind == "S":
        key = ("n", kind.n) if kind.kind == "n" else ("s", kind.max_gap, kind.unigrams)
        ref_counts, ref_total = ref.counts(key)
        pred_counts, pred_total = pred.counts(key)
        return Stats(overlap(ref_counts, pred_counts), ref_total, pred_total)
    if kind.kind == "L":
        a, b = ref.tokens, pred
        if len(a) > len(b.tokens):  # iterate over the shorter text: LCS is symmetric
            a, b = pred.tokens, ref
        return Stats(lcs_length(a, b.masks, len(b.tokens)), len(ref.tokens), len(pred.tokens))
    ref_total = sum(len(s) for s in ref.sentences)
    pred_total = sum(len(s) for s in pred.sentences)
    if kind.kind == "Lsum":
        if not ref_total or not pred_total:
            return Stats(0, ref_total, pred_total)
        hits = union_lcs_hits(ref.sentences, pred.sentences, pred.sentence_masks, ref.unigrams, pred.unigrams)
        return Stats(hits, ref_total, pred_total)
    # ROUGE-W
    if not ref_total or not pred_total:
        return Stats(0.0, 0.0, 0.0)
    if w_norm == "rouge155":
        hits, base = wlcs_hits(ref.sentences, pred.sentences, w, ref.unigrams, pred.unigrams)
        # ROUGE-1.5.5 weights the reference length twice, f(sum_i f(len_i)), and the prediction
        # as one block, f(n): a perfect match of n words gets recall n**(1-w), not 1.
        return Stats(hits, base**w, float(pred_total) ** w)
    # "paper": WLCS values of Lin 2004, each side normalised by the sum of f(sentence length).
    ref_hits, pred_hits = wlcs_paper(ref.sentences, pred.sentences, w)
    ref_norm = sum(len(s) ** w for s in ref.sentences)
    pred_norm = sum(len(s) ** w for s in pred.sentences)
    return Stats(ref_hits, ref_norm, pred_norm, pred_hits)


def rouge_scores(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    rouge_types: Sequence[str] = DEFAULT_ROUGE_TYPES,
    use_stemmer: bool | str = False,
    remove_stopwords: bool = False,
    multi_ref: str = "best",
    beta: float = 1.0,
    rouge_w_weight: float = 1.2,
    rouge_w_normalization: str = "rouge155",
    aggregate: bool = True,
    aggregation: str = "bootstrap",
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
    progress: bool = False,
) -> dict[str, Any]:
    """Score ``predictions`` against ``references`` with each ROUGE type.

    Args:
        predictions: one text per example. Lines (``\\n``) are sentences for rougeLsum/rougeW.
        references: per example, one text or a list of texts (ragged allowed).
        rouge_types: any of ``rouge1``..``rougeN``, ``rougeL`` (sentence LCS), ``rougeLsum``
            (summary-level union LCS over lines), ``rougeW`` (weighted LCS over lines),
            ``rougeS*``/``rougeS<gap>`` (skip-bigrams), ``rougeSU*``/``rougeSU<gap>``.
        use_stemmer: stem words longer than 3 characters: True or ``"porter"`` (NLTK's Porter,
            as rouge-score) or ``"rouge155"`` (ROUGE-1.5.5's Porter variant, Perl ``-m``).
        remove_stopwords: drop ROUGE-1.5.5's SMART stopwords (Perl ``-s``).
        multi_ref: ``"best"`` (highest F per type, rouge-score ``score_multi``) or ``"average"``
            (ROUGE-1.5.5 ``-f A``: hits and counts pooled over references).
        beta: F-beta weight of recall (ROUGE-1.5.5 ``-p alpha`` is ``1 / (1 + beta**2)``).
        rouge_w_weight: ``w`` of ROUGE-W's ``f(k) = k**w`` (Perl ``-w``).
        rouge_w_normalization: ``"rouge155"`` reproduces ROUGE-1.5.5, whose recall divides by
            ``f(sum_i f(len_i))`` (so a perfect match of n words has recall ``n**(1-w)``);
            ``"paper"`` uses Lin 2004's WLCS (runs consecutive in both texts), best-matching
            sentence per side, recall over ``sum_i f(len_i)`` of the reference sentences and
            precision over the same sum for the prediction (a perfect match scores 1).
        aggregate: add ``"aggregate"``: mean and bootstrap confidence interval per measure.
        aggregation: ``"bootstrap"`` (plain mean; seeded numpy bootstrap interval) or
            ``"rouge155"`` (the exact ``Average_R/P/F`` and interval that ROUGE-1.5.5 prints,
            see :mod:`nlgmetrics.rouge.rouge155`; use with ``multi_ref="average"``).
        n_bootstrap, confidence, seed: the bootstrap (seeded, reproducible; ROUGE-1.5.5's own
            seeds are used with ``aggregation="rouge155"``).
        progress: show a progress bar over examples.

    Returns:
        ``{"scores": {type: {"precision": [...], "recall": [...], "fmeasure": [...]}},
        "aggregate": {type: {measure: {"mean", "low", "high"}}}, "signature": str}``. Scores
        are in [0, 1]; a prediction or reference without tokens scores 0 (never NaN).

    Example:
        >>> rouge_scores(["a b"], ["a b"], rouge_types=["rouge2"], aggregate=False)["scores"]["rouge2"]["fmeasure"]
        [1.0]
    """
    preds = as_texts("predictions", predictions)
    refs = as_reference_lists(references, n=len(preds))
    check_same_length(predictions=preds, references=refs)
    if isinstance(rouge_types, str):
        rouge_types = [rouge_types]
    types = [parse_rouge_type(name) for name in rouge_types]
    if not types:
        raise ValueError("`rouge_types` is empty; pass at least one, e.g. ['rouge1', 'rougeL'].")
    if len({t.name for t in types}) != len(types):
        raise ValueError(f"`rouge_types` has duplicates: {list(rouge_types)}; list each type once.")
    check_choice("multi_ref", multi_ref, MULTI_REF_MODES)
    check_choice("rouge_w_normalization", rouge_w_normalization, ROUGE_W_NORMALIZATIONS)
    check_choice("aggregation", aggregation, AGGREGATIONS)
    stem = _stemmer_name(use_stemmer)
    # bool("no") is True: a string here would silently turn stopword removal on.
    remove_stopwords = check_bool("remove_stopwords", remove_stopwords,
                                  message=f"remove_stopwords={remove_stopwords!r} must be True or False.")
    # numpy's default_rng(seed) would fail with a bare TypeError ("SeedSequence expects int...").
    seed = check_int("seed", seed, minimum=0, allow_none=True, message=(
        f"seed={seed!r} must be a non-negative integer, or None for an unseeded bootstrap."))
    # Plain floats (numpy scalars accepted): the signature and the numbers do not depend on the type.
    beta = check_real("beta", beta, minimum=0, exclusive_minimum=True,
                      message=f"beta={beta!r} must be a positive number (1.0 gives F1).")
    w = check_real("rouge_w_weight", rouge_w_weight, minimum=1, message=(
        f"rouge_w_weight={rouge_w_weight!r} must be a number >= 1 (ROUGE-1.5.5 uses 1.2)."))
    if aggregate:
        n_bootstrap = check_int("n_bootstrap", n_bootstrap, minimum=1, message=(
            f"n_bootstrap={n_bootstrap!r} must be a positive integer (ROUGE-1.5.5 uses 1000)."))
        confidence = check_confidence(confidence)  # checked here too: the Perl-style path needs it

    needs_sentences = any(t.kind in ("Lsum", "W") for t in types)

    def prepare(text: str) -> _Text:
        return _prepare(text, stem, remove_stopwords, needs_sentences)

    transform_w = (lambda x: x ** (1.0 / w)) if any(t.kind == "W" for t in types) else None
    columns: dict[str, dict[str, list[float]]] = {t.name: {m: [] for m in MEASURES} for t in types}
    iterator = zip(preds, refs)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, total=len(preds), desc="rouge")
    for pred_text, ref_texts in iterator:
        pred = prepare(pred_text)
        ref_items = [prepare(r) for r in ref_texts]
        for kind in types:
            per_ref = [_pair_stats(kind, pred, ref, w, rouge_w_normalization) for ref in ref_items]
            score = combine(per_ref, multi_ref, beta, transform_w if kind.kind == "W" else None)
            column = columns[kind.name]
            column["precision"].append(score.precision)
            column["recall"].append(score.recall)
            column["fmeasure"].append(score.fmeasure)

    nrefs = {len(r) for r in refs}
    options = {
        "types": [t.name for t in types],
        "stemmer": stem,
        "stopwords": remove_stopwords,
        "multi_ref": multi_ref,
        "beta": beta,
        "tok": "rouge_score",
        "nrefs": nrefs.pop() if len(nrefs) == 1 else "var",
    }
    if any(t.kind == "W" for t in types):
        options["w"] = w
        options["w_norm"] = rouge_w_normalization
    result: dict[str, Any] = {"scores": columns}
    if aggregate and aggregation == "rouge155":
        alpha = 1.0 / (1.0 + beta * beta)
        result["aggregate"] = {
            t.name: rouge155_average(
                columns[t.name]["recall"], columns[t.name]["precision"], alpha, n_bootstrap, 100 * confidence
            )
            for t in types
        }
        options["bootstrap"] = f"rouge155/{n_bootstrap}x{confidence:g}"
    elif aggregate:
        import numpy as np

        names = [(t.name, m) for t in types for m in MEASURES]
        matrix = np.array([columns[t][m] for t, m in names], dtype=np.float64).T
        stats = bootstrap_columns(matrix, n_bootstrap, confidence, seed)
        result["aggregate"] = {t.name: {} for t in types}
        for (name, measure), value in zip(names, stats):
            result["aggregate"][name][measure] = value
        options["bootstrap"] = f"{n_bootstrap}x{confidence:g}/seed{seed}"
    result["signature"] = make_signature("rouge", options)
    return result
