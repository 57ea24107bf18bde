"""Models bigger than one device: ``device_map`` / ``max_memory`` / ``offload_folder`` for a model
given by folder, and model objects accelerate has already dispatched (CPU and disk offload hooks).

On CPU, with some layers offloaded to the disk, every LM metric gives the numbers of the same
model on one device (and the engine those of a naive forward); a dispatched object scores, is
signed with the weights hash of the same object undispatched (its disk-offloaded weights read, the
object left as it was), and the store keeps two such objects apart. Bad placements are refused in
one line naming the fix. Where CUDA is present, the same over GPU + CPU.
"""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from nlgmetrics.core.signature import parse_signature
from nlgmetrics.engine import CausalQuery, causal_target_scores, load_lm
from nlgmetrics.engine.fingerprints import module_fingerprint
from nlgmetrics.registry import get_protocol
from nlgmetrics.shannon import shannon_score

PREDICTIONS = ["The cat sat on the mat.", "A dog ran home quickly."]
DOCUMENTS = ["The cat sat on the mat. It was warm there. The dog barked.",
             "A dog ran home. It was late. Its owner waited at the door."]
TOLERANCE = 1e-5

#: Per fixture model: a map with some modules on the disk and the rest on the CPU (the LM head
#: beside the input embeddings it is tied to).
DISK_MAPS = {
    "tiny_gpt2_dir": {"transformer.wte": "cpu", "transformer.wpe": "cpu", "transformer.drop": "cpu",
                      "transformer.h.0": "disk", "transformer.h.1": "cpu", "transformer.ln_f": "disk",
                      "lm_head": "cpu"},
    "tiny_llama_dir": {"model.embed_tokens": "cpu", "model.layers.0": "disk", "model.layers.1": "cpu",
                       "model.norm": "disk", "model.rotary_emb": "cpu", "lm_head": "cpu"},
    "tiny_bert_dir": {"bert.embeddings": "cpu", "bert.encoder.layer.0": "disk", "bert.encoder.layer.1": "disk",
                      "cls": "cpu"},
    "copy_bert_dir": {"bert.embeddings": "cpu", "bert.encoder": "disk", "cls": "cpu"},
}


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # accelerate's "some parameters are on the meta device"
        return function(*args, **kwargs)


def _run(name: str, **options):
    protocol = get_protocol(name)
    others = DOCUMENTS if protocol.second_input == "sources" else [[d] for d in DOCUMENTS]
    return _quiet(protocol.run, PREDICTIONS, others, progress=False, **options)


def _assert_same_scores(expected, actual) -> None:
    assert set(expected.scores) == set(actual.scores)
    for column, values in expected.scores.items():
        np.testing.assert_allclose(actual.scores[column], values, rtol=0, atol=TOLERANCE, err_msg=column)


def is_dispatched(model: torch.nn.Module) -> bool:
    """Whether accelerate's hooks place some module of ``model`` (read here, not by the code under test)."""
    return any("_hf_hook" in vars(module) for module in model.modules())


def _offloaded_names(model: torch.nn.Module) -> list[str]:
    return [name for name, tensor in model.named_parameters() if tensor.is_meta]


def _causal_model(path):
    from transformers import AutoModelForCausalLM

    return _quiet(AutoModelForCausalLM.from_pretrained, path).eval()


def _tokenizer(path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


# ------------------------------------------------------------------------------------------------
# a model given by folder, placed by from_pretrained


@pytest.mark.parametrize(("name", "fixture"), [
    ("infolm", "tiny_bert_dir"), ("infolm", "tiny_gpt2_dir"), ("shannon_score", "tiny_gpt2_dir"),
    ("blanc", "copy_bert_dir"), ("fflm", "tiny_llama_dir"),
])
def test_each_lm_metric_with_layers_offloaded_to_disk_gives_the_one_device_numbers(name, fixture, request, tmp_path):
    path = str(request.getfixturevalue(fixture))
    placement = {"device_map": DISK_MAPS[fixture], "offload_folder": str(tmp_path)}
    on_one_device = _run(name, model=path, device="cpu")
    offloaded = _run(name, model=path, **placement)
    _assert_same_scores(on_one_device, offloaded)
    assert offloaded.signature == on_one_device.signature  # where modules run changes no number
    lm = _quiet(load_lm, path, **placement)  # the metric's load, from the cache
    assert is_dispatched(lm.model) and _offloaded_names(lm.model) and lm.device == torch.device("cpu")


def _queries(tokenizer) -> list[CausalQuery]:
    ids = [tuple(tokenizer(text)["input_ids"]) for text in DOCUMENTS]
    start = (tokenizer.bos_token_id,)
    # Two queries behind a shared prefix (the prefix cache), others alone and of other lengths (padding).
    return [CausalQuery(start, ids[0]), CausalQuery(start, ids[1][:5]),
            CausalQuery(start + ids[0][:6], ids[1][:7]), CausalQuery(start + ids[0][:6], ids[1][3:])]


def _naive_logprobs(model: torch.nn.Module, query: CausalQuery) -> np.ndarray:
    """One batch-1 forward of ``prefix + target[:-1]``: the log-probability of each target token."""
    ids = torch.tensor([query.prefix_ids + query.target_ids[:-1]])
    with torch.inference_mode():
        logits = model(input_ids=ids, use_cache=False).logits[0].double()
    rows = logits[len(query.prefix_ids) - 1:].log_softmax(-1)
    return rows[torch.arange(len(query.target_ids)), torch.tensor(query.target_ids)].numpy()


def test_max_memory_small_enough_to_force_disk_offload_scores_a_naive_forwards_numbers(tiny_gpt2_dir, tmp_path):
    plain = _causal_model(tiny_gpt2_dir)
    embedding = plain.get_input_embeddings().weight
    embedding_bytes = embedding.numel() * embedding.element_size()
    total = sum(p.numel() * p.element_size() for p in plain.parameters())
    # Room for the (tied) embeddings and half the rest: accelerate sends the other half to the disk.
    budget = embedding_bytes + (total - embedding_bytes) // 2
    lm = _quiet(load_lm, tiny_gpt2_dir, device_map="auto", max_memory={"cpu": budget}, offload_folder=tmp_path)
    assert set(lm.model.hf_device_map.values()) == {"cpu", "disk"} and _offloaded_names(lm.model)
    queries = _queries(lm.tokenizer)
    for query, scores in zip(queries, causal_target_scores(lm, queries, progress=False), strict=True):
        np.testing.assert_allclose(scores.logprobs, _naive_logprobs(plain, query), rtol=0, atol=TOLERANCE)


# ------------------------------------------------------------------------------------------------
# a model object already dispatched by accelerate


def _dispatched(path, how: str, folder: Path) -> torch.nn.Module:
    """The tiny GPT-2 at ``path`` placed with some weights off the model: by ``from_pretrained``,
    accelerate's ``dispatch_model`` (disk and CPU), ``cpu_offload`` or ``disk_offload``."""
    import accelerate
    from transformers import AutoModelForCausalLM

    if how == "from_pretrained":
        return _quiet(AutoModelForCausalLM.from_pretrained, path, device_map=DISK_MAPS["tiny_gpt2_dir"],
                      offload_folder=str(folder)).eval()
    model = _causal_model(path)
    if how == "dispatch_model":
        return _quiet(accelerate.dispatch_model, model, device_map=DISK_MAPS["tiny_gpt2_dir"], offload_dir=str(folder))
    if how == "cpu_offload":
        return _quiet(accelerate.cpu_offload, model, execution_device="cpu")
    return _quiet(accelerate.disk_offload, model, offload_dir=str(folder), execution_device="cpu")


def _placement_record(model: torch.nn.Module) -> list[tuple]:
    return [(name, tensor.device.type, tensor.dtype, tuple(tensor.shape)) for name, tensor in model.named_parameters()]


@pytest.mark.parametrize("how", ["from_pretrained", "dispatch_model", "cpu_offload", "disk_offload"])
def test_a_dispatched_object_scores_and_is_signed_as_the_same_object_on_one_device(how, tiny_gpt2_dir, tmp_path):
    tokenizer = _tokenizer(tiny_gpt2_dir)
    plain = _causal_model(tiny_gpt2_dir)
    expected = _quiet(shannon_score, PREDICTIONS, DOCUMENTS, model=plain, model_tokenizer=tokenizer, progress=False)
    model = _dispatched(tiny_gpt2_dir, how, tmp_path)
    before = _placement_record(model)
    assert is_dispatched(model) and _offloaded_names(model)
    for _ in range(2):  # the second call through the load cache
        result = _quiet(shannon_score, PREDICTIONS, DOCUMENTS, model=model, model_tokenizer=tokenizer, progress=False)
        _assert_same_scores(expected, result)
        assert parse_signature(result.signature)["weights"] == parse_signature(expected.signature)["weights"]
    assert _placement_record(model) == before and is_dispatched(model) and not model.training  # left as it was


def test_a_dispatched_masked_lm_object_scores_as_on_one_device(tiny_bert_dir, tmp_path):
    from transformers import AutoModelForMaskedLM

    expected = _run("infolm", model=str(tiny_bert_dir), device="cpu")
    model = _quiet(AutoModelForMaskedLM.from_pretrained, tiny_bert_dir, device_map=DISK_MAPS["tiny_bert_dir"],
                   offload_folder=str(tmp_path))
    assert _offloaded_names(model)
    _assert_same_scores(expected, _run("infolm", model=model, model_tokenizer=_tokenizer(tiny_bert_dir)))


@pytest.fixture(scope="module")
def edited_gpt2_dir(tiny_gpt2_dir, tmp_path_factory) -> Path:
    """The tiny GPT-2 with one weight of its first block (the block DISK_MAPS sends to the disk) changed."""
    model = _causal_model(tiny_gpt2_dir)
    with torch.no_grad():
        model.transformer.h[0].mlp.c_fc.weight[0, 0] += 0.5
    path = tmp_path_factory.mktemp("edited-gpt2")
    model.save_pretrained(str(path))
    for file in Path(tiny_gpt2_dir).iterdir():
        if "token" in file.name or file.name in ("vocab.json", "merges.txt"):
            shutil.copy(file, path / file.name)
    return path


def test_the_fingerprint_of_a_dispatched_object_reads_its_disk_offloaded_weights(tiny_gpt2_dir, edited_gpt2_dir, tmp_path):
    original = _dispatched(tiny_gpt2_dir, "from_pretrained", tmp_path / "a")
    edited = _dispatched(edited_gpt2_dir, "from_pretrained", tmp_path / "b")
    assert "transformer.h.0.mlp.c_fc.weight" in _offloaded_names(edited)  # the edit is on the disk only
    before = _placement_record(edited)
    assert module_fingerprint(original) == module_fingerprint(_causal_model(tiny_gpt2_dir))
    assert module_fingerprint(edited) == module_fingerprint(_causal_model(edited_gpt2_dir))
    assert module_fingerprint(edited) != module_fingerprint(original)
    assert _placement_record(edited) == before  # nothing loaded into the model


def test_the_store_keeps_two_dispatched_objects_apart(tiny_gpt2_dir, edited_gpt2_dir, tmp_path):
    tokenizer = _tokenizer(tiny_gpt2_dir)
    store = tmp_path / "store"
    for path, folder in ((tiny_gpt2_dir, "a"), (edited_gpt2_dir, "b")):
        expected = _quiet(shannon_score, PREDICTIONS, DOCUMENTS, model=str(path), device="cpu", progress=False)
        model = _dispatched(path, "from_pretrained", tmp_path / folder)
        result = _quiet(shannon_score, PREDICTIONS, DOCUMENTS, model=model, model_tokenizer=tokenizer,
                        progress=False, cache_dir=store)
        _assert_same_scores(expected, result)  # the edited model's numbers, not the first one's from the store


@pytest.mark.parametrize("dispatched", [False, True], ids=["plain", "dispatched"])
def test_an_object_switched_to_training_mode_after_a_call_is_scored_in_evaluation_mode(dispatched, tiny_gpt2_dir, tmp_path):
    tokenizer = _tokenizer(tiny_gpt2_dir)
    model = _dispatched(tiny_gpt2_dir, "from_pretrained", tmp_path) if dispatched else _causal_model(tiny_gpt2_dir)
    first = _quiet(shannon_score, PREDICTIONS, DOCUMENTS, model=model, model_tokenizer=tokenizer, progress=False)
    model.train()  # the tiny GPT-2 has dropout 0.1: scored in training mode, the numbers would move
    again = _quiet(shannon_score, PREDICTIONS, DOCUMENTS, model=model, model_tokenizer=tokenizer, progress=False)
    _assert_same_scores(first, again)
    assert model.training  # the caller's flag is left as it was


# ------------------------------------------------------------------------------------------------
# refusals: one line, naming the fix


@pytest.fixture(scope="module")
def bin_gpt2_dir(tiny_gpt2_dir, tmp_path_factory) -> Path:
    """The tiny GPT-2 saved as pytorch_model.bin: transformers must re-save its weights to offload them."""
    path = tmp_path_factory.mktemp("bin-gpt2")
    for file in Path(tiny_gpt2_dir).iterdir():
        if file.suffix != ".safetensors":
            shutil.copy(file, path / file.name)
    torch.save(_causal_model(tiny_gpt2_dir).state_dict(), path / "pytorch_model.bin")
    return path


def _refusal(function, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as caught:
        _quiet(function, *args, **kwargs)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


@pytest.mark.parametrize(("options", "fix"), [
    ({"device_map": {"transformer": "cpu", "lm_head": "tpu"}}, r"device_map\['lm_head'\]='tpu' is not a device here.*'disk'"),
    ({"device_map": {"transformer": "cpu", "lm_head": "cuda:99"}}, r"'cuda:99' is not a device here.*Available here"),
    ({"device_map": "everywhere"}, r"strategy: 'auto'"),
    ({"device_map": {"transformer": "cpu", "lm_head": "disk"}, "device": "cpu"}, r"pass device_map= alone"),
    ({"max_memory": {"cpu": "1GiB"}}, r"pass device_map='auto'"),
    ({"offload_folder": "somewhere"}, r"pass device_map= with it"),
    ({"device_map": {"": "cpu"}, "max_memory": {"cpu": "1GiB"}}, r"drop max_memory"),
    ({"device_map": "auto", "max_memory": {"cpu": "lots"}}, r"size such as '10GiB'"),
    ({"device_map": "auto", "max_memory": {"tpu": "1GiB"}}, r"max_memory key='tpu' is not a device here"),
])
def test_a_bad_placement_is_refused_before_loading_naming_the_fix(options, fix, tiny_gpt2_dir):
    message = _refusal(shannon_score, PREDICTIONS, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, **options)
    assert re.search(fix, message), message


@pytest.mark.parametrize("options", [
    {"device_map": {"transformer": "cpu", "lm_head": "disk"}},
    {"device_map": "auto", "max_memory": {"cpu": 100_000}},  # too small for anything: all to the disk
])
def test_weights_that_must_be_resaved_for_the_disk_without_offload_folder_are_refused(options, bin_gpt2_dir):
    message = _refusal(load_lm, str(bin_gpt2_dir), **options)
    assert "pass offload_folder=" in message, message


def test_a_tied_lm_head_sent_to_the_disk_apart_from_its_embeddings_is_refused(tiny_bert_dir, tmp_path):
    placement = {"bert.embeddings": "cpu", "bert.encoder": "cpu", "cls": "disk"}  # cls's decoder is tied to the embeddings
    message = _refusal(load_lm, str(tiny_bert_dir), device_map=placement, offload_folder=tmp_path)
    assert "cls.predictions.decoder.weight" in message and "put the LM head on the device of the input embeddings" in message


def test_a_placement_for_a_model_object_is_refused(tiny_gpt2_dir):
    message = _refusal(load_lm, _causal_model(tiny_gpt2_dir), model_tokenizer=_tokenizer(tiny_gpt2_dir), device_map="auto")
    assert "pass its folder with device_map=" in message and "dispatch_model" in message


def test_a_dispatched_object_is_not_cast(tiny_gpt2_dir, tmp_path):
    model = _dispatched(tiny_gpt2_dir, "from_pretrained", tmp_path)
    message = _refusal(load_lm, model, model_tokenizer=_tokenizer(tiny_gpt2_dir), dtype="bfloat16")
    assert "dispatched by accelerate" in message and "pass dtype=None" in message
    assert _offloaded_names(model)  # untouched


def test_blanc_tune_refuses_a_model_with_offloaded_weights(copy_bert_dir, tmp_path):
    message = _refusal(get_protocol("blanc").run, PREDICTIONS, DOCUMENTS, variant="tune", model=str(copy_bert_dir),
                       device_map=DISK_MAPS["copy_bert_dir"], offload_folder=str(tmp_path), progress=False)
    assert "variant='help'" in message, message


# ------------------------------------------------------------------------------------------------
# over a GPU and the CPU, where CUDA is present


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize(("name", "fixture", "device_map"), [
    ("shannon_score", "tiny_gpt2_dir", "budget"),
    ("fflm", "tiny_llama_dir", {"model.embed_tokens": 0, "model.layers.0": "cpu", "model.layers.1": 0,
                                "model.norm": "cpu", "model.rotary_emb": 0, "lm_head": 0}),
    ("infolm", "tiny_bert_dir", {"bert.embeddings": 0, "bert.encoder.layer.0": "cpu", "bert.encoder.layer.1": "disk",
                                 "cls": 0}),
])
def test_over_a_gpu_and_the_cpu_each_lm_metric_gives_the_one_gpu_numbers(name, fixture, device_map, request, tmp_path):
    path = str(request.getfixturevalue(fixture))
    if device_map == "budget":  # the embeddings and half the rest on the GPU, the other half on the CPU
        plain = _causal_model(path)
        embedding = plain.get_input_embeddings().weight
        embedding_bytes = embedding.numel() * embedding.element_size()
        total = sum(p.numel() * p.element_size() for p in plain.parameters())
        placement = {"device_map": "auto", "max_memory": {0: embedding_bytes + (total - embedding_bytes) // 2, "cpu": "1GiB"}}
    else:
        placement = {"device_map": device_map, "offload_folder": str(tmp_path)}
    on_one_gpu = _run(name, model=path, device="cuda:0")
    spread = _run(name, model=path, **placement)
    _assert_same_scores(on_one_gpu, spread)
    lm = _quiet(load_lm, path, **placement)
    assert is_dispatched(lm.model) and lm.device == torch.device("cuda", 0)
    assert {str(place) for place in lm.model.hf_device_map.values()} & {"cpu", "disk"}
