"""BLEU as a Hugging Face ``evaluate`` module: a thin wrapper over :func:`nlgmetrics.bleu.bleu`.

All the math and every default live in ``nlgmetrics`` (src/nlgmetrics/bleu/); ``compute()``
passes its options through and returns :func:`nlgmetrics.apps.evaluate_adapter.evaluate_output`
of the result: corpus ``bleu`` (0-100) first, then ``bp``, ``ratio``, ``precision_1..N``,
``sys_len``, ``ref_len`` and the mean ``sentence_bleu``, the per-example sentence BLEU under
``per_example`` and the ``signature``.
"""

import evaluate
from nlgmetrics.apps.evaluate_adapter import CheckedTextInputs, evaluate_output, input_features  # From: nlgmetrics==0.1.0
from nlgmetrics.bleu import bleu  # From: nlgmetrics==0.1.0

_CITATION = """\
@inproceedings{papineni-etal-2002-bleu,
    title = "{B}leu: a Method for Automatic Evaluation of Machine Translation",
    author = "Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing",
    booktitle = "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics",
    year = "2002",
    address = "Philadelphia, Pennsylvania, USA",
    url = "https://aclanthology.org/P02-1040",
    pages = "311--318",
}
@inproceedings{post-2018-call,
    title = "A Call for Clarity in Reporting {BLEU} Scores",
    author = "Post, Matt",
    booktitle = "Proceedings of the Third Conference on Machine Translation: Research Papers",
    year = "2018",
    address = "Belgium, Brussels",
    url = "https://aclanthology.org/W18-6319",
    pages = "186--191",
}
"""

_DESCRIPTION = """\
BLEU (Papineni et al., 2002): geometric mean of clipped n-gram precisions times a brevity
penalty, over a corpus (sufficient statistics summed over segments) or per sentence. Any number
of references per example (ragged allowed), tokenizers 13a / intl / char / none / zh (and
ja-mecab / ko-mecab with the extras nlgmetrics[ja] / nlgmetrics[ko]), smoothing
none / floor / add-k / exp, lowercasing, maximum n-gram order and effective order. The numbers
equal sacrebleu's corpus_bleu and sentence_bleu with the same options.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one hypothesis per example.
    references (list of str, or list of list of str): one or several references per example
        (a mix of both is fine).
    tokenize (str): "13a" (default), "intl", "char", "none", "zh", "ja-mecab" or "ko-mecab"
        (MeCab: pip install "nlgmetrics[ja]" / "nlgmetrics[ko]").
    lowercase (bool): lower-case before tokenizing. Default False.
    smooth_method (str): "exp" (default), "none", "floor" or "add-k".
    smooth_value (float or None): value for floor (default 0.1) and add-k (default 1).
    max_ngram_order (int): default 4.
    effective_order (bool): for the corpus score, stop the geometric mean at the highest order
        with hypothesis n-grams. Default False. The sentence scores always use effective order.
Returns:
    bleu (float): corpus BLEU in [0, 100] (sacrebleu's scale).
    bp (float): brevity penalty; ratio (float): hypothesis / reference length.
    precision_1 .. precision_N (float): corpus n-gram precisions in percent.
    sys_len, ref_len (float): hypothesis and closest-reference tokens in the corpus.
    sentence_bleu (float): the mean sentence BLEU (not the corpus BLEU).
    per_example (dict): {"sentence_bleu": [float, ...]}, sentence BLEU of each example, [0, 100].
    signature (str): every option that changes the number, and the version.
Examples:
    >>> import evaluate
    >>> bleu = evaluate.load("metrics/bleu")
    >>> out = bleu.compute(predictions=["the cat is on the mat", "there is a dog"],
    ...                    references=[["the cat is on the mat", "a cat is on the mat"], "there is a big dog"])
    >>> round(out["bleu"], 2), round(out["bp"], 4), [round(s, 2) for s in out["per_example"]["sentence_bleu"]]
    (77.81, 0.9048, [100.0, 49.76])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bleu(CheckedTextInputs, evaluate.Metric):
    """Corpus and sentence BLEU with sacrebleu's numbers."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=input_features("references"),
            codebase_urls=["https://github.com/mjpost/sacrebleu"],
            reference_urls=["https://aclanthology.org/P02-1040", "https://aclanthology.org/W18-6319"],
        )

    def _compute(self, predictions, references, **options):
        return evaluate_output(bleu(predictions, references, **options))
