"""FFLM as an evaluate module.

Its protocol, ``nlgmetrics/fflm/protocol.py``, says what it is; ``ProtocolModule`` runs it."""

import evaluate
from nlgmetrics.apps.evaluate_adapter import ProtocolModule, shared_args  # From: nlgmetrics==0.1.0
from nlgmetrics.fflm.protocol import PROTOCOL  # From: nlgmetrics==0.1.0

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the summaries Y to score.
    sources (list of str): the source document X of each summary (one per prediction).
    Every option of nlgmetrics.fflm.fflm passes through unchanged, with the library's defaults
    (defined once there):
    model (str): causal LM: Hub id, local directory, or the offline alias "smollm2-135m".
        Default nlgmetrics.fflm.DEFAULT_MODEL ("HuggingFaceTB/SmolLM2-1.7B").
    model_tokenizer: the Hugging Face tokenizer to use with model (default: the model's own).
    revision (str or None), device (str or None), dtype (str or None): model loading.
{big_model}
    max_length (int or None): tokens per sequence, start token included (default the authors'
        2048; None: the model's context); capped at the model context.
    token_budget (int), batch_size (int or None), prefix_cache (bool): speed only, same numbers.
{lm_run}
    weights (tuple of 3 floats): (a, b, d) for (Delta_prior(Y), Delta_prior(X), Delta_cond(Y)),
        summing to 1. Default (0.25, 0.25, 0.5).
    separator (str): text between condition and target. Default "TL;DR ".
    start_token (int, str or None): first token of every sequence, a token id or a token string.
        Default: the tokenizer's BOS (else EOS).
    chunk_size (int): distinct documents scored at a time, each with all of its summaries; bounds
        memory on a large batch, same numbers. Default 64.
    use_aggregator (bool): True (default): the means over the examples; False: one list per key,
        one value per example, under the same keys.
{output}
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


@evaluate.utils.file_utils.add_start_docstrings(
    PROTOCOL.description, shared_args(PROTOCOL, _KWARGS_DESCRIPTION))
class FFLM(ProtocolModule, evaluate.Metric):  # evaluate names the module "fflm" from the class
    """FFLM faithfulness (Jia et al., EMNLP 2023)."""

    protocol = PROTOCOL
    inputs_description = _KWARGS_DESCRIPTION
