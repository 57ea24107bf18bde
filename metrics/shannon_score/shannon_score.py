"""Shannon Score as a Hugging Face ``evaluate`` module: a thin wrapper over
:func:`nlgmetrics.shannon.shannon_score`.

All math and model work live in ``nlgmetrics`` (src/nlgmetrics/shannon.py + the shared engine).
"""

import datasets
import evaluate
from nlgmetrics.evaluate_support import CheckedTextInputs
from nlgmetrics.shannon import shannon_score

_CITATION = """\
@inproceedings{egan2022play,
    title = "Play the Shannon Game With Language Models: A Human-Free Approach to Summary Evaluation",
    author = "Egan, Nicholas and Vasilyev, Oleg and Bohannon, John",
    booktitle = "Proceedings of the AAAI Conference on Artificial Intelligence",
    volume = "36",
    number = "10",
    pages = "10599--10607",
    year = "2022",
    url = "https://arxiv.org/abs/2103.10918",
}
"""

_DESCRIPTION = """\
Reference-free summary scores from Shannon's guessing game played by a causal language model
(Egan, Vasilyev & Bohannon, AAAI 2022). The document is split into sentences; each sentence's
tokens are scored after an end-of-text token and a prompt: nothing (base), the summary (help), or
the sentence itself (full). Summed over the document: ll_base, ll_help, ll_full.
Shannon Score = (ll_help - ll_base) / (ll_full - ll_base); Information Difference = ll_help - ll_base;
BLANC-Shannon = (S01 - S10) / total, where S[b][h] counts document tokens whose argmax prediction
is right (1) or wrong (0) without (b) and with (h) the summary. Numbers match PyPI blanc's
`Shannon.go` except for the first token of each sentence (see the model card).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the summaries to score.
    sources (list of str): the source document of each summary (one per prediction).
    model (str): causal LM: Hub id (paper default "gpt2"), local directory, or the offline alias
        "smollm2-135m".
    num_upstream (int): preceding sentences given as context to every pass. Default 0 (paper).
    splitter (str): sentence splitter, "pysbd" (default, offline) or "punkt" (blanc's; needs nltk data).
    start_token (int, str or None): first token of every prompt. Default "<|endoftext|>" when the
        vocabulary has it, else the model's EOS.
    device (str or None), dtype (str or None), revision (str or None): model loading.
    token_budget (int), batch_size (int or None), prefix_cache (bool): speed only, same numbers.
    chunk_size (int): distinct documents scored at a time (memory bound), same numbers. Default 64.
    progress (bool): show a progress bar. Default False.
Returns:
    shannon_score (list of float): per example, (ll_help - ll_base) / (ll_full - ll_base); 0 = no help,
        1 = as helpful as the document itself (can leave [0, 1] slightly).
    information_difference (list of float): ll_help - ll_base in nats (>= 0 when the summary helps).
    blanc_shannon (list of float): (S01 - S10) / total, in [-1, 1].
    ll_base, ll_help, ll_full (list of float): summed natural-log likelihoods of the document tokens.
    s (list of 2x2 lists of int): S[b][h] token counts.
    num_doc_tokens, num_summary_tokens, num_sentences (list of int): what was scored.
    mean_shannon_score, mean_information_difference, mean_blanc_shannon (float): averages.
    signature (str): model, fingerprint, dtype, context, splitter, start token, upstream, version.
Examples:
    >>> import evaluate
    >>> shannon = evaluate.load("metrics/shannon_score")  # doctest: +SKIP
    >>> result = shannon.compute(predictions=["Jack bought milk and honey."],
    ...                          sources=["Jack drove to the bazaar. He bought milk and honey."],
    ...                          model="smollm2-135m")  # doctest: +SKIP
    >>> round(result["shannon_score"][0], 2)  # doctest: +SKIP
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ShannonScore(CheckedTextInputs, evaluate.Metric):
    """Shannon Score, Information Difference and BLANC-Shannon (Egan et al., AAAI 2022)."""

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
            reference_urls=["https://arxiv.org/abs/2103.10918"],
        )

    def _compute(
        self,
        predictions,
        sources,
        model="gpt2",
        num_upstream=0,
        splitter="pysbd",
        start_token=None,
        device=None,
        dtype=None,
        revision=None,
        token_budget=8192,
        batch_size=None,
        prefix_cache=True,
        chunk_size=64,
        progress=False,
    ):
        result = shannon_score(
            sources,
            predictions,
            model=model,
            num_upstream=num_upstream,
            splitter=splitter,
            start_token=start_token,
            device=device,
            dtype=dtype,
            revision=revision,
            token_budget=token_budget,
            batch_size=batch_size,
            prefix_cache=prefix_cache,
            chunk_size=chunk_size,
            progress=progress,
        )
        output = result.to_dict()
        for name, value in result.mean().items():
            output[f"mean_{name}"] = value
        return output
