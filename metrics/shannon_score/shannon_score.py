"""Shannon Score as a Hugging Face ``evaluate`` module: a thin wrapper over
:func:`nlgmetrics.shannon.shannon_score`.

All math and model work live in ``nlgmetrics`` (src/nlgmetrics/shannon/ + the shared engine);
the output rule (a flat dict of numbers; ``use_aggregator``, ``return_signature``) is
:func:`nlgmetrics.apps.evaluate_adapter.evaluate_output`'s.
"""

import evaluate
from nlgmetrics.apps.evaluate_adapter import CheckedTextInputs, compute_options, evaluate_output, input_features  # From: nlgmetrics==0.1.0
from nlgmetrics.apps.evaluate_adapter import pop_output_switches  # From: nlgmetrics==0.1.0
from nlgmetrics.shannon import shannon_score  # From: nlgmetrics==0.1.0

_CITATION = """\
@inproceedings{egan2022play,
    title = "Play the Shannon Game With Language Models: A Human-Free Approach to Summary Evaluation",
    author = "Egan, Nicholas and Vasilyev, Oleg and Bohannon, John",
    booktitle = "Proceedings of the AAAI Conference on Artificial Intelligence",
    volume = "36",
    number = "10",
    pages = "10599--10607",
    year = "2022",
    url = "https://arxiv.org/abs/2103.10918",
}
"""

_DESCRIPTION = """\
Reference-free summary scores from Shannon's guessing game played by a causal language model
(Egan, Vasilyev & Bohannon, AAAI 2022). The document is split into sentences; each sentence's
tokens are scored after an end-of-text token and a prompt: nothing (base), the summary (help), or
the sentence itself (full). Summed over the document: ll_base, ll_help, ll_full.
Shannon Score = (ll_help - ll_base) / (ll_full - ll_base); Information Difference = ll_help - ll_base;
BLANC-Shannon = (S01 - S10) / total, where S[b][h] counts document tokens whose argmax prediction
is right (1) or wrong (0) without (b) and with (h) the summary. Numbers match PyPI blanc's
`Shannon.go` except for the first token of each sentence (see the model card). The signature
(return_signature=True) reads shannon_score|model:...|weights:<hash>|tokenizer:own|revision:...|
dtype:...|max_length:...|first_token:paper|num_upstream:0|splitter:pysbd|start_token:...|
transformers:...|tokenizers:...|version:<nlgmetrics version>.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the summaries to score.
    sources (list of str): the source document of each summary (one per prediction).
    model (str): causal LM: Hub id (paper default "gpt2"), local directory, or the offline alias
        "smollm2-135m".
    tokenizer, revision (str or None), device (str or None), dtype (str or None): model loading.
    max_length (int or None): tokens per sequence; None (default): the model's context, and a
        larger value is capped at it. Sentences are cut to max_length - 1 - summary tokens.
    token_budget (int), batch_size (int or None), prefix_cache (bool): speed only, same numbers.
    progress (bool): show a progress bar. Default True, unless evaluate.disable_progress_bar()
        was called.
    num_upstream (int): preceding sentences given as context to every pass. Default 0 (paper).
    splitter (str or callable): sentence splitter, "pysbd" (default, offline), "punkt" (blanc's;
        needs nltk data) or a function str -> list of str.
    start_token (int, str or None): first token of every prompt. Default "<|endoftext|>" when the
        vocabulary has it, else the model's EOS.
    chunk_size (int): distinct documents scored at a time (memory bound), same numbers. Default 64.
    use_aggregator (bool): True (default): the means over the examples; False: one list per key,
        one value per example, under the same keys.
    return_signature (bool): also return "signature" (a string; see the description). Default False.
Returns:
    shannon_score (float): the mean over the examples of (ll_help - ll_base) / (ll_full - ll_base);
        0 = no help, 1 = as helpful as the document itself (usually in [0, 1]).
    information_difference (float): the mean of ll_help - ll_base, in nats.
    blanc_shannon (float): the mean of (S01 - S10) / total, in [-1, 1].
    ll_base, ll_help, ll_full (float): the means of the summed natural-log likelihoods (<= 0).
Examples:
    >>> import evaluate
    >>> shannon = evaluate.load("metrics/shannon_score")  # doctest: +SKIP
    >>> document = ("Jack drove his minivan to the bazaar to buy milk and honey for his large family. "
    ...             "The bazaar was crowded. He paid with cash.")
    >>> out = shannon.compute(predictions=["Jack bought milk and honey at the bazaar."], sources=[document],
    ...                       model="smollm2-135m", progress=False)  # doctest: +SKIP
    >>> round(out["shannon_score"], 3), out["blanc_shannon"]  # doctest: +SKIP
    (0.46, 0.3125)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ShannonScore(CheckedTextInputs, evaluate.Metric):
    """Shannon Score, Information Difference and BLANC-Shannon (Egan et al., AAAI 2022)."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=input_features("sources"),
            codebase_urls=["https://github.com/PrimerAI/blanc"],
            reference_urls=["https://arxiv.org/abs/2103.10918"],
        )

    def _compute(self, predictions, sources, **options):
        # The library owns every default and every check; options pass through unchanged.
        switches = pop_output_switches(options)
        return evaluate_output(shannon_score(predictions, sources, **compute_options("shannon_score", options)), switches)
