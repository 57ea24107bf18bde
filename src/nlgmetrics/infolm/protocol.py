"""What InfoLM is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its own options
and the model options every LM metric shares. Nothing here imports the model code."""

from __future__ import annotations

from nlgmetrics.core.protocol import MODEL_OPTIONS, MetricSpec, Option, Range, read_citation, read_description


PROTOCOL = MetricSpec(
    name="infolm",
    title="InfoLM",
    description=read_description(__package__),
    citation=read_citation(__package__),
    second_input="references",
    compute="nlgmetrics.infolm:infolm",
    options=(
        Option("information_measure", "str", "distance between the bags of distributions",
               "nlgmetrics.core.measure_names:INFORMATION_MEASURES", signature_key="measure"),
        Option("temperature", "float", "softmax temperature of the LM", range=Range(0, open_low=True),
               signature_key="temperature"),
        Option("idf", "bool", "weight positions by idf of the references", signature_key="idf"),
        Option("alpha", "float", "alpha of the alpha / AB / Renyi divergences", signature_key="alpha"),
        Option("beta", "float", "beta of the beta / AB divergences", signature_key="beta"),
        Option("model_kind", "str", "masked (each position masked in turn) or causal (next token); none: "
               "detected from the model's config", (None, "masked", "causal"), signature_key="kind"),
        *MODEL_OPTIONS,
    ),
    model_kinds=("masked", "causal"),
    codebase_urls=("https://github.com/Lightning-AI/torchmetrics",),
    reference_urls=("https://arxiv.org/abs/2112.01589",),
)
