"""Read a user's table (csv, tsv, jsonl/json or parquet) through ``datasets``, with clear errors.

Shared by the generic data set loader (:func:`benchmarks.meta.data.load_table_dataset`) and the
``--scores`` reader (:mod:`benchmarks.meta.user_scores`).

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = path.write_text("doc,system,score\\n1,a,0.5\\n")
>>> table = read_table(path)
>>> table.column_names, table[0]["score"]
(['doc', 'system', 'score'], 0.5)
"""

from __future__ import annotations

import json
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
    if builder != "parquet":
        # pyarrow takes invalid UTF-8 into string columns, and reading such a cell fails later with
        # no file or line: refuse the file here, naming the line.
        problem = _not_utf8(path.read_bytes())
        if problem:
            raise ValueError(f"{path}: {problem}")
    was = datasets.utils.logging.is_progress_bar_enabled()
    verbosity = datasets.utils.logging.get_verbosity()
    datasets.disable_progress_bars()  # keep benchmark logs readable
    # A file it cannot parse makes datasets log its parser's error too: said once, below, instead.
    datasets.utils.logging.set_verbosity(datasets.utils.logging.CRITICAL)
    try:
        return datasets.load_dataset(builder, data_files=str(path), split="train", **kwargs)
    except (datasets.exceptions.DatasetGenerationError, ValueError) as error:
        # datasets says only "An error occurred while generating the dataset" (or passes on a bare
        # UnicodeDecodeError / pyarrow error, both ValueErrors): say where and what.
        raise ValueError(f"{path}: {describe_unreadable(path, error)}") from None
    finally:
        datasets.utils.logging.set_verbosity(verbosity)
        if was:
            datasets.enable_progress_bars()


def describe_unreadable(path: str | os.PathLike, error: BaseException) -> str:
    """What is wrong with a file ``datasets`` could not read: for JSON, the first bad line found by
    reading it again with :mod:`json` (and the fix); else the innermost cause's own message (the
    csv parser names the line).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> _ = path.write_text('{"a": 1}\\n[1, 2]\\n')
    >>> describe_unreadable(path, ValueError("?"))
    'line 2 is a JSON array, not an object; every line must be one JSON object.'
    """
    path = Path(path)
    found = _first_bad_json(path) if path.suffix.lower() in (".jsonl", ".json") else None
    if found is not None:
        return found
    cause = error
    while cause.__cause__ is not None or cause.__context__ is not None:
        cause = cause.__cause__ or cause.__context__
    detail = " ".join(str(cause).split()) or type(cause).__name__
    return f"not a readable {path.suffix.lstrip('.').lower()} table ({detail}); fix the file."


def _first_bad_json(path: Path) -> str | None:
    """The first problem of a JSON (one document) or JSON Lines file, or None if :mod:`json` finds none."""
    raw = path.read_bytes()
    problem = _not_utf8(raw)
    if problem:
        return problem
    text = raw.decode("utf-8")
    if path.suffix.lower() == ".json" and text.lstrip()[:1] == "[":
        return _bad_json_array(text)
    return _bad_json_lines(text)


def _not_utf8(raw: bytes) -> str | None:
    """Which line of ``raw`` is not UTF-8 (and the fix), or None when all of it is."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        return f"line {line} is not UTF-8 text ({error.reason} at byte {error.start}); save the file as UTF-8."
    return None


def _bad_json_array(text: str) -> str | None:
    try:
        rows = json.loads(text)
    except json.JSONDecodeError as error:
        return f"line {error.lineno} column {error.colno}: not valid JSON ({error.msg}); the file must be one JSON array of objects."
    bad = next((i for i, row in enumerate(rows) if not isinstance(row, dict)), None)
    if bad is not None:
        return f"item {bad + 1} of the array is a JSON {_json_kind(rows[bad])}, not an object; every row must be one JSON object."
    return _type_conflict(rows, "item")


def _bad_json_lines(text: str) -> str | None:
    rows, numbers = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue  # blank lines are skipped by the reader too
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            shown = line if len(line) <= 80 else line[:77] + "..."
            return (f"line {number} is not valid JSON ({error.msg} at column {error.colno}): {shown!r}; "
                    f"every line must be one JSON object.")
        if not isinstance(row, dict):
            return f"line {number} is a JSON {_json_kind(row)}, not an object; every line must be one JSON object."
        rows.append(row)
        numbers.append(number)
    return _type_conflict(rows, "line", numbers)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object", type(None): "null"}[type(value)]


def _type_conflict(rows: list[dict], unit: str, numbers: list[int] | None = None) -> str | None:
    """The first row whose column holds another kind of value (string, number, array...) than the
    row that first gave the column one; nulls are missing values and conflict with nothing."""
    numbers = numbers or list(range(1, len(rows) + 1))
    first: dict[str, tuple[str, int]] = {}
    for number, row in zip(numbers, rows):
        for column, value in row.items():
            if value is None:
                continue
            kind = _json_kind(value)
            seen = first.setdefault(column, (kind, number))
            if seen[0] != kind:
                return (f"{unit} {number}: column {column!r} holds a {kind} where {unit} {seen[1]} holds a "
                        f"{seen[0]}; give every row the same kind of value in a column.")
    return None


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
    if value is None:  # what an empty cell, a JSON null or a csv "nan" arrive as
        raise ValueError(f"{where}: no value (an empty cell, null or NaN); every score must be a finite number.")
    if isinstance(value, bool):
        raise ValueError(f"{where}: {value!r} is not a number; every score must be a finite number.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {value!r} is not a number; every score must be a finite number.") from None
    if not math.isfinite(number):
        raise ValueError(f"{where}: {value!r} is not finite; remove the row or give it a finite score.")
    return number
