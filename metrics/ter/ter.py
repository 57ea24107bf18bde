"""TER as a Hugging Face ``evaluate`` module: a thin wrapper over :func:`nlgmetrics.ter.ter`.

All the math and every default live in ``nlgmetrics`` (src/nlgmetrics/ter/); ``compute()``
passes its options through and returns :func:`nlgmetrics.apps.evaluate_adapter.evaluate_output`
of the result: corpus ``ter`` (0-100+, lower is better) first, then ``num_edits``,
``ref_length`` and the mean ``sentence_ter``, the per-example sentence TER under ``per_example``
and the ``signature``.
"""

import evaluate
from nlgmetrics.apps.evaluate_adapter import CheckedTextInputs, evaluate_output, input_features  # From: nlgmetrics==0.1.0
from nlgmetrics.ter import ter  # From: nlgmetrics==0.1.0

_CITATION = """\
@inproceedings{snover-etal-2006-study,
    title = "A Study of Translation Edit Rate with Targeted Human Annotation",
    author = "Snover, Matthew and Dorr, Bonnie and Schwartz, Rich and Micciulla, Linnea and Makhoul, John",
    booktitle = "Proceedings of the 7th Conference of the Association for Machine Translation in the Americas",
    year = "2006",
    address = "Cambridge, Massachusetts, USA",
    url = "https://aclanthology.org/2006.amta-papers.25",
    pages = "223--231",
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
TER (Snover et al., 2006): the fewest word edits (insertions, deletions, substitutions and shifts
of word blocks) that turn the hypothesis into a reference, divided by the mean reference length,
over a corpus (sums over segments) or per sentence; lower is better. Any number of references per
example (ragged allowed); Tercom's normalisation, punctuation removal, Asian-language support and
case sensitivity as options. The numbers equal sacrebleu's TER() with the same options (with
normalized=True: pass normalize_references_twice=True, see the card).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one hypothesis per example.
    references (list of str, or list of list of str): one or several references per example
        (a mix of both is fine).
    normalized (bool): Tercom's normalisation (punctuation split off, XML entities). Default False.
    no_punct (bool): remove punctuation. Default False.
    asian_support (bool): CJK characters as words (with normalized), CJK punctuation removed
        (with no_punct). Default False.
    case_sensitive (bool): keep case. Default False (lower-case, as Tercom).
    normalize_references_twice (bool): with normalized, normalise each reference twice as
        sacrebleu 2.x does (its numbers; default False: once, as Tercom).
Returns:
    ter (float): corpus TER, 0 and up (can exceed 100), lower is better (sacrebleu's scale).
    num_edits (float): edits summed over the corpus; ref_length (float): summed mean reference lengths.
    sentence_ter (float): the mean sentence TER (not the corpus TER).
    per_example (dict): {"sentence_ter": [float, ...]}, sentence TER of each example.
    signature (str): every option that changes the number, and the version.
Examples:
    >>> import evaluate
    >>> ter = evaluate.load("metrics/ter")
    >>> out = ter.compute(predictions=["the cat is on the mat", "there is a dog"],
    ...                   references=[["the cat is on the mat", "a cat is on the mat"], "there is a big dog"])
    >>> round(out["ter"], 2), out["num_edits"], out["per_example"]["sentence_ter"]
    (9.09, 1.0, [0.0, 20.0])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Ter(CheckedTextInputs, evaluate.Metric):
    """Corpus and sentence TER with sacrebleu's numbers."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=input_features("references"),
            codebase_urls=["https://github.com/mjpost/sacrebleu", "https://github.com/jhclark/tercom"],
            reference_urls=["https://aclanthology.org/2006.amta-papers.25", "https://aclanthology.org/W18-6319"],
        )

    def _compute(self, predictions, references, **options):
        return evaluate_output(ter(predictions, references, **options))
