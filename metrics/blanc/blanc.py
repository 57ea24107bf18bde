"""BLANC (help and tune) as an evaluate module.

Its protocol, ``nlgmetrics/blanc/protocol.py``, says what it is; ``ProtocolModule`` runs it."""

import evaluate
from nlgmetrics.apps.evaluate_adapter import ProtocolModule, shared_args  # From: nlgmetrics==0.1.0
from nlgmetrics.blanc.protocol import PROTOCOL  # From: nlgmetrics==0.1.0

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the summaries to score.
    sources (list of str): the source document of each summary (one per prediction).
    Every option of nlgmetrics.blanc.blanc passes through unchanged, with the library's defaults
    (defined once there):
    variant (str): "help" (default, BLANC-help) or "tune" (BLANC-tune); an option of the other
        variant only is refused with an error naming it.
    model (str): masked LM: Hub id or a local directory. Default nlgmetrics.blanc.DEFAULT_MODEL
        ("bert-base-uncased", the paper's).
    model_tokenizer: the Hugging Face tokenizer of a model instance.
    revision (str or None), device (str or None), dtype (str or None): model loading.
{big_model}
    max_length (int or None): the window of one input, at least 3 tokens; default None: blanc's
        512, capped at the model's positions.
    token_budget (int), batch_size (int or None): speed only, same numbers.
{lm_run}
    measure (str): "relative" (default, in [-1, 1]) or "improve" (in [0, 1]).
    gap (int), gap_mask (int), min_token_length_normal / _lead / _followup (int),
        len_sent_allow_cut (int): blanc's masking options, same defaults (2, 1, 4, 2, 100, 100).
    splitter (str): sentence splitter, "pysbd" (default, offline) or "punkt" (blanc's; needs nltk data).
    filler_token (str), help_sep (str): BLANC-help only ("." and "").
    finetune_epochs (int), learning_rate (float), p_mask (float), seed (int): BLANC-tune only,
        blanc's names and defaults (10, 5e-5, 0.15, 0).
    tuning (nlgmetrics.blanc.TuneSettings): BLANC-tune only, the rest of blanc's recipe (chunking,
        summary masking, token replacement, warmup, frozen layers), blanc's defaults.
    use_aggregator (bool): True (default): the mean over the examples; False: a list, one value
        per example, under the same key.
{output}
Returns:
    blanc (float): mean BLANC over the examples, higher is better (relative in [-1, 1], improve in
        [0, 1]; 0.0 for an empty summary or an empty document).
Examples:
    >>> import evaluate
    >>> blanc = evaluate.load("metrics/blanc")  # doctest: +SKIP
    >>> result = blanc.compute(predictions=["Jack bought milk and honey."],
    ...                        sources=["Jack drove to the bazaar. He bought milk and honey."],
    ...                        model="bert-base-uncased")  # doctest: +SKIP
    >>> list(result)  # doctest: +SKIP
    ['blanc']
"""


@evaluate.utils.file_utils.add_start_docstrings(
    PROTOCOL.description, shared_args(PROTOCOL, _KWARGS_DESCRIPTION))
class Blanc(ProtocolModule, evaluate.Metric):  # evaluate names the module "blanc" from the class
    """BLANC-help and BLANC-tune (Vasilyev, Dharnidharka & Bohannon, 2020)."""

    protocol = PROTOCOL
    inputs_description = _KWARGS_DESCRIPTION
