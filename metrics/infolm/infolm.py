"""InfoLM as an evaluate module.

Its protocol, ``nlgmetrics/infolm/protocol.py``, says what it is; ``ProtocolModule`` runs it."""

import evaluate
from nlgmetrics.apps.evaluate_adapter import ProtocolModule, shared_args  # From: nlgmetrics==0.1.0
from nlgmetrics.infolm.protocol import PROTOCOL  # From: nlgmetrics==0.1.0

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate texts.
    references (list of str, or list of list of str): one reference, or several, per candidate
        (a batch may mix both shapes).
    model (str): masked LM (paper default "bert-base-uncased") or causal LM: Hub id, local directory,
        or the offline alias "smollm2-135m" (causal SmolLM2-135M-Instruct).
    model_tokenizer, revision (str or None), device (str or None), dtype (str or None): model
        loading (float32 by default).
{big_model}
    max_length (int or None): tokens per text incl. special tokens; None (default): the model's
        positions, and a larger value is capped at them. Longer texts are truncated (one warning).
    token_budget (int or None), batch_size (int or None), chunk_size (int): speed / memory only, same
        numbers (default token budget: 8192 on GPU, 2048 on CPU).
{lm_run}
    information_measure (str): "fisher_rao_distance" (default), "kl_divergence", "alpha_divergence",
        "beta_divergence", "ab_divergence", "renyi_divergence", "l1_distance", "l2_distance",
        "l_infinity_distance", "js_divergence".
    alpha (float or None): for alpha (alpha not in {0, 1}), AB and Renyi (alpha > 0, != 1) divergences.
    beta (float or None): for beta (beta not in {0, -1}) and AB divergences (alpha, beta, alpha+beta != 0).
        |alpha|, |beta|, |alpha+beta| in [1e-300, 1e300] (what float64 evaluates).
    temperature (float): softmax temperature, any finite value > 0. Default 0.25 (torchmetrics').
    idf (bool or dict): weight positions by idf over the distinct references of the call (True,
        default), uniformly (False), or by a {token_id: weight} table.
    model_kind (str or None): "masked" or "causal"; detected from the config by default.
    use_aggregator (bool): True (default): the mean over the examples; False: a list, one value
        per example, under the same key.
{output}
Returns:
    infolm (float): the mean over the examples of the per-example scores. Lower = more similar
        (0 = identical); range [0, pi] for Fisher-Rao, [0, log 2] for JS, [0, 2] / [0, sqrt 2] /
        [0, 1] for L1 / L2 / L-infinity, [0, inf) for the KL, alpha, beta, AB and Renyi divergences.
        Per example (use_aggregator=False): the smallest measure value over its references.
Examples:
    >>> import evaluate
    >>> infolm = evaluate.load("metrics/infolm")  # doctest: +SKIP
    >>> out = infolm.compute(predictions=["the cat sat on the mat", "hello world"],
    ...                      references=[["a cat was sitting on the mat", "there is a cat"], "hello there world"],
    ...                      model="smollm2-135m", progress=False)  # doctest: +SKIP
    >>> round(out["infolm"], 3)  # doctest: +SKIP
    1.319
"""


@evaluate.utils.file_utils.add_start_docstrings(
    PROTOCOL.description, shared_args(PROTOCOL, _KWARGS_DESCRIPTION))
class Infolm(ProtocolModule, evaluate.Metric):  # evaluate names the module "infolm" from the class
    """InfoLM (Colombo et al., AAAI 2022): a divergence between two bags of LM distributions."""

    protocol = PROTOCOL
    inputs_description = _KWARGS_DESCRIPTION
