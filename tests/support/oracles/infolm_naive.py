"""Naive InfoLM oracles: the model called through transformers directly, masked copies built by
hand, idf counted by hand, and each measure's formula written out (nothing shared with the library).

Used by tests/unit/infolm/test_infolm.py and tests/unit/engine/test_gemma3_offline.py.
"""

from __future__ import annotations

import math

import torch


def load_reference_model(path, causal=False):
    """The checkpoint at ``path`` loaded by transformers itself (masked or causal LM), and its tokenizer."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    auto = AutoModelForCausalLM if causal else AutoModelForMaskedLM
    return auto.from_pretrained(str(path)).eval(), AutoTokenizer.from_pretrained(str(path))


def idf_by_hand(tokenizer, references, causal=False):
    """token id -> log((N + 1) / (df + 1)) over the distinct tokenized references (InfoLM's idf)."""
    docs = {tuple(tokenizer(r, add_special_tokens=False)["input_ids"]) for r in references}
    n = len(docs)
    df = {}
    for doc in docs:
        for t in set(doc):
            df[t] = df.get(t, 0) + 1
    return lambda t: math.log((n + 1) / (df.get(t, 0) + 1))


@torch.no_grad()
def naive_masked(model, tokenizer, text, temperature, idf=None, max_length=128):
    """The text's bag: one full forward per masked copy, softmax at ``temperature``, idf-weighted mean."""
    ids = tokenizer(text, truncation=True, max_length=max_length)["input_ids"]
    special = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id}
    positions = [j for j in range(1, len(ids) - 1) if ids[j] not in special]
    if not positions:  # documented empty-text rule: [CLS] [MASK] [SEP]
        ids, positions = [tokenizer.cls_token_id, tokenizer.mask_token_id, tokenizer.sep_token_id], [1]
    total = torch.zeros(model.config.vocab_size, dtype=torch.float64)
    weight_sum = 0.0
    for j in positions:
        masked = list(ids)
        masked[j] = tokenizer.mask_token_id
        logits = model(input_ids=torch.tensor([masked])).logits[0, j]  # full [seq, vocab] forward
        w = 1.0 if idf is None else idf(ids[j])
        total += w * torch.softmax(logits.double() / temperature, -1)
        weight_sum += w
    if weight_sum == 0:  # documented fallback: all-zero idf weights -> uniform
        return naive_masked(model, tokenizer, text, temperature, None, max_length)
    return total / weight_sum


@torch.no_grad()
def naive_causal(model, tokenizer, text, temperature, idf=None):
    """The text's bag from one causal forward after BOS: each position's next-token softmax, weighted mean."""
    bos = tokenizer.bos_token_id
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if not ids:  # documented empty-text rule: the first-token distribution after BOS
        return torch.softmax(model(input_ids=torch.tensor([[bos]])).logits[0, 0].double() / temperature, -1)
    logits = model(input_ids=torch.tensor([[bos, *ids]])).logits[0, : len(ids)]  # row i predicts ids[i]
    probs = torch.softmax(logits.double() / temperature, -1)
    weights = torch.tensor([1.0 if idf is None else idf(t) for t in ids], dtype=torch.float64)
    if weights.sum() == 0:
        weights = torch.ones_like(weights)
    return (weights[:, None] * probs).sum(0) / weights.sum()


def js_by_hand(p, q):
    """Jensen-Shannon divergence of two bags, written out."""
    m = (p + q) / 2
    return float(0.5 * (p * (p / m).log()).sum() + 0.5 * (q * (q / m).log()).sum())


def fisher_rao_by_hand(p, q):
    """Fisher-Rao distance 2 arccos(sum sqrt(p q)) of two bags, written out."""
    return float(2 * torch.arccos(torch.clamp((p * q).sqrt().sum(), max=1.0)))
