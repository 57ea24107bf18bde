"""Scores a user already has (``--scores FILE``): per-example metric columns joined on the dataset's keys.

The file (csv, tsv, jsonl/json or parquet, read by ``datasets``) has the key columns of the
dataset (:data:`benchmarks.meta.data.KEY_COLUMNS`: ``doc_id, system_type, system`` for REALSumm,
``sample_id, system`` for WebNLG 2020, the ``--doc-key``/``--system-key`` columns for a
``--data`` file) and one column per metric, **higher = better** (negate a distance first).
Every row must join one output of the dataset; outputs without a row get no score, and the tables
then keep only the outputs every metric scored (reported as dropped examples).

>>> import pathlib, tempfile
>>> from benchmarks.meta.data import Example
>>> path = pathlib.Path(tempfile.mkdtemp()) / "mine.csv"
>>> _ = path.write_text("sample_id,system,mine\\n1,A,0.5\\n")
>>> exs = [Example(("1", "A"), "1", "A", "all", "", (), "", {}), Example(("2", "A"), "2", "A", "all", "", (), "", {})]
>>> scores, info = read_scores_file(path, "webnlg2020", ("sample_id", "system"), exs)
>>> scores, info["n_rows"], info["n_examples_without_score"]
({'mine': [0.5, nan]}, 1, 1)
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path
from typing import Any

from benchmarks.meta.data import Example, key_from_parts
from benchmarks.meta.tablefile import check_columns, finite_number, key_cells, read_table


def read_scores_file(
    path: str | os.PathLike,
    dataset: str,
    key_columns: tuple[str, ...],
    examples: list[Example],
    columns: list[str] | None = None,
    reserved: set[str] | frozenset[str] = frozenset(),
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """``({column: [score per example, nan where the file has none]}, info)``.

    ``columns``: the metric columns to read (default: every column that is not a key);
    ``reserved``: names already taken by other metrics (a clash is an error, not a silent overwrite).
    Errors (ValueError) name the file, the row and the fix: missing key columns, a duplicate key,
    a row that joins no output of the dataset, a non-numeric or non-finite score.
    """
    path = Path(path)
    table = read_table(path)
    check_columns(table, list(key_columns), path, f"the key columns of {dataset!r}")
    if columns is None:
        columns = [c for c in table.column_names if c not in key_columns]
    else:
        check_columns(table, list(columns), path, "--score-columns")
    if not columns:
        raise ValueError(f"{path}: no score column besides the keys {list(key_columns)}; add one column per metric.")
    clash = sorted(set(columns) & set(reserved))
    if clash:
        raise ValueError(f"{path}: columns {clash} have the names of metrics of this run; rename them in the file.")
    index = {e.key: i for i, e in enumerate(examples)}
    out = {c: [math.nan] * len(examples) for c in columns}
    seen: dict[tuple[str, ...], int] = {}
    unjoined: list[str] = []
    ids = key_cells(table, path, list(key_columns))  # texts as written: "007" is not "7"
    for row_number, row in enumerate(table, start=1):
        parts = tuple(ids[k][row_number - 1] for k in key_columns)
        key = key_from_parts(dataset, parts)  # a tuple: ids holding "|" join as they are
        where = f"{path} row {row_number} ({', '.join(f'{k}={v!r}' for k, v in zip(key_columns, parts))})"
        if key in seen:
            raise ValueError(f"{where}: the same key as row {seen[key]}; each output must have one row.")
        seen[key] = row_number
        if key not in index:
            unjoined.append(where)
            continue
        for c in columns:
            out[c][index[key]] = finite_number(row[c], f"{where} column {c!r}")
    if unjoined:
        shown = "; ".join(unjoined[:5]) + (f"; and {len(unjoined) - 5} more" if len(unjoined) > 5 else "")
        raise ValueError(
            f"{len(unjoined)} rows join no output of {dataset!r} ({len(examples)} outputs loaded; with --max-docs only "
            f"those documents): {shown}. Check the key values and the --datasets/--data choice."
        )
    digest = hashlib.sha1(path.read_bytes()).hexdigest()[:12]
    info = {
        "file": str(path),
        "sha1": digest,
        "columns": columns,
        "key_columns": list(key_columns),
        "n_rows": len(seen),
        "n_examples_without_score": len(examples) - len(seen),
    }
    return out, info
