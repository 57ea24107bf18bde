"""Model loading refuses what would give silently wrong numbers, with errors that say what to do.

- a directory without tokenizer files (``model.save_pretrained`` alone), and any tokenizer that
  cannot turn ordinary text into tokens the model knows;
- a directory with a config but no weights, truncated weights, or a missing shard;
- a device that torch does not know, or that is not available here, and a model instance whose
  weights are on the meta device.
"""

from __future__ import annotations

import json
import shutil
import string
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlgmetrics.engine import CausalQuery, ModelNotFoundError, causal_target_scores, load_lm
from nlgmetrics.engine.checkpoint import PROBE_TEXT, check_tokenizer, check_weight_files, safetensors_problem
from nlgmetrics.engine.devices import available_devices, module_device, resolve_device
from nlgmetrics.testing import load_test_tokenizer

SENTENCE = "The committee approved the budget after a long debate."


def _save_model_only(source: Path, target: Path, kind: str) -> Path:
    """What ``model.save_pretrained(target)`` alone writes: config.json and the weights."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    auto = AutoModelForMaskedLM if kind == "masked" else AutoModelForCausalLM
    auto.from_pretrained(str(source)).save_pretrained(str(target))
    return target


@pytest.fixture(scope="module")
def bare_gpt2_dir(tiny_gpt2_dir, tmp_path_factory) -> Path:
    return _save_model_only(tiny_gpt2_dir, tmp_path_factory.mktemp("bare-gpt2"), "causal")


@pytest.fixture(scope="module")
def bare_bert_dir(tiny_bert_dir, tmp_path_factory) -> Path:
    return _save_model_only(tiny_bert_dir, tmp_path_factory.mktemp("bare-bert"), "masked")


# ------------------------------------------------------------------------------------------------
# tokenizers


@pytest.mark.parametrize("which", ["bare_bert_dir", "bare_gpt2_dir"])
def test_directory_without_tokenizer_is_refused(which, request):
    bare = request.getfixturevalue(which)
    assert not (bare / "tokenizer.json").exists() and (bare / "config.json").exists()
    with pytest.raises(ModelNotFoundError) as info:
        load_lm(bare, device="cpu")
    message = str(info.value)
    assert str(bare) in message
    assert "tokenizer.json is missing" in message and "vocab.txt" in message  # which files
    assert "tokenizer.save_pretrained" in message and "tokenizer=" in message  # both fixes
    assert "config.json" in message and "model.safetensors" in message  # what the folder holds


def test_tokenizer_argument_completes_a_bare_directory(bare_gpt2_dir, tiny_gpt2_dir):
    # Oracle: the complete checkpoint (same weights, its own tokenizer files) gives the same numbers.
    tokenizer = load_test_tokenizer("gpt2")
    bare = load_lm(bare_gpt2_dir, device="cpu", model_tokenizer=tokenizer)
    full = load_lm(tiny_gpt2_dir, device="cpu")
    assert bare.tokenizer is tokenizer
    ids = tuple(tokenizer(SENTENCE)["input_ids"])
    assert tokenizer.unk_token_id not in ids and len(ids) > 5
    query = [CausalQuery((tokenizer.bos_token_id,), ids)]
    [got] = causal_target_scores(bare, query, progress=False)
    [want] = causal_target_scores(full, query, progress=False)
    assert got.logprobs.tolist() == want.logprobs.tolist()
    # Without tokenizer= the same directory is still refused, even with its model cached.
    with pytest.raises(ModelNotFoundError, match="tokenizer.json is missing"):
        load_lm(bare_gpt2_dir, device="cpu")


def test_tokenizer_config_without_vocabulary_is_refused(bare_bert_dir, tmp_path):
    folder = tmp_path / "config-only-tokenizer"
    shutil.copytree(bare_bert_dir, folder)
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer"}))
    with pytest.raises(ModelNotFoundError, match=r"tokenizer\.json is missing.*tokenizer_config\.json"):
        load_lm(folder, device="cpu")


@pytest.mark.parametrize("which,kind", [("bare_bert_dir", "masked"), ("bare_gpt2_dir", "causal")])
def test_vocabulary_less_tokenizer_is_refused(which, kind, request):
    # What transformers builds from a config alone: BERT maps every word to [UNK], GPT-2 to nothing.
    from transformers import AutoTokenizer

    bare = request.getfixturevalue(which)
    empty = AutoTokenizer.from_pretrained(str(bare))
    with pytest.raises(ValueError, match="cannot tokenize ordinary text") as info:
        load_lm(bare, kind, device="cpu", model_tokenizer=empty)
    assert "Pass the tokenizer the model was trained with" in str(info.value)


def test_tokenizer_of_another_model_is_refused():
    # BERT's WordPiece gives ids in the thousands for plain words; this model has 1,000 rows.
    from transformers import BertConfig, BertForMaskedLM

    model = BertForMaskedLM(BertConfig(vocab_size=1000, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32))
    with pytest.raises(ValueError, match="embedding table has 1000 rows: the tokenizer belongs to another model"):
        load_lm(model.eval(), model_tokenizer=load_test_tokenizer("bert"), device="cpu")


def test_tokenizer_must_be_a_tokenizer(tiny_gpt2_dir):
    with pytest.raises(TypeError, match="must be a Hugging Face tokenizer"):
        load_lm(tiny_gpt2_dir, device="cpu", model_tokenizer=object())


def _word_level(vocabulary: list[str]):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(dict.fromkeys(vocabulary))}}
    backend = Tokenizer(models.WordLevel(words, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]")


PROBE_WORDS = PROBE_TEXT.split()


@settings(max_examples=40, deadline=None)
@given(
    known=st.lists(st.sampled_from(PROBE_WORDS), max_size=3),
    others=st.lists(st.text(string.ascii_lowercase, min_size=1, max_size=6).filter(lambda w: w not in PROBE_WORDS), max_size=20),
)
def test_probe_accepts_exactly_tokenizers_that_know_a_word(known, others):
    # The rule: a tokenizer passes when at least one piece of ordinary text is a known, non-special
    # token. A word-level vocabulary knows a probe word exactly when it lists it.
    tokenizer = _word_level(known + others)
    if known:
        check_tokenizer(tokenizer, "probe", vocab_size=len(tokenizer), fix="")
    else:
        with pytest.raises(ValueError, match="only special tokens"):
            check_tokenizer(tokenizer, "probe", vocab_size=len(tokenizer), fix="")


# ------------------------------------------------------------------------------------------------
# weights


def test_config_without_weights_names_the_folder_and_the_fix(tiny_gpt2_dir, tmp_path):
    folder = tmp_path / "config-only"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tiny_gpt2_dir / name, folder / name)
    with pytest.raises(ModelNotFoundError) as info:
        load_lm(folder, device="cpu")
    message = str(info.value)
    assert repr(str(folder)) in message and "has config.json but no weights" in message
    assert "model.save_pretrained(directory)" in message
    assert info.value.__cause__ is None  # ours, not a wrapped third-party traceback


@pytest.mark.parametrize("keep", [0, 5, 200, -4])
def test_truncated_safetensors_names_the_folder_and_the_fix(tiny_bert_dir, tmp_path, keep):
    folder = tmp_path / "truncated"
    shutil.copytree(tiny_bert_dir, folder)
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:keep])
    with pytest.raises(ModelNotFoundError) as info:
        load_lm(folder, device="cpu")
    message = str(info.value)
    assert repr(str(folder)) in message and "model.safetensors" in message
    assert "truncated" in message and "model.save_pretrained(directory)" in message


def test_truncated_pytorch_bin_and_missing_shard(tiny_bert_dir, tmp_path):
    from transformers import AutoModelForMaskedLM

    model = AutoModelForMaskedLM.from_pretrained(str(tiny_bert_dir))
    pickled = tmp_path / "bin"
    shutil.copytree(tiny_bert_dir, pickled)
    (pickled / "model.safetensors").unlink()
    torch.save(model.state_dict(), pickled / "pytorch_model.bin")
    assert load_lm(pickled, device="cpu").kind == "masked"  # complete: loads
    data = (pickled / "pytorch_model.bin").read_bytes()
    (pickled / "pytorch_model.bin").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelNotFoundError, match=r"pytorch_model\.bin .*truncated"):
        load_lm(pickled, device="cpu")

    sharded = tmp_path / "sharded"
    shutil.copytree(tiny_bert_dir, sharded)
    (sharded / "model.safetensors").unlink()
    model.save_pretrained(str(sharded), max_shard_size="200KB")
    shards = sorted(sharded.glob("model-*.safetensors"))
    assert len(shards) > 1
    shards[-1].unlink()
    with pytest.raises(ModelNotFoundError, match=rf"{shards[-1].name} is missing"):
        load_lm(sharded, device="cpu")


def test_weights_not_matching_the_config_are_explained(tiny_bert_dir, tmp_path):
    folder = tmp_path / "mismatch"
    shutil.copytree(tiny_bert_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(hidden_size=64, intermediate_size=128)
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelNotFoundError, match=r"do not match its config\.json") as info:
        load_lm(folder, device="cpu")
    assert repr(str(folder)) in str(info.value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_truncation_of_a_safetensors_file_is_caught(tiny_bert_dir, tmp_path_factory, data):
    # Oracle: the safetensors library itself refuses every truncated file; the header check must
    # agree with it on every cut, and accept the whole file.
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    original = (tiny_bert_dir / "model.safetensors").read_bytes()
    keep = data.draw(st.integers(min_value=0, max_value=len(original)), label="kept bytes")
    folder = tmp_path_factory.mktemp("cut")
    shutil.copy(tiny_bert_dir / "config.json", folder / "config.json")
    (folder / "model.safetensors").write_bytes(original[:keep])
    problem = safetensors_problem(folder / "model.safetensors")
    try:
        load_file(folder / "model.safetensors")
        readable = True
    except (SafetensorError, OSError, RuntimeError):
        readable = False
    assert (problem is None) == readable == (keep == len(original))
    if problem is not None:
        with pytest.raises(ModelNotFoundError, match="truncated"):
            check_weight_files(folder)


# ------------------------------------------------------------------------------------------------
# devices


@pytest.mark.parametrize("device", ["mps", "xla", "meta", "cuda", "cuda:7", "xpu", "hpu", "tpu", "gpu", "cpu:1", "", " cpu"])
def test_unusable_device_lists_what_is_available(tiny_gpt2_dir, device):
    if device not in ("meta", "cpu:1", "", " cpu", "tpu", "gpu"):
        try:
            torch.zeros(1, device=device)
            pytest.skip(f"{device} is usable on this machine")
        except Exception:  # noqa: BLE001 - torch's own failure here is what the loader must replace
            pass
    with pytest.raises(ValueError) as info:
        load_lm(tiny_gpt2_dir, device=device)
    message = str(info.value)
    assert f"device={device!r}" in message
    assert "Available here: 'cpu'" in message and "or None" in message
    for name in available_devices():
        assert repr(name) in message


DEVICE_TYPES = ["cpu", "cuda", "mps", "xla", "meta", "xpu", "hpu", "lazy", "ipu", "mtia", "maia", "privateuseone", "vulkan", "ve"]


@settings(max_examples=150, deadline=None)
@given(
    device=st.one_of(
        st.tuples(st.sampled_from(DEVICE_TYPES), st.none() | st.integers(0, 9)).map(lambda t: t[0] if t[1] is None else f"{t[0]}:{t[1]}"),
        st.text(max_size=12),
        st.integers(-2, 9),
    )
)
def test_resolve_device_gives_a_usable_device_or_a_clear_error(device):
    # Either a tensor can be made on the device, or a ValueError lists the devices that exist;
    # never a torch RuntimeError / AssertionError from deep inside .to().
    try:
        resolved = resolve_device(device)
    except ValueError as error:
        assert "Available here: 'cpu'" in str(error)
        return
    assert resolved.type != "meta"
    torch.zeros(1, device=resolved)
    assert resolved.type in {name.split(":")[0] for name in available_devices()}


def test_model_instance_on_the_meta_device_is_refused():
    from transformers import BertConfig, BertForMaskedLM

    with torch.device("meta"):
        model = BertForMaskedLM(BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32))
    for device in (None, "cpu"):
        with pytest.raises(ValueError, match="meta device: its weights were never loaded"):
            load_lm(model, model_tokenizer=load_test_tokenizer("bert"), device=device)
    with pytest.raises(ValueError, match="meta device"):
        module_device(model)
