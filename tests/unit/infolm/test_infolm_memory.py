"""Causal InfoLM reduces each text's logits to its bags while the batch's logits exist.

The engine hands a unit's results over one unit late, so whatever ``reduce`` returns is held while
the next batch runs: it must be the bags (float64 ``[vocab]`` per text and temperature), never the
logits. A dispatch mode watches every tensor that an operation makes during the call and keeps the
largest total of logits-shaped storage alive at once (``[..., vocab]`` in the model's float type,
parameters aside): it must never exceed the largest single one (one batch's logits). The scores
come from a naive oracle: one plain forward pass per text, full softmax, explicit weighted sum.
"""

from __future__ import annotations

import math
import weakref

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from nlgmetrics.infolm import infolm_multi

TEXTS = ["the cat sat on the mat", "hello world", "a quick brown fox jumps over the lazy dog",
         "stocks fell sharply today as markets slid on fears", "zebra", "", "the cat sat on the mat"]
PREDS = TEXTS[:4] + [TEXTS[5]]
REFS = [[TEXTS[1], TEXTS[2]], [TEXTS[3]], [TEXTS[4], TEXTS[0]], [TEXTS[0]], [TEXTS[2]]]
TEMPERATURES = (0.25, 2.0)


class LogitsWatch(TorchDispatchMode):
    """Peak bytes of live logits-shaped storage (last dimension ``vocab``, not float64: the bags
    and softmaxes are float64; the model's own parameters excluded), over every operation."""

    def __init__(self, vocab: int, parameters: set[int]):
        super().__init__()
        self.vocab = vocab
        self.parameters = parameters
        self.live: list[tuple[weakref.ref, int, int]] = []  # (tensor, storage pointer, storage bytes)
        self.peak = 0
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if (isinstance(t, torch.Tensor) and t.dim() >= 2 and t.shape[-1] == self.vocab
                    and t.dtype != torch.float64 and t.is_floating_point()):
                storage = t.untyped_storage()
                if storage.data_ptr() not in self.parameters:
                    self.live.append((weakref.ref(t), storage.data_ptr(), storage.nbytes()))
                    self.largest = max(self.largest, storage.nbytes())
        self.live = [entry for entry in self.live if entry[0]() is not None]
        alive = {pointer: size for _, pointer, size in self.live}
        self.peak = max(self.peak, sum(alive.values()))
        return out


@torch.no_grad()
def naive_bag(model, tokenizer, text: str, temperature: float) -> torch.Tensor:
    """p(.|text) with uniform weights: one forward of BOS + tokens, full softmax, explicit mean."""
    bos = tokenizer.bos_token_id
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if not ids:  # the documented empty-text rule: the first-token distribution after BOS
        return torch.softmax(model(input_ids=torch.tensor([[bos]])).logits[0, 0].double() / temperature, -1)
    logits = model(input_ids=torch.tensor([[bos, *ids]])).logits[0, : len(ids)]
    return torch.softmax(logits.double() / temperature, -1).mean(0)


def fisher_rao(p: torch.Tensor, q: torch.Tensor) -> float:
    return float(2 * torch.arccos(torch.clamp((p * q).sqrt().sum(), max=1.0)))


@pytest.mark.parametrize("model_fixture", ["tiny_gpt2_dir", "tiny_llama_dir"])
def test_causal_infolm_holds_one_batch_of_logits_and_scores_the_naive_bags(model_fixture, request):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = request.getfixturevalue(model_fixture)
    model = AutoModelForCausalLM.from_pretrained(str(path)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    vocab = model.get_output_embeddings().weight.shape[0]
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    specs = [("fisher_rao_distance", None, None, t) for t in TEMPERATURES]
    watch = LogitsWatch(vocab, parameters)
    # A small budget: several batches of several texts each, so a unit's results wait for the next.
    with watch:
        results = infolm_multi(PREDS, REFS, specs, model=model, model_tokenizer=tokenizer, idf=False,
                               token_budget=24, progress=False)
    assert watch.largest > 0, "the watch saw no logits: the test no longer observes the call"
    assert watch.peak <= watch.largest, (
        f"{watch.peak:,} bytes of logits alive at once, more than one batch's {watch.largest:,}")
    for (_, _, _, temperature), result in zip(specs, results):
        for i, (pred, group) in enumerate(zip(PREDS, REFS)):
            q = naive_bag(model, tokenizer, pred, temperature)
            expected = min(fisher_rao(naive_bag(model, tokenizer, r, temperature), q) for r in group)
            assert math.isclose(result.scores["infolm"][i], expected, rel_tol=1e-6, abs_tol=1e-6)
