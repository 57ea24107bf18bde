"""torchao-quantized model objects (int8 weight-only, ``quantize_``): every call gives a naive
forward's numbers, leaves the caller's model as it was, and is signed with a fingerprint read
from the quantized tensors' own data (``Int8Tensor``: a ``__tensor_flatten__`` wrapper subclass
over ``qdata`` and ``scale``), so that another quantization is told apart."""

from __future__ import annotations

import copy

import pytest
import torch

pytest.importorskip("torchao", reason="torchao not installed (the test extra pins it)")

from torchao.quantization import Int8WeightOnlyConfig, quantize_  # noqa: E402

from nlgmetrics.engine import load_lm  # noqa: E402
from nlgmetrics.engine.fingerprints import module_fingerprint  # noqa: E402
from nlgmetrics.engine.store import UNHASHED_WEIGHTS  # noqa: E402
from nlgmetrics.testing import load_test_tokenizer  # noqa: E402
from tests.support.oracles.fflm_naive import naive_fflm  # noqa: E402
from tests.support.oracles.shannon_naive import naive_shannon_totals  # noqa: E402
from tests.support.quantized_calls import assert_calls_score_as_naive  # noqa: E402

DOCUMENT = "Jack drove his minivan to the bazaar. He bought milk and honey for his large family."
SUMMARY = "Jack bought milk and honey."


def _int8(path) -> torch.nn.Module:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32).eval()
    quantize_(model, Int8WeightOnlyConfig(set_inductor_config=False))
    return model


def _inner_bytes(model: torch.nn.Module) -> dict[str, bytes]:
    """The raw bytes of every tensor, a quantized weight's inner tensors one by one."""
    state = {}
    for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
        data = tensor.data if isinstance(tensor, torch.nn.Parameter) else tensor
        inner = data.__tensor_flatten__()[0] if hasattr(data, "__tensor_flatten__") else None
        parts = {name: data} if inner is None else {f"{name}.{n}": getattr(data, n) for n in inner}
        for key, part in parts.items():
            with torch._C.DisableTorchFunctionSubclass():
                state[key] = part.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    return state


def test_the_weights_are_torchaos_int8_tensors(tiny_llama_dir):
    """The case is the one users meet: a wrapper subclass whose ``view`` the old fingerprint called."""
    weight = _int8(tiny_llama_dir).model.layers[0].self_attn.q_proj.weight
    assert type(weight.data).__name__ == "Int8Tensor" and weight.data.__tensor_flatten__()[0][:2] == ["qdata", "scale"]


def test_three_calls_score_as_a_naive_forward_and_leave_the_model_as_it_was(tiny_llama_dir):
    model, oracle_model = _int8(tiny_llama_dir), _int8(tiny_llama_dir)
    tokenizer = load_test_tokenizer("llama")
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    totals = naive_shannon_totals(oracle_model, tokenizer, DOCUMENT, SUMMARY, start=start)
    _, [fflm_scores] = naive_fflm(oracle_model, tokenizer, [DOCUMENT], [SUMMARY], bos=tokenizer.bos_token_id)
    before = _inner_bytes(model)
    shannon = assert_calls_score_as_naive(model, tokenizer, SUMMARY, DOCUMENT, totals, fflm_scores)
    assert _inner_bytes(model) == before
    assert f"|weights:{module_fingerprint(model)}|" in shannon.signature and UNHASHED_WEIGHTS not in shannon.signature


def test_the_fingerprint_reads_the_quantized_values_and_their_scales(tiny_llama_dir):
    model = _int8(tiny_llama_dir)
    fingerprint = module_fingerprint(model)
    assert module_fingerprint(_int8(tiny_llama_dir)) == fingerprint  # equal quantizations, one key
    for inner, edit in (("qdata", lambda t: t.add_(1)), ("scale", lambda t: t.mul_(2.0))):
        edited = copy.deepcopy(model)
        weight = edited.model.layers[1].mlp.down_proj.weight.data
        edit(getattr(weight, inner))
        assert module_fingerprint(edited) != fingerprint, inner
    tokenizer = load_test_tokenizer("llama")
    assert load_lm(model, "causal", model_tokenizer=tokenizer).fingerprint == fingerprint
