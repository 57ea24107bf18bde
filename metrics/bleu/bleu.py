"""BLEU as an evaluate module answering to evaluate's ``sacrebleu``.

Its protocol, ``nlgmetrics/bleu/protocol.py``, says what it is; ``ProtocolModule`` runs it."""

import evaluate
from nlgmetrics.apps.evaluate_adapter import ProtocolModule, shared_args  # From: nlgmetrics==0.1.0
from nlgmetrics.bleu.protocol import PROTOCOL  # From: nlgmetrics==0.1.0

_KWARGS_DESCRIPTION = """
Args:
{references}
    smooth_method (str): "exp" (default), "none", "floor" or "add-k".
    smooth_value (float or None): value for floor (default 0.1) and add-k (default 1).
    force (bool): sacrebleu's switch that silences its warning about tokenized input. We give no
        such warning; accepted for drop-in use, no effect on the numbers. Default False.
    lowercase (bool): lower-case before tokenizing. Default False.
    tokenize (str or None): "13a" (default; None means 13a), "intl", "char", "none", "zh",
        "ja-mecab" or "ko-mecab" (MeCab: pip install "nlgmetrics[ja]" / "nlgmetrics[ko]"),
        "flores101" or "flores200" (spBLEU: sacrebleu's SentencePiece models; needs sentencepiece).
    use_effective_order (bool): for the corpus score, stop the geometric mean at the highest order
        with hypothesis n-grams. Default False. Per-example sentence BLEU always uses it.
    max_ngram_order (int): default 4 (ours; sacrebleu's BLEU(max_ngram_order=...)).
    use_aggregator (bool): True (default): corpus numbers; False: one list per example under
        "score" (sentence BLEU), "sys_len" and "ref_len" (the corpus-only keys are left out).
{output}
Returns:
    score (float): corpus BLEU in [0, 100] (sacrebleu's scale).
    counts (list of int): matching n-grams per order; totals (list of int): hypothesis n-grams per order.
    precisions (list of float): corpus n-gram precisions in percent.
    bp (float): brevity penalty.
    sys_len (int), ref_len (int): hypothesis and closest-reference tokens in the corpus.
    ratio (float): sys_len / ref_len.
    sentence_bleu (float): the mean sentence BLEU (not the corpus BLEU).
Examples:
    >>> import evaluate
    >>> bleu = evaluate.load("metrics/bleu")
    >>> out = bleu.compute(predictions=["the cat is on the mat", "there is a dog"],
    ...                    references=[["the cat is on the mat", "a cat is on the mat"], "there is a big dog"])
    >>> round(out["score"], 2), out["counts"], round(out["bp"], 4), out["sys_len"], out["ref_len"]
    (77.81, [10, 7, 5, 3], 0.9048, 10, 11)
    >>> per_example = bleu.compute(predictions=["the cat is on the mat", "there is a dog"],
    ...                            references=["the cat is on the mat", "there is a big dog"], use_aggregator=False)
    >>> [round(s, 2) for s in per_example["score"]], per_example["sys_len"]
    ([100.0, 49.76], [6, 4])
"""


@evaluate.utils.file_utils.add_start_docstrings(
    PROTOCOL.description, shared_args(PROTOCOL, _KWARGS_DESCRIPTION))
# evaluate names the module "bleu" from the class (its cache folder); ProtocolModule then gives it
# the name of evaluate's counterpart, "sacrebleu", which evaluate.combine prefixes shared keys with
class Bleu(ProtocolModule, evaluate.Metric):
    """Corpus and sentence BLEU with sacrebleu's numbers, in evaluate's sacrebleu layout."""

    protocol = PROTOCOL
    inputs_description = _KWARGS_DESCRIPTION
