"""TER as a Hugging Face ``evaluate`` module that answers to evaluate's ``ter``: a thin wrapper over
:func:`nlgmetrics.ter.ter`.

All the math and every default live in ``nlgmetrics`` (src/nlgmetrics/ter/). ``compute()`` takes
evaluate's ter arguments under their names (``ignore_punct`` and ``support_zh_ja_chars`` are the
library's ``no_punct`` and ``asian_support``) and returns its keys (``score``, ``num_edits``,
``ref_length``), then the mean ``sentence_ter``; the output rule (``use_aggregator``,
``return_signature``) is :func:`nlgmetrics.apps.evaluate_adapter.evaluate_output`'s.
"""

import evaluate
from nlgmetrics.apps.evaluate_adapter import CheckedTextInputs, evaluate_output, input_features  # From: nlgmetrics==0.1.0
from nlgmetrics.apps.evaluate_adapter import library_options, pop_output_switches  # From: nlgmetrics==0.1.0
from nlgmetrics.ter import TerResult, ter  # From: nlgmetrics==0.1.0

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
case sensitivity as options, under the names of evaluate's ter module. The numbers equal
sacrebleu's TER() with the same options, except that normalized=True normalises each reference
once, as Tercom, where sacrebleu 2.x (and so evaluate's ter) normalises it twice: pass
normalize_references_twice=True for sacrebleu's numbers (see the card). The signature
(return_signature=True) reads
ter|asian_support:no|case:lc|no_punct:no|normalized:no|nrefs:1|version:<nlgmetrics version>.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one hypothesis per example.
    references (list of str, or list of list of str): one or several references per example
        (the number may vary between examples, unlike evaluate's ter; a mix is fine).
    normalized (bool): Tercom's normalisation (punctuation split off, XML entities). Default False.
    ignore_punct (bool): remove punctuation. Default False.
    support_zh_ja_chars (bool): CJK characters as words (with normalized), CJK punctuation removed
        (with ignore_punct). Default False.
    case_sensitive (bool): keep case. Default False (lower-case, as Tercom).
    normalize_references_twice (bool): with normalized, normalise each reference twice as
        sacrebleu 2.x does (its numbers; default False: once, as Tercom).
    use_aggregator (bool): True (default): corpus numbers; False: one list per example under
        "score" (sentence TER), "num_edits" and "ref_length".
    return_signature (bool): also return "signature" (a string; see the description). Default False.
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

#: evaluate's ter name of an option -> nlgmetrics.ter.ter's.
RENAMED = {"ignore_punct": "no_punct", "support_zh_ja_chars": "asian_support"}


def ter_keys(result: TerResult) -> dict[str, float | int]:
    """evaluate's ter output (its keys, order and types), then our extra number."""
    return {
        "score": result.ter,
        "num_edits": result.num_edits,
        "ref_length": result.ref_length,
        "sentence_ter": result.aggregate()["sentence_ter"],
    }


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Ter(CheckedTextInputs, evaluate.Metric):
    """Corpus and sentence TER with sacrebleu's numbers, in evaluate's ter layout."""

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
        switches = pop_output_switches(options)
        result = ter(predictions, references, **library_options(options, RENAMED, "ter"))
        return evaluate_output(result, switches, aggregated=ter_keys(result),
                               per_example={"score": result.scores["sentence_ter"], **result.details()})
