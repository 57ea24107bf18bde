"""Corpus and sentence BLEU against sacrebleu: one ``corpus_bleu`` per system (our caches cleared
before every system, or shared by the systems) and one ``sentence_bleu`` per output."""

from __future__ import annotations

from benchmarks.harness import REPEATS, compare
from benchmarks.speed.text import Systems, row, streams


def corpus_row(name: str, systems: Systems, cold: bool, repeats: int = REPEATS) -> dict:
    """Corpus BLEU of every system; ``cold``: our caches cleared before every system."""
    import sacrebleu

    from nlgmetrics.bleu import clear_caches, corpus_bleu

    def anchor():
        return {s: sacrebleu.corpus_bleu(preds, streams(refs)).score for s, (preds, refs) in systems.items()}

    def ours():
        scores = {}
        for s, (preds, refs) in systems.items():
            if cold:
                clear_caches()
            scores[s] = corpus_bleu(preds, streams(refs)).score
        return scores

    sides = compare(anchor, ours, reset=clear_caches, repeats=repeats)
    expected, got = sides.anchor.value, sides.ours.value
    diff = max(abs(expected[s] - got[s]) for s in expected)
    cache = "caches cleared before every system" if cold else "reference cache shared by the systems"
    return row(f"corpus BLEU, {name}, {len(systems)} systems ({cache})", "sacrebleu corpus_bleu", sides, diff)


def sentence_row(name: str, systems: Systems, repeats: int = REPEATS) -> dict:
    """Sentence BLEU of every output (one ``bleu`` call per system on our side)."""
    import sacrebleu

    from nlgmetrics.bleu import bleu, clear_caches

    def anchor():
        return {s: [sacrebleu.sentence_bleu(p, r).score for p, r in zip(preds, refs)] for s, (preds, refs) in systems.items()}

    def ours():
        return {s: bleu(preds, refs).scores["sentence_bleu"] for s, (preds, refs) in systems.items()}

    sides = compare(anchor, ours, reset=clear_caches, repeats=repeats)
    expected, got = sides.anchor.value, sides.ours.value
    diff = max(abs(a - b) for s in expected for a, b in zip(expected[s], got[s]))
    n = sum(len(p) for p, _ in systems.values())
    return row(f"sentence BLEU, {name}, {n} outputs", "sacrebleu sentence_bleu", sides, diff)
