"""What FFLM is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its own options
and the model options every LM metric shares. Nothing here imports the model code."""

from __future__ import annotations

from nlgmetrics.core.protocol import MODEL_OPTIONS, MetricSpec, Option, read_citation

DESCRIPTION = """\
FFLM scores how faithful a summary is to its source document, zero-shot, from probability changes
of a foundation causal language model: how much prefixing the document raises the summary's
probability (Delta_prior(Y)), how much prefixing the summary raises the document's probability
(Delta_prior(X)), and how little prefixing the summary itself adds once the document is there
(Delta_cond(Y)). FFLM = a*Delta_prior(Y) + b*Delta_prior(X) + d*Delta_cond(Y). Higher is more
faithful. Token construction, truncation and weights follow the authors' released scorer.
The signature (return_signature=True) reads fflm|model:...|weights:<hash>|tokenizer:<own|hash>|revision:...|
dtype:...|max_length:...|probability_floor:1e-06|separator:'TL;DR '|start_token:...|
weights_abd:0.25,0.25,0.5|transformers:...|tokenizers:...|version:<nlgmetrics version>.
"""


PROTOCOL = MetricSpec(
    name="fflm",
    title="FFLM",
    description=DESCRIPTION,
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
