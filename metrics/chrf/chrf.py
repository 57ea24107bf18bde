"""chrF / chrF++ as a Hugging Face ``evaluate`` module: a thin wrapper over :func:`nlgmetrics.chrf.chrf`.

All the math and every default live in ``nlgmetrics`` (src/nlgmetrics/chrf/); ``compute()``
passes its options through and returns :func:`nlgmetrics.apps.evaluate_adapter.evaluate_output`
of the result: corpus ``chrf`` (0-100) first, then the mean ``sentence_chrf``, the per-example
sentence chrF under ``per_example`` and the ``signature``. chrF++ is ``compute(..., word_order=2)``.
"""

import evaluate
from nlgmetrics.apps.evaluate_adapter import CheckedTextInputs, evaluate_output, input_features  # From: nlgmetrics==0.1.0
from nlgmetrics.chrf import chrf  # From: nlgmetrics==0.1.0

_CITATION = """\
@inproceedings{popovic-2015-chrf,
    title = "chr{F}: character n-gram {F}-score for automatic {MT} evaluation",
    author = "Popovi{\\'c}, Maja",
    booktitle = "Proceedings of the Tenth Workshop on Statistical Machine Translation",
    year = "2015",
    address = "Lisbon, Portugal",
    url = "https://aclanthology.org/W15-3049",
    pages = "392--395",
}
@inproceedings{popovic-2017-chrf,
    title = "chr{F}++: words helping character n-grams",
    author = "Popovi{\\'c}, Maja",
    booktitle = "Proceedings of the Second Conference on Machine Translation",
    year = "2017",
    address = "Copenhagen, Denmark",
    url = "https://aclanthology.org/W17-4770",
    pages = "612--618",
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
chrF (Popović, 2015): the F-beta score (beta = 2: recall counts twice as much as precision) of
character n-grams of orders 1-6, precision and recall averaged over the orders; chrF++
(Popović, 2017) adds word unigrams and bigrams (word_order=2). Over a corpus (statistics summed
over segments, each against its best reference) or per sentence. Any number of references per
example (ragged allowed), lowercasing, whitespace kept or removed, epsilon smoothing. The
numbers equal sacrebleu's CHRF() / CHRF(word_order=2) with the same options.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one hypothesis per example.
    references (list of str, or list of list of str): one or several references per example
        (a mix of both is fine).
    char_order (int): largest character n-gram order. Default 6.
    word_order (int): largest word n-gram order. Default 0 (chrF); 2 is chrF++.
    beta (float): recall is beta times as important as precision. Default 2.
    lowercase (bool): lower-case before scoring. Default False.
    whitespace (bool): keep whitespace in character n-grams. Default False.
    eps_smoothing (bool): mean of per-order F-scores with epsilon smoothing (chrF++.py, NLTK,
        Moses) instead of sacrebleu's effective-order average. Default False.
Returns:
    chrf (float): corpus chrF in [0, 100] (sacrebleu's scale).
    sentence_chrf (float): the mean sentence chrF (not the corpus chrF).
    per_example (dict): {"sentence_chrf": [float, ...]}, sentence chrF of each example, [0, 100].
    signature (str): every option that changes the number, and the version.
Examples:
    >>> import evaluate
    >>> chrf = evaluate.load("metrics/chrf")
    >>> out = chrf.compute(predictions=["the cat is on the mat", "there is a dog"],
    ...                    references=[["the cat is on the mat", "a cat is on the mat"], "there is a big dog"])
    >>> round(out["chrf"], 2), [round(s, 2) for s in out["per_example"]["sentence_chrf"]]
    (81.0, [100.0, 57.09])
    >>> round(chrf.compute(predictions=["there is a dog"], references=["there is a big dog"], word_order=2)["chrf"], 2)
    59.82
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Chrf(CheckedTextInputs, evaluate.Metric):
    """Corpus and sentence chrF / chrF++ with sacrebleu's numbers."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=input_features("references"),
            codebase_urls=["https://github.com/mjpost/sacrebleu", "https://github.com/m-popovic/chrF"],
            reference_urls=["https://aclanthology.org/W15-3049", "https://aclanthology.org/W17-4770",
                            "https://aclanthology.org/W18-6319"],
        )

    def _compute(self, predictions, references, **options):
        return evaluate_output(chrf(predictions, references, **options))
