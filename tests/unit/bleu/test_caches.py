"""BLEU's caches: one pair (tokenized texts, merged references) that every entry point shares, and
``clear_caches()`` empties every cache the package fills while scoring.

The caches are found by walking the package's modules (any ``functools`` cache defined there), so
that a cache added to another module is held to the same contract without a test naming it.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import nlgmetrics.bleu
from nlgmetrics.bleu import bleu, bleu_from_statistics, bleu_statistics, corpus_bleu, sentence_bleu
from nlgmetrics.bleu.api import clear_caches

HYPOTHESES = ["the cat sat on the mat", "a dog barked at the moon", "it rained all day"]
REFERENCES = [["the cat sat on a mat"], ["a dog barked at a moon", "the dog barked"], ["it rained"]]
#: The tokenizers module caches loaded tokenizer models (MeCab, SentencePiece) and per-character
#: tables, not texts: clear_caches keeps them, and the texts below (13a) never fill them.
KEPT = "nlgmetrics.bleu.tokenizers"


def _caches() -> dict[str, object]:
    """Every ``functools`` cache defined at module level in the BLEU package, by dotted name."""
    found = {}
    for info in pkgutil.iter_modules(nlgmetrics.bleu.__path__):
        module = importlib.import_module(f"nlgmetrics.bleu.{info.name}")
        for name, value in vars(module).items():
            if callable(getattr(value, "cache_info", None)) and value.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = value
    return found


def _score_everywhere() -> None:
    """Every BLEU entry point once, statistics and resampled score included."""
    bleu(HYPOTHESES, REFERENCES)
    corpus_bleu(HYPOTHESES, [[refs[0] for refs in REFERENCES]])
    sentence_bleu(HYPOTHESES[0], REFERENCES[0])
    bleu_from_statistics(bleu_statistics(HYPOTHESES, REFERENCES).sum(axis=0))


def test_the_caches_are_found():
    # The walk sees the tokens / references pair (else the tests below would pass vacuously).
    names = set(_caches())
    assert {"nlgmetrics.bleu.api._tokens", "nlgmetrics.bleu.api._reference"} <= names


def test_clear_caches_empties_every_cache_the_scoring_fills():
    _score_everywhere()
    filled = {name for name, cache in _caches().items() if cache.cache_info().currsize}
    assert filled, "scoring filled no cache: the walk is broken"
    clear_caches()
    left = {name: cache.cache_info().currsize for name, cache in _caches().items()
            if not name.startswith(KEPT) and cache.cache_info().currsize}
    assert not left, f"clear_caches() left these caches filled: {left}"


@pytest.mark.parametrize("first", ["statistics", "metric"])
def test_every_entry_point_shares_one_pair_of_caches(first):
    """Texts tokenized and references merged by one entry point are cache hits for the others:
    after one pass, a second pass over the same texts misses no cache of texts."""
    for cache in _caches().values():  # every cache, not just those clear_caches knows of
        cache.cache_clear()
    if first == "statistics":
        bleu_statistics(HYPOTHESES, REFERENCES)
    else:
        bleu(HYPOTHESES, REFERENCES)
    misses = {name: cache.cache_info().misses for name, cache in _caches().items() if not name.startswith(KEPT)}
    bleu(HYPOTHESES, REFERENCES)
    bleu_statistics(HYPOTHESES, REFERENCES)
    after = {name: cache.cache_info().misses for name, cache in _caches().items() if not name.startswith(KEPT)}
    assert after == misses
