"""What InfoLM is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its own options
and the model options every LM metric shares. Nothing here imports the model code."""

from __future__ import annotations

from nlgmetrics.core.protocol import MODEL_OPTIONS, MetricSpec, Option, Range, read_citation

DESCRIPTION = """\
InfoLM (Colombo, Clavel & Piantanida, AAAI 2022) compares a candidate text with a reference through
a language model. Each token position j of a text is masked in turn and a masked LM predicts a
distribution p_j over the vocabulary (softmax of the logits / temperature); a causal LM gives the
next-token distribution of x_j from BOS + x_<j. The text's "bag of distributions" is the
(idf-)weighted average of the p_j. InfoLM is an information measure between the two bags:
KL, alpha, beta, AB, Renyi or Jensen-Shannon divergence, L1 / L2 / L-infinity or Fisher-Rao distance.
Lower = more similar for every measure (0 = identical). With several references per candidate the
best (smallest) value is reported. The signature (return_signature=True) reads
infolm|model:...|weights:<hash>|tokenizer:<own|hash>|revision:...|dtype:...|max_length:...|alpha:none|beta:none|
idf:refs|kind:masked|measure:fisher_rao_distance|multi_ref:min|temperature:0.25|transformers:...|tokenizers:...|
version:<nlgmetrics version>.
"""


PROTOCOL = MetricSpec(
    name="infolm",
    title="InfoLM",
    description=DESCRIPTION,
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
