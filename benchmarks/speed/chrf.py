"""chrF (word_order=0) or chrF++ (2) against sacrebleu: ``CHRF.corpus_score`` and one
``sentence_score`` per output, against one ``chrf`` call per system giving both."""

from __future__ import annotations

from benchmarks.harness import REPEATS
from benchmarks.speed.text import Systems, corpus_and_sentence_row


def chrf_row(name: str, systems: Systems, word_order: int, repeats: int = REPEATS) -> dict:
    """Corpus and sentence chrF (``word_order`` 0) or chrF++ (2) of every system."""
    from sacrebleu.metrics import CHRF

    from nlgmetrics.chrf import chrf, clear_caches

    variant = "chrF++" if word_order == 2 else "chrF"
    return corpus_and_sentence_row(
        f"corpus + sentence {variant}, {name}", f"sacrebleu CHRF(word_order={word_order}) corpus_score + sentence_score",
        systems, lambda: CHRF(word_order=word_order), lambda preds, refs: chrf(preds, refs, word_order=word_order),
        "sentence_chrf", reset=clear_caches, repeats=repeats)
