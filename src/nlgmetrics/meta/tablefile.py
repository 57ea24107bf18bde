"""Read a user's table (csv, tsv, jsonl/json or parquet) through ``datasets``, with clear errors.

Shared by the generic data set loader (:func:`nlgmetrics.meta.data.load_table_dataset`) and the
``--scores`` reader (:mod:`nlgmetrics.meta.user_scores`).

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = path.write_text("doc,system,score\\n1,a,0.5\\n")
>>> table = read_table(path)
>>> table.column_names, table[0]["score"]
(['doc', 'system', 'score'], 0.5)
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

#: File suffix -> ``datasets`` builder (and its keyword arguments).
BUILDERS = {
    ".csv": ("csv", {}),
    ".tsv": ("csv", {"delimiter": "\t"}),
    ".jsonl": ("json", {}),
    ".json": ("json", {}),
    ".parquet": ("parquet", {}),
}


def read_table(path: str | os.PathLike):
    """The file as a ``datasets.Dataset`` (one split), read by the builder its suffix names."""
    import datasets

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; pass the path of a csv, tsv, jsonl/json or parquet file.")
    suffix = path.suffix.lower()
    if suffix not in BUILDERS:
        raise ValueError(f"{path}: unknown file type {suffix!r}; use one of {sorted(BUILDERS)}.")
    builder, kwargs = BUILDERS[suffix]
    was = datasets.utils.logging.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # keep benchmark logs readable
    try:
        return datasets.load_dataset(builder, data_files=str(path), split="train", **kwargs)
    finally:
        if was:
            datasets.enable_progress_bars()


def check_columns(table: Any, columns: list[str], path: str | os.PathLike, what: str) -> None:
    """A clear error naming the missing columns, the columns the file has and the option to fix."""
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise ValueError(
            f"{path}: no column {missing} ({what}); the file has columns {table.column_names}. "
            f"Rename the columns or pass the right names."
        )


def key_part(value: Any) -> str:
    """A key cell as text: ``3``, ``3.0`` and ``"3"`` are the same document id.

    >>> key_part(3.0), key_part(3), key_part(" a ")
    ('3', '3', ' a ')
    """
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def finite_number(value: Any, where: str) -> float:
    """``value`` as a finite float, or a ValueError naming ``where`` (file, row, column)."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{where}: {value!r} is not a number; every score must be a finite number.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {value!r} is not a number; every score must be a finite number.") from None
    if not math.isfinite(number):
        raise ValueError(f"{where}: {value!r} is not finite; remove the row or give it a finite score.")
    return number
