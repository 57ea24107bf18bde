"""FFLM as a Hugging Face ``evaluate`` module: a thin wrapper over :func:`nlgmetrics.fflm.fflm`.

All math and model work live in ``nlgmetrics`` (src/nlgmetrics/fflm.py + the shared engine).
"""

import datasets
import evaluate
from nlgmetrics.evaluate_support import CheckedTextInputs
from nlgmetrics.fflm import DEFAULT_MAX_LENGTH
from nlgmetrics.fflm import DEFAULT_MODEL
from nlgmetrics.fflm import DEFAULT_SEPARATOR
from nlgmetrics.fflm import DEFAULT_WEIGHTS
from nlgmetrics.fflm import fflm

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
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the summaries Y to score.
    sources (list of str): the source document X of each summary (one per prediction).
    model (str): causal LM: Hub id, local directory, or the offline alias "smollm2-135m".
        Default "HuggingFaceTB/SmolLM2-1.7B".
    weights (tuple of 3 floats): (a, b, d) for (Delta_prior(Y), Delta_prior(X), Delta_cond(Y)),
        summing to 1. Default (0.25, 0.25, 0.5).
    max_length (int): tokens per sequence, BOS included (authors: 2048); capped at the model context.
    separator (str): text between condition and target. Default "TL;DR ".
    bos_token_id (int or None): first token of every sequence. Default: the tokenizer's BOS (else EOS).
    device (str or None), dtype (str or None), revision (str or None): model loading.
    token_budget (int), batch_size (int or None), prefix_cache (bool): speed only, same numbers.
    chunk_size (int): distinct documents scored at a time, each with all of its summaries; bounds
        memory on a large batch, same numbers. Default 64.
    progress (bool): show progress bars. Default False.
Returns:
    fflm (list of float): per-example FFLM, higher = more faithful.
    delta_prior_summary (list of float): Delta_prior(Y) per example.
    delta_prior_document (list of float): Delta_prior(X) per example.
    delta_cond_summary (list of float): Delta_cond(Y) per example.
    mean_fflm (float): mean FFLM.
    weights (list of float): the (a, b, d) used.
    signature (str): model, fingerprint, dtype, max_length, separator, BOS, weights, version.
Examples:
    >>> import evaluate
    >>> fflm = evaluate.load("metrics/fflm")  # doctest: +SKIP
    >>> result = fflm.compute(predictions=["A cat sat on a mat."],
    ...                       sources=["The cat sat on the mat all afternoon."],
    ...                       model="smollm2-135m")  # doctest: +SKIP
    >>> sorted(result)  # doctest: +SKIP
    ['delta_cond_summary', 'delta_prior_document', 'delta_prior_summary', 'fflm', 'mean_fflm', 'signature', 'weights']
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class FFLM(CheckedTextInputs, evaluate.Metric):
    """FFLM faithfulness (Jia et al., EMNLP 2023)."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string", id="sequence"),
                    "sources": datasets.Value("string", id="sequence"),
                }
            ),
            codebase_urls=["https://github.com/JiaQiSJTU/FaithEval-FFLM"],
            reference_urls=["https://aclanthology.org/2023.emnlp-main.679"],
        )

    def _compute(
        self,
        predictions,
        sources,
        model=DEFAULT_MODEL,
        weights=DEFAULT_WEIGHTS,
        max_length=DEFAULT_MAX_LENGTH,
        separator=DEFAULT_SEPARATOR,
        bos_token_id=None,
        device=None,
        dtype=None,
        revision=None,
        token_budget=8192,
        batch_size=None,
        prefix_cache=True,
        chunk_size=64,
        progress=False,
    ):
        result = fflm(
            sources,
            predictions,
            model=model,
            weights=weights,
            max_length=max_length,
            separator=separator,
            bos_token_id=bos_token_id,
            device=device,
            dtype=dtype,
            revision=revision,
            token_budget=token_budget,
            batch_size=batch_size,
            prefix_cache=prefix_cache,
            chunk_size=chunk_size,
            progress=progress,
        )
        return {
            "fflm": result.fflm,
            "delta_prior_summary": result.delta_prior_summary,
            "delta_prior_document": result.delta_prior_document,
            "delta_cond_summary": result.delta_cond_summary,
            "mean_fflm": result.mean,
            "weights": list(result.weights),
            "signature": result.signature,
        }
