"""The Shannon score as an evaluate module.

Its protocol, ``nlgmetrics/shannon/protocol.py``, says what it is; ``ProtocolModule`` runs it."""

import evaluate
from nlgmetrics.apps.evaluate_adapter import ProtocolModule, shared_args  # From: nlgmetrics==0.1.0
from nlgmetrics.shannon.protocol import PROTOCOL  # From: nlgmetrics==0.1.0

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the summaries to score.
    sources (list of str): the source document of each summary (one per prediction).
    model (str): causal LM: Hub id (paper default "gpt2"), local directory, or the offline alias
        "smollm2-135m".
    model_tokenizer, revision (str or None), device (str or None), dtype (str or None): model loading.
{big_model}
    max_length (int or None): tokens per sequence; None (default): the model's context, and a
        larger value is capped at it. Sentences are cut to max_length - 1 - summary tokens.
    token_budget (int), batch_size (int or None), prefix_cache (bool): speed only, same numbers.
{lm_run}
    num_upstream (int): preceding sentences given as context to every pass. Default 0 (paper).
    splitter (str or callable): sentence splitter, "pysbd" (default, offline), "punkt" (blanc's;
        needs nltk data) or a function str -> list of str.
    start_token (int, str or None): first token of every prompt. Default "<|endoftext|>" when the
        vocabulary has it, else the model's EOS.
    chunk_size (int): distinct documents scored at a time (memory bound), same numbers. Default 64.
    use_aggregator (bool): True (default): the means over the examples; False: one list per key,
        one value per example, under the same keys.
{output}
Returns:
    shannon_score (float): the mean over the examples of (ll_help - ll_base) / (ll_full - ll_base);
        0 = no help, 1 = as helpful as the document itself (usually in [0, 1]).
    information_difference (float): the mean of ll_help - ll_base, in nats.
    blanc_shannon (float): the mean BLANC-Shannon (see the model card), in [-1, 1].
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


@evaluate.utils.file_utils.add_start_docstrings(
    PROTOCOL.description, shared_args(PROTOCOL, _KWARGS_DESCRIPTION))
class ShannonScore(ProtocolModule, evaluate.Metric):  # evaluate names the module "shannon_score" from the class
    """Shannon Score, Information Difference and BLANC-Shannon (Egan et al., AAAI 2022)."""

    protocol = PROTOCOL
    inputs_description = _KWARGS_DESCRIPTION
