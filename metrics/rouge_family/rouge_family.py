"""The ROUGE family as an evaluate module answering to evaluate's ``rouge``.

Its protocol, ``nlgmetrics/rouge/protocol.py``, says what it is; ``ProtocolModule`` runs it."""

import evaluate
from nlgmetrics.apps.evaluate_adapter import ProtocolModule  # From: nlgmetrics==0.1.0
from nlgmetrics.rouge.protocol import PROTOCOL  # From: nlgmetrics==0.1.0

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one text per example; newlines separate sentences (rougeLsum, rougeW).
    references (list of str, or list of list of str): one reference, or several, per example
        (a mix of both is fine).
    rouge_types (list of str or None): default (None) ["rouge1", "rouge2", "rougeL", "rougeLsum"];
        also "rouge3"... "rouge100", "rougeW", "rougeS*" / "rougeS4" (skip-bigrams, max gap 4),
        "rougeSU*" / "rougeSU4".
    use_aggregator (bool): True (default): the mean F-measure of each type over the examples;
        False: one list per type, its F-measure per example, under the same keys.
    use_stemmer (bool or str): stem words longer than 3 characters: True/"porter" (NLTK, as
        rouge-score) or "rouge155" (ROUGE-1.5.5's Porter variant, Perl -m); English stemmers,
        applied to ASCII words only. Default False.
    tokenizer (None, str or callable): how texts are split into words. None or "default"
        (rouge-score's: ASCII letters and digits only; other scripts lose their words, with a
        warning when a text loses all of them), "whitespace" (pre-tokenized text), "unicode"
        (letters, marks and digits of any script written with spaces: Cyrillic, Greek, Arabic,
        Devanagari, accented Latin...), "cjk" (each Chinese/Japanese character a token, other runs
        as words), "char" (each letter a token, any script, e.g. Thai); or a callable text -> list
        of str (as evaluate's rouge takes; or an object with a tokenize method, as rouge-score's
        RougeScorer takes), whose tokens are used as they are (no stemming or stopwords with it).
    remove_stopwords (bool): drop ROUGE-1.5.5's SMART stopwords. Default False.
    multi_ref (str): "best" (default; rouge-score score_multi: highest F) or "average" (ROUGE-1.5.5 -f A).
    beta (float): F-beta weight of recall, finite and > 0. Default 1.0.
    rouge_w_weight (float): w of ROUGE-W, >= 1. Default 1.2.
    rouge_w_normalization (str): "rouge155" (default, ROUGE-1.5.5 numbers) or "paper".
    aggregation (str): "bootstrap" (default: plain mean, seeded bootstrap interval) or "rouge155"
        (the exact averages and intervals ROUGE-1.5.5 prints; use with multi_ref="average").
    n_bootstrap (int): resamples of the confidence interval, default 1000; 0: no interval.
    confidence (float), seed (int): the interval's level (default 0.95) and seed (default 0).
    progress (bool): show a progress bar. Default False.
    return_details (bool): also return, after evaluate's rouge keys, the precision and recall of
        every type (means, or with use_aggregator=False lists per example) and the confidence
        interval of every mean. Default False: evaluate's rouge keys only (what a Trainer logging
        every key should log).
    return_signature (bool): also return "signature" (a string; see the description). Default False.
Returns:
    <type> (float): for every requested type, its mean F-measure, e.g. "rouge1"; in [0, 1]. By
        default the only keys, as in evaluate's rouge.
    <type>_precision, <type>_recall (float): with return_details=True, the mean of each column
        (with use_aggregator=False too, a list per example).
    <column>_low, <column>_high (float): with return_details=True, the confidence interval of each
        mean (n_bootstrap > 0).
Examples:
    >>> import evaluate
    >>> rouge = evaluate.load("metrics/rouge_family")
    >>> out = rouge.compute(predictions=["the cat sat on the mat", "police kill the gunman"],
    ...                     references=[["a cat sat on the mat", "the cat lay down"], "police killed the gunman"],
    ...                     rouge_types=["rouge1", "rougeL"])
    >>> list(out), round(out["rouge1"], 4)
    (['rouge1', 'rougeL'], 0.7917)
    >>> detailed = rouge.compute(predictions=["the cat sat on the mat", "police kill the gunman"],
    ...                          references=[["a cat sat on the mat", "the cat lay down"], "police killed the gunman"],
    ...                          rouge_types=["rouge1", "rougeL"], return_details=True)
    >>> list(detailed)[:4], round(detailed["rouge1_recall"], 4)
    (['rouge1', 'rougeL', 'rouge1_precision', 'rouge1_recall'], 0.7917)
    >>> rouge.compute(predictions=["the cat sat on the mat", "police kill the gunman"],
    ...               references=[["a cat sat on the mat", "the cat lay down"], "police killed the gunman"],
    ...               rouge_types=["rouge1"], use_aggregator=False, return_details=True)["rouge1_recall"]
    [0.8333333333333334, 0.75]
    >>> chinese = rouge.compute(predictions=["我喜欢猫"], references=["我喜欢狗"], tokenizer="cjk")
    >>> chinese["rouge1"], chinese["rouge2"]
    (0.75, 0.6666666666666666)
"""


@evaluate.utils.file_utils.add_start_docstrings(PROTOCOL.description, _KWARGS_DESCRIPTION)
# evaluate names the module "rouge_family" from the class (its cache folder); ProtocolModule then gives it
# the name of evaluate's counterpart, "rouge", which evaluate.combine prefixes shared keys with
class RougeFamily(ProtocolModule, evaluate.Metric):
    """ROUGE-N/L/Lsum/W/S/SU with rouge-score and ROUGE-1.5.5 numbers, in evaluate's rouge layout."""

    protocol = PROTOCOL
    inputs_description = _KWARGS_DESCRIPTION
