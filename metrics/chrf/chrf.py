"""chrF / chrF++ as an evaluate module answering to evaluate's ``chrf``.

Its protocol, ``nlgmetrics/chrf/protocol.py``, says what it is; ``ProtocolModule`` runs it."""

import evaluate
from nlgmetrics.apps.evaluate_adapter import ProtocolModule, shared_args  # From: nlgmetrics==0.1.0
from nlgmetrics.chrf.protocol import PROTOCOL  # From: nlgmetrics==0.1.0

_KWARGS_DESCRIPTION = """
Args:
{references}
    char_order (int): largest character n-gram order. Default 6.
    word_order (int): largest word n-gram order. Default 0 (chrF); 2 is chrF++.
    beta (float): recall is beta times as important as precision; 0 scores precision only. Default 2.
    lowercase (bool): lower-case before scoring. Default False.
    whitespace (bool): keep whitespace in character n-grams. Default False.
    eps_smoothing (bool): mean of per-order F-scores with epsilon smoothing (chrF++.py, NLTK,
        Moses) instead of sacrebleu's effective-order average. Default False.
    use_aggregator (bool): True (default): corpus numbers; False: a list of sentence chrF under
        "score", one per example (the settings char_order, word_order, beta are left out).
{output}
Returns:
    score (float): corpus chrF in [0, 100] (sacrebleu's scale).
    char_order (int), word_order (int), beta (int or float): the settings used (as evaluate's chrf).
    sentence_chrf (float): the mean sentence chrF (not the corpus chrF).
Examples:
    >>> import evaluate
    >>> chrf = evaluate.load("metrics/chrf")
    >>> out = chrf.compute(predictions=["the cat is on the mat", "there is a dog"],
    ...                    references=[["the cat is on the mat", "a cat is on the mat"], "there is a big dog"])
    >>> round(out["score"], 2), out["char_order"], out["word_order"], out["beta"]
    (81.0, 6, 0, 2)
    >>> round(chrf.compute(predictions=["there is a dog"], references=["there is a big dog"], word_order=2)["score"], 2)
    59.82
    >>> per_example = chrf.compute(predictions=["the cat is on the mat", "there is a dog"],
    ...                            references=["the cat is on the mat", "there is a big dog"], use_aggregator=False)
    >>> [round(s, 2) for s in per_example["score"]]
    [100.0, 57.09]
"""


@evaluate.utils.file_utils.add_start_docstrings(
    PROTOCOL.description, shared_args(PROTOCOL, _KWARGS_DESCRIPTION))
# evaluate names the module "chrf" from the class (its cache folder); ProtocolModule then gives it
# the name of evaluate's counterpart, "chr_f", which evaluate.combine prefixes shared keys with
class Chrf(ProtocolModule, evaluate.Metric):
    """Corpus and sentence chrF / chrF++ with sacrebleu's numbers, in evaluate's chrf layout."""

    protocol = PROTOCOL
    inputs_description = _KWARGS_DESCRIPTION
