"""What TER is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its options, how
``compare`` resamples it, and how its evaluate module answers to evaluate's ``ter``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlgmetrics.core.protocol import (SACREBLEU_CITATION, EvaluateFace, MetricSpec, Option, Resampling,
                                      read_citation, read_description)
from nlgmetrics.ter.result import TerResult


def ter_keys(result: TerResult, options: Mapping[str, Any]) -> dict[str, float | int]:
    """evaluate's ter output (its keys, order and types), then our extra number."""
    return {
        "score": result.ter,
        "num_edits": result.num_edits,
        "ref_length": result.ref_length,
        "sentence_ter": result.aggregate()["sentence_ter"],
    }


def per_example_keys(result: TerResult, options: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Sentence TER under "score", and the edits and reference lengths of each example."""
    return {"score": result.scores["sentence_ter"], **result.details()}


PROTOCOL = MetricSpec(
    name="ter",
    title="TER",
    description=read_description(__package__),
    citation=read_citation(__package__) + SACREBLEU_CITATION,
    second_input="references",
    compute="nlgmetrics.ter:ter",
    options=(
        Option("normalized", "bool", "Tercom normalisation (punctuation split off, XML entities)",
               signature_key="normalized"),
        Option("no_punct", "bool", "remove punctuation", signature_key="no_punct"),
        Option("asian_support", "bool", "CJK characters as words / CJK punctuation removed",
               signature_key="asian_support"),
        Option("case_sensitive", "bool", "keep case (default: lowercase, as Tercom)", signature_key="case"),
        Option("normalize_references_twice", "bool",
               "with normalized: normalise references twice, as sacrebleu 2.x (its numbers)",
               signature_key="ref_norm"),
    ),
    resampling=Resampling("nlgmetrics.ter:ter_statistics", "nlgmetrics.ter:ter_from_statistics"),
    evaluate=EvaluateFace(
        counterpart="ter",
        renamed={"ignore_punct": "no_punct", "support_zh_ja_chars": "asian_support"},
        aggregated=ter_keys,
        per_example=per_example_keys,
    ),
    codebase_urls=("https://github.com/mjpost/sacrebleu", "https://github.com/jhclark/tercom"),
    reference_urls=("https://aclanthology.org/2006.amta-papers.25", "https://aclanthology.org/W18-6319"),
)
