"""ROUGE-1/2/L/Lsum against rouge-score: one ``score_multi`` per output against one ``rouge_family``
call per system, with and without the stemmer, every per-example precision/recall/F compared."""

from __future__ import annotations

from benchmarks.harness import REPEATS, compare
from benchmarks.speed.text import Systems, row

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def rouge_row(name: str, systems: Systems, use_stemmer: bool, repeats: int = REPEATS) -> dict:
    """One row: every system of data set ``name`` scored by both sides; our caches start empty."""
    from rouge_score import rouge_scorer

    from nlgmetrics.rouge import clear_cache, rouge_family

    def anchor():
        scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=use_stemmer)
        return {s: [scorer.score_multi(r, p) for p, r in zip(preds, refs)] for s, (preds, refs) in systems.items()}

    def ours():
        return {
            s: rouge_family(preds, refs, rouge_types=ROUGE_TYPES, use_stemmer=use_stemmer, multi_ref="best",
                            n_bootstrap=0)
            for s, (preds, refs) in systems.items()
        }

    # start cold: the first system pays for tokenizing the references
    sides = compare(anchor, ours, reset=clear_cache, repeats=repeats)
    expected, got = sides.anchor.value, sides.ours.value
    diff = 0.0
    for system, scores in expected.items():
        for rouge_type in ROUGE_TYPES:
            for suffix, k in (("_precision", 0), ("_recall", 1), ("", 2)):
                column = got[system].scores[rouge_type + suffix]
                diff = max(diff, max(abs(e[rouge_type][k] - g) for e, g in zip(scores, column)))
    n = sum(len(p) for p, _ in systems.values())
    stem = "stemmer" if use_stemmer else "no stemmer"
    return row(f"ROUGE-1/2/L/Lsum ({stem}), {name}, {n} outputs", "rouge-score 0.1.2 score_multi", sides, diff)
