"""What chrF / chrF++ is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its options,
how ``compare`` resamples it, and how its evaluate module answers to evaluate's ``chrf``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlgmetrics.chrf.api import MAX_BETA
from nlgmetrics.chrf.result import ChrfResult
from nlgmetrics.core.corpus import MAX_NGRAM_ORDER
from nlgmetrics.core.protocol import (LOWERCASE, SACREBLEU_CITATION, EvaluateFace, MetricSpec, Option, Range,
                                      Resampling, read_citation, read_description)


def chrf_keys(result: ChrfResult, options: Mapping[str, Any]) -> dict[str, Any]:
    """evaluate's chrf output (its keys, order and types: ``beta`` as given), then our extra number."""
    return {
        "score": result.chrf,
        "char_order": result.char_order,
        "word_order": result.word_order,
        "beta": options.get("beta", PROTOCOL.default("beta")),
        "sentence_chrf": result.aggregate()["sentence_chrf"],
    }


def per_example_keys(result: ChrfResult, options: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Sentence chrF under "score" (the settings char_order, word_order, beta have no value per example)."""
    return {"score": result.scores["sentence_chrf"]}


PROTOCOL = MetricSpec(
    name="chrf",
    title="chrF / chrF++",
    description=read_description(__package__),
    citation=read_citation(__package__) + SACREBLEU_CITATION,
    second_input="references",
    compute="nlgmetrics.chrf:chrf",
    options=(
        Option("char_order", "int", "largest character n-gram order", range=Range(0, MAX_NGRAM_ORDER), signature_key="char_order"),
        Option("word_order", "int", "largest word n-gram order (0: chrF, 2: chrF++)", range=Range(0, MAX_NGRAM_ORDER),
               signature_key="word_order"),
        Option("beta", "float", "recall is beta times as important as precision (0: precision only)",
               range=Range(0, MAX_BETA), signature_key="beta"),
        LOWERCASE,
        Option("whitespace", "bool", "keep whitespace in character n-grams", signature_key="whitespace"),
        Option("eps_smoothing", "bool",
               "mean of per-order F-scores with epsilon smoothing (chrF++.py) instead of "
               "sacrebleu's effective-order average", signature_key="eps_smoothing"),
    ),
    resampling=Resampling("nlgmetrics.chrf:chrf_statistics", "nlgmetrics.chrf:chrf_from_statistics"),
    evaluate=EvaluateFace(counterpart="chrf", aggregated=chrf_keys, per_example=per_example_keys),
    codebase_urls=("https://github.com/mjpost/sacrebleu", "https://github.com/m-popovic/chrF"),
    reference_urls=("https://aclanthology.org/W15-3049", "https://aclanthology.org/W17-4770",
                    "https://aclanthology.org/W18-6319"),
)
