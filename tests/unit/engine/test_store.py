"""The engine's store: equal numbers with and without it, keys that cannot go stale, damaged or
unusable stores, concurrent writers, a killed run resumed (also with another process count)."""

from __future__ import annotations

import copy
import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from nlgmetrics.blanc import blanc
from nlgmetrics.engine import clear_cache, load_lm
from nlgmetrics.engine.store import (
    STORE_FILE,
    StoreWarning,
    clear_store,
    decode_arrays,
    encode_arrays,
    namespace_of,
)
from nlgmetrics.engine.store_sharing import open_store
from nlgmetrics.fflm import fflm
from nlgmetrics.infolm import infolm
from nlgmetrics.shannon import shannon_score
from nlgmetrics.testing import load_test_tokenizer

SUMMARIES = ["Jack bought milk.", "A cat sat on a mat.", "Jack bought milk and honey at the bazaar."]
DOCUMENTS = [
    "Jack drove to the bazaar. He bought milk and honey. Then he went home.",
    "The cat sat on a mat. It slept all day. The dog barked.",
    "Jack drove to the bazaar. He bought milk and honey. Then he went home.",
]


def _entries(directory: Path) -> int:
    with sqlite3.connect(directory / STORE_FILE) as db:
        return db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]


def _entries_so_far(directory: Path) -> int:
    """Entries of a store another process may still be creating: sqlite makes the file on connect,
    before the store has written its schema, so a missing file or table counts as no entry yet."""
    if not (directory / STORE_FILE).exists():
        return 0
    try:
        return _entries(directory)
    except sqlite3.OperationalError as error:
        if "no such table" in str(error):
            return 0
        raise


def _rowids(directory: Path) -> dict[bytes, int]:
    with sqlite3.connect(directory / STORE_FILE) as db:
        return dict(db.execute("SELECT key, rowid FROM entries").fetchall())


class ForwardCounter:
    """Counts forward passes of a loaded model's base model (the oracle for 'no model call')."""

    def __init__(self, model: torch.nn.Module):
        self.calls = 0
        base = getattr(model, "base_model", model)
        self._handle = base.register_forward_pre_hook(self._count)

    def _count(self, *_args):
        self.calls += 1

    def close(self) -> None:
        self._handle.remove()


def _close(a: dict, b: dict, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """Equal within the engine's batch invariance in float32 (the cards: within 1e-5)."""
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=rtol, atol=atol, err_msg=name)


# ------------------------------------------------------------------------------------------------
# same numbers, no model call on a repeat


@pytest.mark.parametrize("metric", ["shannon", "fflm", "blanc", "infolm_masked", "infolm_causal"])
def test_store_gives_the_same_numbers_and_a_repeat_runs_no_model(metric, tiny_gpt2_dir, tiny_bert_dir, tmp_path):
    model, call = {
        "shannon": (tiny_gpt2_dir, shannon_score), "fflm": (tiny_gpt2_dir, fflm), "blanc": (tiny_bert_dir, blanc),
        "infolm_masked": (tiny_bert_dir, infolm), "infolm_causal": (tiny_gpt2_dir, infolm),
    }[metric]
    plain = call(SUMMARIES, DOCUMENTS, model=str(model), progress=False)
    first = call(SUMMARIES, DOCUMENTS, model=str(model), progress=False, cache_dir=tmp_path)
    assert _entries(tmp_path) > 0
    counter = ForwardCounter(load_lm(str(model)).model)
    try:
        again = call(SUMMARIES, DOCUMENTS, model=str(model), progress=False, cache_dir=tmp_path)
    finally:
        counter.close()
    assert counter.calls == 0
    assert again.scores == first.scores  # bit for bit what was stored
    _close(first.scores, plain.scores)  # within the engine's batch invariance
    assert first.signature == plain.signature == again.signature


def test_system_by_system_reuses_the_document_side(tiny_gpt2_dir, tmp_path):
    """A second system over the same documents: only its own queries run (Shannon's base and full
    passes and FFLM's p(document) come from the store)."""
    other = ["Milk was bought by Jack.", "A dog barked.", "Honey."]
    shannon_score(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, cache_dir=tmp_path)
    lm = load_lm(str(tiny_gpt2_dir))
    cold = ForwardCounter(lm.model)
    try:
        shannon_score(other, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False)
    finally:
        cold.close()
    warm = ForwardCounter(lm.model)
    try:
        stored = shannon_score(other, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, cache_dir=tmp_path)
    finally:
        warm.close()
    assert 0 < warm.calls < cold.calls
    _close(stored.scores, shannon_score(other, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False).scores)


# ------------------------------------------------------------------------------------------------
# keys that cannot go stale: each change recomputes and equals a fresh run without the store


def _rewrite_with_one_weight_changed(source: Path, target: Path) -> None:
    from transformers import AutoModelForCausalLM

    shutil.copytree(source, target)
    model = AutoModelForCausalLM.from_pretrained(str(source))
    with torch.no_grad():
        next(model.parameters()).view(-1)[0] += 0.5
    model.save_pretrained(str(target))


def test_a_flipped_weight_in_a_rewritten_folder_is_recomputed(tiny_gpt2_dir, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_gpt2_dir, folder)
    store = tmp_path / "store"
    before = shannon_score(SUMMARIES, DOCUMENTS, model=str(folder), progress=False, cache_dir=store)
    shutil.rmtree(folder)
    _rewrite_with_one_weight_changed(tiny_gpt2_dir, folder)
    after = shannon_score(SUMMARIES, DOCUMENTS, model=str(folder), progress=False, cache_dir=store)
    fresh = shannon_score(SUMMARIES, DOCUMENTS, model=str(folder), progress=False)
    assert after.scores != before.scores
    _close(after.scores, fresh.scores)
    assert after.signature == fresh.signature != before.signature


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_a_model_object_changed_through_data_is_recomputed(mode, tiny_gpt2_dir, tmp_path):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tiny_gpt2_dir))
    model.train() if mode == "train" else model.eval()
    tokenizer = load_test_tokenizer("gpt2")
    options = dict(model=model, model_tokenizer=tokenizer, progress=False, cache_dir=tmp_path)
    before = shannon_score(SUMMARIES, DOCUMENTS, **options)
    # In place through .data, as PEFT's merge_adapter and EMA helpers do: no version counter,
    # storage pointer or shape moves, only the values.
    for parameter in model.parameters():
        parameter.data.mul_(1.25)
    after = shannon_score(SUMMARIES, DOCUMENTS, **options)
    oracle = copy.deepcopy(model).eval()
    fresh = shannon_score(SUMMARIES, DOCUMENTS, model=oracle, model_tokenizer=tokenizer, progress=False)
    assert after.scores != before.scores
    _close(after.scores, fresh.scores)
    weights = lambda result: [f for f in result.signature.split("|") if f.startswith("weights:")]  # noqa: E731
    assert weights(after) == weights(fresh) != weights(before)


@pytest.mark.parametrize("change", ["dtype", "max_length", "start_token", "tokenizer", "num_upstream"])
def test_every_option_that_changes_a_query_recomputes(change, tiny_gpt2_dir, tmp_path):
    base = dict(model=str(tiny_gpt2_dir), progress=False)
    changed = {
        "dtype": {"dtype": "bfloat16"},
        "max_length": {"max_length": 12},
        "start_token": {"start_token": 5},
        "num_upstream": {"num_upstream": 1},
        "tokenizer": {"model_tokenizer": _tokenizer_with_an_extra_special_token(tiny_gpt2_dir)},
    }[change]
    shannon_score(SUMMARIES, DOCUMENTS, **base, cache_dir=tmp_path)
    stored_before = _entries(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bf16 on a CPU without bf16 units, truncation
        after = shannon_score(SUMMARIES, DOCUMENTS, **base, **changed, cache_dir=tmp_path)
        fresh = shannon_score(SUMMARIES, DOCUMENTS, **base, **changed)
    assert _entries(tmp_path) > stored_before  # new keys were written, so nothing old was read for them
    _close(after.scores, fresh.scores)
    assert after.signature == fresh.signature


def _tokenizer_with_an_extra_special_token(directory: Path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(directory))
    tokenizer.add_special_tokens({"additional_special_tokens": ["<extra>"]})
    return tokenizer


def test_the_namespace_holds_versions_and_format(monkeypatch):
    import transformers

    fields = {"weights": "abc", "what": "x"}
    first = namespace_of(fields)
    monkeypatch.setattr(transformers, "__version__", "0.0.0-other")
    assert namespace_of(fields) != first
    monkeypatch.undo()
    monkeypatch.setattr(torch, "__version__", "0.0.0-other")
    assert namespace_of(fields) != first
    monkeypatch.undo()
    monkeypatch.setattr("nlgmetrics.engine.store.FORMAT_VERSION", 999)
    assert namespace_of(fields) != first


# ------------------------------------------------------------------------------------------------
# values: raw arrays, no pickle, checksummed


def test_values_are_raw_arrays_and_objects_are_refused():
    arrays = (np.array([1.5, -2.0]), None, np.arange(6, dtype=np.int64).reshape(2, 3), np.array([True, False]))
    back = decode_arrays(encode_arrays(arrays))
    assert back[1] is None and back[0].tolist() == [1.5, -2.0] and back[2].tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(TypeError, match="numeric arrays only"):
        encode_arrays([np.array([object()], dtype=object)])
    blob = encode_arrays([np.zeros(2)])
    forged = blob.replace(b'"<f8"', b'"|O8"')  # a header asking numpy for objects
    with pytest.raises((ValueError, TypeError)):
        decode_arrays(forged)
    with pytest.raises(ValueError):
        decode_arrays(blob[:-3])  # truncated


def test_a_damaged_entry_is_recomputed_and_replaced(tiny_gpt2_dir, tmp_path):
    first = fflm(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, cache_dir=tmp_path)
    with sqlite3.connect(tmp_path / STORE_FILE) as db:
        keys = [k for (k,) in db.execute("SELECT key FROM entries")]
        # One value's bytes flipped (checksum mismatch), one value's checksum still right but its
        # header garbage: both must be recomputed, never decoded into numbers.
        db.execute("UPDATE entries SET value = CAST(zeroblob(length(value)) AS BLOB) WHERE key = ?", (keys[0],))
        garbage = b"NLGS1garbage"
        import hashlib

        db.execute("UPDATE entries SET value = ?, checksum = ? WHERE key = ?",
                   (garbage, hashlib.sha256(garbage).digest(), keys[1]))
    lm = load_lm(str(tiny_gpt2_dir))
    counter = ForwardCounter(lm.model)
    try:
        again = fflm(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, cache_dir=tmp_path)
    finally:
        counter.close()
    assert counter.calls > 0
    _close(again.scores, first.scores)
    store = open_store(tmp_path)
    values = store._db.execute("SELECT value FROM entries").fetchall()
    assert all(decode_arrays(v) is not None for (v,) in values)  # replaced by good ones


def test_a_file_that_is_not_a_store_warns_and_the_call_completes(tiny_gpt2_dir, tmp_path):
    (tmp_path / STORE_FILE).write_bytes(b"this is not an sqlite database" * 100)
    with pytest.warns(StoreWarning, match="nlgmetrics cache clear"):
        result = shannon_score(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, cache_dir=tmp_path)
    _close(result.scores, shannon_score(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False).scores)


def test_a_folder_that_cannot_be_created_warns_and_the_call_completes(tiny_gpt2_dir, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.warns(StoreWarning, match="cannot hold a store"):
        result = fflm(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, cache_dir=blocker / "store")
    _close(result.scores, fflm(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False).scores)


def test_a_store_that_refuses_writes_warns_once_and_the_call_completes(tiny_gpt2_dir, tmp_path, monkeypatch):
    """A read-only folder or a full disk: sqlite refuses the write (simulated with query_only,
    which fails the way a read-only database does, also for root)."""
    from nlgmetrics.engine import store as store_module

    opened = store_module.Store.__init__

    def read_only(self, *args, **kwargs):
        opened(self, *args, **kwargs)
        self._db.execute("PRAGMA query_only = ON")

    monkeypatch.setattr(store_module.Store, "__init__", read_only)
    with pytest.warns(StoreWarning, match="could not write") as caught:
        result = shannon_score(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, cache_dir=tmp_path)
    assert len([w for w in caught if issubclass(w.category, StoreWarning)]) == 1
    _close(result.scores, shannon_score(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False).scores)


def test_size_cap_evicts_the_least_recently_used(tmp_path, monkeypatch):
    monkeypatch.setenv("NLGMETRICS_CACHE_MAX_BYTES", "20000")
    store = open_store(tmp_path)
    space = namespace_of({"what": "test"})
    for i in range(10):
        store.put(space, [(f"q{i}".encode(), (np.full(500, i, dtype=np.float64),))])  # ~4 KB each
        time.sleep(0.01)
    kept = store.get(space, [f"q{i}".encode() for i in range(10)])
    total = store._db.execute("SELECT SUM(size) FROM entries").fetchone()[0]
    assert total <= 20000
    assert b"q9" in kept and b"q0" not in kept  # the newest stays, the oldest went
    assert all(kept[k][0][0] == int(k[1:]) for k in kept)


def test_clear_store_empties_the_store_keeps_its_file_and_reports_the_bytes_freed(tmp_path):
    store = open_store(tmp_path)
    store.put(namespace_of({"what": "x"}), [(f"q{i}".encode(), (np.zeros(2000),)) for i in range(50)])
    store.close()
    files = lambda: sum(p.stat().st_size for p in tmp_path.glob(f"{STORE_FILE}*"))  # noqa: E731
    before = files()
    freed, after = clear_store(tmp_path), files()
    assert freed == before - after > 50 * 2000 * 8 * 0.9  # the values' pages went back to the disk
    assert (tmp_path / STORE_FILE).exists() and _entries(tmp_path) == 0
    assert clear_store(tmp_path / "no-store-here") == 0


# ------------------------------------------------------------------------------------------------
# several processes


def _open_at_once(directory: str, barrier, answers) -> None:
    from nlgmetrics.engine.store import Store  # the class itself: open_store's checks spread the starts

    barrier.wait()
    try:
        Store(Path(directory), None).close()
        answers.put(None)
    except Exception as error:  # noqa: BLE001 - the test reports what failed
        answers.put(repr(error))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_processes_opening_a_new_store_together_all_get_it(tmp_path):
    # sqlite answers a journal-mode change racing another connection's "database is locked" at
    # once, without its busy timeout: before the retry, about one new store in six opened by 8
    # processes at the same moment left one of them without it (30 rounds: missed < 1 % of runs).
    context = multiprocessing.get_context("fork")
    failures = []
    for round_ in range(30):
        barrier, answers = context.Barrier(8), context.Queue()
        workers = [context.Process(target=_open_at_once, args=(str(tmp_path / str(round_)), barrier, answers))
                   for _ in range(8)]
        for worker in workers:
            worker.start()
        failures += [answer for answer in (answers.get(timeout=120) for _ in workers) if answer]
        for worker in workers:
            worker.join(120)
    assert failures == []


def _writer(directory: str, worker: int, count: int) -> None:
    store = open_store(directory)
    space = namespace_of({"what": "concurrent"})
    for i in range(count):
        store.put(space, [(f"{worker}-{i}".encode(), (np.full(64, worker * 1000 + i, dtype=np.int64),))])


def test_concurrent_writers_lose_nothing(tmp_path):
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path), w, 60)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    store = open_store(tmp_path)
    space = namespace_of({"what": "concurrent"})
    wanted = [f"{w}-{i}".encode() for w in range(4) for i in range(60)]
    found = store.get(space, wanted)
    assert len(found) == 240
    assert all(int(found[k][0][0]) == int(k.split(b"-")[0]) * 1000 + int(k.split(b"-")[1]) for k in wanted)
    assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


RESUME_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    from nlgmetrics.shannon import shannon_score
    model, store, out, slow = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    documents = [f"Document {i} talks about topic {i}. It has a second sentence {i}. And a third." for i in range(8)]
    summaries = [f"Topic {i} summary." for i in range(8)]
    if slow:  # slow each forward pass down, so that a kill lands in the middle of the run
        import torch
        from nlgmetrics.engine import load_lm
        base = load_lm(model).model.base_model
        base.register_forward_pre_hook(lambda *a: time.sleep(slow))
    result = shannon_score(summaries, documents, model=model, progress=False, cache_dir=store,
                           token_budget=64, chunk_size=1)
    from accelerate import PartialState
    if PartialState().is_main_process:
        json.dump(result.scores, open(out, "w"))
    """
)


def _run_resume_script(script: Path, model: Path, store: Path, out: Path, slow: float, processes: int = 1):
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.pop("WORLD_SIZE", None)
    prefix = [sys.executable] if processes == 1 else [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(processes)]
    return prefix + [str(script), str(model), str(store), str(out), str(slow)], env


@pytest.mark.slow
@pytest.mark.parametrize("processes", [1, 2])
def test_a_killed_run_resumes_with_any_process_count(processes, tiny_gpt2_dir, tmp_path):
    script = tmp_path / "job.py"
    script.write_text(RESUME_SCRIPT)
    store, out = tmp_path / "store", tmp_path / "out.json"
    command, env = _run_resume_script(script, tiny_gpt2_dir, store, out, 0.05)
    job = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and job.poll() is None:
        if _entries_so_far(store) >= 6:
            break
        time.sleep(0.05)
    assert job.poll() is None, "the run ended before it could be killed"
    job.send_signal(signal.SIGKILL)
    job.wait()
    kept = _rowids(store)
    assert len(kept) >= 6

    command, env = _run_resume_script(script, tiny_gpt2_dir, store, out, 0.0, processes)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    resumed = json.loads(out.read_text())
    # Oracle: the same job, uninterrupted and without a store, in this process.
    fresh_out = tmp_path / "fresh.json"
    command, env = _run_resume_script(script, tiny_gpt2_dir, tmp_path / "fresh-store", fresh_out, 0.0)
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=300)
    _close(resumed, json.loads(fresh_out.read_text()))
    # Nothing was computed twice: every distinct query is one entry, and the resumed run wrote
    # only the ones the killed run had not (a rewrite of a kept entry would give it a new rowid).
    assert _entries(store) == _entries(tmp_path / "fresh-store") > len(kept)
    after = _rowids(store)
    assert {key: after[key] for key in kept} == kept


def test_clear_cache_and_store_are_independent(tiny_gpt2_dir, tmp_path):
    """Forgetting the loaded models (clear_cache) keeps the store: a new load reads it."""
    first = shannon_score(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, cache_dir=tmp_path)
    clear_cache()
    counter = ForwardCounter(load_lm(str(tiny_gpt2_dir)).model)
    try:
        again = shannon_score(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, cache_dir=tmp_path)
    finally:
        counter.close()
    assert counter.calls == 0 and again.scores == first.scores
