"""BLEU as a Hugging Face ``evaluate`` module: a thin wrapper over
:func:`nlgmetrics.bleu.corpus_bleu` and :func:`nlgmetrics.bleu.sentence_bleu_batch`.

All the math lives in ``nlgmetrics`` (src/nlgmetrics/bleu/).
"""

import datasets
import evaluate
from nlgmetrics.bleu import BleuScorer
from nlgmetrics.evaluate_support import CheckedTextInputs

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
of references per example (ragged allowed), tokenizers 13a / intl / char / none / zh, smoothing
none / floor / add-k / exp, lowercasing, maximum n-gram order and effective order. The numbers
equal sacrebleu's corpus_bleu and sentence_bleu with the same options.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one hypothesis per example.
    references (list of str, or list of list of str): one or several references per example.
    tokenize (str): "13a" (default), "intl", "char", "none" or "zh".
    lowercase (bool): lower-case before tokenizing. Default False.
    smooth_method (str): "exp" (default), "none", "floor" or "add-k".
    smooth_value (float or None): value for floor (default 0.1) and add-k (default 1).
    max_ngram_order (int): default 4.
    effective_order (bool): stop the geometric mean at the highest order with hypothesis n-grams.
        Default False for the corpus score; sentence scores always use True unless
        sentence_effective_order=False.
    sentence_level (bool): also return per-example sentence BLEU. Default False.
    sentence_effective_order (bool): effective order for the sentence scores. Default True.
Returns:
    score (float): corpus BLEU in [0, 100] (sacrebleu's scale).
    bleu (float): the same on [0, 1].
    precisions (list of float): n-gram precisions in percent; counts, totals (list of int).
    bp (float): brevity penalty; sys_len, ref_len (int); ratio (float).
    sentence_scores (list of float): per-example sentence BLEU in [0, 100] (if sentence_level).
    signature (str): every option that changes the number, and the version.
Examples:
    >>> import evaluate
    >>> bleu = evaluate.load("metrics/bleu")  # doctest: +SKIP
    >>> out = bleu.compute(predictions=["the cat is on the mat"],
    ...                    references=[["the cat is on the mat", "a cat is on the mat"]])  # doctest: +SKIP
    >>> round(out["score"], 6)  # doctest: +SKIP
    100.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bleu(CheckedTextInputs, evaluate.Metric):
    """Corpus and sentence BLEU with sacrebleu's numbers."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {
                        "predictions": datasets.Value("string", id="sequence"),
                        "references": datasets.Sequence(datasets.Value("string", id="sequence")),
                    }
                ),
                datasets.Features(
                    {
                        "predictions": datasets.Value("string", id="sequence"),
                        "references": datasets.Value("string", id="sequence"),
                    }
                ),
            ],
            codebase_urls=["https://github.com/mjpost/sacrebleu"],
            reference_urls=["https://aclanthology.org/P02-1040", "https://aclanthology.org/W18-6319"],
        )

    def _compute(
        self,
        predictions,
        references,
        tokenize="13a",
        lowercase=False,
        smooth_method="exp",
        smooth_value=None,
        max_ngram_order=4,
        effective_order=False,
        sentence_level=False,
        sentence_effective_order=True,
    ):
        corpus = BleuScorer(tokenize, lowercase, smooth_method, smooth_value, max_ngram_order, effective_order)
        result = corpus.corpus(predictions, references)
        output = {
            "score": result.score,
            # 0-1 scale; exp(log(100)) is 100.00000000000004 in floating point, so clamp at 1.
            "bleu": min(result.score / 100.0, 1.0),
            "precisions": list(result.precisions),
            "counts": list(result.counts),
            "totals": list(result.totals),
            "bp": result.bp,
            "sys_len": result.sys_len,
            "ref_len": result.ref_len,
            "ratio": result.ratio,
            "signature": result.signature,
        }
        if sentence_level:
            scorer = BleuScorer(
                tokenize, lowercase, smooth_method, smooth_value, max_ngram_order, sentence_effective_order
            )
            sentences = scorer.sentences(predictions, references)
            output["sentence_scores"] = [r.score for r in sentences]
            output["sentence_signature"] = sentences[0].signature if sentences else ""
        return output
