"""What TER is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its options, how
``compare`` resamples it, and how its evaluate module answers to evaluate's ``ter``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nlgmetrics.core.protocol import SACREBLEU_CITATION, EvaluateFace, MetricSpec, Option, Resampling, read_citation

if TYPE_CHECKING:
    from nlgmetrics.ter.result import TerResult

DESCRIPTION = """\
TER (Snover et al., 2006): the fewest word edits (insertions, deletions, substitutions and shifts
of word blocks) that turn the hypothesis into a reference, divided by the mean reference length,
over a corpus (sums over segments) or per sentence; lower is better. Any number of references per
example (ragged allowed); Tercom's normalisation, punctuation removal, Asian-language support and
case sensitivity as options, under the names of evaluate's ter module. The numbers equal
sacrebleu's TER() with the same options, except that normalized=True normalises each reference
once, as Tercom, where sacrebleu 2.x (and so evaluate's ter) normalises it twice: pass
normalize_references_twice=True for sacrebleu's numbers (see the card). The signature
(return_signature=True) reads
ter|asian_support:no|case:lc|no_punct:no|normalized:no|nrefs:1|version:<nlgmetrics version>.
"""


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
    description=DESCRIPTION,
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
