"""TER against sacrebleu: ``TER.corpus_score`` and one ``sentence_score`` per output, against one
``ter`` call per system giving both (sacrebleu takes ~0.1 s per WebNLG output: use a ``--limit``)."""

from __future__ import annotations

from benchmarks.harness import REPEATS, compare
from benchmarks.speed.text import Systems, corpus_and_sentence_diff, row, streams


def ter_row(name: str, systems: Systems, repeats: int = REPEATS) -> dict:
    """Corpus and sentence TER of every system."""
    from sacrebleu.metrics import TER

    from nlgmetrics.ter import ter

    def anchor():
        metric = TER()
        return {s: (metric.corpus_score(preds, streams(refs)).score,
                    [metric.sentence_score(p, r).score for p, r in zip(preds, refs)])
                for s, (preds, refs) in systems.items()}

    def ours():
        out = {}
        for s, (preds, refs) in systems.items():
            result = ter(preds, refs)
            out[s] = (result.main_score, result.scores["sentence_ter"])
        return out

    sides = compare(anchor, ours, repeats=repeats)
    diff = corpus_and_sentence_diff(sides.anchor.value, sides.ours.value)
    n = sum(len(p) for p, _ in systems.values())
    return row(f"corpus + sentence TER, {name}, {len(systems)} systems, {n} outputs",
               "sacrebleu TER() corpus_score + sentence_score", sides, diff)
