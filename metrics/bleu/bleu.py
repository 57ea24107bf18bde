"""BLEU as a Hugging Face ``evaluate`` module that answers to evaluate's ``sacrebleu``: a thin
wrapper over :func:`nlgmetrics.bleu.bleu`.

All the math and every default live in ``nlgmetrics`` (src/nlgmetrics/bleu/). ``compute()`` takes
sacrebleu's arguments under their names (``use_effective_order`` is the library's
``effective_order``; ``tokenize=None`` is the library's default, 13a; ``force`` changes no number)
and returns sacrebleu's keys with their types, then ``ratio`` and the mean ``sentence_bleu``; the
output rule (``use_aggregator``, ``return_signature``) is
:func:`nlgmetrics.apps.evaluate_adapter.evaluate_output`'s.
"""

from typing import Any

import evaluate
from nlgmetrics.apps.evaluate_adapter import CheckedTextInputs, evaluate_output, input_features  # From: nlgmetrics==0.1.0
from nlgmetrics.apps.evaluate_adapter import library_defaults_for_none, library_options, pop_output_switches  # From: nlgmetrics==0.1.0
from nlgmetrics.bleu import BleuResult, bleu  # From: nlgmetrics==0.1.0
from nlgmetrics.core.validation import check_bool  # From: nlgmetrics==0.1.0

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
penalty, over a corpus (sufficient statistics summed over segments), on sacrebleu's 0-100 scale.
This module answers to evaluate's `sacrebleu` (its arguments, keys, types and numbers), not to
evaluate's `bleu` (the NMT implementation on a 0-1 scale, with other tokenization and smoothing),
which it does not replace. Any number of references per example (ragged allowed), tokenizers
13a / intl / char / none / zh (and ja-mecab / ko-mecab with the extras nlgmetrics[ja] /
nlgmetrics[ko]), smoothing none / floor / add-k / exp, lowercasing, maximum n-gram order and
effective order. The numbers equal sacrebleu's corpus_bleu and sentence_bleu with the same options.
The signature (return_signature=True) reads
bleu|case:mixed|effective_order:no|max_ngram_order:4|nrefs:1|smooth:exp|tokenize:13a|version:<nlgmetrics version>.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one hypothesis per example.
    references (list of str, or list of list of str): one or several references per example
        (the number may vary between examples, unlike evaluate's sacrebleu; a mix is fine).
    smooth_method (str): "exp" (default), "none", "floor" or "add-k".
    smooth_value (float or None): value for floor (default 0.1) and add-k (default 1).
    force (bool): sacrebleu's switch that silences its warning about tokenized input. We give no
        such warning; accepted for drop-in use, no effect on the numbers. Default False.
    lowercase (bool): lower-case before tokenizing. Default False.
    tokenize (str or None): "13a" (default; None means 13a), "intl", "char", "none", "zh",
        "ja-mecab" or "ko-mecab" (MeCab: pip install "nlgmetrics[ja]" / "nlgmetrics[ko]").
    use_effective_order (bool): for the corpus score, stop the geometric mean at the highest order
        with hypothesis n-grams. Default False. Per-example sentence BLEU always uses it.
    max_ngram_order (int): default 4 (ours; sacrebleu's BLEU(max_ngram_order=...)).
    use_aggregator (bool): True (default): corpus numbers; False: one list per example under
        "score" (sentence BLEU), "sys_len" and "ref_len" (the corpus-only keys are left out).
    return_signature (bool): also return "signature" (a string; see the description). Default False.
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

#: evaluate's sacrebleu name of an option -> nlgmetrics.bleu.bleu's.
RENAMED = {"use_effective_order": "effective_order"}


def sacrebleu_keys(result: BleuResult) -> dict[str, Any]:
    """evaluate's sacrebleu output (its keys, order and types), then our extra numbers."""
    aggregate = result.aggregate()
    return {
        "score": result.bleu,
        "counts": list(result.counts),
        "totals": list(result.totals),
        "precisions": list(result.precisions),
        "bp": result.bp,
        "sys_len": result.sys_len,
        "ref_len": result.ref_len,
        "ratio": aggregate["ratio"],
        "sentence_bleu": aggregate["sentence_bleu"],
    }


def per_example_keys(result: BleuResult) -> dict[str, list[Any]]:
    """The keys with a value per example: sentence BLEU under "score", and the lengths."""
    return {"score": result.scores["sentence_bleu"], **result.details()}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bleu(CheckedTextInputs, evaluate.Metric):
    """Corpus and sentence BLEU with sacrebleu's numbers, in evaluate's sacrebleu layout."""

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
        switches = pop_output_switches(options)
        # sacrebleu's switch for its warning about tokenized input, which we never give: checked, no effect
        check_bool("force", options.pop("force", False))
        options = library_defaults_for_none(options, ["tokenize"])  # None: the library's 13a, as in sacrebleu
        result = bleu(predictions, references, **library_options(options, RENAMED, "sacrebleu"))
        return evaluate_output(result, switches, aggregated=sacrebleu_keys(result), per_example=per_example_keys(result))
