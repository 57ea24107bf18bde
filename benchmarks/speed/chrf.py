"""chrF (word_order=0) or chrF++ (2) against sacrebleu: ``CHRF.corpus_score`` and one
``sentence_score`` per output, against one ``chrf`` call per system giving both."""

from __future__ import annotations

from benchmarks.harness import REPEATS, compare
from benchmarks.speed.text import Systems, corpus_and_sentence_diff, row, streams


def chrf_row(name: str, systems: Systems, word_order: int, repeats: int = REPEATS) -> dict:
    """Corpus and sentence chrF (``word_order`` 0) or chrF++ (2) of every system."""
    from sacrebleu.metrics import CHRF

    from nlgmetrics.chrf import chrf, clear_caches

    def anchor():
        metric = CHRF(word_order=word_order)
        return {s: (metric.corpus_score(preds, streams(refs)).score,
                    [metric.sentence_score(p, r).score for p, r in zip(preds, refs)])
                for s, (preds, refs) in systems.items()}

    def ours():
        out = {}
        for s, (preds, refs) in systems.items():
            result = chrf(preds, refs, word_order=word_order)
            out[s] = (result.main_score, result.scores["sentence_chrf"])
        return out

    sides = compare(anchor, ours, reset=clear_caches, repeats=repeats)
    diff = corpus_and_sentence_diff(sides.anchor.value, sides.ours.value)
    n = sum(len(p) for p, _ in systems.values())
    variant = "chrF++" if word_order == 2 else "chrF"
    return row(f"corpus + sentence {variant}, {name}, {len(systems)} systems, {n} outputs",
               f"sacrebleu CHRF(word_order={word_order}) corpus_score + sentence_score", sides, diff)
