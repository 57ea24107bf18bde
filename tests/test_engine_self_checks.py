"""The load-time self-checks in half precision: rounding of other batch shapes is judged against
float32 truth, a wrong fast path is still refused, and the model is never converted."""

from __future__ import annotations

import pytest
import torch

import nlgmetrics.engine.self_checks as self_checks
from nlgmetrics.engine.heads import gather_head_works
from nlgmetrics.engine.padding import right_padding_needs_no_mask


@pytest.fixture()
def bf16_llama(tiny_llama_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(tiny_llama_dir), dtype=torch.bfloat16).eval()


@pytest.fixture()
def half_precision_check_fails(monkeypatch):
    """What a CPU whose bf16 kernels round other batch shapes differently shows: no
    half-precision pair is within the dtype's tolerance; float32 pairs are judged as always."""
    strict = self_checks.logits_agree

    def rounding_everywhere(got, want, dtype):
        return dtype == torch.float32 and strict(got, want, dtype)

    monkeypatch.setattr(self_checks, "logits_agree", rounding_everywhere)


def _snapshot(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: t.detach().clone() for name, t in [*model.named_parameters(), *model.named_buffers()]}


@pytest.mark.parametrize("check", ["padding", "gather"])
def test_half_precision_rounding_falls_back_to_float32_truth(bf16_llama, half_precision_check_fails, check):
    """Each fast path of an honest model passes in bf16 through the float32 copy, and the model
    keeps its dtype and every value."""
    before = _snapshot(bf16_llama)
    run = {"padding": right_padding_needs_no_mask,
           "gather": lambda m: gather_head_works(m, "causal")}[check]
    assert run(bf16_llama)
    after = _snapshot(bf16_llama)
    assert before.keys() == after.keys()
    for name, tensor in before.items():
        assert after[name].dtype == tensor.dtype
        assert torch.equal(after[name], tensor), name


def test_no_float32_copy_where_it_would_not_fit(bf16_llama, half_precision_check_fails, monkeypatch):
    """Without room for the copy the fast path is not taken (slower, never wrong)."""
    monkeypatch.setattr(self_checks, "_available_bytes", lambda device: 1024)
    assert self_checks.float32_copy(bf16_llama) is None
    assert not right_padding_needs_no_mask(bf16_llama)
    monkeypatch.setattr(self_checks, "_available_bytes", lambda device: None)
    assert not right_padding_needs_no_mask(bf16_llama)


def test_float32_copy_is_a_copy(bf16_llama):
    copy = self_checks.float32_copy(bf16_llama)
    assert copy is not bf16_llama and next(copy.parameters()).dtype == torch.float32
    assert next(bf16_llama.parameters()).dtype == torch.bfloat16
    for (name, mine), (_, theirs) in zip(bf16_llama.named_parameters(), copy.named_parameters()):
        assert torch.equal(mine.float(), theirs), name  # bf16 -> float32 is exact


def test_available_memory_is_read_on_cpu():
    assert self_checks._available_bytes(torch.device("cpu")) > 0


def test_the_judgement_on_hand_made_logits():
    truth = torch.tensor([0.0, 10.0])
    exact = [(truth, truth)]
    plain = truth + torch.tensor([1.0, 0.0])  # half-precision rounding moved the plain path by 1.0
    slack = 2e-2 * 11  # the bf16 tolerance at this scale
    ok = self_checks.agree_with_float32_truth
    assert ok([(truth + 2.0 + slack - 1e-3, plain)], exact, torch.bfloat16)
    assert not ok([(truth + 2.0 + slack + 1e-3, plain)], exact, torch.bfloat16)
    assert not ok([(truth + float("nan"), plain)], exact, torch.bfloat16)
    assert not ok([(truth, plain)], [(truth + 1e-3, truth)], torch.bfloat16)  # float32 disagrees
    assert not ok([(truth, plain)], [], torch.bfloat16)
    assert not ok([(truth[:1], plain)], exact, torch.bfloat16)


def test_a_model_that_cannot_be_copied_keeps_the_plain_path(bf16_llama, half_precision_check_fails, monkeypatch):
    def refuse(model):
        raise TypeError("cannot deepcopy this module")

    monkeypatch.setattr(self_checks, "float32_copy", refuse)
    assert not right_padding_needs_no_mask(bf16_llama)


def test_a_bf16_load_makes_one_float32_copy_for_its_checks(tiny_llama_dir, half_precision_check_fails,
                                                             monkeypatch):
    """load_lm runs two self-checks; in half precision they share one float32 copy (a large
    model copied twice would cost seconds), made only because a check needed it, and both fast
    paths are granted through it. Outside a load each check makes its own."""
    from nlgmetrics.engine import clear_cache, load_lm

    made = []
    real_copy = self_checks.float32_copy
    monkeypatch.setattr(self_checks, "float32_copy", lambda model: made.append(1) or real_copy(model))
    clear_cache()
    lm = load_lm(str(tiny_llama_dir), "causal", device="cpu", dtype="bfloat16")
    assert len(made) == 1
    assert lm.unmasked_right_padding and lm.gather_head
    clear_cache()
    right_padding_needs_no_mask(lm.model)
    gather_head_works(lm.model, "causal")
    assert len(made) == 3
