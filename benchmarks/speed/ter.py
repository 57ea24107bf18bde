"""TER against sacrebleu: ``TER.corpus_score`` and one ``sentence_score`` per output, against one
``ter`` call per system giving both (sacrebleu takes ~0.1 s per WebNLG output: use a ``--limit``)."""

from __future__ import annotations

from benchmarks.harness import REPEATS
from benchmarks.speed.text import Systems, corpus_and_sentence_row


def ter_row(name: str, systems: Systems, repeats: int = REPEATS) -> dict:
    """Corpus and sentence TER of every system."""
    from sacrebleu.metrics import TER

    from nlgmetrics.ter import ter

    return corpus_and_sentence_row(f"corpus + sentence TER, {name}", "sacrebleu TER() corpus_score + sentence_score",
                                   systems, TER, ter, "sentence_ter", repeats=repeats)
