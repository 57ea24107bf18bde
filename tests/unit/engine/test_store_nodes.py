"""The store in runs of several processes and several nodes: only one process ever opens the store
file, no WAL on a network filesystem, spool files that survive a kill, and a store that every
process uses or none does.

Two ``torch.distributed.run`` launchers on this machine with ``--nnodes 2 --node_rank 0/1`` and a
rendezvous on 127.0.0.1 simulate two nodes."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from nlgmetrics.engine.filesystems import filesystem_type, is_network_filesystem, journal_choice, journal_mode_for
from nlgmetrics.engine.spool import SPOOL_DIR, SpoolWriter, read_records
from nlgmetrics.engine.store import STORE_FILE, StoreWarning, clear_store, encode_arrays, namespace_of
from nlgmetrics.engine.store_sharing import copy_spool, open_store
from nlgmetrics.shannon import shannon_score

DOCUMENTS = [f"Document {i} talks about topic {i}. It has a second sentence {i}. And a third." for i in range(8)]
SUMMARIES = [f"Topic {i} summary." for i in range(8)]

# A cluster node's /proc/mounts: the home and scratch folders are network filesystems.
MOUNTS = textwrap.dedent(
    r"""
    overlay / overlay rw,relatime 0 0
    /dev/nvme0n1p1 /tmp ext4 rw,relatime 0 0
    nas:/export/home /home nfs4 rw,vers=4.2 0 0
    10.0.0.1@o2ib:/scratch /scratch lustre rw,flock 0 0
    beegfs_nodev /mnt/beegfs beegfs rw 0 0
    /dev/gpfs0 /gpfs gpfs rw 0 0
    //server/share /mnt/smb\040share cifs rw 0 0
    user@host:/data /mnt/remote fuse.sshfs rw 0 0
    /dev/sdb1 /scratch/local xfs rw 0 0
    """
)


@pytest.mark.parametrize(("path", "kind", "mode"), [
    ("/home/ada/.cache/nlgmetrics", "nfs4", "DELETE"),
    ("/scratch/project/cache", "lustre", "DELETE"),
    ("/mnt/beegfs/cache", "beegfs", "DELETE"),
    ("/gpfs/cache", "gpfs", "DELETE"),
    ("/mnt/smb share/cache", "cifs", "DELETE"),  # a mount point with a space, escaped as \040
    ("/mnt/remote/cache", "fuse.sshfs", "DELETE"),
    ("/scratch/local/cache", "xfs", "WAL"),  # the longest mount point wins: node-local under Lustre
    ("/tmp/cache", "ext4", "WAL"),
    ("/homework/cache", "overlay", "WAL"),  # /home is not a prefix of /homework
])
def test_network_filesystems_get_the_rollback_journal(path, kind, mode, monkeypatch):
    monkeypatch.delenv("NLGMETRICS_CACHE_FS", raising=False)
    monkeypatch.setattr(os.path, "realpath", lambda p: os.fspath(p))  # the paths are not on this machine
    monkeypatch.setattr(Path, "exists", lambda self: True)
    assert filesystem_type(path, MOUNTS) == kind
    assert is_network_filesystem(kind) == (mode == "DELETE")
    assert journal_mode_for(path, MOUNTS) == mode


def test_the_journal_follows_the_filesystem_and_the_override(tmp_path, monkeypatch):
    monkeypatch.setenv("NLGMETRICS_CACHE_FS", "network")
    store = open_store(tmp_path / "net")
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    store.close()
    monkeypatch.setenv("NLGMETRICS_CACHE_FS", "local")
    store = open_store(tmp_path / "local")
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    monkeypatch.setenv("NLGMETRICS_CACHE_FS", "nfs")
    with pytest.raises(ValueError, match="NLGMETRICS_CACHE_FS='nfs': expected 'network' or 'local'"):
        open_store(tmp_path / "local")


# ------------------------------------------------------------------------------------------------
# spool files


def _spooled(folder: Path, rank: int, items: list[tuple[bytes, float]]) -> SpoolWriter:
    writer = SpoolWriter(folder / SPOOL_DIR, rank)
    for query, value in items:
        writer.append(namespace_of({"what": "spool"}), "spool test", [(query, encode_arrays([np.full(3, value)]))])
    return writer


def _stored(directory: Path) -> dict[bytes, float]:
    store = open_store(directory)
    try:
        found = store.get(namespace_of({"what": "spool"}), [f"q{i}".encode() for i in range(10)])
    finally:
        store.close()
    return {q: float(arrays[0][0]) for q, arrays in found.items()}


def test_a_torn_or_damaged_record_is_not_copied(tmp_path):
    writer = _spooled(tmp_path, 1, [(b"q0", 0.0), (b"q1", 1.0), (b"q2", 2.0)])
    writer.close()
    data = bytearray(writer.path.read_bytes())
    records, end = read_records(writer.path)
    assert [r.query for r in records] == [b"q0", b"q1", b"q2"] and end == len(data)
    # One byte of the second record's query flipped: its checksum (over key and value) fails.
    at = data.index(b"q1")
    data[at + 1] ^= 0x01
    writer.path.write_bytes(bytes(data) + data[-40:-3])  # and a torn record at the end (a kill mid-append)
    records, end = read_records(writer.path)
    assert [r.query for r in records] == [b"q0", b"q2"] and end == len(data)
    os.utime(writer.path, (0, 0))  # abandoned long ago: copied, then deleted
    assert _stored(tmp_path) == {b"q0": 0.0, b"q2": 2.0}
    assert not writer.path.exists()


def test_leftovers_of_a_live_writer_are_copied_but_kept(tmp_path):
    live = _spooled(tmp_path, 1, [(b"q0", 0.0)])  # this process: alive
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout.strip()
    dead = _spooled(tmp_path, 2, [(b"q1", 1.0)])
    dead.close()
    dead_path = dead.path.with_name(dead.path.name.replace(f"~{os.getpid()}~", f"~{dead_pid}~"))
    dead.path.rename(dead_path)
    assert _stored(tmp_path) == {b"q0": 0.0, b"q1": 1.0}
    assert live.path.exists() and not dead_path.exists()
    live.append(namespace_of({"what": "spool"}), "spool test", [(b"q3", encode_arrays([np.full(3, 3.0)]))])
    assert _stored(tmp_path) == {b"q0": 0.0, b"q1": 1.0, b"q3": 3.0}  # what it appended since
    live.close()


def test_the_main_process_decides_from_every_report(tmp_path):
    from nlgmetrics.engine.store_sharing import _decide

    seen = _spooled(tmp_path, 1, []).path.name
    # (has a cache_dir, setup error, problem, spool file name, read-only), by rank
    ok, peer_ok = (True, None, None, None, False), (True, None, None, seen, False)
    assert _decide(tmp_path, [ok, peer_ok]) == (True, False, None)
    assert _decide(tmp_path, [ok, (False, None, None, None, False)])[:2] == (False, False)
    assert _decide(tmp_path, [(True, None, "cannot open", None, False), peer_ok]) == (False, False, "cannot open")
    assert _decide(tmp_path, [ok, (True, None, "no spool", None, False)]) == (False, False, "no spool")
    # A spool file process 0 does not see: the nodes do not share the folder.
    unseen = _decide(tmp_path, [ok, peer_ok, (True, None, None, "elsewhere.spool", False)])
    assert unseen[:2] == (False, False) and "process(es) [2] do not reach" in unseen[2]
    # A store process 0 can read but not write: served to all, and no process needs a spool.
    read_only = (True, None, None, None, True)
    assert _decide(tmp_path, [read_only, (True, None, "no spool", None, False)]) == (True, True, None)


# ------------------------------------------------------------------------------------------------
# clear and the spool files


def _dead_pid() -> str:
    return subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def _as_dead_writer(writer: SpoolWriter) -> Path:
    """``writer``'s file renamed as the file of an exited process of this host."""
    writer.close()
    dead = writer.path.with_name(writer.path.name.replace(f"~{os.getpid()}~", f"~{_dead_pid()}~"))
    writer.path.rename(dead)
    return dead


def _put_directly(directory: Path, query: bytes, value: float) -> None:
    store = open_store(directory)
    store.put(namespace_of({"what": "spool"}), [(query, (np.full(3, value),))])
    store.close()


def test_clear_drops_what_spool_files_held_before_it_and_keeps_what_comes_after(tmp_path):
    """A stopped run's spool file and a running job's records from before the clear never come
    back (the next run copies leftovers in); what the running job appends after it does."""
    _put_directly(tmp_path, b"q5", 5.0)
    live = _spooled(tmp_path, 1, [(b"q0", 0.0)])  # this process: a running job's rank 1
    dead = _as_dead_writer(_spooled(tmp_path, 2, [(b"q1", 1.0)]))
    clear_store(tmp_path)
    live.append(namespace_of({"what": "spool"}), "spool test", [(b"q3", encode_arrays([np.full(3, 3.0)]))])
    assert _stored(tmp_path) == {b"q3": 3.0}  # a run after the clear: copies the leftovers in
    assert not dead.exists() and live.path.exists()
    # The running job's main process copies the whole file at its next lookup: the same.
    store = open_store(tmp_path)
    copy_spool(store, live.path, 0, live.size)
    store.close()
    assert _stored(tmp_path) == {b"q3": 3.0}
    live.append(namespace_of({"what": "spool"}), "spool test", [(b"q4", encode_arrays([np.full(3, 4.0)]))])
    assert _stored(tmp_path) == {b"q3": 3.0, b"q4": 4.0}
    live.close()


def test_a_copy_read_before_a_clear_and_written_after_it_keeps_nothing_of_before(tmp_path, monkeypatch):
    """The check of where a spool file reached at the clear runs in the copy's own transaction."""
    import nlgmetrics.engine.store_sharing as sharing

    live = _spooled(tmp_path, 1, [(b"q0", 0.0), (b"q1", 1.0)])
    store = open_store(tmp_path)
    real_read = sharing.read_records

    def read_then_clear(*args, **kwargs):
        found = real_read(*args, **kwargs)
        clear_store(tmp_path)  # between reading the records and writing them
        return found

    monkeypatch.setattr(sharing, "read_records", read_then_clear)
    assert copy_spool(store, live.path) == live.size
    monkeypatch.setattr(sharing, "read_records", real_read)
    store.close()
    assert _stored(tmp_path) == {}
    live.close()


def test_cache_clear_deletes_a_stopped_runs_spool_files_without_a_store(tmp_path, capsys):
    from nlgmetrics.apps.cli import main

    dead = _as_dead_writer(_spooled(tmp_path, 1, [(b"q0", 0.0)]))
    size = dead.stat().st_size
    assert main(["cache", "clear", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"directory": str(tmp_path), "cleared": True, "bytes_freed": size}
    assert not dead.exists() and not (tmp_path / STORE_FILE).exists()


def test_cache_info_shows_the_spool_the_journal_and_whether_it_writes(tmp_path, capsys, monkeypatch):
    from nlgmetrics.apps.cli import main

    monkeypatch.setenv("NLGMETRICS_CACHE_FS", "network")
    _put_directly(tmp_path, b"q5", 5.0)
    live = _spooled(tmp_path, 1, [(b"q0", 0.0)])
    dead = _as_dead_writer(_spooled(tmp_path, 2, [(b"q1", 1.0), (b"q2", 2.0)]))
    spool = {"files": 2, "bytes": live.size + dead.stat().st_size, "live": 1}
    assert main(["cache", "info", str(tmp_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["spool"], info["journal_mode"], info["writable"]) == (spool, "DELETE", True)
    assert info["journal_why"] == "$NLGMETRICS_CACHE_FS=network"
    # Looked at from a host that would choose WAL: reported as made, and left so.
    monkeypatch.setenv("NLGMETRICS_CACHE_FS", "local")
    assert main(["cache", "info", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "journal: DELETE (set when the store was made; a job on this host opens it in WAL " \
           "($NLGMETRICS_CACHE_FS=local))" in lines
    assert f"spool: 2 files, {spool['bytes']:,} bytes not copied into the store yet (1 still written by " \
           f"running jobs)" in lines
    assert "writable by this process" in lines
    with sqlite3.connect(tmp_path / STORE_FILE) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    live.close()


def test_the_journal_choice_says_why(monkeypatch):
    monkeypatch.delenv("NLGMETRICS_CACHE_FS", raising=False)
    assert journal_choice("/", "server:/ / nfs4 rw 0 0\n") == (
        "DELETE", "network filesystem detected (nfs4): no WAL, whose index holds on one host only")
    assert journal_choice("/", "/dev/sda1 / ext4 rw 0 0\n") == ("WAL", "local filesystem (ext4)")


# ------------------------------------------------------------------------------------------------
# two nodes on this machine


NODE_SCRIPT = textwrap.dedent(
    """
    import json, os, sqlite3, sys, time, warnings
    config = json.loads(open(sys.argv[1]).read())
    rank, log = os.environ.get("RANK", "0"), config["log"]
    tag = f"{rank}.{os.getpid()}"
    open(os.path.join(log, f"pid.{tag}"), "w").write(str(os.getpid()))
    # Which processes open the store file, and how many queries each one computes.
    real_connect = sqlite3.connect
    def connect(path, *args, **kwargs):
        if os.path.basename(str(path)) == "store.sqlite":
            open(os.path.join(log, f"opened.{tag}"), "a").write(str(path) + "\\n")
        return real_connect(path, *args, **kwargs)
    sqlite3.connect = connect
    from nlgmetrics.engine.store import StoredReduction
    real_call = StoredReduction.__call__
    computed = open(os.path.join(log, f"computed.{tag}"), "a")
    def counted(self, logits, query):
        computed.write("1\\n"); computed.flush()
        return real_call(self, logits, query)
    StoredReduction.__call__ = counted
    from nlgmetrics.shannon import shannon_score
    if config["slow"]:  # slow each forward pass down, so that a kill lands in the middle of the run
        from nlgmetrics.engine import load_lm
        load_lm(config["model"]).model.base_model.register_forward_pre_hook(lambda *a: time.sleep(config["slow"]))
    out = {"scores": [], "warnings": [], "errors": []}
    for call in config["calls"]:  # each: this rank's cache_dir, and environment variables per rank
        settings = call.get("env", {}).get(rank, {})
        os.environ.update(settings)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = shannon_score(config["summaries"], config["documents"], model=config["model"],
                                       progress=False, cache_dir=call.get(rank), token_budget=64, chunk_size=1)
                out["scores"].append(result.scores)
                out["errors"].append(None)
            except ValueError as error:
                out["scores"].append(None)
                out["errors"].append(str(error))
        for name in settings:
            del os.environ[name]
        out["warnings"].append([str(w.message) for w in caught if w.category.__name__ == "StoreWarning"])
    json.dump(out, open(os.path.join(log, f"result.{rank}.json"), "w"))
    """
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _environment() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "NLGMETRICS_CACHE_DIR"):
        env.pop(name, None)
    return env


def _prepare(tmp_path: Path, model: Path, calls: list[dict[str, str | None]], slow: float = 0.0, name: str = "run"):
    log = tmp_path / name
    log.mkdir()
    config = log / "config.json"
    config.write_text(json.dumps({"log": str(log), "model": str(model), "slow": slow, "calls": calls,
                                  "documents": DOCUMENTS, "summaries": SUMMARIES}))
    script = tmp_path / "node.py"
    script.write_text(NODE_SCRIPT)
    return script, config, log


def _start_two_nodes(script: Path, config: Path, log: Path) -> list[subprocess.Popen]:
    port = _free_port()
    launchers = []
    for node in (0, 1):
        command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node_rank", str(node),
                   "--nproc_per_node", "1", "--master_addr", "127.0.0.1", "--master_port", str(port),
                   str(script), str(config)]
        output = open(log / f"launcher{node}.log", "w")  # noqa: SIM115 - closed with the process
        launchers.append(subprocess.Popen(command, env=_environment(), stdout=output, stderr=subprocess.STDOUT))
    return launchers


def _wait(launchers: list[subprocess.Popen], log: Path, timeout: float = 240) -> None:
    for node, launcher in enumerate(launchers):
        code = launcher.wait(timeout)
        assert code == 0, (log / f"launcher{node}.log").read_text()[-5000:]


def _lines(log: Path, prefix: str) -> dict[str, int]:
    return {path.name: len(path.read_text().splitlines()) for path in log.glob(f"{prefix}.*")}


def _entries(directory: Path) -> int:
    with sqlite3.connect(directory / STORE_FILE) as db:
        return db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]


def _entries_so_far(directory: Path) -> int:
    try:
        return _entries(directory) if (directory / STORE_FILE).exists() else 0
    except sqlite3.OperationalError:  # created, schema not written yet
        return 0


def _rowids(directory: Path) -> dict[bytes, int]:
    with sqlite3.connect(directory / STORE_FILE) as db:
        return dict(db.execute("SELECT key, rowid FROM entries").fetchall())


def _close(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for column in want:
        np.testing.assert_allclose(got[column], want[column], rtol=1e-5, atol=1e-6, err_msg=column)


@pytest.fixture(scope="module")
def without_store(tiny_gpt2_dir):
    """The oracle: the same call in this one process, with no store at all."""
    return shannon_score(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False,
                         token_budget=64, chunk_size=1).scores


def test_two_nodes_open_the_store_in_one_process(tiny_gpt2_dir, tmp_path, without_store):
    store = tmp_path / "store"
    script, config, log = _prepare(tmp_path, tiny_gpt2_dir, [{"0": str(store), "1": str(store)}] * 2)
    _wait(_start_two_nodes(script, config, log), log)
    opened = _lines(log, "opened")
    assert list(opened) == [next(iter(opened))] and next(iter(opened)).startswith("opened.0."), opened
    for rank in "01":
        out = json.loads((log / f"result.{rank}.json").read_text())
        assert out["warnings"] == [[], []] and out["errors"] == [None, None]
        for scores in out["scores"]:
            _close(scores, without_store)
    # The first call computed every distinct query once, split over both nodes; the second none.
    computed = sum(_lines(log, "computed").values())
    assert computed == _entries(store) > 0
    assert len(_lines(log, "computed")) == 2 and all(_lines(log, "computed").values())
    assert not list((store / SPOOL_DIR).iterdir())  # every spool file copied in and deleted


@pytest.mark.slow
def test_a_store_one_node_cannot_use_is_used_by_none(tiny_gpt2_dir, tmp_path, without_store):
    store = tmp_path / "store"
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    # Node 1 cannot create its spool (its cache_dir is under a file); then node 1 asks for no store;
    # then node 1 alone has a setting it refuses: every process refuses it (none waits on the other).
    calls = [{"0": str(store), "1": str(not_a_folder / "cache")}, {"0": str(store)},
             {"0": str(store), "1": str(store), "env": {"1": {"NLGMETRICS_CACHE_MAX_BYTES": "lots"}}}]
    script, config, log = _prepare(tmp_path, tiny_gpt2_dir, calls)
    _wait(_start_two_nodes(script, config, log), log)
    for rank in "01":
        out = json.loads((log / f"result.{rank}.json").read_text())
        for scores in out["scores"][:2]:
            _close(scores, without_store)
        assert [len(w) for w in out["warnings"]] == [1, 1, 0]
        assert "process 1 cannot create its spool file" in out["warnings"][0][0]
        assert "process(es) [1] have no cache_dir" in out["warnings"][1][0]
        assert out["errors"][:2] == [None, None] and out["scores"][2] is None
        assert out["errors"][2].startswith("process 1: ") and "NLGMETRICS_CACHE_MAX_BYTES='lots'" in out["errors"][2]
    assert _entries_so_far(store) == 0
    assert not (store / SPOOL_DIR).exists() or not list((store / SPOOL_DIR).iterdir())


@pytest.mark.slow
def test_a_killed_two_node_run_resumes_on_one_node(tiny_gpt2_dir, tmp_path, without_store):
    fresh = tmp_path / "fresh"
    script, config, log = _prepare(tmp_path, tiny_gpt2_dir, [{"0": str(fresh)}], name="fresh")
    subprocess.run([sys.executable, str(script), str(config)], env=_environment(), check=True, timeout=240)
    total = _entries(fresh)

    store = tmp_path / "store"
    script, config, log = _prepare(tmp_path, tiny_gpt2_dir, [{"0": str(store), "1": str(store)}], 0.05, "killed")
    launchers = _start_two_nodes(script, config, log)
    deadline = time.time() + 180
    spool = store / SPOOL_DIR

    def spooled() -> int:  # records node 1 finished that are not copied into the store yet
        return sum(len(read_records(path)[0]) for path in spool.glob("*.spool")) if spool.is_dir() else 0

    while time.time() < deadline and all(launcher.poll() is None for launcher in launchers):
        if _entries_so_far(store) >= total // 2 and spooled() > 0:
            break
        time.sleep(0.02)
    assert all(launcher.poll() is None for launcher in launchers), "the run ended before it could be killed"
    for path in log.glob("pid.*"):  # both nodes die at once, workers first
        os.kill(int(path.read_text()), signal.SIGKILL)
    for launcher in launchers:
        launcher.kill()
        launcher.wait()
    kept = _rowids(store)
    spooled_keys = {r.query for path in spool.glob("*.spool") for r in read_records(path)[0]}
    assert spooled_keys and len(kept) >= total // 2

    script, config, log = _prepare(tmp_path, tiny_gpt2_dir, [{"0": str(store)}], name="resumed")
    subprocess.run([sys.executable, str(script), str(config)], env=_environment(), check=True, timeout=240)
    out = json.loads((log / "result.0.json").read_text())
    assert out["warnings"] == [[]] and out["errors"] == [None]
    _close(out["scores"][0], without_store)
    # Only what neither node had finished is computed again: the spooled records count as done.
    computed = sum(_lines(log, "computed").values())
    assert computed == total - len(kept) - len(spooled_keys) > 0
    assert _entries(store) == total
    after = _rowids(store)
    assert {key: after[key] for key in kept} == kept  # nothing kept was rewritten
    assert not list(spool.iterdir())  # the dead run's spool files were copied, then deleted


def test_one_process_writes_directly_and_leaves_no_spool(tiny_gpt2_dir, tmp_path, without_store):
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        result = shannon_score(SUMMARIES, DOCUMENTS, model=str(tiny_gpt2_dir), progress=False,
                               token_budget=64, chunk_size=1, cache_dir=tmp_path)
    _close(result.scores, without_store)
    assert _entries(tmp_path) > 0 and not (tmp_path / SPOOL_DIR).exists()


@pytest.mark.slow
def test_every_lm_metric_with_a_store_under_two_processes_matches_one_without(
        tmp_path, tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir, copy_bert_dir, monkeypatch):
    """Each LM metric twice with a store under torchrun (the second call reads what the first
    wrote, InfoLM's bags included) against the same calls in this process without one."""
    from tests.support.distributed_support import METRIC_CALLS, run_two_vs_one

    # Only the workers (torchrun sets RANK) get the store: this process computes the oracle.
    store = '(os.environ["STORE_NODES_DIR"] if os.environ.get("RANK") else None)'
    body = "".join(text.replace("progress=False)", f"progress=False, cache_dir={store})")
                   + text.replace("progress=False)", f"progress=False, cache_dir={store})").replace('out["', 'out["again_')
                   for text in METRIC_CALLS.values())
    calls = "def run_all(models, data):\n    import os\n    out = {}\n" + body + "    return out\n"
    monkeypatch.setenv("STORE_NODES_DIR", str(tmp_path / "store"))
    run_two_vs_one(tmp_path, calls, tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir, copy_bert_dir)
    assert _entries(tmp_path / "store") > 0 and not list((tmp_path / "store" / SPOOL_DIR).iterdir())
