"""What a model needs before it is scored: a config, complete weights, a tokenizer that tokenizes.

``model.save_pretrained(dir)`` alone writes only ``config.json`` and the weights; transformers then
builds a tokenizer with no vocabulary from the config (every text becomes ``[UNK]`` or nothing, so
a metric finds unrelated texts identical). An interrupted copy or download leaves a config without
weights, or truncated weights; transformers then fails deep inside safetensors or torch. A
tokenizer of another model gives ids past the model's embedding table. Each would make every
score wrong or fail without saying why, so these checks refuse them and name the fix. The file
checks read only names, sizes and safetensors headers; the tokenizer check encodes one sentence
(:data:`PROBE_TEXT`) once per model and tokenizer.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "config.json").write_text("{}")
>>> check_weight_files(folder)
Traceback (most recent call last):
...
nlgmetrics.engine.errors.ModelNotFoundError: Model directory ... has config.json but no weights...
>>> from nlgmetrics.testing import load_test_tokenizer
>>> check_tokenizer(load_test_tokenizer("bert"), "tiny-bert", vocab_size=1000, fix="pass another one")
Traceback (most recent call last):
...
ValueError: The tokenizer of 'tiny-bert' gives token id ... but the model's embedding table has 1000 rows...
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

from nlgmetrics.engine.errors import ModelNotFoundError
from nlgmetrics.engine.fingerprints import TOKENIZER_SUFFIXES, WEIGHT_SUFFIXES

SAFETENSORS_INDEX = "model.safetensors.index.json"
SAFETENSORS = "model.safetensors"
PYTORCH_INDEX = "pytorch_model.bin.index.json"
PYTORCH = "pytorch_model.bin"
# Files that hold a tokenizer's vocabulary (tokenizer_config.json and special_tokens_map.json
# alone do not: with them only, transformers builds a tokenizer that knows no words).
VOCABULARY_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "merges.txt")

_HEADER_LIMIT = 100 * 1024 * 1024  # the safetensors format's own cap on the header size
_FIX_WEIGHTS = (
    "Write the model there again with model.save_pretrained(directory) (or finish the copy / "
    "download), or pass another directory or Hub id."
)


def check_config_file(directory: str | os.PathLike) -> None:
    """A model directory must hold ``config.json``."""
    if not (Path(directory) / "config.json").is_file():
        raise ModelNotFoundError(
            f"Directory {os.fspath(directory)!r} has no config.json; pass a directory written by "
            "model.save_pretrained() (config.json and the weights) with its tokenizer."
        )


def _file_list(directory: Path) -> str:
    names = sorted(p.name for p in directory.iterdir() if p.is_file())
    return ", ".join(names) if names else "nothing"


def safetensors_problem(path: str | os.PathLike) -> str | None:
    """Why a safetensors file cannot be complete (truncated, damaged header), or ``None``.

    Reads only the header: its length (8 bytes), then the JSON that gives each tensor's byte
    range; the file must end exactly where the last range ends.
    """
    path = Path(path)
    size = path.stat().st_size
    if size < 8:
        return f"{path.name} is {size} bytes, shorter than a safetensors header: the file is truncated"
    with open(path, "rb") as handle:
        header_length = int.from_bytes(handle.read(8), "little")
        if header_length > _HEADER_LIMIT or 8 + header_length > size:
            return f"{path.name} is {size:,} bytes, too short for the header it announces: the file is truncated or damaged"
        header = handle.read(header_length)
    try:
        tensors = json.loads(header)
        ends = [int(entry["data_offsets"][1]) for key, entry in tensors.items() if key != "__metadata__"]
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, UnicodeDecodeError):
        return f"{path.name} has a damaged header (not a safetensors file, or overwritten)"
    expected = 8 + header_length + max(ends, default=0)
    if size < expected:
        return f"{path.name} is {size:,} bytes, but its header describes {expected:,} bytes: the file is truncated"
    if size > expected:
        return f"{path.name} is {size:,} bytes, more than the {expected:,} its header describes: the file is damaged"
    return None


def _pytorch_problem(path: Path) -> str | None:
    """A zip-format ``torch.save`` file keeps its table of contents at the end: a truncated one has
    none. (Legacy pickle files cannot be checked without reading them.)"""
    with open(path, "rb") as handle:
        zipped = handle.read(4) == b"PK\x03\x04"
    if zipped and not zipfile.is_zipfile(path):
        return f"{path.name} ({path.stat().st_size:,} bytes) is cut short: its zip directory is missing, the file is truncated"
    return None


def weight_files(directory: str | os.PathLike) -> list[Path]:
    """The weight files transformers reads from ``directory`` (safetensors first, as it does).

    Raises :class:`ModelNotFoundError` when there are none, or when a sharded checkpoint's index
    names shards that are missing.
    """
    directory = Path(directory)
    for index_name, single in ((SAFETENSORS_INDEX, SAFETENSORS), (PYTORCH_INDEX, PYTORCH)):
        if (directory / index_name).is_file():
            try:
                shards = sorted(set(json.loads((directory / index_name).read_text())["weight_map"].values()))
            except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
                raise ModelNotFoundError(f"Model directory {str(directory)!r}: {index_name} cannot be read "
                                         f"({error}). {_FIX_WEIGHTS}") from None
            missing = [name for name in shards if not (directory / name).is_file()]
            if missing:
                raise ModelNotFoundError(
                    f"Model directory {str(directory)!r} is incomplete: {index_name} lists {len(shards)} "
                    f"weight shard(s), but {', '.join(missing)} is missing. {_FIX_WEIGHTS}"
                )
            return [directory / name for name in shards]
        if (directory / single).is_file():
            return [directory / single]
    other = sorted(p.name for p in directory.iterdir() if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    found = f" (it has {', '.join(other)}, which load_lm does not read)" if other else ""
    raise ModelNotFoundError(
        f"Model directory {str(directory)!r} has config.json but no weights: no {SAFETENSORS}, "
        f"{SAFETENSORS_INDEX}, {PYTORCH} or {PYTORCH_INDEX}{found}; it holds {_file_list(directory)}. "
        f"A config (or tokenizer) alone was saved, or a copy or download stopped early. {_FIX_WEIGHTS}"
    )


def check_weight_files(directory: str | os.PathLike) -> None:
    """The weights transformers will read are present and not truncated (see :func:`weight_files`)."""
    for path in weight_files(directory):
        problem = safetensors_problem(path) if path.suffix == ".safetensors" else _pytorch_problem(path)
        if problem:
            raise ModelNotFoundError(f"Model directory {os.fspath(directory)!r} has broken weights: {problem}. {_FIX_WEIGHTS}")


def check_tokenizer_files(directory: str | os.PathLike) -> None:
    """``directory`` must hold a tokenizer vocabulary (``tokenizer.json``, ``vocab.txt``,
    ``vocab.json`` / ``merges.txt``, or a SentencePiece / tiktoken model file), unless the caller
    passes ``model_tokenizer=``."""
    if any(p.is_file() and (p.name in VOCABULARY_FILES or p.name.endswith(TOKENIZER_SUFFIXES)) for p in Path(directory).iterdir()):
        return
    raise ModelNotFoundError(
        f"Model directory {os.fspath(directory)!r} has no tokenizer: tokenizer.json is missing (and so "
        "are the other vocabulary files a tokenizer can be read from: vocab.txt, vocab.json + merges.txt, "
        f"a SentencePiece *.model); it holds {_file_list(Path(directory))}. model.save_pretrained() "
        "alone writes only the config and the weights. Save the tokenizer there too "
        "(tokenizer.save_pretrained(directory)), or pass model_tokenizer= (e.g. "
        "AutoTokenizer.from_pretrained(<the model it was trained from>))."
    )


# Words, digits and punctuation: every real vocabulary (any script) has digits and punctuation,
# so a probe where no piece is a known token means the vocabulary is missing.
PROBE_TEXT = "The 3 cats sat on 2 mats, and 1 dog ran home: 1024 steps."


def check_tokenizer(tokenizer: Any, name: str, *, vocab_size: int | None, fix: str) -> None:
    """Raise ``ValueError`` (ending with ``fix``) when ``tokenizer`` cannot encode :data:`PROBE_TEXT`
    into known tokens, or gives ids outside the model's ``vocab_size`` embedding rows;
    ``TypeError`` when it is no tokenizer."""
    try:
        encoded = tokenizer(PROBE_TEXT, add_special_tokens=False)["input_ids"]
    except Exception as error:  # noqa: BLE001 - anything that cannot encode text is not a tokenizer
        raise TypeError(
            f"tokenizer= must be a Hugging Face tokenizer (callable on a text, giving input_ids); "
            f"{type(tokenizer).__name__} failed on a plain sentence: {error!r}"
        ) from None
    ids = [int(i) for i in encoded]
    special = {i for i in (getattr(tokenizer, "all_special_ids", None) or []) if isinstance(i, int)}
    known = [i for i in ids if i not in special]
    if not known:
        what = "no tokens at all" if not ids else f"only special tokens ({tokenizer.convert_ids_to_tokens(ids[:3])}...)"
        raise ValueError(
            f"The tokenizer of {name!r} cannot tokenize ordinary text: {PROBE_TEXT!r} gives {what}; it "
            f"has no vocabulary (it knows {len(tokenizer)} token(s)), so every text would score the same. {fix}"
        )
    if vocab_size is not None and max(ids) >= vocab_size:
        raise ValueError(
            f"The tokenizer of {name!r} gives token id {max(ids)} for ordinary text, but the model's "
            f"embedding table has {vocab_size} rows: the tokenizer belongs to another model. {fix}"
        )
