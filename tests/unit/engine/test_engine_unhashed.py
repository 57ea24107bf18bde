"""A model object whose fingerprint cannot be computed soundly (a tensor whose bytes cannot be read
here) still scores, is signed ``weights:unhashed``, and is kept out of the store: two such objects
cannot be told apart, so one's stored numbers must never be served for the other."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch

from nlgmetrics.engine import load_lm
from nlgmetrics.engine.fingerprints import FingerprintUnavailable, module_fingerprint
from nlgmetrics.engine.store import StoreWarning
from nlgmetrics.shannon import shannon_score
from nlgmetrics.testing import load_test_tokenizer
from tests.support.oracles.shannon_naive import naive_shannon_totals

DOCUMENT = "Jack drove his minivan to the bazaar. He bought milk and honey for his large family."
SUMMARY = "Jack bought milk and honey."


class _Opaque(torch.Tensor):
    """A wrapper tensor with no storage: its values cannot be read (nor used: the forward never does)."""

    @staticmethod
    def __new__(cls, shape):
        return torch.Tensor._make_wrapper_subclass(cls, shape, dtype=torch.float32)

    def __deepcopy__(self, memo):  # a model holding it can be copied (the engine copies one in training mode)
        return _Opaque(tuple(self.shape))

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{func} on an opaque tensor")


def _opaque_llama(path, scale: float):
    """The tiny Llama with its final norm scaled by ``scale`` (so two objects compute differently)
    and an extra buffer whose bytes cannot be read."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(path)).eval()
    with torch.no_grad():
        model.model.norm.weight.mul_(scale)
    model.register_buffer("opaque_table", _Opaque((4,)), persistent=False)
    return model


def test_an_unhashable_object_scores_signed_unhashed_and_never_through_the_store(tiny_llama_dir, tmp_path):
    first, second = _opaque_llama(tiny_llama_dir, 1.0), _opaque_llama(tiny_llama_dir, 3.0)
    with pytest.raises(FingerprintUnavailable):
        module_fingerprint(first)
    tokenizer = load_test_tokenizer("llama")
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    options = dict(model_tokenizer=tokenizer, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)  # without a store, nothing to say
        plain = shannon_score([SUMMARY], [DOCUMENT], model=first, **options)
    assert "|weights:unhashed|" in plain.signature
    assert load_lm(first, "causal", model_tokenizer=tokenizer).fingerprint == "unhashed"
    for model in (first, second):  # same cache_dir, one after the other: each gets its own numbers
        with pytest.warns(StoreWarning, match="not used .* could not be hashed") as record:
            stored = shannon_score([SUMMARY], [DOCUMENT], model=model, cache_dir=tmp_path, **options)
        assert len([w for w in record if issubclass(w.category, StoreWarning)]) == 1
        totals = naive_shannon_totals(model, tokenizer, DOCUMENT, SUMMARY, start=start)
        for name in ("base", "help", "full"):
            assert abs(stored.scores[f"ll_{name}"][0] - totals[name]) < 1e-4, name
    assert abs(totals["full"] - naive_shannon_totals(first, tokenizer, DOCUMENT, SUMMARY, start=start)["full"]) > 1e-2


def test_an_unhashable_object_changed_in_place_is_scored_as_it_is_now(tiny_llama_dir):
    """No fingerprint sees a write through ``.data``, so nothing of such an object is kept between
    calls: in training mode the engine scores a copy, made anew on each call."""
    model = _opaque_llama(tiny_llama_dir, 1.0).train()
    tokenizer = load_test_tokenizer("llama")
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    before = shannon_score([SUMMARY], [DOCUMENT], model=model, model_tokenizer=tokenizer, progress=False)
    model.model.norm.weight.data.mul_(3.0)  # moves no version counter
    after = shannon_score([SUMMARY], [DOCUMENT], model=model, model_tokenizer=tokenizer, progress=False)
    assert model.training  # the caller's module keeps its mode
    totals = naive_shannon_totals(copy.deepcopy(model).eval(), tokenizer, DOCUMENT, SUMMARY, start=start)
    assert abs(after.scores["ll_full"][0] - totals["full"]) < 1e-4
    assert abs(after.scores["ll_full"][0] - before.scores["ll_full"][0]) > 1e-2
