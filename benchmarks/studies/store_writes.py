"""What one write to the store costs as the store fills: an empty store against stores of 1 GB and
10 GB of synthetic entries.

Each store is filled fast by bulk inserts of random bytes (16 KB values, the size of a few hundred
target log-probs, in the store's own schema, so its running total and triggers are those of a
real store), then opened as a metric call opens it (:class:`~nlgmetrics.engine.store.Store`,
WAL mode) with a cap above its size, and written ``--writes`` times: each write is one work unit
of ``--unit`` new entries (4 KB each), as the engine writes after a unit completes. Reported per
store: the median and 90th percentile seconds of a write, and, for comparison, the seconds of the
``SUM`` over the table that the store ran on every write before it kept its running total.
Finally the same at the cap: a store filled to exactly its cap, so that the first write evicts
(10 % of the cap, once) and the next ones find room.

The files go to ``--dir`` (default: a temporary folder) and are deleted afterwards. The page cache
is warm (the files were just written), so the ``SUM`` column is a lower bound of its cost on a
cold or network disk.

    python -m benchmarks.studies.store_writes --sizes 0,1e9,1e10 --out benchmarks/results/store_writes/store_writes.md
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import harness
from benchmarks.harness import report_head
from nlgmetrics.engine.store import STORE_FILE, Store, encode_arrays, namespace_of

VALUE_BYTES = 16 * 1024
ROWS_PER_TRANSACTION = 20_000


def fill(directory: Path, total_bytes: int, seed: int = 0) -> int:
    """Bulk-insert random 16 KB values into a new store until it holds ``total_bytes``; returns the
    entries written. The schema and triggers come from the store itself."""
    Store(directory, 10**15, journal_mode="DELETE").close()
    rng = np.random.default_rng(seed)
    pool = rng.bytes(64 * 2**20)  # values are windows of this pool: distinct, and cheap to make
    header = encode_arrays([np.zeros((VALUE_BYTES - 40) // 8)])  # a real header and length
    body_bytes = len(header) - header.index(b"]]") - 2
    head = header[: len(header) - body_bytes]
    spaces = [namespace_of({"synthetic": i}) for i in range(4)]
    db = sqlite3.connect(directory / STORE_FILE, isolation_level=None)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    written = stored = 0
    now = time.time() - 10**6
    while stored < total_bytes:
        rows = []
        for _ in range(ROWS_PER_TRANSACTION):
            if stored >= total_bytes:
                break
            start = int(rng.integers(0, len(pool) - body_bytes))
            value = head + pool[start : start + body_bytes]
            key = hashlib.sha256(written.to_bytes(8, "little")).digest()
            rows.append((key, spaces[written % 4], value, hashlib.sha256(key + value).digest(), len(value),
                         now + written))
            written += 1
            stored += len(value)
        db.execute("BEGIN")
        db.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?)", rows)
        db.execute("COMMIT")
    db.close()
    return written


def time_writes(directory: Path, cap: int, writes: int, unit: int) -> list[float]:
    """Seconds of each of ``writes`` puts of ``unit`` new 4 KB entries into the store."""
    Store(directory, None).close()  # an empty store: made here
    db = sqlite3.connect(directory / STORE_FILE, isolation_level=None)  # the store's own cap, set without
    db.execute("UPDATE settings SET value = ? WHERE name = 'max_bytes'", (cap,))  # evicting: the writes do
    db.close()
    store = Store(directory, None)
    space = namespace_of({"benchmark": "writes"})
    rng = np.random.default_rng(1)
    seconds = []
    for w in range(writes):
        items = [(f"write{w}-{i}".encode(), (rng.standard_normal(500),)) for i in range(unit)]
        started = time.perf_counter()
        store.put(space, items)
        seconds.append(time.perf_counter() - started)
    store.close()
    return seconds


def time_old_sum(directory: Path) -> float:
    """Seconds of the SUM over the table that every write ran before the running total."""
    db = sqlite3.connect(directory / STORE_FILE)
    started = time.perf_counter()
    db.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()
    seconds = time.perf_counter() - started
    db.close()
    return seconds


def file_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.glob(f"{STORE_FILE}*"))


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__)
    parser.add_argument("--sizes", default="0,1e9,1e10", help="store sizes in bytes, comma-separated")
    parser.add_argument("--writes", type=int, default=40)
    parser.add_argument("--unit", type=int, default=8, help="entries per write (one work unit)")
    parser.add_argument("--dir", default=None, help="where the stores go (deleted afterwards)")
    args = parser.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    if args.dir:
        Path(args.dir).mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="store-writes-", dir=args.dir))
    rows = []
    try:
        for size in sizes + [max(sizes)]:
            at_cap = len(rows) == len(sizes)
            folder = root / f"store-{size}{'-at-cap' if at_cap else ''}"
            folder.mkdir()
            started = time.perf_counter()
            entries = fill(folder, size) if size else 0
            filled = time.perf_counter() - started
            cap = size if at_cap else 20 * 10**9
            seconds = time_writes(folder, cap, args.writes, args.unit)
            old_sum = time_old_sum(folder)
            row = {"size": size, "entries": entries, "file": file_bytes(folder), "fill_s": filled, "cap": cap,
                   "first": seconds[0], "median": statistics.median(seconds),
                   "p90": sorted(seconds)[int(0.9 * (len(seconds) - 1))], "old_sum": old_sum, "at_cap": at_cap}
            rows.append(row)
            print(row, flush=True)
            shutil.rmtree(folder)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report = format_report(rows, args, harness.command_line("benchmarks.studies.store_writes", argv))
    print(report)
    if args.out:
        harness.write_report(args.out, report)
    return 0


def format_report(rows: list[dict], args: argparse.Namespace, command: str) -> str:
    lines = [
        *report_head("A write's cost as the store fills", "What one store write costs in an empty store and in "
                     "full ones (the store keeps its running total; no write sums the table).", command),
        f"- sqlite {sqlite3.sqlite_version}; warm page cache. Each write: one work unit of {args.unit} new 4 KB "
        f"entries, {args.writes} writes per store.",
        "",
        "| store | entries | on disk | cap | first write | median write | p90 write | old per-write SUM |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        name = f"{r['size'] / 1e9:g} GB" + (" (at its cap)" if r["at_cap"] else "")
        lines.append(f"| {name} | {r['entries']:,} | {r['file'] / 1e9:.2f} GB | {r['cap'] / 1e9:g} GB | "
                     f"{r['first'] * 1e3:.2f} ms | {r['median'] * 1e3:.2f} ms | {r['p90'] * 1e3:.2f} ms | "
                     f"{r['old_sum'] * 1e3:.1f} ms |")
    plain = [r for r in rows if not r["at_cap"]]
    ratio = max(r["median"] for r in plain) / min(r["median"] for r in plain)
    lines += [
        "",
        f"Largest over smallest median write: {ratio:.2f}x (the store reads its running total; no write "
        f"sums the table). The last column is the `SUM` every write ran before; at the cap, the first write "
        f"evicts 10 % of the cap once, and the next ones find room.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
