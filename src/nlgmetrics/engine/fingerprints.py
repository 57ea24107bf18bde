"""What a model's weights are: a fingerprint for result signatures, a stamp for the load cache.

A *fingerprint* (12 hex digits of a sha256) is a signature's ``weights:`` value: equal
fingerprints, equal weights, whichever way the model is passed. :func:`module_fingerprint` hashes
what the forward reads (tensors, module attributes, the config; the dtype included, the tokenizer
not: the signature's ``tokenizer`` field names it). A folder or Hub id is hashed as loaded, once
per folder state or commit and dtype (:func:`loaded_fingerprint`; fallback
:func:`directory_fingerprint`); a model object on every call; a GGUF file or offline alias is its
file's sha256. A *state* (:func:`directory_state`, :func:`module_state`) says cheaply whether
something may have changed since it was loaded in this process.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp()); before = directory_state(folder)
>>> _ = (folder / "model.safetensors").write_bytes(b"new weights"); directory_state(folder) == before
False
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
import math
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from nlgmetrics.engine.dispatch import offloaded_readers, only_placement_hooks
from nlgmetrics.engine.rope import per_pass_rotary_state

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
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            # blocks of 1 MiB, as hashlib.file_digest reads them (that function needs Python 3.11)
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        known = _DIGESTS[key] = digest.hexdigest()
    return known


def _decides_scores(name: str) -> bool:
    # ".index.json": a sharded checkpoint's map of tensors to files
    return name == "config.json" or name in TOKENIZER_FILES or name.endswith(
        (*WEIGHT_SUFFIXES, *TOKENIZER_SUFFIXES, ".index.json"))


def hub_snapshot_commit(directory: str | os.PathLike) -> str | None:
    """The commit of a Hub cache snapshot directory, ``None`` for any other directory."""
    path = Path(directory)
    if path.parent.name == "snapshots" and path.parent.parent.name.startswith("models--") and _COMMIT.fullmatch(path.name):
        return path.name
    return None


def directory_fingerprint(directory: str | os.PathLike) -> str:
    """12 hex digits identifying a model directory's files: its Hub commit for a Hub snapshot
    (the Hub cache stores files content-addressed under the commits holding them), else a sha256
    over the names and bytes of its config, weight and tokenizer files, each read once per process
    while its stat stamp stays (:func:`file_digest`). Nothing cheaper is sound: the safetensors
    header and the file size are the same for every fine-tune of one architecture. The engine
    signs the loaded tensors instead (:func:`loaded_fingerprint`) and falls back on this."""
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


class FingerprintUnavailable(ValueError):
    """A model object holds a tensor whose values cannot be read here (on the meta device,
    offloaded, sharded across processes, or a tensor subclass that exposes no bytes): no
    fingerprint could tell two such objects apart, so none is given."""


def _tensor_digest(tensor: torch.Tensor) -> bytes:
    flat = tensor.detach().to("cpu").contiguous().reshape(-1)
    # Viewed as bytes: works for every dtype, bfloat16 included (numpy lacks it); hashlib reads the
    # numpy view through the buffer protocol, without a bytes copy, and releases the GIL meanwhile.
    return hashlib.sha256(flat.view(torch.uint8).numpy()).digest()


@dataclass(frozen=True, eq=False)
class _Offloaded:
    """A tensor that an accelerate hook keeps offloaded (on the CPU or the disk), read only when
    hashed: a model offloaded because it does not fit in memory is never materialised whole."""

    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    read: Callable[[], torch.Tensor]

    def digest(self) -> bytes:
        value = self.read()
        parts, extra = _readable_parts(value, self.name)
        if extra or len(parts) != 1 or tuple(value.shape) != self.shape:
            raise FingerprintUnavailable(
                f"The model object's offloaded tensor {self.name!r} is stored as a {type(value).__name__} of shape "
                f"{tuple(value.shape)}, which cannot be read as the values its module computes with: pass the "
                "model's directory with device_map= instead."
            )
        return _tensor_digest(parts[0])


def _part_identity(part: torch.Tensor | _Offloaded) -> tuple:
    """Two parts with this identity read the same bytes (tied embeddings and LM heads)."""
    if isinstance(part, _Offloaded):
        return ("offloaded", part.name)
    return (part.device, part.data_ptr(), tuple(part.shape), part.stride(), part.dtype)


def _part_digest(part: torch.Tensor | _Offloaded) -> bytes:
    return part.digest() if isinstance(part, _Offloaded) else _tensor_digest(part)


# Config entries that name where a config came from, not what the model computes.
_PROVENANCE = frozenset({"_name_or_path", "transformers_version", "_commit_hash"})
# Module attributes that the forward does not read: where the model came from, the options of
# generate() (whose record holds a per-process hash()), the train/eval switch (the engine scores an
# evaluation-mode copy of a module in training mode), where accelerate placed each module, and the
# quantizer transformers loaded it with (its options are the config's quantization_config, hashed
# with the config; its list of modules left unquantized comes from a set, in another order in
# another process, so the same weights would get another key there).
_NOT_READ_BY_FORWARD = frozenset({"name_or_path", "generation_config", "training", "hf_device_map", "hf_quantizer"})
_PLAIN = (type(None), bool, int, float, str)
_MAX_DEPTH = 8


def _qualified_name(value: Any) -> str:
    return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__qualname__)}"


def _is_config(value: Any) -> bool:
    configuration = sys.modules.get("transformers.configuration_utils")
    base = getattr(configuration, "PreTrainedConfig", None) or getattr(configuration, "PretrainedConfig", None)
    return base is not None and isinstance(value, base)


class _Canonical:
    """Turns what a module holds besides its parameters and buffers into JSON-ready values that
    are equal across processes (no addresses); each config object is rendered once per call."""

    def __init__(self) -> None:
        self.configs: dict[int, str] = {}

    def config(self, config: Any) -> str:
        """sha256 (hex) of a config's every attribute as it is now, edits in place included, and
        of its nested configs and attention / experts implementations (held as private attributes,
        which ``to_dict`` leaves out), less the entries in ``_PROVENANCE``."""
        known = self.configs.get(id(config))
        if known is None:
            fields = {k: v for k, v in vars(config).items() if k not in _PROVENANCE}
            text = json.dumps([_qualified_name(type(config)), self.value(fields, 0)], sort_keys=True)
            known = self.configs[id(config)] = hashlib.sha256(text.encode()).hexdigest()
        return known

    def value(self, value: Any, depth: int) -> Any:
        if isinstance(value, float):
            return repr(value)  # nan and inf too, and no float formatting left to json
        if isinstance(value, _PLAIN):
            return value
        if depth > _MAX_DEPTH:
            return _qualified_name(type(value))
        if isinstance(value, (torch.dtype, torch.device)):
            return str(value)
        if isinstance(value, torch.Tensor):
            readable = _readable_parts(value, "an attribute")
            return [[tuple(p.shape), str(p.dtype), _tensor_digest(p).hex()] for p in readable[0]] + [
                self.value(readable[1], depth + 1)]
        if isinstance(value, torch.nn.Module):
            return "module " + _qualified_name(type(value))  # its own entry of the module walk holds the rest
        if _is_config(value):
            return "config " + self.config(value)
        if isinstance(value, dict):
            return {str(k): self.value(v, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v, depth + 1) for v in value]
        if isinstance(value, (set, frozenset)):
            return sorted(json.dumps(self.value(v, depth + 1), sort_keys=True) for v in value)
        if isinstance(value, enum.Enum):
            return f"{_qualified_name(type(value))}.{value.name}"
        if isinstance(value, functools.partial):
            return ["partial", *(self.value(v, depth + 1) for v in (value.func, value.args, value.keywords))]
        if callable(value) and hasattr(value, "__qualname__"):  # functions, methods, classes
            return "callable " + _qualified_name(value)
        if hasattr(value, "__dict__"):  # a plain object: its public attributes (e.g. a quantization state)
            public = {k: v for k, v in vars(value).items() if not k.startswith("_")}
            return [_qualified_name(type(value)), self.value(public, depth + 1)]
        text = repr(value)
        return [_qualified_name(type(value)), None if " at 0x" in text else text]


def _readable_parts(tensor: torch.Tensor, name: str) -> tuple[list[torch.Tensor], dict[str, Any]]:
    """Plain tensors whose bytes hold a tensor's values, and the attributes that say how to read
    them (a quantization state, a subclass's metadata). Raises :class:`FingerprintUnavailable`
    where the values are not here to read.

    Reads ``.data`` (or the storage under a subclass) with subclasses' ``__torch_function__``
    off, never through a method a subclass may override: ``state_dict()`` and ``.to()`` of some
    quantized parameters rewrite their storage."""
    with torch._C.DisableTorchFunctionSubclass():  # no subclass code runs while reading
        return _plain_parts(tensor, name)


def _plain_parts(tensor: torch.Tensor, name: str) -> tuple[list[torch.Tensor], dict[str, Any]]:
    if tensor.is_meta:
        raise FingerprintUnavailable(
            f"The model object's tensor {name!r} is on the meta device (offloaded or not loaded): its values "
            "cannot be hashed. Pass a model whose weights are loaded, or its directory."
        )
    subclass = type(tensor) not in (torch.Tensor, torch.nn.Parameter)
    # Public attributes of a subclass say how its bytes are read (bitsandbytes' quant_state, an
    # int8 weight's scales); private ones are bookkeeping (transformers' _is_hf_initialized).
    extra = {k: v for k, v in vars(tensor).items() if not k.startswith("_")} if subclass else {}
    data = tensor.data if isinstance(tensor, torch.nn.Parameter) else tensor
    if type(data) is torch.Tensor:
        return [data], extra
    if type(data).__name__ == "DTensor":
        raise FingerprintUnavailable(
            f"The model object's tensor {name!r} is a DTensor sharded across processes: one process cannot hash "
            "its values. Pass the model unsharded, or its directory."
        )
    flatten = getattr(data, "__tensor_flatten__", None)
    if flatten is not None:  # a wrapper subclass (torch's traceable protocol): its inner tensors
        inner_names, context = flatten()
        parts: list[torch.Tensor] = []
        for inner in inner_names:
            inner_parts, inner_extra = _plain_parts(getattr(data, inner), f"{name}.{inner}")
            parts += inner_parts
            extra[f"{inner} attributes"] = inner_extra
        extra["flatten context"] = context
        return parts, extra
    try:  # a subclass over an ordinary storage: the same bytes as a plain tensor
        plain = data.as_subclass(torch.Tensor)
        plain.data_ptr()
        return [plain], extra
    except (RuntimeError, TypeError) as error:
        raise FingerprintUnavailable(
            f"The model object's tensor {name!r} is a {type(data).__name__}, whose bytes cannot be read ({error}): "
            "its values cannot be hashed. Pass the model's directory, or a model with ordinary torch tensors."
        ) from error


def _module_records(model: torch.nn.Module) -> list[str]:
    """One line per module (shared ones under each of their names): its path, its class and its
    public attributes other than parameters, buffers and submodules (a layer norm's ``eps``, an
    attention's ``scaling``, the ``config`` it reads, by digest), less ``_NOT_READ_BY_FORWARD`` and
    the per-pass state of a length-dependent rotary scaling (:func:`~nlgmetrics.engine.rope.per_pass_rotary_state`)."""
    canonical = _Canonical()
    records = []
    for path, module in model.named_modules(remove_duplicate=False):
        left_out = _NOT_READ_BY_FORWARD | per_pass_rotary_state(module)
        if only_placement_hooks(module):  # accelerate's forward wrapper moves tensors, computes nothing
            left_out |= {"forward"}
        # accelerate's guards on a dispatched model's .to() / .cuda() (they warn, compute nothing)
        attributes = {k: v for k, v in vars(module).items() if not k.startswith("_") and k not in left_out
                      and not getattr(v, "_accelerate_added_attribute", False)}
        record = [path, _qualified_name(type(module)), canonical.value(attributes, 0)]
        records.append(json.dumps(record, sort_keys=True))
    return records


def _named_tensors(model: torch.nn.Module) -> list[tuple[str, str, torch.Tensor]]:
    """``(role, name, tensor)`` of every parameter and buffer (shared ones under each name), less the
    buffers that a length-dependent rotary scaling rewrites per pass (the grown or long ``inv_freq``):
    what the forward computes follows the ``original_inv_freq`` kept beside them."""
    per_pass = {f"{path}.{name}" if path else name
                for path, module in model.named_modules(remove_duplicate=False)
                for name in per_pass_rotary_state(module) if name in module._buffers}
    return [("parameter", n, t) for n, t in model.named_parameters(remove_duplicate=False)] + [
        ("buffer", n, t) for n, t in model.named_buffers(remove_duplicate=False) if n not in per_pass]


def module_fingerprint(model: torch.nn.Module) -> str:
    """12 hex digits of sha256 over everything a module's forward reads: every parameter and
    buffer, persistent or not (RoPE's ``inv_freq`` is not in the state dict), by name, shape,
    dtype and the sha256 of its values (less the per-pass rotary state of longrope and dynamic
    NTK, :func:`~nlgmetrics.engine.rope.per_pass_rotary_state`: what a pass computes follows the
    kept ``original_inv_freq``); and every module's class and public attributes, the
    configs they hold included (each config's every field as it is now, edits in place included,
    its nested configs and its attention implementation; less ``_name_or_path`` and
    ``transformers_version``, which say where it came from).

    Reads every value, so it sees writes that leave no other trace (``.data`` assignments, in-place
    merges of adapters, EMA updates): the engine calls it on every call that passes a model object.
    A tensor held under two names (tied weights) is read once; the tensors are hashed on up to
    four threads (sha256 runs at about 1 GB/s per core; the values dominate every call's check).
    CPU tensors are hashed in place (no copy); others are copied to the host one at a time. A
    tensor subclass is read through ``.data`` (its raw bytes, plus its attributes such as a
    quantization state) or its inner tensors; nothing is read through ``state_dict()`` or a
    subclass's ``.to()``, so hashing never rewrites a tensor. A model dispatched by accelerate
    (``device_map``) is hashed as the same model on one device: each tensor its hooks keep
    offloaded (a meta placeholder) is read from the hook's map, where the forward reads it (the
    disk, for disk offload), one tensor at a time and without loading it into the model; where
    each module was placed is left out. Raises :class:`FingerprintUnavailable` for a tensor whose
    values cannot be read here (meta device without a hook holding it, a sharded ``DTensor``).
    """
    from concurrent.futures import ThreadPoolExecutor

    offloaded = offloaded_readers(model)  # accelerate's meta placeholders: their values are in its hooks' maps
    entries: list[tuple[str, list[torch.Tensor | _Offloaded]]] = []
    canonical = _Canonical()
    for role, name, tensor in _named_tensors(model):
        if id(tensor) in offloaded:
            parts: list[torch.Tensor | _Offloaded] = [_Offloaded(name, tuple(tensor.shape), tensor.dtype, offloaded[id(tensor)])]
            extra: dict[str, Any] = {}
        else:
            parts, extra = _readable_parts(tensor, name)
        with torch._C.DisableTorchFunctionSubclass():
            header = [role, name, tuple(tensor.shape), str(tensor.dtype), _qualified_name(type(tensor))]
        if extra:
            header.append(canonical.value(extra, 0))
        entries.append((json.dumps(header, sort_keys=True), parts))
    distinct = {_part_identity(part): part for _, parts in entries for part in parts if math.prod(part.shape)}
    workers = max(1, min(4, os.cpu_count() or 1, len(distinct)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        digests = dict(zip(distinct, pool.map(_part_digest, distinct.values())))
    digest = hashlib.sha256()
    for header, parts in entries:
        digest.update(header.encode())
        for part in parts:
            digest.update(f"{tuple(part.shape)}:{part.dtype}".encode())
            if math.prod(part.shape):
                digest.update(digests[_part_identity(part)])
    digest.update(b"\x00modules\x00")
    for record in _module_records(model):
        digest.update(record.encode())
        digest.update(b"\n")
    return digest.hexdigest()[:12]


# module_fingerprint of a model loaded from files, by what identifies those files and the load
# options that decide its tensors. Plain dict operations are atomic: threads need no lock.
_LOADED: dict[tuple, str] = {}


def loaded_fingerprint(model: torch.nn.Module, files: tuple) -> str:
    """:func:`module_fingerprint` of ``model``, just loaded from the files that ``files`` identifies
    together with the load options that decide its tensors (a folder's resolved path and
    :func:`directory_state`, or a Hub commit; the dtype): computed on the first load of that key
    in this process, then recalled without reading a tensor. Hashing the loaded tensors, rather
    than the files, gives a folder, a Hub id and the object loaded from them one value. Raises
    :class:`FingerprintUnavailable` as :func:`module_fingerprint` does."""
    known = _LOADED.get(files)
    if known is None:
        known = _LOADED[files] = module_fingerprint(model)
    return known


def _version(tensor: torch.Tensor) -> int:
    try:
        return tensor._version
    except RuntimeError:  # inference tensors keep no version counter
        return -1


def module_state(model: torch.nn.Module) -> tuple:
    """Identity, storage, shape, dtype, device and version counter of each tensor of a module:
    an optimizer step, ``load_state_dict`` or a reassigned parameter changes it; no value is read.

    Writes through ``.data`` bypass the version counter and are not seen: the load cache compares
    :func:`module_fingerprint` too. The per-pass rotary state is left out as there (the engine
    restores a dynamic ``inv_freq`` as a new tensor before each unit, which must not rebuild the
    load cache's entry). A meta tensor counts by name, shape and dtype only: accelerate's hooks
    replace an offloaded tensor's placeholder by a new one on every forward, while its values (in
    the hook's map) are the fingerprint's to compare.
    """
    return tuple(
        (name, tuple(tensor.shape), tensor.dtype, "meta") if tensor.is_meta else
        (name, id(tensor), tensor.data_ptr(), tuple(tensor.shape), tensor.dtype, str(tensor.device), _version(tensor))
        for _, name, tensor in _named_tensors(model)
    )


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """A short hash of what a tokenizer does to text: its class, vocabulary, special tokens and
    casing, so that a signature tells two ``tokenizer=`` arguments apart. It hashes the definition,
    not the last call: a call with ``truncation=`` or ``padding=`` leaves it as it was.

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
        parts.append(_backend_definition(backend))  # normaliser, pre-tokeniser and model rules (fast tokenizers)
    return hashlib.sha1("\x00".join(parts).encode("utf-8")).hexdigest()[:12]


def _backend_definition(backend: Any) -> str:
    """A fast tokenizer's serialised rules with its truncation and padding switched off.

    Those two are the state of its last call, not its definition: transformers sets them for a call
    with ``truncation=`` / ``padding=`` and clears them on the next call without. They are cleared
    on a copy (the caller's tokenizer is not touched) and the copy serialised by the same code, so
    a tokenizer whose state is clear hashes to exactly its own ``to_str()``.
    """
    text = backend.to_str()
    if getattr(backend, "truncation", None) is None and getattr(backend, "padding", None) is None:
        return text
    from tokenizers import Tokenizer

    definition = Tokenizer.from_str(text)
    definition.no_truncation()
    definition.no_padding()
    return definition.to_str()
