"""What the Shannon score is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its own options
and the model options every LM metric shares. Nothing here imports the model code."""

from __future__ import annotations

from nlgmetrics.core.protocol import MODEL_OPTIONS, MetricSpec, Option, Range, read_citation, read_description


PROTOCOL = MetricSpec(
    name="shannon_score",
    title="Shannon score",
    description=read_description(__package__),
    citation=read_citation(__package__),
    second_input="sources",
    compute="nlgmetrics.shannon:shannon_score",
    options=(
        Option("num_upstream", "int", "preceding sentences given as context", range=Range(0),
               signature_key="num_upstream"),
        Option("splitter", "str", "sentence splitter: pysbd (none: the default) or punkt (needs nltk data)",
               signature_key="splitter"),
        Option("start_token", "token", "first token of every prompt: an id or a token string",
               signature_key="start_token"),
        *MODEL_OPTIONS,
    ),
    model_kinds=("causal",),
    codebase_urls=("https://github.com/PrimerAI/blanc",),
    reference_urls=("https://arxiv.org/abs/2103.10918",),
)
