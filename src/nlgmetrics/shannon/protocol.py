"""What the Shannon score is to every face that runs it (:mod:`nlgmetrics.core.protocol`): its own options
and the model options every LM metric shares. Nothing here imports the model code."""

from __future__ import annotations

from nlgmetrics.core.protocol import MODEL_OPTIONS, MetricSpec, Option, Range, read_citation

DESCRIPTION = """\
Reference-free summary scores from Shannon's guessing game played by a causal language model
(Egan, Vasilyev & Bohannon, AAAI 2022). The document is split into sentences; each sentence's
tokens are scored after a start token (<|endoftext|>, else the model's BOS) and a prompt: nothing
(base), the summary (help), or the sentence itself (full). Summed over the document: ll_base, ll_help, ll_full.
Shannon Score: the share of the information the document could give that the summary gives;
Information Difference: the nats of the document it saves; BLANC-Shannon: the document tokens it
makes right minus those it makes wrong, as a share of all (formulas: the model card). Numbers match PyPI blanc's
`Shannon.go` except for the first token of each sentence (see the model card). The signature
(return_signature=True) reads shannon_score|model:...|weights:<hash>|tokenizer:<own|hash>|revision:...|
dtype:...|max_length:...|first_token:paper|num_upstream:0|splitter:pysbd|start_token:...|
transformers:...|tokenizers:...|version:<nlgmetrics version>.
"""


PROTOCOL = MetricSpec(
    name="shannon_score",
    title="Shannon score",
    description=DESCRIPTION,
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
