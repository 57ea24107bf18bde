"""The store under damage, hostile content and several jobs: every damaged or crafted store file
gives the numbers of a call without a store (at most StoreWarnings, never an exception), a value is
bound to its key and checked against its query, the cap and the running total live in the store,
``clear`` keeps a running job's later work, and a read-only store serves its hits.

Oracles: the numbers of the same call without a store, the arrays written before the damage, and
sqlite's own view of the file (COUNT, SUM over the rows)."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlgmetrics.engine.causal import TARGET_LOGPROBS
from nlgmetrics.engine.store import (
    MAX_HEADER_BYTES,
    STORE_FILE,
    Store,
    StoreWarning,
    clear_store,
    decode_arrays,
    encode_arrays,
    ids_bytes,
    max_bytes_from_env,
    namespace_of,
    set_max_bytes,
)
from nlgmetrics.engine.store_sharing import open_store
from nlgmetrics.fflm import fflm

SUMMARIES = ["Jack bought milk.", "A cat sat on a mat.", "Jack bought milk and honey at the bazaar."]
DOCUMENTS = [
    "Jack drove to the bazaar. He bought milk and honey. Then he went home.",
    "The cat sat on a mat. It slept all day. The dog barked.",
    "Jack drove to the bazaar. He bought milk and honey. Then he went home.",
]
SPACE = namespace_of({"what": "integrity-test"})


@pytest.fixture(autouse=True)
def _no_store_settings_from_the_environment(monkeypatch):
    monkeypatch.delenv("NLGMETRICS_CACHE_DIR", raising=False)
    monkeypatch.delenv("NLGMETRICS_CACHE_MAX_BYTES", raising=False)


def _close(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-5, atol=1e-5, err_msg=name)


def _sql(directory: Path, statement: str, *params) -> list[tuple]:
    db = sqlite3.connect(directory / STORE_FILE, isolation_level=None)
    try:
        return db.execute(statement, params).fetchall()
    finally:
        db.close()


def _call_without_exceptions(call, *args, **kwargs):
    """The call's result; every warning nlgmetrics gave must be a StoreWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(*args, **kwargs)
    ours = [w for w in caught if str(w.message).startswith("nlgmetrics")]
    assert all(issubclass(w.category, StoreWarning) for w in ours), [str(w.message) for w in ours]
    return result, ours


@pytest.fixture(scope="module")
def plain_fflm(tiny_gpt2_dir):
    return fflm(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False).scores


@pytest.fixture(scope="module")
def pristine_store(tiny_gpt2_dir, tmp_path_factory) -> Path:
    """A store file an FFLM call wrote, folded into one file (no log), to damage copies of."""
    directory = tmp_path_factory.mktemp("pristine")
    fflm(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False, cache_dir=directory)
    gc.collect()  # the call's connection, closed: sqlite folds its log into the file
    _sql(directory, "PRAGMA wal_checkpoint(TRUNCATE)")
    assert _sql(directory, "SELECT COUNT(*) FROM entries")[0][0] >= 6
    return directory


def _copy(store: Path, target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(store / STORE_FILE, target / STORE_FILE)
    return target


# ------------------------------------------------------------------------------------------------
# random damage: the numbers of a call without a store, never an exception


def _flip(path: Path, rng: random.Random, flips: int) -> None:
    data = bytearray(path.read_bytes())
    for _ in range(flips):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))


def _stored_values(directory: Path) -> dict[bytes, bytes]:
    return dict(_sql(directory, "SELECT key, value FROM entries"))


def test_random_byte_flips_in_a_store_file_serve_only_what_was_written(pristine_store, tmp_path):
    """200 damaged copies, read through the store with every key: no exception, and every value
    served is byte for byte the one written for that key (a damaged key, value, checksum or
    index page is a miss)."""
    written = _stored_values(pristine_store)
    keys = list(written)
    rng = random.Random(1234)
    served = 0
    for trial in range(200):
        copy = _copy(pristine_store, tmp_path / f"flip{trial}")
        _flip(copy / STORE_FILE, rng, rng.choice([1, 1, 2, 8]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StoreWarning)
            store = open_store(copy)
            if store is None:  # the file's header was hit: not a database, warned
                continue
            found = _get_by_keys(store, keys)
            store.put(SPACE, [(b"new", (np.arange(3.0),))])  # writing into a damaged file never raises
            store.close()
        for key, value in found.items():
            assert encode_arrays(value) == written[key]
        served += len(found)
        shutil.rmtree(copy)
    assert served > 0  # the test can fail: most damage leaves most entries readable


def _get_by_keys(store: Store, keys: list[bytes]) -> dict[bytes, tuple]:
    """Look rows up by their stored key (the namespace and query are hashed into it): a store
    whose ``_key`` returns the query itself."""
    from nlgmetrics.engine import store as module

    original = module._key
    module._key = lambda namespace, query: query
    try:
        return store.get("", keys)
    finally:
        module._key = original


def test_random_byte_flips_give_the_numbers_of_a_call_without_a_store(pristine_store, plain_fflm, tiny_gpt2_dir,
                                                                        tmp_path):
    rng = random.Random(99)
    for trial in range(25):
        copy = _copy(pristine_store, tmp_path / f"flip{trial}")
        _flip(copy / STORE_FILE, rng, rng.choice([1, 4]))
        result, _ = _call_without_exceptions(fflm, SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False,
                                             cache_dir=copy)
        _close(result.scores, plain_fflm)


@pytest.mark.slow
def test_two_hundred_random_byte_flips_give_the_numbers_of_a_call_without_a_store(pristine_store, plain_fflm,
                                                                                    tiny_gpt2_dir, tmp_path):
    rng = random.Random(2024)
    for trial in range(200):
        copy = _copy(pristine_store, tmp_path / f"flip{trial}")
        _flip(copy / STORE_FILE, rng, rng.choice([1, 1, 2, 8]))
        result, _ = _call_without_exceptions(fflm, SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False,
                                             cache_dir=copy)
        _close(result.scores, plain_fflm)
        shutil.rmtree(copy)


# ------------------------------------------------------------------------------------------------
# a value is bound to its key, and checked against its query


def test_a_damaged_key_index_does_not_serve_another_querys_row(tmp_path):
    """The index points key A at row B (as one damaged byte in the index does): B's value, with
    B's valid checksum, must not be A's."""
    store = open_store(tmp_path)
    store.put(SPACE, [(b"A", (np.array([1.0, 2.0]),)), (b"B", (np.array([7.0, 8.0, 9.0]),))])
    store.close()
    key = lambda query: hashlib.sha256(SPACE.encode() + b"\x00" + query).digest()  # noqa: E731
    _sql(tmp_path, "DELETE FROM entries WHERE key = ?", key(b"A"))
    _sql(tmp_path, "UPDATE entries SET key = ? WHERE key = ?", key(b"A"), key(b"B"))
    store = open_store(tmp_path)
    assert store.get(SPACE, [b"A"]) == {} and store.recomputed == 1
    store.close()


def test_a_damaged_key_index_in_a_metric_store_gives_the_numbers_without_a_store(pristine_store, plain_fflm,
                                                                                  tiny_gpt2_dir, tmp_path):
    copy = _copy(pristine_store, tmp_path / "store")
    rows = _sql(copy, "SELECT key, namespace, length(value) FROM entries ORDER BY key")
    # Every key of a namespace moved onto the next row of the same namespace (another query).
    by_space: dict[str, list[bytes]] = {}
    for key, space, _ in rows:
        by_space.setdefault(space, []).append(key)
    db = sqlite3.connect(copy / STORE_FILE, isolation_level=None)
    for keys in by_space.values():
        if len(keys) > 1:
            db.execute("UPDATE entries SET key = ? WHERE key = ?", (b"tmp", keys[0]))
            for first, second in zip(keys, keys[1:]):
                db.execute("UPDATE entries SET key = ? WHERE key = ?", (first, second))
            db.execute("UPDATE entries SET key = ? WHERE key = ?", (keys[-1], b"tmp"))
    db.close()
    result, _ = _call_without_exceptions(fflm, SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False,
                                         cache_dir=copy)
    _close(result.scores, plain_fflm)


def _forge(directory: Path, query: bytes, arrays) -> None:
    """Store ``arrays`` for ``query`` with a checksum that holds: only a check of what the query
    needs can refuse it."""
    store = Store(directory, None)
    store.put(SPACE, [(query, arrays)])
    store.close()


def test_a_value_that_does_not_fit_its_query_is_refused_and_replaced(tmp_path):
    query = ids_bytes([5, 6, 7], [8, 9])  # two targets
    _forge(tmp_path, query, (np.zeros(3), None))  # three log-probs
    store = Store(tmp_path, None)
    assert store.get(SPACE, [query], accept=TARGET_LOGPROBS.accepts) == {} and store.recomputed == 1
    assert _sql(tmp_path, "SELECT COUNT(*) FROM entries") == [(0,)]  # deleted, to be replaced
    for wrong in [(np.zeros(2, dtype=np.float32), None), (np.zeros(2), np.zeros(2, dtype=np.int64)),
                  (np.zeros((2, 1)), None), (np.zeros(2),)]:
        _forge(tmp_path, query, wrong)
        assert store.get(SPACE, [query], accept=TARGET_LOGPROBS.accepts) == {}
    _forge(tmp_path, query, (np.array([-1.0, -2.0]), None))
    assert store.get(SPACE, [query], accept=TARGET_LOGPROBS.accepts)[query][0].tolist() == [-1.0, -2.0]
    store.close()


def test_a_stored_value_of_the_wrong_length_gives_the_numbers_without_a_store(pristine_store, plain_fflm,
                                                                             tiny_gpt2_dir, tmp_path):
    """Each FFLM entry rewritten with one log-prob too many and a checksum that holds (what a
    damaged key index can serve): the engine must check the length against its query."""
    copy = _copy(pristine_store, tmp_path / "store")
    db = sqlite3.connect(copy / STORE_FILE, isolation_level=None)
    for key, value in db.execute("SELECT key, value FROM entries").fetchall():
        logprobs, argmax = decode_arrays(value)
        longer = encode_arrays((np.append(logprobs, -1.0), None if argmax is None else np.append(argmax, 0)))
        db.execute("UPDATE entries SET value = ?, checksum = ? WHERE key = ?",
                   (longer, hashlib.sha256(key + longer).digest(), key))
    db.close()
    result, _ = _call_without_exceptions(fflm, SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False,
                                         cache_dir=copy)
    _close(result.scores, plain_fflm)



@pytest.mark.parametrize("change", ["shorter row", "float32 row", "one row too many"])
def test_an_infolm_bag_of_the_wrong_shape_gives_the_numbers_without_a_store(change, tiny_bert_dir, tmp_path):
    """InfoLM's stored bags rewritten with a checksum that holds but a shape its query cannot have:
    read as a miss, recomputed; the numbers are those of a call without a store."""
    from nlgmetrics.infolm import infolm

    options = dict(model=str(tiny_bert_dir), progress=False, temperature=0.25)
    plain = infolm(SUMMARIES, [[d] for d in DOCUMENTS], **options)
    store = tmp_path / "store"
    infolm(SUMMARIES, [[d] for d in DOCUMENTS], cache_dir=store, **options)
    db = sqlite3.connect(store / STORE_FILE, isolation_level=None)
    rows = db.execute("SELECT key, value FROM entries").fetchall()
    assert rows
    for key, value in rows:
        bag = decode_arrays(value)
        bad = {"shorter row": tuple(a[:-1] for a in bag), "float32 row": tuple(a.astype(np.float32) for a in bag),
               "one row too many": bag + bag[:1]}[change]
        blob = encode_arrays(bad)
        db.execute("UPDATE entries SET value = ?, checksum = ? WHERE key = ?", (blob, hashlib.sha256(key + blob).digest(), key))
    db.close()
    again, _ = _call_without_exceptions(infolm, SUMMARIES, [[d] for d in DOCUMENTS], cache_dir=store, **options)
    for spec in plain.scores:
        assert np.allclose(again.scores[spec], plain.scores[spec], rtol=1e-6, atol=1e-9), spec

# ------------------------------------------------------------------------------------------------
# crafted values: refused before anything large is parsed or allocated


def _value(header: bytes, body: bytes = b"") -> bytes:
    return b"NLGS1" + struct.pack("<I", len(header)) + header + body


@pytest.mark.parametrize("header", [
    b'[["<f8", [1e400]]]',  # a shape of infinity
    b'[["<f8", [' + b"9" * 5000 + b"]]]",  # an integer beyond any length
    b'[["<f8", [-1]]]', b'[["<f8", [true]]]', b'[["|O8", [1]]]', b'[["<f8", 3]]', b'{"a": 1}', b"[1]",
    b"[" * 30000 + b"]" * 30000,  # nesting within the header's bound
    b"[" * 100000 + b"]" * 100000,  # nesting 100k deep
    b"[" + b",".join([b'["<f8", [0]]'] * 1_000_000) + b"]",  # 12 MB: a million empty arrays
    b'[["<f8", [1000000000000]]]',  # more than the value holds
])
def test_crafted_headers_are_refused_quickly(header):
    started = time.perf_counter()
    with pytest.raises(ValueError):
        decode_arrays(_value(header, b"\0" * 16))
    assert time.perf_counter() - started < 0.5


def test_sizes_must_add_up_to_the_value():
    blob = encode_arrays([np.zeros(2)])
    with pytest.raises(ValueError):
        decode_arrays(blob + b"\0")
    with pytest.raises(ValueError):
        decode_arrays(blob[:-1])
    assert decode_arrays(blob)[0].tolist() == [0.0, 0.0]
    assert len(encode_arrays([np.zeros(0)] * 5)) < MAX_HEADER_BYTES


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(header=st.one_of(st.binary(max_size=200), st.recursive(
    st.one_of(st.none(), st.integers(), st.floats(), st.text(max_size=5), st.booleans()),
    lambda inner: st.lists(inner, max_size=4), max_leaves=20).map(lambda x: json.dumps(x).encode())),
    body=st.binary(max_size=64))
def test_any_value_decodes_or_is_refused_with_a_value_error(header, body):
    try:
        arrays = decode_arrays(_value(header, body))
    except ValueError:
        return
    assert sum(a.nbytes for a in arrays if a is not None) == len(body)


# ------------------------------------------------------------------------------------------------
# damaged columns: a size holding text, a value holding text


def test_a_size_column_holding_text_does_not_break_eviction(tiny_gpt2_dir, tmp_path, plain_fflm, monkeypatch):
    monkeypatch.setenv("NLGMETRICS_CACHE_MAX_BYTES", "3000")  # eviction on every write
    fflm(SUMMARIES[:2], DOCUMENTS[:2], model=str(tiny_gpt2_dir), progress=False, cache_dir=tmp_path)
    gc.collect()
    _sql(tmp_path, "UPDATE entries SET size = 'abc'")
    result, _ = _call_without_exceptions(fflm, SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False,
                                         cache_dir=tmp_path)
    _close(result.scores, plain_fflm)
    assert _sql(tmp_path, "SELECT COALESCE(SUM(length(value)), 0) FROM entries")[0][0] <= 3000


def test_sizes_holding_text_do_not_break_eviction(tmp_path, monkeypatch):
    """The oldest entries' size column damaged to text; the writes after it go beyond the cap, so
    eviction meets those entries first."""
    monkeypatch.setenv("NLGMETRICS_CACHE_MAX_BYTES", "50000")
    store = open_store(tmp_path)
    for i in range(10):
        store.put(SPACE, [(f"old{i}".encode(), (np.zeros(500),))])  # ~4 kB each: 40 kB
    _sql(tmp_path, "UPDATE entries SET size = 'abc'")
    for i in range(15):
        store.put(SPACE, [(f"new{i}".encode(), (np.zeros(500),))])
        time.sleep(0.002)
    store.close()
    (size,), = _sql(tmp_path, "SELECT SUM(length(value)) FROM entries")
    assert size <= 50_000
    store = open_store(tmp_path)
    assert b"new14" in store.get(SPACE, [b"new14"])
    store.close()


def test_a_value_holding_text_or_a_damaged_total_is_a_miss(tmp_path):
    store = open_store(tmp_path)
    store.put(SPACE, [(b"q", (np.zeros(3),)), (b"r", (np.ones(3),))])
    _sql(tmp_path, "UPDATE entries SET value = 'text', checksum = 'x' WHERE key = ?",
         hashlib.sha256(SPACE.encode() + b"\x00q").digest())
    _sql(tmp_path, "UPDATE settings SET value = 'garbage' WHERE name = 'total_bytes'")
    found = store.get(SPACE, [b"q", b"r"])
    assert list(found) == [b"r"]
    store.put(SPACE, [(b"s", (np.ones(4),))])  # a write reads the damaged total: counted again
    total, counted = _totals(tmp_path)
    assert total == counted
    store.close()


# ------------------------------------------------------------------------------------------------
# the running total: kept by every write, never summed per write


def _totals(directory: Path) -> tuple[int, int]:
    (total,), = _sql(directory, "SELECT value FROM settings WHERE name = 'total_bytes'")
    (counted,), = _sql(directory, "SELECT COALESCE(SUM(length(value)), 0) FROM entries")
    return total, counted


def test_the_running_total_follows_inserts_replaces_deletes_evictions_and_clear(tmp_path):
    store = Store(tmp_path, 40_000)
    rng = np.random.default_rng(0)
    for step in range(60):
        items = [(f"q{rng.integers(30)}".encode(), (np.zeros(int(rng.integers(1, 600))),))
                 for _ in range(int(rng.integers(1, 4)))]
        store.put(SPACE, items)  # new keys, replaced keys (other sizes), evictions beyond 40 kB
        total, counted = _totals(tmp_path)
        assert total == counted and counted <= 40_000
    clear_store(tmp_path)
    assert _totals(tmp_path) == (0, 0)
    store.put(SPACE, [(b"after", (np.zeros(10),))])
    assert _totals(tmp_path)[0] == _totals(tmp_path)[1] > 0
    store.close()


def test_a_write_does_not_sum_the_table(tmp_path):
    store = Store(tmp_path, 10**9)
    store.put(SPACE, [(f"q{i}".encode(), (np.zeros(10),)) for i in range(100)])
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    store.put(SPACE, [(b"one more", (np.zeros(10),))])
    store._db.set_trace_callback(None)
    assert statements and not any("SUM(" in s.upper() for s in statements), statements
    store.close()


# ------------------------------------------------------------------------------------------------
# several jobs: clear, the cap, the log


def test_clear_while_a_job_holds_the_store_keeps_what_the_job_writes_after(tmp_path):
    job = open_store(tmp_path)
    job.put(SPACE, [(b"before", (np.zeros(3),))])
    assert clear_store(tmp_path) >= 0
    assert job.get(SPACE, [b"before"]) == {}  # the job sees the clear
    job.put(SPACE, [(b"after", (np.ones(3),))])
    job.close()
    later = open_store(tmp_path)
    found = later.get(SPACE, [b"before", b"after"])
    assert list(found) == [b"after"] and found[b"after"][0].tolist() == [1.0, 1.0, 1.0]
    assert later._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    later.close()


CLEAR_JOB = textwrap.dedent("""
    import sys, time
    import numpy as np
    from nlgmetrics.engine.store import namespace_of
    from nlgmetrics.engine.store_sharing import open_store
    store = open_store(sys.argv[1])
    space = namespace_of({"what": "integrity-test"})
    store.put(space, [(b"before", (np.zeros(3),))])
    print("ready", flush=True)
    sys.stdin.readline()  # the clear happens now
    store.put(space, [(b"after", (np.ones(3),))])
    store.close()
""")


def test_clear_from_the_command_line_while_a_job_runs_keeps_the_jobs_later_work(tmp_path, capsys):
    from nlgmetrics.apps.cli import main

    job = subprocess.Popen([sys.executable, "-c", CLEAR_JOB, str(tmp_path)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    assert job.stdout.readline().strip() == "ready"
    assert main(["cache", "clear", str(tmp_path)]) == 0
    job.communicate("go\n", timeout=60)
    assert job.returncode == 0
    assert _sql(tmp_path, "SELECT COUNT(*) FROM entries") == [(1,)]
    store = open_store(tmp_path)
    assert list(store.get(SPACE, [b"before", b"after"])) == [b"after"]
    store.close()


def test_clear_deletes_a_file_that_is_not_a_store(tmp_path):
    (tmp_path / STORE_FILE).write_bytes(b"not a database" * 1000)
    assert clear_store(tmp_path) == 14000 and not (tmp_path / STORE_FILE).exists()


def test_the_cap_is_kept_with_the_store_and_another_jobs_variable_evicts_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("NLGMETRICS_CACHE_MAX_BYTES", "1e9")
    first = open_store(tmp_path)  # creates the store: records 1e9
    first.put(SPACE, [(f"first{i}".encode(), (np.zeros(500),)) for i in range(20)])  # ~80 kB
    first.close()
    monkeypatch.setenv("NLGMETRICS_CACHE_MAX_BYTES", "10000")  # another job's small cap
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        other = open_store(tmp_path)
        other.put(SPACE, [(b"other", (np.zeros(500),))])
        other.close()
        open_store(tmp_path).close()  # said once per process and value
    assert _sql(tmp_path, "SELECT COUNT(*) FROM entries") == [(21,)]
    said = [w for w in caught if issubclass(w.category, StoreWarning) and "set-max-bytes" in str(w.message)]
    assert len(said) == 1
    assert _sql(tmp_path, "SELECT value FROM settings WHERE name = 'max_bytes'") == [(10**9,)]

    monkeypatch.delenv("NLGMETRICS_CACHE_MAX_BYTES")
    set_max_bytes(tmp_path, 20_000).close()  # the command's way: applies to every job
    (size,), = _sql(tmp_path, "SELECT SUM(length(value)) FROM entries")
    assert size <= 20_000
    job = open_store(tmp_path)
    assert job.max_bytes == 20_000
    job.put(SPACE, [(f"more{i}".encode(), (np.zeros(500),)) for i in range(10)])
    job.close()
    (size,), = _sql(tmp_path, "SELECT SUM(length(value)) FROM entries")
    assert size <= 20_000


def test_a_cap_set_while_a_job_runs_applies_to_its_next_write(tmp_path):
    job = Store(tmp_path, None)
    job.put(SPACE, [(f"q{i}".encode(), (np.zeros(500),)) for i in range(10)])
    set_max_bytes(tmp_path, 10_000).close()
    job.put(SPACE, [(b"one more", (np.zeros(500),))])
    (size,), = _sql(tmp_path, "SELECT SUM(length(value)) FROM entries")
    assert size <= 10_000 and job.max_bytes == 10_000
    job.close()


def test_a_deleted_log_under_a_running_writer_is_noticed_and_said(tmp_path):
    store = open_store(tmp_path)
    store.put(SPACE, [(b"q", (np.zeros(3),))])
    (tmp_path / f"{STORE_FILE}-wal").unlink()
    with pytest.warns(StoreWarning, match="wal was deleted"):
        store.put(SPACE, [(b"r", (np.zeros(3),))])
    assert not store.writable
    store.close()


@pytest.mark.parametrize("text", ["inf", "1e400", "nan", "abc", "-5", "-inf", "1e19", ""])
def test_a_cap_that_is_not_a_number_of_bytes_is_one_line(text, monkeypatch):
    monkeypatch.setenv("NLGMETRICS_CACHE_MAX_BYTES", text)
    if text == "":
        assert max_bytes_from_env() is None
        return
    with pytest.raises(ValueError, match="NLGMETRICS_CACHE_MAX_BYTES") as caught:
        max_bytes_from_env()
    assert "\n" not in str(caught.value) and "e.g. 5e9" in str(caught.value)


def test_set_max_bytes_from_the_command_line(tmp_path, capsys):
    from nlgmetrics.apps.cli import main

    assert main(["cache", "set-max-bytes", "5e6", str(tmp_path)]) == 0
    assert _sql(tmp_path, "SELECT value FROM settings WHERE name = 'max_bytes'") == [(5_000_000,)]
    assert main(["cache", "set-max-bytes", "inf", str(tmp_path)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------
# a store that can be read but not written


READ_ONLY_JOB = textwrap.dedent("""
    import json, sys, warnings
    from nlgmetrics.engine import load_lm
    from nlgmetrics.fflm import fflm
    model, store, summaries, documents = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
    calls = []
    load_lm(model).model.base_model.register_forward_pre_hook(lambda *a: calls.append(1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hits = fflm(summaries, documents, model=model, progress=False, cache_dir=store).scores
        hit_calls = len(calls)
        fflm(["Something new entirely."], documents[:1], model=model, progress=False, cache_dir=store)
    from nlgmetrics.apps.cli import main
    status = main(["cache", "info", store])
    print(json.dumps({"scores": hits, "calls": hit_calls, "status": status,
                      "warnings": [str(w.message) for w in caught if str(w.message).startswith("nlgmetrics")]}))
""")


def _read_only_command(source: Path, mount: Path, script: list[str]) -> list[str] | None:
    """``script`` run with ``source`` seen read-only at ``mount``: a read-only bind mount in a
    mount namespace of its own for root (which file modes do not stop), the folder's modes for
    anyone else; None where neither is possible."""
    if os.geteuid() != 0:
        os.chmod(source / STORE_FILE, 0o444)
        os.chmod(source, 0o555)
        mount.symlink_to(source)
        return script
    if shutil.which("unshare") is None:
        return None
    mount.mkdir()
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --bind {source} {mount} && "
                            f"mount -o remount,bind,ro {mount}"], capture_output=True)
    if probe.returncode != 0:
        return None
    quoted = " ".join("'" + part.replace("'", "'\\''") + "'" for part in script)
    return ["unshare", "-m", "sh", "-c", f"mount --bind {source} {mount} && mount -o remount,bind,ro {mount} && "
                                         f"exec {quoted}"]


@pytest.mark.slow
def test_a_read_only_store_serves_its_hits_and_says_once_it_will_not_write(pristine_store, plain_fflm,
                                                                           tiny_gpt2_dir, tmp_path):
    source = _copy(pristine_store, tmp_path / "store")
    mount = tmp_path / "read-only"
    command = _read_only_command(source, mount, [
        sys.executable, "-c", READ_ONLY_JOB, str(tiny_gpt2_dir), str(mount), json.dumps(SUMMARIES),
        json.dumps(DOCUMENTS)])
    if command is None:
        pytest.skip("no way to make a read-only folder here")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    report = json.loads(lines[-1])
    info = "\n".join(lines[:-1])
    assert report["calls"] == 0  # every query served from the store
    _close(report["scores"], plain_fflm)
    assert len(report["warnings"]) == 1 and "read-only" in report["warnings"][0], report["warnings"]
    assert report["status"] == 0 and "read-only for this process" in info and "readable" not in info
    assert f"entries: {len(_stored_values(pristine_store))}" in info
