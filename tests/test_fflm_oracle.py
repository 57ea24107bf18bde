"""Naive FFLM oracle: the authors' per-example loop, written out independently of nlgmetrics.fflm.

For each example, five separate forward passes at batch size 1, full logits, a float32 softmax,
exactly as the issue states and as the authors' scorer does (github.com/JiaQiSJTU/FaithEval-FFLM,
``scorers/delta.py`` + ``utils.py``): each text tokenized on its own with ``tokenizer.tokenize``,
``[BOS] + condition + separator + target``, at most ``max_len`` tokens (the condition is cut when the
target is the summary, the target is cut when it is the document), probabilities equal to 0
floored at 1e-6, loss = -log p.

Deliberate differences from the authors' file, none of which changes a number where their code is
defined: the BOS id, max_len, separator and weights are parameters (they hard-code 0, 2048,
"TL;DR " and (0.25, 0.25, 0.5)); an empty document still gets the separator (their ``if source:``
drops it, but their score is NaN there anyway).

This module is imported by tests/test_fflm.py and by benchmarks/speed_fflm.py (the baseline).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


def _prepare(tokenizer, bos, max_len, target, source=None, separator=None, is_doc=False):
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


def _model_device(model):
    """Where the model's weights live (the input goes there; CPU for a model without parameters)."""
    first = next(model.parameters(), None)
    return first.device if first is not None else torch.device("cpu")


@torch.no_grad()
def _target_probabilities(model, ids, start):
    """One forward pass (batch 1); float32 softmax over the rows that predict the target tokens.

    The input goes to the model's device (benchmarks/speed_fflm.py runs this on a GPU); the
    softmax is float32 whatever the model's dtype (e.g. bfloat16 weights).
    """
    input_ids = torch.tensor([ids], device=_model_device(model))
    logits = model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids)).logits.float()
    probs = F.softmax(logits[0][start:-1], dim=-1)
    picked = probs.gather(-1, input_ids[0][start + 1 :].unsqueeze(-1)).squeeze(-1)
    return picked.tolist()


def naive_lists(model, tokenizer, document, summary, *, bos, max_len=2048, separator="TL;DR "):
    """The five raw probability lists (s2s, lm, prefix, s2s_doc, lm_doc) of one example."""
    s2s = _target_probabilities(model, *_prepare(tokenizer, bos, max_len, summary, document, separator))
    lm = _target_probabilities(model, *_prepare(tokenizer, bos, max_len, summary))
    prefix = _target_probabilities(
        model, *_prepare(tokenizer, bos, max_len, summary, summary + " " + document, separator)
    )
    s2s_doc = _target_probabilities(
        model, *_prepare(tokenizer, bos, max_len, document, summary, separator, is_doc=True)
    )
    lm_doc = _target_probabilities(model, *_prepare(tokenizer, bos, max_len, document, is_doc=True))
    return s2s, lm, prefix, s2s_doc, lm_doc[: len(s2s_doc)]


def naive_scores(lists, weights=(0.25, 0.25, 0.5)):
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


def naive_fflm(model, tokenizer, documents, summaries, *, bos, max_len=2048, separator="TL;DR ",
               weights=(0.25, 0.25, 0.5)):
    """The authors' loop over examples: returns (per-example raw lists, per-example scores)."""
    all_lists, all_scores = [], []
    for document, summary in zip(documents, summaries):
        lists = naive_lists(model, tokenizer, document, summary, bos=bos, max_len=max_len,
                            separator=separator)
        all_lists.append(lists)
        all_scores.append(naive_scores(lists, weights))
    return all_lists, all_scores


def test_oracle_scores_by_hand():
    """The oracle's arithmetic against a hand computation (so the oracle itself can fail)."""
    lists = ([0.5, 0.0], [0.25, 0.5], [0.5, 0.5], [0.8], [0.4])
    fflm_value, prior_y, prior_x, cond_y = naive_scores(lists, (0.2, 0.3, 0.5))
    # Token 2 of s2s is floored to 1e-6.
    w = [np.exp(0.5), np.exp(1 - 1e-6)]
    expected_prior_y = ((np.log(0.5) - np.log(0.25)) * w[0] + (np.log(1e-6) - np.log(0.5)) * w[1]) / 2
    expected_cond_y = ((np.log(0.5) - np.log(0.5)) * w[0] + (np.log(1e-6) - np.log(0.5)) * w[1]) / 2
    expected_prior_x = (np.log(0.8) - np.log(0.4)) * np.exp(0.2)
    assert abs(prior_y - expected_prior_y) < 1e-12
    assert abs(cond_y - expected_cond_y) < 1e-12
    assert abs(prior_x - expected_prior_x) < 1e-12
    assert abs(fflm_value - (0.2 * expected_prior_y + 0.3 * expected_prior_x + 0.5 * expected_cond_y)) < 1e-12


class _SpaceTokenizer:
    """Whitespace tokenizer with a fixed vocabulary, to check the oracle's truncation by hand."""

    def tokenize(self, text):
        return text.split()

    def convert_tokens_to_ids(self, tokens):
        return [int(t) for t in tokens]


def test_oracle_truncation_rule_by_hand():
    tok = _SpaceTokenizer()
    # Summary target: condition cut from the end so that 1 + |X| + |sep| + |Y| = max_len.
    ids, start = _prepare(tok, 0, 8, "7 8", "1 2 3 4 5 6", "9")
    assert ids == [0, 1, 2, 3, 4, 9, 7, 8] and start == 5
    # Document target: the document is cut.
    ids, start = _prepare(tok, 0, 8, "1 2 3 4 5 6", "7 8", "9", is_doc=True)
    assert ids == [0, 7, 8, 9, 1, 2, 3, 4] and start == 3
    # No condition: target cut to max_len - 1.
    ids, start = _prepare(tok, 0, 4, "1 2 3 4 5 6", is_doc=True)
    assert ids == [0, 1, 2, 3] and start == 0
