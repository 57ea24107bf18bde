"""BLANC (BLANC-help and BLANC-tune) as a Hugging Face ``evaluate`` module: a thin wrapper over
:func:`nlgmetrics.blanc.blanc_help` and :func:`nlgmetrics.blanc_tune.blanc_tune`.

All math and model work live in ``nlgmetrics`` (src/nlgmetrics/blanc.py, blanc_tune.py + the
shared engine).
"""

import inspect

import datasets
import evaluate
from nlgmetrics.blanc import blanc_help
from nlgmetrics.blanc_tune import blanc_tune
from nlgmetrics.evaluate_support import CheckedTextInputs

_CITATION = """\
@inproceedings{vasilyev-etal-2020-fill,
    title = "Fill in the {BLANC}: Human-free quality estimation of document summaries",
    author = "Vasilyev, Oleg and Dharnidharka, Vedant and Bohannon, John",
    booktitle = "Proceedings of the First Workshop on Evaluation and Comparison of NLP Systems",
    year = "2020",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2020.eval4nlp-1.2",
    pages = "11--20",
}
"""

_DESCRIPTION = """\
BLANC (Vasilyev et al. 2020) scores a summary without a reference: how much does it help a masked
language model fill in blanks in the source document? Every sentence of the document is masked in
several even patterns (every `gap`-th token, long enough tokens only). BLANC-help unmasks each
copy with the summary in front of the sentence and with a same-length filler ("." per token);
BLANC-tune unmasks with the model before and after fine-tuning a copy of it on the summary.
S[b][h] counts masked tokens by base / helped correctness; relative = (S01 - S10) / total,
improve = S01 / (S00 + S01 + S11). Numbers equal PyPI blanc's BlancHelp / BlancTune (same seed).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the summaries to score.
    sources (list of str): the source document of each summary (one per prediction).
    variant (str): "help" (default, BLANC-help) or "tune" (BLANC-tune).
    model (str): masked LM: Hub id (paper default "bert-base-uncased") or a local directory.
    measure (str): "relative" (default) or "improve".
    gap (int), gap_mask (int), min_token_length_normal / _lead / _followup (int),
        len_sent_allow_cut (int): blanc's masking options, same defaults (2, 1, 4, 2, 100, 100).
    filler_token (str), help_sep (str): BLANC-help only ("." and "").
    finetune_epochs, finetune_batch_size, finetune_chunk_size, finetune_chunk_stride, p_mask,
        p_token_replace, p_token_original, learning_rate, warmup_steps, seed, ...: BLANC-tune only,
        blanc's names and defaults (10, 1, 64, 32, 0.15, 0.1, 0.1, 5e-5, 0); seed default 0.
    splitter (str): sentence splitter, "pysbd" (default, offline) or "punkt" (blanc's; needs nltk data).
    device (str or None), dtype (str or None), revision (str or None): model loading.
    token_budget (int), batch_size (int or None): speed only, same numbers.
    progress (bool): show a progress bar. Default False.
Returns:
    blanc (list of float): per example; relative in [-1, 1], improve in [0, 1]; 0.0 for an empty
        summary or an empty document.
    counts (list of 2x2 lists of int): S[base correct][helped correct] per example.
    mean_blanc (float): the average.
    signature (str): variant, model, fingerprint, dtype and every option that changes the number.
Examples:
    >>> import evaluate
    >>> blanc = evaluate.load("metrics/blanc")  # doctest: +SKIP
    >>> result = blanc.compute(predictions=["Jack bought milk and honey."],
    ...                        sources=["Jack drove to the bazaar. He bought milk and honey."],
    ...                        model="bert-base-uncased")  # doctest: +SKIP
    >>> result["blanc"][0]  # doctest: +SKIP
"""

_VARIANTS = {"help": blanc_help, "tune": blanc_tune}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Blanc(CheckedTextInputs, evaluate.Metric):
    """BLANC-help and BLANC-tune (Vasilyev, Dharnidharka & Bohannon, 2020)."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string", id="sequence"),
                    "sources": datasets.Value("string", id="sequence"),
                }
            ),
            codebase_urls=["https://github.com/PrimerAI/blanc"],
            reference_urls=["https://aclanthology.org/2020.eval4nlp-1.2"],
        )

    def _compute(self, predictions, sources, variant="help", model="bert-base-uncased",
                 progress=False, **options):
        if variant not in _VARIANTS:
            raise ValueError(f"Unknown variant={variant!r}; choose 'help' (BLANC-help) or 'tune' (BLANC-tune).")
        function = _VARIANTS[variant]
        allowed = set(inspect.signature(function).parameters) - {"documents", "summaries"}
        unknown = sorted(set(options) - allowed)
        if unknown:
            other = "tune" if variant == "help" else "help"
            raise ValueError(
                f"Unknown option(s) {unknown} for variant={variant!r}"
                + (f" (they belong to variant={other!r})" if set(unknown) <= set(
                    inspect.signature(_VARIANTS[other]).parameters) else "")
                + f"; valid options: {sorted(allowed)}."
            )
        result = function(sources, predictions, model=model, progress=progress, **options)
        scores = list(result.scores)
        return {
            "blanc": scores,
            "counts": result.counts,
            "mean_blanc": sum(scores) / len(scores) if scores else 0.0,
            "signature": result.signature,
        }
