"""Fingerprints of model objects and tokenizers: a model object's covers everything its forward
reads (parameters, every buffer, the config as it is now, the attention implementation, module
attributes), a tokenizer's covers its definition and not the state of its last call."""

from __future__ import annotations

import copy
import hashlib
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from nlgmetrics.engine import load_lm
from nlgmetrics.engine.fingerprints import FingerprintUnavailable, module_fingerprint, tokenizer_fingerprint
from nlgmetrics.shannon import shannon_score
from nlgmetrics.testing import load_test_tokenizer
from tests.support.hypothesis_support import TEXT_FACE_SETTINGS

SUMMARIES = ["Jack bought milk.", "A cat sat on a mat."]
DOCUMENTS = ["Jack drove to the bazaar. He bought milk and honey.", "The cat sat on the mat all day long."]
IDS = torch.tensor([[5, 17, 300, 42, 9, 1000, 77, 12, 8, 64, 3, 250]])


def _load(directory: Path, **overrides):
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM

    masked = "Masked" in AutoConfig.from_pretrained(str(directory)).architectures[0]
    auto_class = AutoModelForMaskedLM if masked else AutoModelForCausalLM
    return auto_class.from_pretrained(str(directory), **overrides).eval()


def _logits(model) -> torch.Tensor:
    with torch.no_grad():
        return model(IDS).logits


def _tiny_mistral(sliding_window: int | None):
    from transformers import MistralConfig, MistralForCausalLM

    torch.manual_seed(0)
    config = MistralConfig(vocab_size=2048, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                           sliding_window=sliding_window)
    return MistralForCausalLM(config).eval()


def _pair(case: str, dirs: dict[str, Path]):
    """Two model objects with the same tensors in the state dict and one difference that changes
    their numbers."""
    llama, gpt2, bert = dirs["llama"], dirs["gpt2"], dirs["bert"]
    if case == "rope_theta":
        return _load(llama), _load(llama, rope_parameters={"rope_type": "default", "rope_theta": 2.0})
    if case == "rope_scaling":
        return _load(llama), _load(llama, rope_parameters={"rope_type": "linear", "factor": 4.0, "rope_theta": 10000.0})
    if case == "rms_norm_eps":
        return _load(llama), _load(llama, rms_norm_eps=0.5)
    if case == "num_hidden_layers_in_place":
        edited = _load(llama)
        edited.config.num_hidden_layers = 1  # the forward reads it: layers[: num_hidden_layers]
        return _load(llama), edited
    if case == "inv_freq":
        edited = _load(llama)
        edited.model.rotary_emb.inv_freq.mul_(3.0)  # a non-persistent buffer: not in the state dict
        return _load(llama), edited
    if case == "attention_implementation":
        return _load(llama, attn_implementation="sdpa"), _load(llama, attn_implementation="eager")
    if case == "layer_norm_epsilon":
        return _load(gpt2), _load(gpt2, layer_norm_epsilon=0.5)
    if case == "scale_attn_weights":
        return _load(gpt2), _load(gpt2, scale_attn_weights=False)
    if case == "hidden_act":
        return _load(bert), _load(bert, hidden_act="relu")
    if case == "sliding_window":
        first, second = _tiny_mistral(None), _tiny_mistral(3)
        second.load_state_dict(first.state_dict())
        return first, second
    raise AssertionError(case)


CASES = ["rope_theta", "rope_scaling", "rms_norm_eps", "num_hidden_layers_in_place", "inv_freq",
         "attention_implementation", "layer_norm_epsilon", "scale_attn_weights", "hidden_act", "sliding_window"]


@pytest.fixture(scope="module")
def dirs(tiny_llama_dir, tiny_gpt2_dir, tiny_bert_dir) -> dict[str, Path]:
    return {"llama": tiny_llama_dir, "gpt2": tiny_gpt2_dir, "bert": tiny_bert_dir}


@pytest.mark.parametrize("case", CASES)
def test_objects_with_equal_state_dicts_that_compute_differently_get_different_fingerprints(case, dirs):
    first, second = _pair(case, dirs)
    # The oracle that the case matters: equal state dicts, different forward outputs.
    first_state, second_state = first.state_dict(), second.state_dict()
    assert first_state.keys() == second_state.keys()
    assert all(torch.equal(first_state[k], second_state[k]) for k in first_state)
    assert not torch.allclose(_logits(first), _logits(second))
    assert module_fingerprint(first) != module_fingerprint(second)


def test_equal_objects_get_equal_fingerprints_before_and_after_a_forward(tiny_llama_dir):
    """Where they came from (``_name_or_path``), the train/eval switch and a forward pass leave the
    fingerprint as it was: equal objects must keep sharing stored results."""
    model = _load(tiny_llama_dir)
    fingerprint = module_fingerprint(model)
    _logits(model)
    copied = copy.deepcopy(model).train()
    copied.config._name_or_path = "/elsewhere"
    assert module_fingerprint(model) == fingerprint == module_fingerprint(copied)


def test_a_fingerprint_is_the_same_in_another_process(tiny_llama_dir):
    """No address or per-process ``hash()`` may enter it: the store is shared between processes."""
    script = (
        "import sys, torch\nfrom transformers import AutoModelForCausalLM\n"
        "from nlgmetrics.engine.fingerprints import module_fingerprint\n"
        "print(module_fingerprint(AutoModelForCausalLM.from_pretrained(sys.argv[1]).eval()))\n"
    )
    other = subprocess.run([sys.executable, "-c", script, str(tiny_llama_dir)], capture_output=True, text=True,
                           timeout=120, check=True).stdout.split()[-1]
    assert other == module_fingerprint(_load(tiny_llama_dir))


def test_nested_configs_and_their_attention_implementation_are_covered():
    from transformers import LlamaConfig, LlavaConfig

    class Holder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.config = LlavaConfig(text_config=LlamaConfig(hidden_size=32, num_hidden_layers=1))
            self.proj = torch.nn.Linear(2, 2)

    holder = Holder()
    before = module_fingerprint(holder)
    holder.config.text_config.rope_parameters["rope_theta"] = 77.0
    after_theta = module_fingerprint(holder)
    holder.config.text_config._attn_implementation = "eager"
    after_attention = module_fingerprint(holder)
    assert len({before, after_theta, after_attention}) == 3


def test_a_plain_module_without_config_is_covered_by_buffers_and_attributes():
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LayerNorm(4))
    module.register_buffer("scale", torch.ones(4), persistent=False)
    before = module_fingerprint(module)
    module[1].eps = 0.5  # no tensor moves, the output does
    after_eps = module_fingerprint(module)
    module.scale.data[0] = 2.0
    after_buffer = module_fingerprint(module)
    assert len({before, after_eps, after_buffer}) == 3


class _QuantState:
    """Stands for a quantized weight's side data (absmax per block, block size)."""

    def __init__(self, absmax: torch.Tensor, blocksize: int) -> None:
        self.absmax, self.blocksize = absmax, blocksize


class _QuantizedParameter(torch.nn.Parameter):
    """Raw packed bytes in ``.data``, the rest in ``quant_state`` (as bitsandbytes' Params4bit)."""

    def __new__(cls, data: torch.Tensor, quant_state: _QuantState):
        parameter = torch.Tensor._make_subclass(cls, data, False)
        parameter.quant_state = quant_state
        return parameter


class _RewritingLinear(torch.nn.Module):
    """Rewrites its weight when its state dict is taken (as bitsandbytes 4-bit layers on CPU)."""

    def __init__(self) -> None:
        super().__init__()
        packed = torch.arange(16, dtype=torch.uint8)
        self.weight = _QuantizedParameter(packed, _QuantState(torch.ones(2), blocksize=64))

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        self.weight.data.add_(1)
        super()._save_to_state_dict(destination, prefix, keep_vars)


def test_a_quantized_parameter_is_read_without_state_dict_and_with_its_quantization_state():
    module = _RewritingLinear()
    packed = module.weight.data.clone()
    before = module_fingerprint(module)
    assert torch.equal(module.weight.data, packed)  # nothing was rewritten
    assert module_fingerprint(module) == before
    module.weight.quant_state.absmax[1] = 3.0
    after_absmax = module_fingerprint(module)
    module.weight.quant_state.blocksize = 128
    after_blocksize = module_fingerprint(module)
    assert len({before, after_absmax, after_blocksize}) == 3


class _GuardedTensor(torch.Tensor):
    """A subclass whose own code must not run while it is hashed."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        raise AssertionError(f"the fingerprint ran subclass code: {func}")


def test_a_tensor_subclass_is_read_without_running_its_code():
    module = torch.nn.Module()
    module.register_buffer("table", torch.ones(3).as_subclass(_GuardedTensor))
    before = module_fingerprint(module)
    with torch._C.DisableTorchFunctionSubclass():
        module.table[0] = 2.0
    assert module_fingerprint(module) != before


def test_a_wrapper_tensor_subclass_is_read_through_its_inner_tensors():
    from torch.testing._internal.two_tensor import TwoTensor

    module = torch.nn.Module()
    module.weight = torch.nn.Parameter(TwoTensor(torch.ones(3), torch.zeros(3)), requires_grad=False)
    before = module_fingerprint(module)
    module.weight.b.add_(1.0)
    assert module_fingerprint(module) != before


def test_a_tensor_without_values_is_refused_with_its_own_error():
    module = torch.nn.Linear(2, 2, device="meta")
    with pytest.raises(FingerprintUnavailable, match="meta device"):
        module_fingerprint(module)


# ------------------------------------------------------------------------------------------------
# generated edits: the fingerprint moves if and only if something the forward reads moved

_EDITS = st.fixed_dictionaries({}, optional={
    "rms_norm_eps": st.sampled_from([1e-6, 1e-5, 0.5]),
    "rope_theta": st.sampled_from([10000.0, 500.0]),
    "hidden_act": st.sampled_from(["silu", "gelu", "relu"]),
    "num_hidden_layers": st.sampled_from([1, 2]),
    "attention": st.sampled_from(["sdpa", "eager"]),
    "inv_freq": st.tuples(st.integers(0, 3), st.sampled_from([0.0, 1e-3, -0.25])),
    "original_inv_freq": st.tuples(st.integers(0, 3), st.sampled_from([0.0, 2.0])),
    "weight": st.tuples(st.integers(0, 31), st.sampled_from([0.0, 1.0])),
    "norm_eps_attribute": st.sampled_from([1e-6, 1e-3]),
})


def _apply(model, edits: dict) -> bool:
    """Apply ``edits`` to ``model``; whether any of them changed a value."""
    config = model.config
    changed = False
    for field in ("rms_norm_eps", "hidden_act", "num_hidden_layers"):
        if field in edits:
            changed |= getattr(config, field) != edits[field]
            setattr(config, field, edits[field])
    if "rope_theta" in edits:
        changed |= config.rope_parameters["rope_theta"] != edits["rope_theta"]
        config.rope_parameters["rope_theta"] = edits["rope_theta"]
    if "attention" in edits:
        changed |= config._attn_implementation != edits["attention"]
        config._attn_implementation = edits["attention"]
    for buffer in ("inv_freq", "original_inv_freq"):
        if buffer in edits:
            index, delta = edits[buffer]
            getattr(model.model.rotary_emb, buffer).data[index] += delta
            changed |= delta != 0.0
    if "weight" in edits:
        index, delta = edits["weight"]
        model.model.norm.weight.data[index] += delta
        changed |= delta != 0.0
    if "norm_eps_attribute" in edits:
        changed |= model.model.norm.variance_epsilon != edits["norm_eps_attribute"]
        model.model.norm.variance_epsilon = edits["norm_eps_attribute"]
    return changed


@pytest.fixture(scope="module")
def llama_object(tiny_llama_dir):
    model = _load(tiny_llama_dir, attn_implementation="sdpa")
    return model, module_fingerprint(model)


@TEXT_FACE_SETTINGS
@given(edits=_EDITS)
def test_generated_config_and_buffer_edits_move_the_fingerprint_iff_they_change_something(llama_object, edits):
    base, fingerprint = llama_object
    model = copy.deepcopy(base)
    changed = _apply(model, edits)
    assert (module_fingerprint(model) != fingerprint) == changed, edits


# ------------------------------------------------------------------------------------------------
# what follows from it: the load cache and the store


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_a_config_edited_in_place_rebuilds_the_loaded_model(mode, tiny_llama_dir):
    """In training mode the engine scores a copy made at load time: it must not keep the old config."""
    model = _load(tiny_llama_dir)
    model.train() if mode == "train" else model.eval()
    tokenizer = load_test_tokenizer("llama")
    first = load_lm(model, "causal", model_tokenizer=tokenizer)
    model.config.num_hidden_layers = 1
    second = load_lm(model, "causal", model_tokenizer=tokenizer)
    assert second is not first and second.fingerprint != first.fingerprint
    assert second.model.config.num_hidden_layers == 1


@pytest.mark.parametrize("case", ["rope_theta", "num_hidden_layers_in_place", "layer_norm_epsilon"])
def test_the_store_gives_an_object_with_another_config_its_own_numbers(case, dirs, tmp_path):
    first, second = _pair(case, dirs)
    tokenizer = load_test_tokenizer("gpt2" if case == "layer_norm_epsilon" else "llama")
    options = dict(model_tokenizer=tokenizer, progress=False)
    stored_first = shannon_score(SUMMARIES, DOCUMENTS, model=first, cache_dir=tmp_path, **options)
    fingerprint = module_fingerprint(first)
    stored_second = shannon_score(SUMMARIES, DOCUMENTS, model=second, cache_dir=tmp_path, **options)
    fresh_second = shannon_score(SUMMARIES, DOCUMENTS, model=copy.deepcopy(second), **options)
    for name, values in fresh_second.scores.items():  # within the engine's batch invariance in float32
        np.testing.assert_allclose(stored_second.scores[name], values, rtol=1e-5, atol=1e-5, err_msg=name)
    assert not np.allclose(stored_second.scores["ll_full"], stored_first.scores["ll_full"], rtol=0, atol=1e-4)
    assert stored_second.signature == fresh_second.signature != stored_first.signature
    assert module_fingerprint(first) == fingerprint  # scoring leaves the caller's object as it was


# ------------------------------------------------------------------------------------------------
# rotary scalings that depend on the pass's length: per-pass state is not what the model computes

_SCALED_ROPES = {
    "dynamic": ("llama", {"rope_type": "dynamic", "factor": 4.0, "rope_theta": 10000.0}),
    "longrope-llama": ("llama", {"rope_type": "longrope", "short_factor": [1.0, 1.5, 2.0, 3.0],
                                 "long_factor": [3.0, 9.0, 27.0, 81.0], "original_max_position_embeddings": 16,
                                 "rope_theta": 10000.0}),
    "longrope-phi3": ("phi3", {"rope_type": "longrope", "short_factor": [1.0, 1.5, 2.0, 3.0],
                               "long_factor": [3.0, 9.0, 27.0, 81.0], "rope_theta": 10000.0}),
}


def _tiny_scaled_rope(case: str, **rope_overrides):
    """A tiny causal LM whose rotary scaling switches regime past 16 positions."""
    from transformers import LlamaConfig, LlamaForCausalLM, Phi3Config, Phi3ForCausalLM

    family, rope = _SCALED_ROPES[case]
    shape = dict(vocab_size=2048, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=16 if case == "dynamic" else 128,
                 bos_token_id=1, eos_token_id=2, pad_token_id=0)
    torch.manual_seed(0)
    rope = {**rope, **rope_overrides}
    if family == "phi3":
        return Phi3ForCausalLM(Phi3Config(rope_parameters=rope, original_max_position_embeddings=16, **shape)).eval()
    return LlamaForCausalLM(LlamaConfig(rope_parameters=rope, **shape)).eval()


@pytest.mark.parametrize("case", sorted(_SCALED_ROPES))
def test_a_long_pass_leaves_a_scaled_rope_fingerprint_as_it_was(case):
    """transformers grows dynamic NTK's ``inv_freq`` (and ``max_seq_len_cached``) in a pass past the
    threshold and keeps it; longrope overwrites ``inv_freq`` with the long factors and keeps a
    ``long_inv_freq``. The engine scores from the kept ``original_inv_freq`` either way, so a model
    object that ran a long pass before must keep its fingerprint (and share its stored numbers)."""
    model = _tiny_scaled_rope(case)
    fingerprint = module_fingerprint(model)
    rotary = model.model.rotary_emb
    before = rotary.inv_freq.clone()
    with torch.no_grad():
        model(torch.arange(40)[None] + 5)  # past the threshold: the per-pass state moves
    assert not torch.equal(rotary.inv_freq, before)  # the oracle that this test can fail
    assert module_fingerprint(model) == fingerprint
    with torch.no_grad():
        model(torch.arange(8)[None] + 5)
    assert module_fingerprint(model) == fingerprint


@pytest.mark.parametrize("case", sorted(_SCALED_ROPES))
def test_a_scaled_rope_fingerprint_still_follows_what_its_passes_read(case):
    """``original_inv_freq`` (what every pass starts from) and the rope parameters in the config
    still move it, each changing the logits."""
    model = _tiny_scaled_rope(case)
    fingerprint, logits = module_fingerprint(model), _logits(model)
    edited = copy.deepcopy(model)
    edited.model.rotary_emb.original_inv_freq.mul_(3.0)
    edited.model.rotary_emb.inv_freq.mul_(3.0)  # as loaded with those frequencies
    assert not torch.allclose(_logits(edited), logits)
    assert module_fingerprint(edited) != fingerprint
    other_theta = _tiny_scaled_rope(case, rope_theta=20.0)
    other_theta.load_state_dict(model.state_dict())
    assert not torch.allclose(_logits(other_theta), logits)
    assert module_fingerprint(other_theta) != fingerprint
    # Factors read by long passes only: the same buffers, other numbers past the threshold.
    other_factors = _tiny_scaled_rope(case, **({"factor": 2.0} if case == "dynamic" else {"long_factor": [1.0] * 4}))
    other_factors.load_state_dict(model.state_dict())
    assert torch.equal(other_factors.model.rotary_emb.original_inv_freq, model.model.rotary_emb.original_inv_freq)
    long_ids = torch.arange(40)[None] + 5
    with torch.no_grad():
        assert not torch.allclose(other_factors(long_ids).logits, copy.deepcopy(model)(long_ids).logits)
    assert module_fingerprint(other_factors) != fingerprint


# ------------------------------------------------------------------------------------------------
# tokenizers


def _fingerprint_before_this_change(tokenizer) -> str:
    """The formula of the released versions, kept here as the oracle for tokenizers whose
    truncation and padding are clear: their fingerprints (and signatures) must not move."""
    parts = [
        type(tokenizer).__name__,
        repr(sorted(tokenizer.get_vocab().items())),
        repr(sorted((str(k), str(v)) for k, v in (tokenizer.special_tokens_map or {}).items())),
        repr(getattr(tokenizer, "do_lower_case", None)),
        tokenizer.backend_tokenizer.to_str(),
    ]
    return hashlib.sha1("\x00".join(parts).encode("utf-8")).hexdigest()[:12]


@pytest.mark.parametrize("architecture", ["gpt2", "bert"])
def test_a_tokenizer_fingerprint_ignores_the_truncation_and_padding_of_its_last_call(architecture):
    tokenizer = load_test_tokenizer(architecture)
    fingerprint = tokenizer_fingerprint(tokenizer)
    tokenizer("a text of some words", truncation=True, max_length=5)
    truncation = tokenizer.backend_tokenizer.truncation
    assert truncation is not None and tokenizer_fingerprint(tokenizer) == fingerprint
    assert tokenizer.backend_tokenizer.truncation == truncation  # the caller's state is left alone
    tokenizer(["a", "b c"], padding=True)
    assert tokenizer.backend_tokenizer.padding is not None and tokenizer_fingerprint(tokenizer) == fingerprint
    tokenizer("a plain call clears both")
    assert tokenizer_fingerprint(tokenizer) == fingerprint


def test_a_tokenizer_with_clear_state_keeps_its_released_fingerprint():
    tokenizer = load_test_tokenizer("gpt2")
    assert tokenizer.backend_tokenizer.truncation is None and tokenizer.backend_tokenizer.padding is None
    assert tokenizer_fingerprint(tokenizer) == _fingerprint_before_this_change(tokenizer)


def test_a_tokenizer_with_another_vocabulary_gets_another_fingerprint():
    tokenizer = load_test_tokenizer("gpt2")
    extended = copy.deepcopy(tokenizer)
    extended.add_tokens(["zzqxword"])
    fingerprints = {tokenizer_fingerprint(t) for t in (tokenizer, extended, load_test_tokenizer("bert"))}
    assert len(fingerprints) == 3


# ------------------------------------------------------------------------------------------------
# one weights hash per weights: a folder, a Hub id and the object loaded from them sign alike


def _hub_cache_copy(directory: Path, cache: Path, repo: str) -> str:
    """``directory`` as the Hugging Face cache holds a download of ``repo`` (a snapshot under a
    commit, ``refs/main`` naming it), so that ``repo`` loads offline from ``cache``."""
    import shutil

    commit = hashlib.sha1(repo.encode()).hexdigest()
    root = cache / f"models--{repo.replace('/', '--')}"
    shutil.copytree(directory, root / "snapshots" / commit)
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text(commit)
    return commit


@pytest.mark.parametrize("architecture", ["llama", "gpt2", "bert"])
def test_a_folder_a_hub_id_and_the_object_loaded_from_them_get_one_weights_value(architecture, dirs, tmp_path,
                                                                              monkeypatch):
    import huggingface_hub.constants

    from nlgmetrics.engine import fingerprints, release

    directory = dirs[architecture]
    kind = "masked" if architecture == "bert" else "causal"
    by_object = load_lm(_load(directory), kind, model_tokenizer=load_test_tokenizer(architecture)).fingerprint
    by_folder = load_lm(directory, kind, device="cpu").fingerprint
    commit = _hub_cache_copy(directory, tmp_path, f"org/tiny-{architecture}")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    by_hub = load_lm(f"org/tiny-{architecture}", kind, device="cpu")
    # The oracle: the three routes load equal tensors.
    assert torch.equal(_logits(by_hub.model), _logits(_load(directory)))
    assert by_folder == by_object == by_hub.fingerprint not in (commit[:12], "unknown")
    # Memoised on the snapshot's commit: a later load of the Hub id reads no tensor.
    hashed = []
    monkeypatch.setattr(fingerprints, "module_fingerprint", lambda model: hashed.append(model) or "0" * 12)
    release()
    assert load_lm(f"org/tiny-{architecture}", kind, device="cpu").fingerprint == by_folder and hashed == []


def test_a_folder_is_hashed_as_loaded_once_per_state_and_dtype(tiny_llama_dir, tmp_path, monkeypatch):
    import shutil

    from nlgmetrics.engine import fingerprints, release

    folder = shutil.copytree(tiny_llama_dir, tmp_path / "llama")
    first = load_lm(folder, "causal", device="cpu").fingerprint
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the allocator hint of a bfloat16 load on a CPU
        bfloat16 = load_lm(folder, "causal", device="cpu", dtype="bfloat16").fingerprint
    assert first == module_fingerprint(_load(folder, dtype=torch.float32))
    assert bfloat16 == module_fingerprint(_load(folder, dtype=torch.bfloat16)) != first  # the dtype is hashed
    hashed = []
    monkeypatch.setattr(fingerprints, "module_fingerprint", lambda model: hashed.append(model) or "0" * 12)
    release()
    assert load_lm(folder, "causal", device="cpu").fingerprint == first and hashed == []  # memoised: nothing read
    edited = _load(folder)
    with torch.no_grad():
        edited.model.norm.weight.add_(1.0)
    edited.save_pretrained(folder)  # new weights in place: a new state, hashed again
    assert load_lm(folder, "causal", device="cpu").fingerprint == "0" * 12 and len(hashed) == 1
