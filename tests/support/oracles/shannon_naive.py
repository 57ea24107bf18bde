"""Naive Shannon log-likelihoods of a model object: one batch-1 forward per sentence and prompt.

The paper's three totals (Egan et al. 2022): for each document sentence, the log-probability of
its tokens after ``[start]`` (base), ``[start] + summary`` (help) and ``[start] + sentence``
(full), summed over the document. Full logits, no cache, no batching, float64 log-softmax.
Used by the tests of model objects the engine must score like any model (quantized, adapted,
unhashed); it imports neither pytest nor test fixtures.
"""

from __future__ import annotations

from typing import Any

import torch

from nlgmetrics.core.sentences import split_sentences


def naive_shannon_totals(model: torch.nn.Module, tokenizer: Any, document: str, summary: str, *, start: int) -> dict[str, float]:
    """``{"base": ll_base, "help": ll_help, "full": ll_full}`` of one (document, summary) pair."""
    summary_ids = tokenizer(summary.strip(), add_special_tokens=False)["input_ids"]
    totals = {"base": 0.0, "help": 0.0, "full": 0.0}
    for sentence in split_sentences(document):
        ids = tokenizer(sentence, add_special_tokens=False)["input_ids"]
        for name, prompt in (("base", []), ("help", summary_ids), ("full", ids)):
            context = [start] + prompt
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([context + ids[:-1]])).logits[0, len(context) - 1 :]
            logprobs = torch.log_softmax(logits.double(), -1)[torch.arange(len(ids)), ids]
            totals[name] += float(logprobs.sum())
    return totals
