"""ROUGE family as a Hugging Face ``evaluate`` module: a thin wrapper over
:func:`nlgmetrics.rouge.rouge_scores`.

All the math lives in ``nlgmetrics`` (src/nlgmetrics/rouge/).
"""

import datasets
import evaluate
from nlgmetrics.evaluate_support import CheckedTextInputs
from nlgmetrics.rouge import rouge_scores

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
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): one text per example; newlines separate sentences (rougeLsum, rougeW).
    references (list of str, or list of list of str): one reference, or several, per example.
    rouge_types (list of str): default ["rouge1", "rouge2", "rougeL", "rougeLsum"]; also "rouge3"...,
        "rougeW", "rougeS*" / "rougeS4" (skip-bigrams, max gap 4), "rougeSU*" / "rougeSU4".
    use_stemmer (bool or str): stem words longer than 3 characters: True/"porter" (NLTK, as
        rouge-score) or "rouge155" (ROUGE-1.5.5's Porter variant, Perl -m). Default False.
    remove_stopwords (bool): drop ROUGE-1.5.5's SMART stopwords. Default False.
    multi_ref (str): "best" (rouge-score score_multi: highest F) or "average" (ROUGE-1.5.5 -f A).
    beta (float): F-beta weight of recall. Default 1.0.
    rouge_w_weight (float): w of ROUGE-W. Default 1.2.
    rouge_w_normalization (str): "rouge155" (default, ROUGE-1.5.5 numbers) or "paper".
    use_aggregator (bool): True (default): each type maps to the mean F; False: to the list of F.
    aggregation (str): "bootstrap" (default: plain mean, seeded bootstrap interval) or "rouge155"
        (the exact averages and intervals ROUGE-1.5.5 prints; use with multi_ref="average").
    n_bootstrap (int), confidence (float), seed (int): the bootstrap confidence interval.
    progress (bool): show a progress bar. Default False.
Returns:
    <rouge type> (float or list of float): mean F-measure (or per-example F), in [0, 1].
    scores (dict): per type, per-example "precision", "recall", "fmeasure" lists.
    aggregate (dict): per type and measure, {"mean", "low", "high"} (bootstrap interval).
    signature (str): every option that changes the numbers, and the version.
Examples:
    >>> import evaluate
    >>> rouge = evaluate.load("metrics/rouge_family")  # doctest: +SKIP
    >>> out = rouge.compute(predictions=["the cat sat on the mat"],
    ...                     references=[["a cat sat on the mat", "the cat lay down"]])  # doctest: +SKIP
    >>> round(out["rouge1"], 4)  # doctest: +SKIP
    0.8333
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RougeFamily(CheckedTextInputs, evaluate.Metric):
    """ROUGE-N/L/Lsum/W/S/SU with rouge-score and ROUGE-1.5.5 numbers."""

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
            codebase_urls=[
                "https://github.com/google-research/google-research/tree/master/rouge",
                "https://github.com/li-plus/rouge-metric",
            ],
            reference_urls=["https://aclanthology.org/W04-1013"],
        )

    def _compute(
        self,
        predictions,
        references,
        rouge_types=("rouge1", "rouge2", "rougeL", "rougeLsum"),
        use_stemmer=False,
        remove_stopwords=False,
        multi_ref="best",
        beta=1.0,
        rouge_w_weight=1.2,
        rouge_w_normalization="rouge155",
        use_aggregator=True,
        aggregation="bootstrap",
        n_bootstrap=1000,
        confidence=0.95,
        seed=0,
        progress=False,
    ):
        result = rouge_scores(
            predictions,
            references,
            rouge_types=rouge_types,
            use_stemmer=use_stemmer,
            remove_stopwords=remove_stopwords,
            multi_ref=multi_ref,
            beta=beta,
            rouge_w_weight=rouge_w_weight,
            rouge_w_normalization=rouge_w_normalization,
            aggregate=True,
            aggregation=aggregation,
            n_bootstrap=n_bootstrap,
            confidence=confidence,
            seed=seed,
            progress=progress,
        )
        output = {}
        for name, columns in result["scores"].items():
            if use_aggregator:
                output[name] = result["aggregate"][name]["fmeasure"]["mean"]
            else:
                output[name] = list(columns["fmeasure"])
        output.update(result)
        return output
