"""InfoLM as a Hugging Face ``evaluate`` module: a thin wrapper over :func:`nlgmetrics.infolm.infolm`.

All math and model work live in ``nlgmetrics`` (src/nlgmetrics/infolm.py,
src/nlgmetrics/information_measures.py and the shared engine).
"""

import datasets
import evaluate
from nlgmetrics.evaluate_support import CheckedTextInputs
from nlgmetrics.infolm import infolm

_CITATION = """\
@inproceedings{colombo2022infolm,
    title = "InfoLM: A New Metric to Evaluate Summarization & Data2Text Generation",
    author = "Colombo, Pierre and Clavel, Chlo{\\'e} and Piantanida, Pablo",
    booktitle = "Proceedings of the AAAI Conference on Artificial Intelligence",
    volume = "36",
    number = "10",
    year = "2022",
    url = "https://arxiv.org/abs/2112.01589",
}
"""

_DESCRIPTION = """\
InfoLM (Colombo, Clavel & Piantanida, AAAI 2022) compares a candidate text with a reference through
a language model. Each token position j of a text is masked in turn and a masked LM predicts a
distribution p_j over the vocabulary (softmax of the logits / temperature); a causal LM gives the
next-token distribution of x_j from BOS + x_<j. The text's "bag of distributions" is the
(idf-)weighted average of the p_j. InfoLM is an information measure between the two bags:
KL, alpha, beta, AB, Renyi or Jensen-Shannon divergence, L1 / L2 / L-infinity or Fisher-Rao distance.
Lower = more similar for every measure (0 = identical). With several references per candidate the
best (smallest) value is reported.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate texts.
    references (list of str, or list of list of str): one reference, or several, per candidate.
    model (str): masked LM (paper default "bert-base-uncased") or causal LM: Hub id, local directory,
        or the offline alias "smollm2-135m" (causal SmolLM2-135M-Instruct).
    information_measure (str): "fisher_rao_distance" (default), "kl_divergence", "alpha_divergence",
        "beta_divergence", "ab_divergence", "renyi_divergence", "l1_distance", "l2_distance",
        "l_infinity_distance", "js_divergence".
    alpha (float or None): for alpha (alpha not in {0, 1}), AB and Renyi (alpha > 0, != 1) divergences.
    beta (float or None): for beta (beta not in {0, -1}) and AB divergences (alpha, beta, alpha+beta != 0).
    temperature (float): softmax temperature, default 0.25 (torchmetrics' default).
    idf (bool): weight positions by idf over the distinct references of the call. Default True.
    max_length (int or None): tokens per text incl. special tokens; longer texts are truncated
        (one warning). Default: the model's positions.
    model_kind (str or None): "masked" or "causal"; detected from the config by default.
    device (str or None), dtype (str or None): model placement / precision (float32 default).
    token_budget (int or None), batch_size (int or None), chunk_size (int): speed / memory only, same
        numbers (default token budget: 8192 on GPU, 2048 on CPU).
    progress (bool): show a progress bar. Default False.
Returns:
    infolm (float): mean of the per-example scores.
    scores (list of float): per example, the smallest measure value over its references.
    best_reference (list of int): index of the reference that gave it.
    information_measure (str), lower_is_better (bool, always True), note (str).
    signature (str): model, fingerprint, dtype, kind, measure, alpha, beta, temperature, idf,
        max_length, multi-reference rule, version.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/infolm")  # doctest: +SKIP
    >>> result = metric.compute(predictions=["the cat sat on the mat"],
    ...                         references=[["a cat was sitting on the mat", "there is a cat"]],
    ...                         model="bert-base-uncased")  # doctest: +SKIP
    >>> result["lower_is_better"]  # doctest: +SKIP
    True
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class InfoLM(CheckedTextInputs, evaluate.Metric):
    """InfoLM (Colombo et al., AAAI 2022): a divergence between two bags of LM distributions."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {
                        "predictions": datasets.Value("string", id="sequence"),
                        "references": datasets.Sequence(datasets.Value("string", id="sequence"), id="references"),
                    }
                ),
                datasets.Features(
                    {
                        "predictions": datasets.Value("string", id="sequence"),
                        "references": datasets.Value("string", id="sequence"),
                    }
                ),
            ],
            codebase_urls=["https://github.com/Lightning-AI/torchmetrics"],
            reference_urls=["https://arxiv.org/abs/2112.01589"],
        )

    def _compute(
        self,
        predictions,
        references,
        model="bert-base-uncased",
        information_measure="fisher_rao_distance",
        alpha=None,
        beta=None,
        temperature=0.25,
        idf=True,
        max_length=None,
        model_kind=None,
        device=None,
        dtype=None,
        token_budget=None,
        batch_size=None,
        chunk_size=256,
        progress=False,
    ):
        result = infolm(
            predictions,
            references,
            model=model,
            information_measure=information_measure,
            alpha=alpha,
            beta=beta,
            temperature=temperature,
            idf=idf,
            max_length=max_length,
            model_kind=model_kind,
            device=device,
            dtype=dtype,
            token_budget=token_budget,
            batch_size=batch_size,
            chunk_size=chunk_size,
            progress=progress,
        )
        return result.to_dict()
