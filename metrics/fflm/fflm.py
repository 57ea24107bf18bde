"""FFLM as a Hugging Face ``evaluate`` module: a thin wrapper over :func:`nlgmetrics.fflm.fflm`.

All math and model work live in ``nlgmetrics`` (the package src/nlgmetrics/fflm/ + the shared
engine); the output rule (a flat dict of numbers; ``use_aggregator``, ``return_signature``) is
:func:`nlgmetrics.apps.evaluate_adapter.evaluate_output`'s.
"""

from typing import Any

import evaluate
from nlgmetrics.apps.evaluate_adapter import CheckedTextInputs  # From: nlgmetrics==0.1.0
from nlgmetrics.apps.evaluate_adapter import compute_options, evaluate_output, input_features  # From: nlgmetrics==0.1.0
from nlgmetrics.apps.evaluate_adapter import pop_output_switches  # From: nlgmetrics==0.1.0
from nlgmetrics.fflm import fflm  # From: nlgmetrics==0.1.0

_CITATION = """\
@inproceedings{jia-etal-2023-zero,
    title = "Zero-shot Faithfulness Evaluation for Text Summarization with Foundation Language Model",
    author = "Jia, Qi and Ren, Siyu and Liu, Yizhu and Zhu, Kenny",
    booktitle = "Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing",
    month = dec,
    year = "2023",
    address = "Singapore",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2023.emnlp-main.679",
    doi = "10.18653/v1/2023.emnlp-main.679",
    pages = "11017--11031",
}
"""

_DESCRIPTION = """\
FFLM scores how faithful a summary is to its source document, zero-shot, from probability changes
of a foundation causal language model: how much prefixing the document raises the summary's
probability (Delta_prior(Y)), how much prefixing the summary raises the document's probability
(Delta_prior(X)), and how little prefixing the summary itself adds once the document is there
(Delta_cond(Y)). FFLM = a*Delta_prior(Y) + b*Delta_prior(X) + d*Delta_cond(Y). Higher is more
faithful. Token construction, truncation and weights follow the authors' released scorer.
The signature (return_signature=True) reads fflm|model:...|weights:<hash>|tokenizer:own|revision:...|
dtype:...|max_length:...|probability_floor:1e-06|separator:'TL;DR '|start_token:...|
weights_abd:0.25,0.25,0.5|transformers:...|tokenizers:...|version:<nlgmetrics version>.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the summaries Y to score.
    sources (list of str): the source document X of each summary (one per prediction).
    Every option of nlgmetrics.fflm.fflm passes through unchanged, with the library's defaults
    (defined once there):
    model (str): causal LM: Hub id, local directory, or the offline alias "smollm2-135m".
        Default nlgmetrics.fflm.DEFAULT_MODEL ("HuggingFaceTB/SmolLM2-1.7B").
    tokenizer: the tokenizer to use with model (default: the model's own).
    revision (str or None), device (str or None), dtype (str or None): model loading.
    max_length (int or None): tokens per sequence, start token included (default the authors'
        2048; None: the model's context); capped at the model context.
    token_budget (int), batch_size (int or None), prefix_cache (bool): speed only, same numbers.
    progress (bool): show a progress bar. Default True, unless evaluate.disable_progress_bar()
        was called.
    weights (tuple of 3 floats): (a, b, d) for (Delta_prior(Y), Delta_prior(X), Delta_cond(Y)),
        summing to 1. Default (0.25, 0.25, 0.5).
    separator (str): text between condition and target. Default "TL;DR ".
    start_token (int, str or None): first token of every sequence, a token id or a token string.
        Default: the tokenizer's BOS (else EOS).
    chunk_size (int): distinct documents scored at a time, each with all of its summaries; bounds
        memory on a large batch, same numbers. Default 64.
    use_aggregator (bool): True (default): the means over the examples; False: one list per key,
        one value per example, under the same keys.
    return_signature (bool): also return "signature" (a string; see the description). Default False.
Returns:
    fflm (float): mean FFLM over the examples, higher = more faithful.
    delta_prior_summary, delta_prior_document, delta_cond_summary (float): means of the components.
Examples:
    >>> import evaluate
    >>> fflm = evaluate.load("metrics/fflm")  # doctest: +SKIP
    >>> result = fflm.compute(predictions=["A cat sat on a mat."],
    ...                       sources=["The cat sat on the mat all afternoon."],
    ...                       model="smollm2-135m", progress=False)  # doctest: +SKIP
    >>> list(result)  # doctest: +SKIP
    ['fflm', 'delta_prior_summary', 'delta_prior_document', 'delta_cond_summary']
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class FFLM(CheckedTextInputs, evaluate.Metric):
    """FFLM faithfulness (Jia et al., EMNLP 2023)."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=input_features("sources"),
            codebase_urls=["https://github.com/JiaQiSJTU/FaithEval-FFLM"],
            reference_urls=["https://aclanthology.org/2023.emnlp-main.679"],
        )

    def _compute(self, predictions: list[str], sources: list[str], **options: Any) -> dict[str, Any]:
        switches = pop_output_switches(options)
        return evaluate_output(fflm(predictions, sources, **compute_options("fflm", options)), switches)
