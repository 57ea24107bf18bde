"""What FFLM is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its own options
and the model options every LM metric shares. Nothing here imports the model code."""

from __future__ import annotations

from nlgmetrics.core.protocol import MODEL_OPTIONS, MetricSpec, Option, read_citation, read_description


PROTOCOL = MetricSpec(
    name="fflm",
    title="FFLM",
    description=read_description(__package__),
    citation=read_citation(__package__),
    second_input="sources",
    compute="nlgmetrics.fflm:fflm",
    options=(
        Option("weights", "float_list", "a,b,d for Delta_prior(Y), Delta_prior(X), Delta_cond(Y) (sum to 1)",
               signature_key="weights_abd"),
        Option("separator", "str", "text between condition and target", signature_key="separator"),
        Option("start_token", "token", "first token of every sequence: an id or a token string",
               signature_key="start_token"),
        *MODEL_OPTIONS,
    ),
    model_kinds=("causal",),
    codebase_urls=("https://github.com/JiaQiSJTU/FaithEval-FFLM",),
    reference_urls=("https://aclanthology.org/2023.emnlp-main.679",),
)
