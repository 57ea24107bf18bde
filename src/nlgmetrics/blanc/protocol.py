"""What BLANC is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its own options
and the model options every LM metric shares. Nothing here imports the model code."""

from __future__ import annotations

from nlgmetrics.core.protocol import MODEL_OPTIONS, MetricSpec, Option, Range, read_citation, read_description
from nlgmetrics.core.validation import MAX_SEED


PROTOCOL = MetricSpec(
    name="blanc",
    title="BLANC",
    description=read_description(__package__),
    citation=read_citation(__package__),
    second_input="sources",
    compute="nlgmetrics.blanc:blanc",
    forwards_to=("nlgmetrics.blanc:blanc_help", "nlgmetrics.blanc:blanc_tune"),
    options=(
        Option("variant", "str", "BLANC-help or BLANC-tune", signature_key="variant"),
        Option("measure", "str", "relative or improve", signature_key="measure"),
        Option("gap", "int", "distance between masked tokens", range=Range(1), signature_key="gap"),
        Option("gap_mask", "int", "tokens masked per gap", range=Range(1), signature_key="gap_mask"),
        Option("finetune_epochs", "int", "BLANC-tune: epochs of fine-tuning on the summary", range=Range(0),
               signature_key="finetune_epochs"),
        Option("p_mask", "float", "BLANC-tune: probability of masking a token for tuning", range=Range(0, 1),
               signature_key="p_mask"),
        Option("learning_rate", "float", "BLANC-tune: learning rate", range=Range(0, open_low=True),
               signature_key="learning_rate"),
        Option("seed", "int", "BLANC-tune: random seed of the tuning", range=Range(0, MAX_SEED),
               signature_key="seed"),
        *MODEL_OPTIONS,
    ),
    model_kinds=("masked",),
    codebase_urls=("https://github.com/PrimerAI/blanc",),
    reference_urls=("https://aclanthology.org/2020.eval4nlp-1.2",),
)
