"""What BLEU is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its options, how
``compare`` resamples it, and how its evaluate module answers to evaluate's ``sacrebleu``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlgmetrics.bleu.result import BleuResult
from nlgmetrics.core.corpus import MAX_NGRAM_ORDER
from nlgmetrics.core.protocol import (LOWERCASE, SACREBLEU_CITATION, EvaluateFace, MetricSpec, Option, Range,
                                      Resampling, read_citation, read_description)


def sacrebleu_keys(result: BleuResult, options: Mapping[str, Any]) -> dict[str, Any]:
    """evaluate's sacrebleu output (its keys, order and types), then our extra numbers."""
    return {
        "score": result.bleu,
        "counts": list(result.counts),
        "totals": list(result.totals),
        "precisions": list(result.precisions),
        "bp": result.bp,
        "sys_len": result.sys_len,
        "ref_len": result.ref_len,
        "ratio": result.ratio,
        "sentence_bleu": result.mean()["sentence_bleu"],
    }


def per_example_keys(result: BleuResult, options: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The keys with a value per example: sentence BLEU under "score", and the lengths."""
    return {"score": result.scores["sentence_bleu"], **result.details()}


PROTOCOL = MetricSpec(
    name="bleu",
    title="BLEU",
    description=read_description(__package__),
    citation=read_citation(__package__) + SACREBLEU_CITATION,
    second_input="references",
    compute="nlgmetrics.bleu:bleu",
    options=(
        Option("tokenize", "str", "tokenizer", "nlgmetrics.bleu:TOKENIZER_NAMES", signature_key="tokenize"),
        Option("smooth_method", "str", "smoothing", "nlgmetrics.bleu:SMOOTH_METHODS", signature_key="smooth"),
        Option("smooth_value", "float", "value for floor / add-k smoothing (none: the method's own)",
               range=Range(0), signature_key="smooth"),
        LOWERCASE,
        Option("max_ngram_order", "int", "largest n-gram order", range=Range(1, MAX_NGRAM_ORDER), signature_key="max_ngram_order"),
        Option("effective_order", "bool",
               "corpus BLEU: stop the geometric mean at the highest order with n-grams "
               "(sentence BLEU always does)", signature_key="effective_order"),
    ),
    resampling=Resampling("nlgmetrics.bleu:bleu_statistics", "nlgmetrics.bleu:bleu_from_statistics"),
    evaluate=EvaluateFace(
        counterpart="sacrebleu",
        renamed={"use_effective_order": "effective_order"},
        none_is_default=("tokenize",),  # None: the library's 13a, as in sacrebleu
        inert=("force",),  # sacrebleu's switch for a warning about tokenized input, which we never give
        aggregated=sacrebleu_keys,
        per_example=per_example_keys,
    ),
    codebase_urls=("https://github.com/mjpost/sacrebleu",),
    reference_urls=("https://aclanthology.org/P02-1040", "https://aclanthology.org/W18-6319"),
)
