"""Reading texts for the command line: plain text, JSON Lines, and ``datasets`` datasets.

One function, :func:`read_column`, turns what a user points the CLI at into a list with one item per
example. Each item is a string, or (for references) a list of strings when a column holds several
references per example.

Accepted sources:

- ``*.txt`` (or any other suffix not listed below): one text per line. Line breaks inside a text
  cannot be represented; write ``\\n`` escapes and pass ``unescape=True`` (needed for ROUGE-Lsum,
  whose sentences are newline-separated).
- ``*.jsonl``: one JSON value per line; either a string, or an object from which ``column`` is read.
- a directory written by ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk`` (``split`` picks one
  split of a DatasetDict), read with ``datasets.load_from_disk``.
- ``*.json``, ``*.csv``, ``*.parquet``: read with ``datasets.load_dataset(<builder>, data_files=...)``.

Text files must be UTF-8: a leading byte-order mark (Notepad, Excel's "CSV UTF-8") is dropped, as
it is no part of the first text (left in, it would change that example's tokens and score); any
other encoding is an error naming the file, the first bad byte and how to re-encode it.

>>> import json, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "refs.jsonl").write_text(json.dumps({"ref": ["a b", "a c"]}) + "\\n")
>>> read_column(folder / "refs.jsonl", column="ref")
[['a b', 'a c']]
>>> _ = (folder / "preds.txt").write_text("first line\\nsecond line\\n")
>>> read_column(folder / "preds.txt")
['first line', 'second line']
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

Text = Union[str, list[str]]

_DATASETS_BUILDERS = {".json": "json", ".csv": "csv", ".parquet": "parquet"}


def _check_item(value: Any, where: str) -> Text:
    """Accept a string or a non-empty list of strings; say exactly what is wrong otherwise."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError(f"{where} is {type(value).__name__} ({value!r:.60}); each item must be a string or a "
                     f"non-empty list of strings (several references for one example).")


def _unescape(text: Text) -> Text:
    if isinstance(text, list):
        return [t.replace("\\n", "\n") for t in text]
    return text.replace("\\n", "\n")


#: The UTF-8 byte-order mark some editors (Notepad, Excel's "CSV UTF-8") write first: it is not
#: part of the first text, and left in it would change that example's tokens and score.
BOM = "\ufeff"


def _not_utf8(path: Path, data: bytes, position: int, line: int) -> ValueError:
    return ValueError(f"{path} is not UTF-8 text (byte 0x{data[0]:02x} at offset {position}, line {line}); "
                      f"re-encode it as UTF-8, e.g. `iconv -f latin1 -t utf-8 {path} > "
                      f"{path.stem}.utf8{path.suffix}` (with the file's real encoding instead of latin1).")


def check_utf8(path: Path) -> None:
    """Refuse a file that is not UTF-8, naming the file, where, and the fix (instead of a bare
    UnicodeDecodeError from deep inside a reader). Reads in blocks: any file size."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, line = 0, 1
    with path.open("rb") as handle:
        while True:
            block = handle.read(1 << 20)
            try:
                decoder.decode(block, final=not block)
            except UnicodeDecodeError as error:
                start = max(error.start, 0)
                raise _not_utf8(path, block[start:start + 1] or b"\0", offset + start,
                                line + block[:start].count(b"\n")) from None
            if not block:
                return
            offset += len(block)
            line += block.count(b"\n")


def read_text_file(path: Path) -> str:
    """The text of a UTF-8 file, without a leading byte-order mark (clear error when not UTF-8)."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _not_utf8(path, data[error.start:error.start + 1], error.start,
                        data[: error.start].count(b"\n") + 1) from None
    return text.removeprefix(BOM)


def _lines(text: str) -> list[str]:
    """Lines as Python's text mode reads them ('\n', '\r\n' or '\r' end a line; not U+2028,
    which a JSON string may hold and ``splitlines`` would split on); a final line end does not
    start an empty last line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _read_jsonl(path: Path, column: str | None) -> list[Text]:
    items: list[Text] = []
    for number, line in enumerate(_lines(read_text_file(path)), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number} is not valid JSON ({error}).") from None
        if isinstance(value, dict):
            if column is None:
                raise ValueError(f"{path}:{number} holds JSON objects with keys {sorted(value)}; name the "
                                 f"column to read (e.g. --prediction-column {next(iter(value), 'text')}).")
            if column not in value:
                raise ValueError(f"{path}:{number} has no key {column!r}; available keys: {sorted(value)}.")
            value = value[column]
        items.append(_check_item(value, f"{path}:{number}"))
    return items


def _dataset_column(dataset: Any, column: str | None, split: str | None, origin: str) -> list[Text]:
    import datasets

    if isinstance(dataset, (datasets.DatasetDict, dict)):
        splits = list(dataset.keys())
        if split is None:
            if len(splits) != 1:
                raise ValueError(f"{origin} has splits {splits}; choose one with --split (e.g. --split "
                                 f"{splits[0]}).")
            split = splits[0]
        if split not in dataset:
            raise ValueError(f"{origin} has no split {split!r}; available: {splits}.")
        dataset = dataset[split]
    names = list(dataset.column_names)
    if column is None:
        if len(names) != 1:
            raise ValueError(f"{origin} has columns {names}; name the one to read (--*-column).")
        column = names[0]
    if column not in names:
        raise ValueError(f"{origin} has no column {column!r}; available columns: {names}.")
    return [_check_item(v, f"{origin}[{i}][{column!r}]") for i, v in enumerate(dataset[column])]


def read_column(path: str | os.PathLike, column: str | None = None, *, split: str | None = None,
                unescape: bool = False) -> list[Text]:
    """Read one item per example from ``path`` (see the module docstring for the formats).

    ``column`` names the field of JSON objects / the dataset column (optional when there is only one).
    ``split`` picks the split of a saved ``DatasetDict``. With ``unescape=True``, the two characters
    ``\\n`` become a line break (plain-text files cannot hold line breaks inside one example).
    """
    source = Path(path)
    if not source.exists():
        raise ValueError(f"Input {str(source)!r} does not exist; check the path.")
    if source.is_dir():
        import datasets

        try:
            dataset = datasets.load_from_disk(str(source))
        except FileNotFoundError as error:
            raise ValueError(f"{source} is a directory but not a saved `datasets` dataset "
                             f"({error}); pass a .txt/.jsonl file or a directory written by "
                             "Dataset.save_to_disk.") from None
        items = _dataset_column(dataset, column, split, str(source))
    elif source.suffix == ".jsonl":
        items = _read_jsonl(source, column)
    elif source.suffix in _DATASETS_BUILDERS:
        import datasets

        if source.suffix != ".parquet":  # datasets itself skips a BOM, but not other encodings
            check_utf8(source)
        dataset = datasets.load_dataset(_DATASETS_BUILDERS[source.suffix], data_files=str(source),
                                        split=split or "train")
        items = _dataset_column(dataset, column, None, str(source))
    else:
        if column is not None:
            raise ValueError(f"{source} is read as plain text (one example per line), which has no columns; "
                             f"drop the column option or use a .jsonl/.json/.csv file.")
        items = _lines(read_text_file(source))  # an empty line in the middle is an example (an empty text)
    if unescape:
        items = [_unescape(item) for item in items]
    return items


def zip_references(columns: list[list[Text]]) -> list[Text]:
    """Merge several reference files (one reference each per example) into lists per example.

    >>> zip_references([["a", "b"], ["A", "B"]])
    [['a', 'A'], ['b', 'B']]
    >>> zip_references([["a", "b"]])
    ['a', 'b']
    """
    if len(columns) == 1:
        return list(columns[0])
    lengths = {len(column) for column in columns}
    if len(lengths) != 1:
        raise ValueError(f"Reference files have different numbers of lines ({[len(c) for c in columns]}); "
                         f"every reference file needs one line per prediction.")
    return [[text for item in items for text in (item if isinstance(item, list) else [item])]
            for items in zip(*columns)]


def check_output_paths(paths: Mapping[str, str | None]) -> None:
    """Every output file can be written, checked before any scoring starts (a run of an LM metric
    may take hours; failing only when writing its result would lose it)."""
    seen: dict[Path, str] = {}
    for flag, given in paths.items():
        if not given:
            continue
        path = Path(given)
        resolved = path.resolve()
        if resolved in seen:
            raise ValueError(f"{flag} {given} and {seen[resolved]} name the same file; give each its own path.")
        seen[resolved] = f"{flag} {given}"
        if path.is_dir():
            raise ValueError(f"{flag} {given} is a directory; give a file name, e.g. {path / 'scores'}{path.suffix}.")
        parent = path.parent
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"{flag} {given}: {parent} is a file, not a directory; choose another path.")
        if not parent.is_dir():
            raise ValueError(f"{flag} {given}: the directory {parent} does not exist; create it first (mkdir -p {parent}).")
        existed = path.exists()
        try:
            with open(path, "a", encoding="utf-8"):
                pass
        except OSError as error:
            raise ValueError(f"{flag} {given} cannot be written ({error.strerror or error}); choose another path.") from None
        if not existed:
            # Only a check: the file is written after scoring. Under torchrun / accelerate every
            # process checks the same path, so another one may have removed the probe already.
            path.unlink(missing_ok=True)


# ------------------------------------------------------------------------------------------------
# argparse types of the commands' counts and seeds


def positive_int(text: str) -> int:
    """An argparse type: a count (of examples, resamples, trials); 0 or a negative number would
    silently do nothing (or, as a slice, drop examples from the end).

    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a positive integer, got 0
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def seed_or_none(text: str) -> int | None:
    """An argparse type: a random seed (a non-negative integer), or ``none``/``null`` for fresh entropy.

    >>> seed_or_none("7"), seed_or_none("none")
    (7, None)
    """
    if text.strip().lower() in {"none", "null"}:
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer or none, got {text!r}")
    return value
