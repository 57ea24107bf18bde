"""The Shannon score as an evaluate module.

Its protocol, ``nlgmetrics/shannon/protocol.py``, says what it is; ``ProtocolModule`` runs it."""

import evaluate
from nlgmetrics.apps.evaluate_adapter import ProtocolModule  # From: nlgmetrics==0.1.0
from nlgmetrics.shannon.protocol import PROTOCOL  # From: nlgmetrics==0.1.0

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the summaries to score.
    sources (list of str): the source document of each summary (one per prediction).
    model (str): causal LM: Hub id (paper default "gpt2"), local directory, or the offline alias
        "smollm2-135m".
    model_tokenizer, revision (str or None), device (str or None), dtype (str or None): model loading.
    device_map (str or dict or None), max_memory (dict or None), offload_folder (str or None): a model
        bigger than one device, passed to from_pretrained (e.g. device_map="auto",
        max_memory={0: "20GiB", "cpu": "60GiB"}, or {module: "cpu" | "cuda:0" | "disk"}); same numbers.
    max_length (int or None): tokens per sequence; None (default): the model's context, and a
        larger value is capped at it. Sentences are cut to max_length - 1 - summary tokens.
    token_budget (int), batch_size (int or None), prefix_cache (bool): speed only, same numbers.
    progress (bool): show a progress bar. Default True, unless evaluate.disable_progress_bar()
        was called.
    cache_dir (str or None): a folder where what the model computed is kept and reused by later
        calls and processes, same numbers (default: $NLGMETRICS_CACHE_DIR, else no store; see the
        card's "Reusing work across calls"; `nlgmetrics cache info|clear DIR`).
    release_models (bool): after the call, drop every scoring model cached in this process and free
        their memory (nlgmetrics.engine.release()). Default False: they stay loaded for the next call.
    num_upstream (int): preceding sentences given as context to every pass. Default 0 (paper).
    splitter (str or callable): sentence splitter, "pysbd" (default, offline), "punkt" (blanc's;
        needs nltk data) or a function str -> list of str.
    start_token (int, str or None): first token of every prompt. Default "<|endoftext|>" when the
        vocabulary has it, else the model's EOS.
    chunk_size (int): distinct documents scored at a time (memory bound), same numbers. Default 64.
    use_aggregator (bool): True (default): the means over the examples; False: one list per key,
        one value per example, under the same keys.
    return_signature (bool): also return "signature" (a string; see the description). Default False.
    return_details (bool): accepted as by every nlgmetrics module, since evaluate.combine passes
        one set of options to all its modules; changes nothing here (the default output holds every number).
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


@evaluate.utils.file_utils.add_start_docstrings(PROTOCOL.description, _KWARGS_DESCRIPTION)
class ShannonScore(ProtocolModule, evaluate.Metric):  # evaluate names the module "shannon_score" from the class
    """Shannon Score, Information Difference and BLANC-Shannon (Egan et al., AAAI 2022)."""

    protocol = PROTOCOL
    inputs_description = _KWARGS_DESCRIPTION
