"""Naive FFLM oracle: the authors' per-example loop, written out independently of nlgmetrics.fflm.

For each example, five separate forward passes at batch size 1, full logits, a float32 softmax,
exactly as the authors' scorer does (github.com/JiaQiSJTU/FaithEval-FFLM,
``scorers/delta.py`` + ``utils.py``): each text tokenized on its own with ``tokenizer.tokenize``,
``[BOS] + condition + separator + target``, at most ``max_len`` tokens (the condition is cut when the
target is the summary, the target is cut when it is the document), probabilities equal to 0
floored at 1e-6, loss = -log p.

Deliberate differences from the authors' file, none of which changes a number where their code is
defined: the BOS id, max_len, separator and weights are parameters (they hard-code 0, 2048,
"TL;DR " and (0.25, 0.25, 0.5)); an empty document still gets the separator (their ``if source:``
drops it, but their score is NaN there anyway). Arguments keep the authors' order (documents, then
summaries), unlike nlgmetrics.fflm.fflm(predictions, sources).

Used by tests/unit/fflm/test_fflm.py (parity), tests/unit/fflm/test_fflm_oracle.py (the oracle's own checks, by hand)
and benchmarks/speed/fflm.py (the baseline). It imports neither pytest nor test fixtures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F


def prepare(tokenizer: Any, bos: int, max_len: int, target: str, source: str | None = None,
            separator: str | None = None, is_doc: bool = False) -> tuple[list[int], int]:
    """Token ids of one sequence and the index of the logit row predicting the first target token."""
    target_tokens = tokenizer.tokenize(target)
    if source is not None:
        sep_tokens = tokenizer.tokenize(separator)
        source_tokens = tokenizer.tokenize(source)
        if len(source_tokens) + len(sep_tokens) + len(target_tokens) + 1 > max_len:
            if not is_doc:
                source_tokens = source_tokens[: max_len - 1 - len(target_tokens) - len(sep_tokens)]
            else:
                target_tokens = target_tokens[: max_len - 1 - len(source_tokens) - len(sep_tokens)]
        ids = (
            [bos]
            + tokenizer.convert_tokens_to_ids(source_tokens)
            + tokenizer.convert_tokens_to_ids(sep_tokens)
            + tokenizer.convert_tokens_to_ids(target_tokens)
        )
        start = len(source_tokens) + len(sep_tokens)
    else:
        if len(target_tokens) + 1 > max_len:
            target_tokens = target_tokens[: max_len - 1]
        ids = [bos] + tokenizer.convert_tokens_to_ids(target_tokens)
        start = 0
    return ids, start


def _model_device(model: torch.nn.Module) -> torch.device:
    """Where the model's weights live (the input goes there; CPU for a model without parameters)."""
    first = next(model.parameters(), None)
    return first.device if first is not None else torch.device("cpu")


@torch.no_grad()
def _target_probabilities(model: torch.nn.Module, ids: list[int], start: int) -> list[float]:
    """One forward pass (batch 1); float32 softmax over the rows that predict the target tokens.

    The input goes to the model's device (benchmarks/speed/fflm.py runs this on a GPU); the
    softmax is float32 whatever the model's dtype (e.g. bfloat16 weights).
    """
    input_ids = torch.tensor([ids], device=_model_device(model))
    logits = model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids)).logits.float()
    probs = F.softmax(logits[0][start:-1], dim=-1)
    picked = probs.gather(-1, input_ids[0][start + 1 :].unsqueeze(-1)).squeeze(-1)
    return picked.tolist()


def naive_lists(model: torch.nn.Module, tokenizer: Any, document: str, summary: str, *, bos: int,
                max_len: int = 2048, separator: str = "TL;DR ") -> tuple[list[float], ...]:
    """The five raw probability lists (s2s, lm, prefix, s2s_doc, lm_doc) of one example."""
    s2s = _target_probabilities(model, *prepare(tokenizer, bos, max_len, summary, document, separator))
    lm = _target_probabilities(model, *prepare(tokenizer, bos, max_len, summary))
    prefix = _target_probabilities(
        model, *prepare(tokenizer, bos, max_len, summary, summary + " " + document, separator)
    )
    s2s_doc = _target_probabilities(
        model, *prepare(tokenizer, bos, max_len, document, summary, separator, is_doc=True)
    )
    lm_doc = _target_probabilities(model, *prepare(tokenizer, bos, max_len, document, is_doc=True))
    return s2s, lm, prefix, s2s_doc, lm_doc[: len(s2s_doc)]


def naive_scores(lists: Sequence[Sequence[float]],
                 weights: Sequence[float] = (0.25, 0.25, 0.5)) -> tuple[float, float, float, float]:
    """(fflm, Delta_prior(Y), Delta_prior(X), Delta_cond(Y)) from raw lists, as the authors' utils.py."""
    floored = [np.array([x if x != 0.0 else 1e-6 for x in values], dtype=np.float64) for values in lists]
    s2s, lm, prefix, s2s_doc, lm_doc = floored
    s2s_loss, lm_loss, prefix_loss = -np.log(s2s), -np.log(lm), -np.log(prefix)
    s2s_doc_loss, lm_doc_loss = -np.log(s2s_doc), -np.log(lm_doc)
    with np.errstate(invalid="ignore"):  # an empty list gives NaN here, as in the authors' code
        score_1 = np.mean((lm_loss - s2s_loss) * np.exp(1 - s2s)) if len(s2s) else float("nan")
        score_2 = np.mean((prefix_loss - s2s_loss) * np.exp(1 - s2s)) if len(s2s) else float("nan")
        score_3 = (
            np.mean((lm_doc_loss - s2s_doc_loss) * np.exp(1 - s2s_doc)) if len(s2s_doc) else float("nan")
        )
    a, b, d = weights
    return a * score_1 + b * score_3 + d * score_2, score_1, score_3, score_2


def naive_fflm(
    model: torch.nn.Module, tokenizer: Any, documents: Sequence[str], summaries: Sequence[str], *,
    bos: int, max_len: int = 2048, separator: str = "TL;DR ", weights: Sequence[float] = (0.25, 0.25, 0.5),
) -> tuple[list[tuple[list[float], ...]], list[tuple[float, float, float, float]]]:
    """The authors' loop over examples: returns (per-example raw lists, per-example scores)."""
    all_lists, all_scores = [], []
    for document, summary in zip(documents, summaries):
        lists = naive_lists(model, tokenizer, document, summary, bos=bos, max_len=max_len,
                            separator=separator)
        all_lists.append(lists)
        all_scores.append(naive_scores(lists, weights))
    return all_lists, all_scores
