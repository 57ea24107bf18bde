"""Inputs and outputs of the ``score`` and ``compare`` commands.

:func:`read_column` turns what a user points the CLI at into a list with one item per example: a
string, or (for references) a list of strings when a column holds several references per example.

- ``*.txt`` (or any other suffix not listed below): one text per line. Line breaks inside a text
  cannot be represented; write ``\\n`` escapes and pass ``unescape=True`` (needed for ROUGE-Lsum,
  whose sentences are newline-separated).
- ``*.jsonl``: one JSON value per line; either a string, or an object from which ``column`` is read.
- a directory written by ``save_to_disk`` (``split`` picks one split of a DatasetDict), or a
  ``*.json``, ``*.csv``, ``*.parquet`` file: read with ``datasets``.

Text files must be UTF-8: a leading byte-order mark (Notepad, Excel's "CSV UTF-8") is dropped, as
it is no part of the first text (left in, it would change that example's tokens and score); any
other encoding is an error naming the file, the first bad byte and how to re-encode it.

Then the outputs (:func:`check_output_paths` before any scoring, :func:`write_json`) and the argparse
pieces both commands share (arguments, ``--option`` parsing, counts and seeds).

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


def _check_item(value: Any, where: str, several: bool) -> Text:
    """Accept a string or, where ``several`` texts may make one example (references), a non-empty
    list of strings; say exactly what is wrong otherwise."""
    if isinstance(value, str):
        return value
    if several and isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    wanted = ("a string or a non-empty list of strings (several references for one example)" if several
              else "one string (a prediction or system output)")
    raise ValueError(f"{where} is {type(value).__name__} ({value!r:.60}); each item must be {wanted}.")


#: The UTF-8 byte-order mark some editors (Notepad, Excel's "CSV UTF-8") write first: it is not
#: part of the first text, and left in it would change that example's tokens and score.
BOM = "\ufeff"


def check_utf8(path: Path) -> None:
    """Refuse a file that is not UTF-8, naming the file, where, and the fix (instead of a bare
    UnicodeDecodeError from deep inside a reader). Reads in blocks: any file size."""
    try:
        with path.open(encoding="utf-8") as handle:
            while handle.read(1 << 20):
                pass
    except UnicodeDecodeError:
        read_text_file(path)  # reads the whole file, only to say where the first bad byte is


def read_text_file(path: Path) -> str:
    """The text of a UTF-8 file, without a leading byte-order mark (clear error when not UTF-8)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8").removeprefix(BOM)
    except UnicodeDecodeError as error:
        at, line = error.start, data[: error.start].count(b"\n") + 1
        raise ValueError(f"{path} is not UTF-8 text (byte 0x{data[at]:02x} at offset {at}, line {line}); "
                         f"re-encode it as UTF-8, e.g. `iconv -f latin1 -t utf-8 {path} > {path.stem}.utf8"
                         f"{path.suffix}` (with the file's real encoding instead of latin1).") from None


def _lines(text: str) -> list[str]:
    """Lines as Python's text mode reads them ('\n', '\r\n' or '\r' end a line; not U+2028,
    which a JSON string may hold and ``splitlines`` would split on); a final line end does not
    start an empty last line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _read_jsonl(path: Path, column: str | None, several: bool) -> list[Text]:
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
        items.append(_check_item(value, f"{path}:{number}", several))
    return items


def _choose(origin: Path, what: str, available: list[str], given: str | None, how: str) -> str:
    """``given`` where ``available`` holds it; without one, the only one available."""
    if given is None and len(available) != 1:
        raise ValueError(f"{origin} has {what}s {available}; {how}.")
    if given is not None and given not in available:
        raise ValueError(f"{origin} has no {what} {given!r}; available {what}s: {available}.")
    return available[0] if given is None else given


def _read_dataset(source: Path, column: str | None, split: str | None, several: bool) -> list[Text]:
    """A directory saved with ``save_to_disk``, or a .json/.csv/.parquet file, read with ``datasets``."""
    import datasets

    if source.is_dir():
        try:
            dataset = datasets.load_from_disk(str(source))
        except FileNotFoundError as error:
            raise ValueError(f"{source} is a directory but not a saved `datasets` dataset "
                             f"({error}); pass a .txt/.jsonl file or a directory written by "
                             "Dataset.save_to_disk.") from None
    else:
        if source.suffix != ".parquet":  # datasets itself skips a BOM, but not other encodings
            check_utf8(source)
        dataset = datasets.load_dataset(_DATASETS_BUILDERS[source.suffix], data_files=str(source))
    if isinstance(dataset, dict):  # a DatasetDict: one split of it
        splits = list(dataset)
        dataset = dataset[_choose(source, "split", splits, split, f"choose one with --split (e.g. --split "
                                  f"{splits[0]})")]
    column = _choose(source, "column", dataset.column_names, column, "name the one to read (--*-column)")
    return [_check_item(v, f"{source}[{i}][{column!r}]", several) for i, v in enumerate(dataset[column])]


def read_column(path: str | os.PathLike, column: str | None = None, *, split: str | None = None,
                unescape: bool = False, several: bool = True) -> list[Text]:
    """Read one item per example from ``path`` (see the module docstring for the formats).

    ``column`` names the field of JSON objects / the dataset column (optional when there is only one).
    ``split`` picks the split of a saved ``DatasetDict``. With ``unescape=True``, the two characters
    ``\\n`` become a line break (plain-text files cannot hold line breaks inside one example).
    ``several=False`` refuses an item holding a list (predictions: one text each; references may
    hold several).
    """
    source = Path(path)
    if not source.exists():
        raise ValueError(f"Input {str(source)!r} does not exist; check the path.")
    if source.is_dir() or source.suffix in _DATASETS_BUILDERS:
        items = _read_dataset(source, column, split, several)
    elif source.suffix == ".jsonl":
        items = _read_jsonl(source, column, several)
    else:
        if column is not None:
            raise ValueError(f"{source} is read as plain text (one example per line), which has no columns; "
                             f"drop the column option or use a .jsonl/.json/.csv file.")
        items = _lines(read_text_file(source))  # an empty line in the middle is an example (an empty text)
    if unescape:
        items = [[t.replace("\\n", "\n") for t in item] if isinstance(item, list)
                 else item.replace("\\n", "\n") for item in items]
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
    if len({len(column) for column in columns}) != 1:
        raise ValueError(f"Reference files have different numbers of lines ({[len(c) for c in columns]}); "
                         f"every reference file needs one line per prediction.")
    return [[text for item in items for text in (item if isinstance(item, list) else [item])]
            for items in zip(*columns)]


def write_json(path: str | os.PathLike, payload: Any) -> None:
    """``payload`` as indented JSON with a final newline (NaN refused: it is not JSON)."""
    Path(path).write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n", encoding="utf-8")


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
# argparse pieces of the commands: the arguments `score` and `compare` share, --option, counts, seeds


def add_shared_arguments(inputs: Any, lm: Any, output: Any) -> None:
    """The arguments ``score`` and ``compare`` share, added to their groups of inputs, LM settings and
    output."""
    inputs.add_argument("-r", "--references", action="append", help="references; repeat for several "
                        "references per example (one file each), or use a column holding lists of strings")
    inputs.add_argument("-s", "--sources", help="source documents (for the metrics that read sources)")
    inputs.add_argument("--prediction-column", help="column of the predictions (JSONL / datasets)")
    inputs.add_argument("--reference-column", help="column of the references (string or list of strings)")
    inputs.add_argument("--source-column", help="column of the source documents")
    inputs.add_argument("--unescape-newlines", action="store_true", help=r"turn the two characters \n into "
                        "line breaks (sentence breaks for ROUGE-Lsum in .txt files)")
    lm.add_argument("--device", help="torch device for LM metrics (default: cuda if available, else cpu)")
    lm.add_argument("--cache-dir", metavar="DIR",
                    help="store of the LM metrics: what each model computed is kept in DIR and reused by "
                    "later runs (any number of processes) and by every system compared, recomputing only "
                    "what is missing; numbers unchanged (default: $NLGMETRICS_CACHE_DIR, else no store; "
                    "`nlgmetrics cache info|clear DIR` shows and empties it)")
    output.add_argument("--no-progress", action="store_true", help="no progress bars")
    output.add_argument("--quiet", action="store_true", help="do not print the table")


def split_option(item: str, metric: str | None = None) -> tuple[str, str, str]:
    """``--option METRIC.NAME=VALUE`` as ``(metric, name, value)``; given ``metric``, a bare
    ``NAME=VALUE`` is an option of that metric.

    >>> split_option("bleu.tokenize=intl"), split_option("tokenize=intl", "bleu")
    (('bleu', 'tokenize', 'intl'), ('bleu', 'tokenize', 'intl'))
    """
    key, sep, value = item.partition("=")
    prefix, dot, name = key.strip().partition(".")
    if not sep or not prefix or not (dot or metric):
        raise ValueError(f"--option {item!r}: expected METRIC.NAME=VALUE, e.g. bleu.tokenize=13a.")
    return (prefix, name, value) if dot else (metric or "", prefix, value)


def _int_from(text: str, minimum: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text.strip()}")
    return value


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
    return _int_from(text, 1, "a positive integer")


def seed_or_none(text: str) -> int | None:
    """An argparse type: a random seed (a non-negative integer), or ``none``/``null`` for fresh entropy.

    >>> seed_or_none("7"), seed_or_none("none")
    (7, None)
    """
    if text.strip().lower() in {"none", "null"}:
        return None
    return _int_from(text, 0, "a non-negative integer or none")
