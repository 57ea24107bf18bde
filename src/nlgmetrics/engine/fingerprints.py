"""What a model's weights are: short hashes for signatures, cheap change stamps for the load cache.

Two different questions, two answers:

- a *fingerprint* (:func:`directory_fingerprint`, :func:`module_fingerprint`) identifies the
  values for a result signature: a hash of the bytes, so equal weights give equal fingerprints
  wherever they are;
- a *state* (:func:`directory_state`, :func:`module_state`) says cheaply whether something may
  have changed since it was loaded in this process: file names, sizes and stat stamps, or tensor
  identities and version counters. It never reads the weights, so a cache hit stays fast.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "config.json").write_text("{}")
>>> before = directory_state(folder)
>>> len(directory_fingerprint(folder)), directory_state(folder) == before
(12, True)
>>> _ = (folder / "model.safetensors").write_bytes(b"new weights")
>>> directory_state(folder) == before
False
"""

from __future__ import annotations

import hashlib
import os
import threading
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

_DIGESTS: dict[tuple, str] = {}
_DIGESTS_LOCK = threading.Lock()


def _stat_stamp(stat: os.stat_result) -> tuple[int, int, int, int]:
    # ctime and the inode change on every rewrite or replacement and cannot be set back by a copy
    # that preserves mtimes (cp -p, shutil.copy2), so size + mtime alone could miss new weights.
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino


def file_digest(path: str | os.PathLike) -> str:
    """sha256 of a file, memoised on its stat stamp because weights can be large."""
    path = Path(path)
    key = (str(path.resolve()), *_stat_stamp(path.stat()))
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(key)
    if known is None:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 22), b""):
                digest.update(chunk)
        known = digest.hexdigest()
        with _DIGESTS_LOCK:
            _DIGESTS[key] = known
    return known


def _decides_scores(name: str) -> bool:
    return (
        name == "config.json"
        or name.endswith(WEIGHT_SUFFIXES)
        or name in TOKENIZER_FILES
        or name.endswith(TOKENIZER_SUFFIXES)
        or name.endswith(".index.json")  # a sharded checkpoint's map of tensors to files
    )


def directory_fingerprint(directory: str | os.PathLike) -> str:
    """Short hash (12 hex digits) of a model directory's config, weight and tokenizer files.

    A Hub snapshot directory (``.../snapshots/<commit>/``) is identified by its commit instead,
    which covers the same files.
    """
    path = Path(directory)
    if path.parent.name == "snapshots" and len(path.name) == 40:
        return path.name[:12]
    digest = hashlib.sha256()
    for file in sorted(p for p in path.iterdir() if p.is_file() and _decides_scores(p.name)):
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


def module_fingerprint(model: torch.nn.Module) -> str:
    """Short hash of a module's tensors (names, shapes, dtypes, values)."""
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        # view as bytes: works for every dtype including bfloat16 (numpy lacks it).
        digest.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
    return digest.hexdigest()[:12]


def _version(tensor: torch.Tensor) -> int:
    try:
        return tensor._version
    except RuntimeError:  # inference tensors keep no version counter
        return -1


def module_state(model: torch.nn.Module) -> tuple:
    """Identity, storage, shape, dtype, device and version counter of each tensor of a module:
    an optimizer step, ``load_state_dict`` or a reassigned parameter changes it; no value is read.

    (Writes through ``.data``, which bypass the version counter, are not seen.)
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
