"""Releasing the scoring models: :func:`nlgmetrics.engine.release`, the Trainer hook's and the
evaluate modules' ``release_models=True``.

A released model is checked the one way that cannot be fooled by a cache that merely looks empty:
a weak reference to the model the engine scored with is dead after the release and a garbage
collection. The caller's own model object must come out unchanged (same tensors, values, flags and
device) and still usable; the next call loads again and gives the same numbers as before. The
freed byte counts are checked against the parameter and buffer bytes of an independently loaded
copy of the checkpoint.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch

from nlgmetrics.engine import LoadedLM, load_lm, release

PREDICTIONS = ["the cat sat on the mat", "a dog barked at night"]
REFERENCES = ["a cat sat on the mat", "the dog barked all night"]


def _tensor_bytes(model: torch.nn.Module) -> int:
    """Parameter and buffer bytes of ``model``, each storage once (tied weights share one)."""
    storages = {}
    for tensor in (*model.parameters(), *model.buffers()):
        storages[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
    return sum(storages.values())


def _dead_after_gc(reference: weakref.ref) -> bool:
    gc.collect()
    return reference() is None


def _model_ref(path, **options) -> weakref.ref:
    """A weak reference to the model the engine holds for ``path`` (loaded now if not cached)."""
    lm = load_lm(str(path), **options)
    return weakref.ref(lm.model)


@pytest.fixture()
def fresh_cache():
    """An empty engine cache before the test (other tests' models released)."""
    release()
    yield
    release()


def _causal_logprobs(lm: LoadedLM) -> np.ndarray:
    from nlgmetrics.engine import CausalQuery, causal_target_scores

    ids = lm.tokenizer("the cat sat on the mat")["input_ids"]
    query = CausalQuery(prefix_ids=tuple(ids[:2]), target_ids=tuple(ids[2:]))
    return np.asarray(causal_target_scores(lm, [query], progress=False)[0].logprobs)


def test_release_drops_the_cached_model_and_the_next_call_reloads_with_the_same_numbers(tiny_bert_dir, fresh_cache):
    from transformers import AutoModelForMaskedLM

    from nlgmetrics.infolm import infolm

    first = infolm(PREDICTIONS, REFERENCES, model=str(tiny_bert_dir), device="cpu", progress=False)
    cached = load_lm(str(tiny_bert_dir), device="cpu")
    assert load_lm(str(tiny_bert_dir), device="cpu") is cached  # the metric's entry, still cached
    model_ref, tokenizer_ref = weakref.ref(cached.model), weakref.ref(cached.tokenizer)
    del cached

    freed = release()

    assert _dead_after_gc(model_ref) and _dead_after_gc(tokenizer_ref)
    independent = _tensor_bytes(AutoModelForMaskedLM.from_pretrained(str(tiny_bert_dir)))
    assert (freed.models, freed.bytes) == (1, independent)
    assert (release().models, release().bytes) == (0, 0)  # nothing left
    again = infolm(PREDICTIONS, REFERENCES, model=str(tiny_bert_dir), device="cpu", progress=False)
    assert again.scores["infolm"] == first.scores["infolm"] and again.signature == first.signature


def test_a_model_still_referenced_is_freed_when_its_last_reference_goes(tiny_gpt2_dir, fresh_cache):
    lm = load_lm(str(tiny_gpt2_dir), device="cpu")
    model_ref = weakref.ref(lm.model)
    release()
    assert not _dead_after_gc(model_ref)  # the caller's LoadedLM keeps it: never pulled from under it
    assert load_lm(str(tiny_gpt2_dir), device="cpu") is not lm  # but the cache forgot it
    del lm
    assert _dead_after_gc(model_ref)


def test_the_memory_is_handed_back_after_the_model_is_gone(tiny_gpt2_dir, fresh_cache, monkeypatch):
    """The allocators are asked to hand memory back (CUDA's empty_cache, glibc's malloc_trim) only
    once the model is unreachable: one still held by a local of release() would stay allocated
    (CPU stand-in of the CUDA test below: the hand-back step records what is alive when it runs)."""
    import nlgmetrics.engine.loading as loading

    model_ref = _model_ref(tiny_gpt2_dir, device="cpu")
    alive_at_hand_back = []
    monkeypatch.setattr(loading, "trim_heap", lambda: alive_at_hand_back.append(model_ref() is not None))
    release()
    assert alive_at_hand_back == [False]


def _snapshot(model: torch.nn.Module) -> dict:
    return {
        "tensors": {name: (tensor.data_ptr(), tensor.detach().clone()) for name, tensor in model.state_dict().items()},
        "grad": {name: p.requires_grad for name, p in model.named_parameters()},
        "training": model.training,
        "device": next(model.parameters()).device,
        "dtype": next(model.parameters()).dtype,
    }


def _assert_unchanged(model: torch.nn.Module, before: dict) -> None:
    after = _snapshot(model)
    assert after["training"] == before["training"] and after["grad"] == before["grad"]
    assert (after["device"], after["dtype"]) == (before["device"], before["dtype"])
    assert after["tensors"].keys() == before["tensors"].keys()
    for name, (address, values) in before["tensors"].items():
        assert after["tensors"][name][0] == address, name  # the same storage, not a replacement
        assert torch.equal(after["tensors"][name][1], values), name


@pytest.mark.parametrize("training", [False, True], ids=["scored-in-place", "engine-copy"])
def test_release_leaves_the_callers_model_object_alive_unchanged_and_usable(tiny_gpt2_dir, fresh_cache, training):
    """In eval mode the engine scores the caller's object itself: release drops the reference only
    (nothing freed, 0 bytes); in training mode it scores a copy, which release frees (its bytes)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(tiny_gpt2_dir)).train(training)
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_gpt2_dir))
    before = _snapshot(model)
    lm = load_lm(model, model_tokenizer=tokenizer)
    assert (lm.model is model) is (not training)
    first = _causal_logprobs(lm)
    engine_ref = weakref.ref(lm.model)
    del lm

    freed = release()

    assert freed.models == 1
    assert freed.bytes == (_tensor_bytes(model) if training else 0)
    if training:
        assert _dead_after_gc(engine_ref)
    _assert_unchanged(model, before)
    with torch.no_grad():  # still usable as the caller's model
        assert model(torch.tensor([[1, 2, 3]])).logits.shape[-1] == model.config.vocab_size
    again = load_lm(model, model_tokenizer=tokenizer)
    np.testing.assert_array_equal(_causal_logprobs(again), first)


def _eval_pred(tokenizer):
    def ids(texts):
        rows = [tokenizer(text)["input_ids"] for text in texts]
        return np.array([row + [-100] * (max(map(len, rows)) - len(row)) for row in rows])

    return ids(PREDICTIONS), ids(REFERENCES)


@pytest.mark.parametrize("release_models", [False, True])
def test_the_trainer_hook_releases_the_model_after_each_evaluation_when_asked(tiny_bert_dir, fresh_cache, release_models):
    from transformers import AutoTokenizer

    from nlgmetrics.apps.trainer import build_compute_metrics
    from nlgmetrics.infolm import infolm

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    compute_metrics = build_compute_metrics(
        tokenizer, metrics=["infolm"], metric_options={"infolm": {"model": str(tiny_bert_dir), "device": "cpu"}},
        release_models=release_models,
    )
    eval_pred = _eval_pred(tokenizer)
    predictions, references = ([tokenizer.decode(row[row != -100], skip_special_tokens=True).strip() for row in ids]
                               for ids in eval_pred)
    expected = np.mean(infolm(predictions, references, model=str(tiny_bert_dir), device="cpu",
                              progress=False).scores["infolm"])
    for _ in range(2):  # every evaluation, not only the first
        model_ref = _model_ref(tiny_bert_dir, device="cpu")  # the entry the evaluation will score with
        scores = compute_metrics(eval_pred)
        assert scores["infolm"] == pytest.approx(expected, abs=1e-12)
        assert _dead_after_gc(model_ref) is release_models


def test_the_trainer_hook_checks_the_option(tiny_bert_dir):
    from transformers import AutoTokenizer

    from nlgmetrics.apps.trainer import build_compute_metrics

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    with pytest.raises(ValueError, match="release_models"):
        build_compute_metrics(tokenizer, metrics=["bleu"], release_models="yes")
    with pytest.raises(ValueError, match=r"preset='translation'.*release_models"):
        build_compute_metrics(tokenizer, preset="translation", release_models=True)


@pytest.mark.parametrize("release_models", [False, True])
def test_an_evaluate_module_releases_the_model_when_asked(tiny_bert_dir, metrics_dir, fresh_cache, release_models):
    import evaluate

    from nlgmetrics.infolm import infolm

    module = evaluate.load(str(metrics_dir / "infolm"))
    expected = infolm(PREDICTIONS, REFERENCES, model=str(tiny_bert_dir), device="cpu", progress=False)
    model_ref = _model_ref(tiny_bert_dir, device="cpu")
    out = module.compute(predictions=PREDICTIONS, references=REFERENCES, model=str(tiny_bert_dir), device="cpu",
                         progress=False, release_models=release_models)
    assert out["infolm"] == pytest.approx(float(np.mean(expected.scores["infolm"])), abs=1e-12)
    assert _dead_after_gc(model_ref) is release_models


def test_every_evaluate_module_accepts_the_switch_as_combine_passes_it(metrics_dir):
    """``evaluate.combine`` passes one set of options to every module: a text metric takes the
    switch too (and checks it), with the output it gives without it."""
    import evaluate

    bleu = evaluate.load(str(metrics_dir / "bleu"))
    plain = bleu.compute(predictions=PREDICTIONS, references=REFERENCES)
    assert bleu.compute(predictions=PREDICTIONS, references=REFERENCES, release_models=True) == plain
    with pytest.raises(ValueError, match="release_models"):
        bleu.compute(predictions=PREDICTIONS, references=REFERENCES, release_models="yes")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_release_returns_the_gpu_memory(tiny_gpt2_dir, fresh_cache):
    torch.cuda.synchronize()
    allocated, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    lm = load_lm(str(tiny_gpt2_dir), device="cuda")
    _causal_logprobs(lm)
    held = _tensor_bytes(lm.model)
    assert torch.cuda.memory_allocated() >= allocated + held
    del lm
    freed = release()
    assert freed.bytes == held
    assert torch.cuda.memory_allocated() == allocated  # every tensor of the model gone
    assert torch.cuda.memory_reserved() <= reserved  # and handed back by the caching allocator
