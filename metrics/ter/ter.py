"""TER as an evaluate module answering to evaluate's ``ter``.

Its protocol, ``nlgmetrics/ter/protocol.py``, says what it is; ``ProtocolModule`` runs it."""

import evaluate
from nlgmetrics.apps.evaluate_adapter import ProtocolModule, shared_args  # From: nlgmetrics==0.1.0
from nlgmetrics.ter.protocol import PROTOCOL  # From: nlgmetrics==0.1.0

_KWARGS_DESCRIPTION = """
Args:
{references}
    normalized (bool): Tercom's normalisation (punctuation split off, XML entities). Default False.
    ignore_punct (bool): remove punctuation. Default False.
    support_zh_ja_chars (bool): CJK characters as words (with normalized), CJK punctuation removed
        (with ignore_punct). Default False.
    case_sensitive (bool): keep case. Default False (lower-case, as Tercom).
    normalize_references_twice (bool): with normalized, normalise each reference twice as
        sacrebleu 2.x does (its numbers; default False: once, as Tercom).
    use_aggregator (bool): True (default): corpus numbers; False: one list per example under
        "score" (sentence TER), "num_edits" and "ref_length".
{output}
Returns:
    score (float): corpus TER, 0 and up (can exceed 100), lower is better (sacrebleu's scale).
    num_edits (int): edits summed over the corpus; ref_length (float): summed mean reference lengths.
    sentence_ter (float): the mean sentence TER (not the corpus TER).
Examples:
    >>> import evaluate
    >>> ter = evaluate.load("metrics/ter")
    >>> out = ter.compute(predictions=["the cat is on the mat", "there is a dog"],
    ...                   references=[["the cat is on the mat", "a cat is on the mat"], "there is a big dog"])
    >>> round(out["score"], 2), out["num_edits"], out["ref_length"]
    (9.09, 1, 11.0)
    >>> ter.compute(predictions=["the cat is on the mat", "there is a dog"],
    ...             references=["the cat is on the mat", "there is a big dog"], use_aggregator=False)["score"]
    [0.0, 20.0]
"""


@evaluate.utils.file_utils.add_start_docstrings(
    PROTOCOL.description, shared_args(PROTOCOL, _KWARGS_DESCRIPTION))
# evaluate names the module "ter" from the class (its cache folder); ProtocolModule then gives it
# the name of evaluate's counterpart, "ter", which evaluate.combine prefixes shared keys with
class Ter(ProtocolModule, evaluate.Metric):
    """Corpus and sentence TER with sacrebleu's numbers, in evaluate's ter layout."""

    protocol = PROTOCOL
    inputs_description = _KWARGS_DESCRIPTION
