"""What a model's weights are: a fingerprint for result signatures, a stamp for the load cache.

A *fingerprint* identifies the weights, config and tokenizer that produced a score; its guarantee
is **equal fingerprints ⇒ equal files** (up to a 48-bit prefix of sha256: an accidental match is a
one-in-2^48 event). Each kind of source gets the cheapest key that keeps that guarantee:

- a Hub snapshot directory (``<cache>/models--<org>--<name>/snapshots/<commit>/``): the commit.
  The Hub cache stores every file as a content-addressed blob linked under the commits that hold
  it, so the commit determines the files; a model loaded by its Hub id gets the same key.
- any other directory: sha256 of the bytes of every file that decides scores
  (:func:`directory_fingerprint`). Nothing cheaper is sound there: the safetensors header (tensor
  names, dtypes, shapes, byte offsets) and the file size are the same for every checkpoint of one
  architecture, and a fine-tune changes only the values; the header's ``__metadata__`` carries no
  content hash (``save_pretrained`` writes ``{"format": "pt"}``); a sample of the bytes misses a
  change elsewhere; huggingface_hub's record of a ``local_dir`` download trusts the file's mtime
  with a second of slack. The digests are memoised per file on its stat stamp (size, mtime,
  ctime, inode), so the weights are read once per process and a later load reads none; every
  write moves the ctime, which no copy can set back (a same-size rewrite within one tick of the
  file system's clock after the hash would go unseen: the one assumption behind the memo).
- the offline alias ``smollm2-135m``: the sha256 of the GGUF file its directory was converted
  from, which nlgmetrics records when it writes that directory (``engine.smollm2``), and trusted
  for that directory only: another directory holding a copy of the record (a fine-tune saved over
  a copy of it) is hashed like any other.
- a model instance: sha256 of its tensors' names, shapes, dtypes and values (:func:`module_fingerprint`),
  computed anew on every call that passes it: a write through ``.data`` (PEFT's ``merge_adapter``,
  EMA helpers) leaves no version counter or stamp behind, so only the values can tell.

A *state* (:func:`directory_state`, :func:`module_state`) answers another question, cheaply:
whether something may have changed since it was loaded in this process (file names, sizes and stat
stamps; tensor identities, devices and version counters). It reads no weights, so a cache hit of a
directory stays fast; for a model instance the state is not enough (see ``module_state``) and the
load cache also compares the instance's fingerprint.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "config.json").write_text("{}")
>>> before, fingerprint = directory_state(folder), directory_fingerprint(folder)
>>> len(fingerprint), directory_state(folder) == before
(12, True)
>>> _ = (folder / "model.safetensors").write_bytes(b"new weights")
>>> directory_state(folder) == before, directory_fingerprint(folder) == fingerprint
(False, False)
>>> hub = folder / "models--org--name" / "snapshots" / ("0123456789abcdef" * 3)[:40]
>>> hub.mkdir(parents=True)
>>> directory_fingerprint(hub)
'0123456789ab'
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import torch

# Files that decide a checkpoint's scores: its config, its weights and its tokenizer. Other files
# (README.md, training logs) are left out so that editing them keeps the fingerprint.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack")
TOKENIZER_FILES = (
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "vocab.txt", "vocab.json", "merges.txt",
)
TOKENIZER_SUFFIXES = (".model", ".spm", ".tiktoken")

_COMMIT = re.compile(r"[0-9a-f]{40}")
# sha256 of a file, by (resolved path, stat stamp). Plain dict operations are atomic, so threads
# need no lock: at worst two of them hash one file at the same time and store the same digest.
_DIGESTS: dict[tuple, str] = {}


def _stat_stamp(stat: os.stat_result) -> tuple[int, int, int, int]:
    # ctime and the inode change on every rewrite or replacement and cannot be set back by a copy
    # that preserves mtimes (cp -p, shutil.copy2), so size + mtime alone could miss new weights.
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino


def file_digest(path: str | os.PathLike) -> str:
    """sha256 (hex) of a file's bytes; read once per process while its stat stamp stays the same."""
    path = Path(path)
    key = (str(path.resolve()), *_stat_stamp(path.stat()))
    known = _DIGESTS.get(key)
    if known is None:
        with open(path, "rb") as handle:
            known = _DIGESTS[key] = hashlib.file_digest(handle, "sha256").hexdigest()
    return known


def _decides_scores(name: str) -> bool:
    return (
        name == "config.json"
        or name.endswith(WEIGHT_SUFFIXES)
        or name in TOKENIZER_FILES
        or name.endswith(TOKENIZER_SUFFIXES)
        or name.endswith(".index.json")  # a sharded checkpoint's map of tensors to files
    )


def hub_snapshot_commit(directory: str | os.PathLike) -> str | None:
    """The commit of a Hub cache snapshot directory, ``None`` for any other directory."""
    path = Path(directory)
    if path.parent.name == "snapshots" and path.parent.parent.name.startswith("models--") and _COMMIT.fullmatch(path.name):
        return path.name
    return None


def directory_fingerprint(directory: str | os.PathLike) -> str:
    """12 hex digits identifying a model directory: its Hub commit for a Hub snapshot, else a
    sha256 over the names and bytes of its config, weight and tokenizer files."""
    commit = hub_snapshot_commit(directory)
    if commit is not None:
        return commit[:12]
    digest = hashlib.sha256()
    for file in sorted(p for p in Path(directory).iterdir() if p.is_file() and _decides_scores(p.name)):
        digest.update(file.name.encode())
        digest.update(file_digest(file).encode())
    return digest.hexdigest()[:12]


def directory_state(directory: str | os.PathLike) -> tuple[tuple[str, int, int, int, int], ...]:
    """Names and stat stamps of a directory's files (symlinks followed, as a Hub snapshot's are):
    equal states mean nothing was written there since; no file is read."""
    entries = []
    with os.scandir(directory) as listing:
        for entry in listing:
            try:
                if entry.is_file():
                    entries.append((entry.name, *_stat_stamp(entry.stat())))
            except OSError:  # a dangling link or a file removed meanwhile: part of the state too
                entries.append((entry.name, -1, -1, -1, -1))
    return tuple(sorted(entries))


def _tensor_digest(tensor: torch.Tensor) -> bytes:
    flat = tensor.detach().to("cpu").contiguous().reshape(-1)
    # Viewed as bytes: works for every dtype, bfloat16 included (numpy lacks it); hashlib reads the
    # numpy view through the buffer protocol, without a bytes copy, and releases the GIL meanwhile.
    return hashlib.sha256(flat.view(torch.uint8).numpy()).digest()


def _view_identity(tensor: torch.Tensor) -> tuple:
    """Two entries with this identity read the same bytes (tied embeddings and LM heads)."""
    return (tensor.device, tensor.data_ptr(), tuple(tensor.shape), tensor.stride(), tensor.dtype)


def module_fingerprint(model: torch.nn.Module) -> str:
    """12 hex digits of sha256 over a module's tensors (names, shapes, dtypes and the sha256 of
    each one's values).

    Reads every value, so it sees writes that leave no other trace (``.data`` assignments, in-place
    merges of adapters, EMA updates): the engine calls it on every call that passes a model object.
    A tensor held under two names (tied weights) is read once; the tensors are hashed on up to
    four threads (sha256 runs at about 1 GB/s per core; the values dominate every call's check).
    CPU tensors are hashed in place (no copy); others are copied to the host one at a time.
    """
    from concurrent.futures import ThreadPoolExecutor

    entries = list(model.state_dict().items())
    distinct: dict[tuple, torch.Tensor] = {}
    for _, tensor in entries:
        if tensor.numel():
            distinct.setdefault(_view_identity(tensor), tensor)
    workers = max(1, min(4, os.cpu_count() or 1, len(distinct)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        digests = dict(zip(distinct, pool.map(_tensor_digest, distinct.values())))
    digest = hashlib.sha256()
    for name, tensor in entries:
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
        if tensor.numel():
            digest.update(digests[_view_identity(tensor)])
    return digest.hexdigest()[:12]


def _version(tensor: torch.Tensor) -> int:
    try:
        return tensor._version
    except RuntimeError:  # inference tensors keep no version counter
        return -1


def module_state(model: torch.nn.Module) -> tuple:
    """Identity, storage, shape, dtype, device and version counter of each tensor of a module:
    an optimizer step, ``load_state_dict`` or a reassigned parameter changes it; no value is read.

    Writes through ``.data`` bypass the version counter and are not seen: the load cache compares
    :func:`module_fingerprint` too.
    """
    return tuple(
        (name, id(tensor), tensor.data_ptr(), tuple(tensor.shape), tensor.dtype, str(tensor.device), _version(tensor))
        for name, tensor in (*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False))
    )


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """A short hash of what a tokenizer does to text: its class, vocabulary, special tokens and
    casing, so that a signature tells two ``tokenizer=`` arguments apart.

    >>> from nlgmetrics.testing import bert_tokenizer_dir
    >>> from transformers import AutoTokenizer
    >>> tok = AutoTokenizer.from_pretrained(bert_tokenizer_dir())
    >>> len(tokenizer_fingerprint(tok)), tokenizer_fingerprint(tok) == tokenizer_fingerprint(tok)
    (12, True)
    """
    vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
    parts = [
        type(tokenizer).__name__,
        repr(sorted(vocab.items())),
        repr(sorted((str(k), str(v)) for k, v in (getattr(tokenizer, "special_tokens_map", None) or {}).items())),
        repr(getattr(tokenizer, "do_lower_case", None)),
    ]
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and hasattr(backend, "to_str"):
        parts.append(backend.to_str())  # normaliser, pre-tokeniser and model rules (fast tokenizers)
    return hashlib.sha1("\x00".join(parts).encode("utf-8")).hexdigest()[:12]
