"""chrF / chrF++ as a Hugging Face ``evaluate`` module that answers to evaluate's ``chrf``: a thin
wrapper over :func:`nlgmetrics.chrf.chrf`.

All the math and every default live in ``nlgmetrics`` (src/nlgmetrics/chrf/). ``compute()`` takes
evaluate's chrf arguments (the library's names) and returns its keys (``score``, ``char_order``,
``word_order``, ``beta``), then the mean ``sentence_chrf``; the output rule (``use_aggregator``,
``return_signature``) is :func:`nlgmetrics.apps.evaluate_adapter.evaluate_output`'s. chrF++ is
``compute(..., word_order=2)``.
"""

from typing import Any

import evaluate
from nlgmetrics.apps.evaluate_adapter import CheckedTextInputs, evaluate_output, input_features  # From: nlgmetrics==0.1.0
from nlgmetrics.apps.evaluate_adapter import pop_output_switches  # From: nlgmetrics==0.1.0
from nlgmetrics.chrf import DEFAULT_BETA, ChrfResult, chrf  # From: nlgmetrics==0.1.0

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
numbers equal sacrebleu's CHRF() / CHRF(word_order=2) with the same options, and the keys and
arguments are evaluate's chrf module's. The signature (return_signature=True) reads
chrf|beta:2|case:mixed|char_order:6|eps_smoothing:no|nrefs:1|whitespace:no|word_order:0|version:<nlgmetrics version>.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one hypothesis per example.
    references (list of str, or list of list of str): one or several references per example
        (the number may vary between examples, unlike evaluate's chrf; a mix is fine).
    char_order (int): largest character n-gram order. Default 6.
    word_order (int): largest word n-gram order. Default 0 (chrF); 2 is chrF++.
    beta (float): recall is beta times as important as precision. Default 2.
    lowercase (bool): lower-case before scoring. Default False.
    whitespace (bool): keep whitespace in character n-grams. Default False.
    eps_smoothing (bool): mean of per-order F-scores with epsilon smoothing (chrF++.py, NLTK,
        Moses) instead of sacrebleu's effective-order average. Default False.
    use_aggregator (bool): True (default): corpus numbers; False: a list of sentence chrF under
        "score", one per example (the settings char_order, word_order, beta are left out).
    return_signature (bool): also return "signature" (a string; see the description). Default False.
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


def chrf_keys(result: ChrfResult, beta: Any) -> dict[str, Any]:
    """evaluate's chrf output (its keys, order and types: ``beta`` as given), then our extra number."""
    return {
        "score": result.chrf,
        "char_order": result.char_order,
        "word_order": result.word_order,
        "beta": beta,
        "sentence_chrf": result.aggregate()["sentence_chrf"],
    }


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Chrf(CheckedTextInputs, evaluate.Metric):
    """Corpus and sentence chrF / chrF++ with sacrebleu's numbers, in evaluate's chrf layout."""

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
        switches = pop_output_switches(options)
        result = chrf(predictions, references, **options)
        return evaluate_output(result, switches, aggregated=chrf_keys(result, options.get("beta", DEFAULT_BETA)),
                               per_example={"score": result.scores["sentence_chrf"]})
