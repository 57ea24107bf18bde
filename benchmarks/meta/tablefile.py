"""Read a user's table (csv, tsv, jsonl/json or parquet) through ``datasets``, with clear errors.

Shared by the generic data set loader (:func:`benchmarks.meta.data.load_table_dataset`) and the
``--scores`` reader (:mod:`benchmarks.meta.user_scores`).

Text columns (outputs, references, sources) are read as the user wrote them (:func:`text_cells`,
:func:`as_text`): a number is a text, never a number's rendering by a reader that typed the
column. In csv/tsv a cell is its characters (``0.50`` stays ``0.50``, ``007`` stays ``007``;
``NA``, ``null`` and ``nan`` are texts, not missing values); only an empty cell is missing, since
a csv cannot tell an empty text from a missing one. In JSON a number is its literal in the file
(``1.0`` is ``"1.0"``, ``1`` is ``"1"``, ``1e3`` is ``"1e3"``); ``null`` (and Python's ``NaN``)
is missing and ``""`` is the empty text. Parquet columns are typed by their writer: an integer is its digits, a float
Python's shortest repr (``1.0`` is ``"1.0"``). A missing text or key is refused, naming the file,
the row and the column.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = path.write_text("doc,system,score\\n1,a,0.5\\n")
>>> table = read_table(path)
>>> table.column_names, table[0]["score"]
(['doc', 'system', 'score'], 0.5)
"""

from __future__ import annotations

import functools
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


#: How a table with no rows is refused (the data table and a ``--scores`` file alike).
NO_ROWS_FIX = "the table needs one row per (document, system) output"


def read_table(path: str | os.PathLike):
    """The file as a ``datasets.Dataset`` (one split), read by the builder its suffix names."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; pass the path of a csv, tsv, jsonl/json or parquet file.")
    suffix = path.suffix.lower()
    if suffix not in BUILDERS:
        raise ValueError(f"{path}: unknown file type {suffix!r}; use one of {sorted(BUILDERS)}.")
    builder, kwargs = BUILDERS[suffix]
    if builder != "parquet":
        raw = path.read_bytes()
        # pyarrow takes invalid UTF-8 into string columns, and reading such a cell fails later with
        # no file or line: refuse the file here, naming the line.
        problem = _not_utf8(raw)
        if problem:
            raise ValueError(f"{path}: {problem}")
        if not raw.strip():
            # datasets ends an empty JSON Lines file in a bare StopIteration, an empty csv in a
            # parser message: say what it is.
            raise ValueError(f"{path}: no rows (the file is empty); {NO_ROWS_FIX}.")
    table = _load(path, builder, kwargs)
    if len(table) == 0:
        raise ValueError(f"{path}: no rows (the file holds none); {NO_ROWS_FIX}.")
    return table


def _load(path: Path, builder: str, kwargs: dict[str, Any]):
    """``datasets.load_dataset`` of one local file, quietly, its failures as one ValueError."""
    import datasets

    was = datasets.utils.logging.is_progress_bar_enabled()
    verbosity = datasets.utils.logging.get_verbosity()
    datasets.disable_progress_bars()  # keep benchmark logs readable
    # A file it cannot parse makes datasets log its parser's error too: said once, below, instead.
    datasets.utils.logging.set_verbosity(datasets.utils.logging.CRITICAL)
    try:
        return datasets.load_dataset(builder, data_files=str(path), split="train", **kwargs)
    except StopIteration:  # what datasets raises for a file without a single row
        raise ValueError(f"{path}: no rows (the file holds none); {NO_ROWS_FIX}.") from None
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
    found = _first_bad_json(path) if path.suffix.lower() in (".jsonl", ".json") else _csv_without_rows(path)
    if found is not None:
        return found
    cause = error
    while cause.__cause__ is not None or cause.__context__ is not None:
        cause = cause.__cause__ or cause.__context__
    detail = " ".join(str(cause).split()) or type(cause).__name__
    return f"not a readable {path.suffix.lstrip('.').lower()} table ({detail}); fix the file."


def _csv_without_rows(path: Path) -> str | None:
    """``no rows (...)`` for a csv/tsv of a header line alone (datasets says only that its split
    "corresponds to no data"), else None."""
    if path.suffix.lower() not in (".csv", ".tsv"):
        return None
    raw = path.read_bytes()
    if _not_utf8(raw) is not None:
        return None
    lines = [line for line in raw.decode("utf-8").splitlines() if line.strip()]
    return f"no rows (only a header line); {NO_ROWS_FIX}." if len(lines) == 1 else None


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
    if isinstance(rows, list) and not rows:
        return f"no rows (an empty JSON array); {NO_ROWS_FIX}."
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
    if not rows:
        return f"no rows (the file has only blank lines); {NO_ROWS_FIX}."
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


def key_part(value: Any, where: str = "a key") -> str:
    """A key cell (from :func:`key_cells`) as its text; a missing one (an empty csv cell, null, NaN)
    is a ValueError naming ``where`` (file, row, column).

    Ids are texts as written, like every other text: ``007`` and ``7``, ``1.1`` and ``1.10``, ``0.50``
    and ``0.5`` are different ids (a reader that typed the column would merge them). Only a cell a
    typed reader hands over (parquet) is rendered: an integer-valued float as its digits.

    >>> key_part("007"), key_part("1.10"), key_part(3.0), key_part(3), key_part(" a ")
    ('007', '1.10', '3', '3', ' a ')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        # Written as "None" it would join with any other missing id and name no one's output.
        raise ValueError(f"{where}: no value (null or an empty cell); every row needs this id: fill it in or "
                         f"remove the row.")
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def key_cells(table: Any, path: str | os.PathLike, columns: list[str]) -> dict[str, list[str]]:
    """Each of the key ``columns`` as the user wrote it, row by row (see :func:`text_cells`; a
    missing id is a ValueError naming the file, row and column).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "k.csv"
    >>> _ = path.write_text("doc,system\\n007,a\\n7,a\\n")
    >>> key_cells(read_table(path), path, ["doc"])
    {'doc': ['007', '7']}
    """
    cells = text_cells(table, path, columns)
    return {c: [key_part(v, f"{path} row {i + 1} column {c!r}") for i, v in enumerate(values)]
            for c, values in cells.items()}


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


def is_csv(path: str | os.PathLike) -> bool:
    """Whether ``path`` is read as csv/tsv (where an empty cell is the only way to leave a value out)."""
    return BUILDERS.get(Path(path).suffix.lower(), ("",))[0] == "csv"


def text_cells(table: Any, path: str | os.PathLike, columns: list[str]) -> dict[str, list[Any]]:
    """Each of ``columns`` (text columns of ``table``, read from ``path``) as the user wrote it, row
    by row, for :func:`as_text`: what the typed table holds would be the reader's rendering of a
    number column (csv ``0.50`` read as 0.5, JSON ``1`` in a column with ``1.0`` read as 1.0).

    csv/tsv: the cells read again as plain strings (the same parser, no missing-value markers: an
    empty cell is ``""``). JSON: where a column holds a number, the file read again with
    :mod:`json`, numbers kept as their literals. Otherwise (string columns, parquet): the table's cells.
    """
    path = Path(path)
    columns = list(dict.fromkeys(columns))
    if not columns:
        return {}
    if is_csv(path):
        builder, kwargs = BUILDERS[path.suffix.lower()]
        raw = _load(path, builder, {**kwargs, "usecols": columns, "na_filter": False,
                                    "converters": {c: str for c in columns}})
        cells = {c: list(raw[c]) for c in columns}
    else:
        cells = {c: list(table[c]) for c in columns}
        numeric = [c for c in columns if any(_holds_number(v) for v in cells[c])]
        if numeric and path.suffix.lower() in (".jsonl", ".json"):
            cells.update(_json_literals(path, numeric, len(table)))
    if any(len(v) != len(table) for v in cells.values()):  # the same parser read the same rows: a bug
        raise RuntimeError(f"{path}: the text columns read again have other rows than the table")
    return cells


def _holds_number(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_holds_number(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _json_literals(path: Path, columns: list[str], n_rows: int) -> dict[str, list[Any]]:
    """``columns`` of a JSON / JSON Lines file with every number as its literal (a str)."""
    text = path.read_text(encoding="utf-8")
    loads = functools.partial(json.loads, parse_int=str, parse_float=str, parse_constant=lambda _: None)
    try:
        if path.suffix.lower() == ".json" and text.lstrip()[:1] == "[":
            rows = loads(text)
        else:
            rows = [loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError:
        rows = None
    if not isinstance(rows, list) or len(rows) != n_rows or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{path}: the numbers in columns {columns} cannot be read as written (the file is not one "
                         f"JSON object per line or one array of objects); write those texts as JSON strings.")
    return {c: [row.get(c) for row in rows] for c in columns}


def as_text(value: Any, where: str, empty_is_missing: bool = False) -> str:
    """A text cell (from :func:`text_cells`) as the text, or a ValueError naming ``where`` (file,
    row, column) and the fix: a missing value, a csv's empty cell (``empty_is_missing``), a boolean
    or anything else that is not a text or a number.

    >>> as_text("0", "f row 1 column 'out'"), as_text(7, "w"), as_text(1.0, "w")
    ('0', '7', '1.0')
    >>> as_text(None, "f row 2 column 'out'")
    Traceback (most recent call last):
    ...
    ValueError: f row 2 column 'out': no value (null or an empty cell); every row needs this text: fill it in or remove the row.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise ValueError(f"{where}: no value (null or an empty cell); every row needs this text: fill it in or "
                         f"remove the row.")
    if isinstance(value, str):
        if empty_is_missing and not value:
            raise ValueError(f"{where}: an empty cell; a csv cannot tell an empty text from a missing one: fill it in, "
                             f"remove the row, or write the table as JSON Lines with \"\" for an empty text.")
        return value
    if isinstance(value, bool):
        raise ValueError(f"{where}: a boolean ({json.dumps(value)}) is not a text; write the text as a string "
                         f"(in JSON: in quotes).")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # a typed (parquet) column: the shortest text that reads back as this float
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise ValueError(f"{where}: {shown} is not a text; give one text per cell.")
