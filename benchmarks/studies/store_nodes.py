"""The store over two nodes: a run killed at half its entries and resumed on one node.

Two ``torch.distributed.run`` launchers on this machine (``--nnodes 2 --node_rank 0/1``, one
process each, a rendezvous on 127.0.0.1) simulate two nodes scoring Shannon (SmolLM2-135M, the
offline ``smollm2-135m``) on one system's summaries of the ``--docs`` shortest REALSumm documents
with a store (``chunk_size=1``: a lookup per document). Measured:

1. uninterrupted: the same call in one process, into a fresh folder (the entries it ends with,
   the queries it computes, its scores);
2. two nodes, killed (SIGKILL, both workers and both launchers) once the store and the spool
   files together hold half the uninterrupted run's entries: which processes opened
   ``store.sqlite``, the queries each rank computed, what the store and the spool files hold;
3. resumed on one node with one process: the queries it computes, the entries it ends with, and
   the largest |difference| of its scores from the uninterrupted run's.

Work is counted in queries computed (calls of the engine's stored reduction, hooked in each
process). Targets: only process 0 opens the store; resumed work + what the kill kept = the
uninterrupted run's entries (nothing computed twice); the kill loses at most the units in flight;
every distinct query ends as one entry; scores within 1e-5 of the uninterrupted run.

    python -m benchmarks.studies.store_nodes --docs 4 --out benchmarks/results/store_nodes/store_nodes.md
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.harness import ROOT, report_head

DEFAULT_DATA = harness.realsumm_file()
MODEL = "smollm2-135m"


# ------------------------------------------------------------------------------------------------
# the worker: one process of a run (under torchrun, or alone)


def worker(config_path: str) -> None:
    """Shannon on the configured slice into the configured folder, instrumented: each process
    logs whether it opened ``store.sqlite`` and appends a line per query it computes."""
    import sqlite3 as sqlite

    config = json.loads(Path(config_path).read_text())
    log = Path(config["log"])
    tag = f"{os.environ.get('RANK', '0')}.{os.getpid()}"
    (log / f"pid.{tag}").write_text(str(os.getpid()))
    real_connect = sqlite.connect

    def connect(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.path.basename(str(path)) == "store.sqlite":
            with (log / f"opened.{tag}").open("a") as handle:
                handle.write(f"{path}\n")
        return real_connect(path, *args, **kwargs)

    sqlite.connect = connect
    from nlgmetrics.engine.store import StoredReduction

    computed = (log / f"computed.{tag}").open("a")
    real_call = StoredReduction.__call__

    def counted(self: StoredReduction, logits: Any, query: Any) -> Any:
        computed.write("1\n")
        computed.flush()
        return real_call(self, logits, query)

    StoredReduction.__call__ = counted  # type: ignore[method-assign]
    from nlgmetrics.shannon import shannon_score

    start = time.perf_counter()
    result = shannon_score(config["summaries"], config["documents"], model=MODEL, progress=False,
                           cache_dir=config["store"], chunk_size=1)
    seconds = time.perf_counter() - start
    if os.environ.get("RANK", "0") == "0":
        (log / "result.json").write_text(json.dumps({"scores": result.scores, "seconds": seconds}))


# ------------------------------------------------------------------------------------------------
# the phases


def _environment() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "NLGMETRICS_CACHE_DIR"):
        env.pop(name, None)
    return env


def _phase_folder(scratch: Path, name: str, store: Path, documents: list[str], summaries: list[str]) -> Path:
    log = scratch / name
    log.mkdir()
    (log / "config.json").write_text(json.dumps({"log": str(log), "store": str(store), "documents": documents,
                                                 "summaries": summaries}))
    return log


def _worker_command(log: Path) -> list[str]:
    return ["-m", "benchmarks.studies.store_nodes", "--worker", str(log / "config.json")]


def _one_process(log: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *_worker_command(log)], cwd=ROOT, env=_environment(), check=True,
                   capture_output=True, timeout=600)
    return time.perf_counter() - start


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _two_nodes(log: Path) -> list[subprocess.Popen]:
    port = _free_port()
    launchers = []
    for node in (0, 1):
        command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node_rank", str(node),
                   "--nproc_per_node", "1", "--master_addr", "127.0.0.1", "--master_port", str(port),
                   *_worker_command(log)]
        with (log / f"launcher{node}.log").open("w") as output:
            launchers.append(subprocess.Popen(command, cwd=ROOT, env=_environment(), stdout=output,
                                              stderr=subprocess.STDOUT))
    return launchers


def _entries(store: Path) -> int:
    if not (store / "store.sqlite").exists():
        return 0
    try:
        with sqlite3.connect(store / "store.sqlite") as db:
            return db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    except sqlite3.OperationalError:  # created, schema not written yet
        return 0


def _spooled(store: Path) -> set[tuple[str, bytes]]:
    from nlgmetrics.engine.spool import SPOOL_DIR, read_records

    folder = store / SPOOL_DIR
    if not folder.is_dir():
        return set()
    keys: set[tuple[str, bytes]] = set()
    for path in folder.glob("*.spool"):
        try:
            keys |= {(r.namespace, r.query) for r in read_records(path)[0]}
        except OSError:  # deleted between the listing and the read
            pass
    return keys


def _counts(log: Path, prefix: str) -> dict[str, int]:
    """Lines per process (``rank.pid``) of the worker's ``prefix`` files."""
    return {path.name.split(".", 1)[1]: len(path.read_text().splitlines()) for path in sorted(log.glob(f"{prefix}.*"))}


def _max_abs_diff(got: dict[str, list[float]], want: dict[str, list[float]]) -> float:
    return max(abs(a - b) for column in want for a, b in zip(got[column], want[column]))


def run(n_docs: int, data: str, scratch: Path, poll_s: float = 0.02) -> dict[str, Any]:
    from benchmarks.studies.store import DEFAULT_SYSTEMS, shortest_slice

    chosen = shortest_slice(data, n_docs, DEFAULT_SYSTEMS[0], DEFAULT_SYSTEMS[0])
    documents, summaries = chosen.documents, chosen.summaries_a

    full_store = scratch / "uninterrupted-store"
    full_log = _phase_folder(scratch, "uninterrupted", full_store, documents, summaries)
    full_wall = _one_process(full_log)
    full = json.loads((full_log / "result.json").read_text())
    total = _entries(full_store)

    store = scratch / "store"
    killed_log = _phase_folder(scratch, "killed", store, documents, summaries)
    start = time.perf_counter()
    launchers = _two_nodes(killed_log)
    while all(launcher.poll() is None for launcher in launchers):
        if _entries(store) + len(_spooled(store)) >= total / 2 or time.perf_counter() - start > 3 * full_wall + 60:
            break
        time.sleep(poll_s)
    killed_by_us = all(launcher.poll() is None for launcher in launchers)
    for path in killed_log.glob("pid.*"):  # both nodes die at once: the workers, then the launchers
        try:
            os.kill(int(path.read_text()), signal.SIGKILL)
        except ProcessLookupError:
            pass
    for launcher in launchers:
        launcher.kill()
        launcher.wait()
    killed_wall = time.perf_counter() - start
    in_store, spooled = _entries(store), _spooled(store)
    killed_computed = _counts(killed_log, "computed")

    resumed_log = _phase_folder(scratch, "resumed", store, documents, summaries)
    resume_wall = _one_process(resumed_log)
    resumed = json.loads((resumed_log / "result.json").read_text())
    return {
        "docs": n_docs, "doc_ids": chosen.doc_ids, "system": DEFAULT_SYSTEMS[0],
        "uninterrupted": {"wall": full_wall, "call_s": full["seconds"], "entries": total,
                          "computed": sum(_counts(full_log, "computed").values())},
        "killed": {"wall": killed_wall, "killed_by_signal": killed_by_us, "opened": _counts(killed_log, "opened"),
                   "computed": killed_computed, "in_store": in_store, "spooled": len(spooled)},
        "resumed": {"wall": resume_wall, "call_s": resumed["seconds"], "computed": sum(_counts(resumed_log, "computed").values()),
                    "opened": _counts(resumed_log, "opened"), "entries": _entries(store),
                    "spool_files_left": len(list((store / "spool").glob("*.spool"))) if (store / "spool").is_dir() else 0},
        "max_abs_diff": _max_abs_diff(resumed["scores"], full["scores"]),
    }


# ------------------------------------------------------------------------------------------------
# the report


def render(r: dict[str, Any], command: str) -> str:
    full, killed, resumed = r["uninterrupted"], r["killed"], r["resumed"]
    kept = killed["in_store"] + killed["spooled"]
    killed_total = sum(killed["computed"].values())
    lost = killed_total - kept
    only_rank0 = bool(killed["opened"]) and all(tag.startswith("0.") for tag in killed["opened"])
    checks = [
        ("only process 0 (node 0) opened store.sqlite in the two-node run", only_rank0,
         f"opened by rank.pid {sorted(killed['opened'])}"),
        ("resumed work + kept at the kill = the uninterrupted run's entries (nothing computed twice)",
         resumed["computed"] + kept == full["entries"], f"{resumed['computed']} + {kept} vs {full['entries']}"),
        ("every distinct query ends as one entry", resumed["entries"] == full["entries"],
         f"{resumed['entries']} vs {full['entries']}"),
        ("no spool file left after the resume", resumed["spool_files_left"] == 0, str(resumed["spool_files_left"])),
        ("scores within 1e-5 of the uninterrupted run", r["max_abs_diff"] <= 1e-5, f"max |diff| {r['max_abs_diff']:.3g}"),
    ]
    lines = [
        *report_head("The store over two nodes: killed at half, resumed on one node",
                     __doc__.split("\n\n")[0].replace("\n", " "), command),
        f"- data: REALSumm, the {r['docs']} shortest documents (doc_ids {r['doc_ids']}), system `{r['system']}`; "
        f"Shannon with SmolLM2-135M (`{MODEL}`, float32, CPU), `chunk_size=1`",
        "- two nodes: two `python -m torch.distributed.run --nnodes 2 --node_rank 0|1 --nproc_per_node 1 "
        "--master_addr 127.0.0.1` launchers on this machine, gloo on CPU",
        "- work: queries computed (the engine's stored reduction, one call per distinct query computed), "
        "counted in each process",
        "",
        "| phase | processes | wall s | queries computed | store entries after | spool records after |",
        "|---|---|---:|---:|---:|---:|",
        f"| uninterrupted | 1 | {full['wall']:.1f} | {full['computed']} | {full['entries']} | 0 |",
        f"| two nodes, killed{'' if killed['killed_by_signal'] else ' (ended before the kill)'} | 2 (1 per node) | "
        f"{killed['wall']:.1f} | {killed_total} ({', '.join(f'rank.pid {k}: {v}' for k, v in killed['computed'].items())}) | "
        f"{killed['in_store']} | {killed['spooled']} |",
        f"| resumed on one node | 1 | {resumed['wall']:.1f} | {resumed['computed']} | {resumed['entries']} | "
        f"{resumed['spool_files_left']} files |",
        "",
        f"- kept at the kill: {killed['in_store']} entries in the store (written by process 0, and node 1's "
        f"records copied in at each lookup) + {killed['spooled']} records in node 1's spool file = {kept}; "
        f"computed by the killed run but lost (the units in flight at the kill): {lost}",
        f"- resumed + killed work: {resumed['computed']} + {killed_total} = {resumed['computed'] + killed_total} "
        f"queries vs {full['computed']} uninterrupted",
        f"- wall seconds include each process's start and SmolLM2 load (uninterrupted call itself: "
        f"{full['call_s']:.1f} s; resumed call: {resumed['call_s']:.1f} s)",
        "",
        "| check | result | measured |",
        "|---|---|---|",
        *[f"| {name} | {'met' if ok else '**missed**'} | {detail} |" for name, ok, detail in checks],
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--docs", type=int, default=4, help="the N shortest REALSumm documents")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the raw measurements here (not under benchmarks/results/, whose "
                             "*.json files are meta-evaluation records)")
    parser.add_argument("--worker", default=None, metavar="CONFIG", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return
    command = harness.command_line("benchmarks.studies.store_nodes", argv)
    with tempfile.TemporaryDirectory() as scratch:
        result = run(args.docs, args.data, Path(scratch))
    report = render(result, command)
    print(report)
    if args.out:
        harness.write_report(args.out, report)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
