"""Which device and dtype a model is scored on: resolve the strings users pass, refuse unusable ones.

A model bigger than one device is placed by ``from_pretrained`` instead (:func:`check_placement`:
``device_map``, ``max_memory``, ``offload_folder``, checked before anything loads).

A device that torch knows by name but that is missing here (``"mps"`` on Linux, ``"cuda"`` on a
CPU machine, ``"cuda:7"`` on a one-GPU machine, ``"xla"`` without torch_xla) would otherwise fail
deep inside ``Module.to()`` with a bare RuntimeError or an AssertionError; ``"meta"`` would not
fail at all (meta tensors hold no values). Each is refused here, naming the devices that exist.

>>> resolve_device("cpu"), resolve_dtype("bf16")
(device(type='cpu'), torch.bfloat16)
>>> "cpu" in available_devices()
True
>>> resolve_device("meta")
Traceback (most recent call last):
...
ValueError: device='meta' is not usable: meta tensors hold no values, so every score would be undefined. Available here: ...
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

_DTYPES = {
    "float32": torch.float32, "fp32": torch.float32, "float": torch.float32,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
    "float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
}


def _accelerator_count(kind: str) -> int:
    """How many devices of an indexed accelerator type (``cuda``, ``xpu``) this process can use."""
    module = getattr(torch, kind, None)
    try:
        return int(module.device_count()) if module is not None and module.is_available() else 0
    except (RuntimeError, AssertionError):  # a broken driver counts as no device
        return 0


def available_devices() -> list[str]:
    """The devices a model can be scored on in this process, e.g. ``['cpu', 'cuda:0', 'cuda:1']``."""
    indexed = [f"{kind}:{index}" for kind in ("cuda", "xpu") for index in range(_accelerator_count(kind))]
    return ["cpu", *indexed, *(["mps"] if torch.backends.mps.is_available() else [])]


def _available_text() -> str:
    names = ", ".join(repr(name) for name in available_devices())
    return f"Available here: {names}, or None (this process's GPU when there is one, else the CPU)."


def resolve_device(device: str | torch.device | None) -> torch.device:
    """The device to score on; ``None`` means this process's accelerator: its own GPU under several
    processes, else CUDA when available, else CPU.

    Raises ``ValueError`` for a device string torch does not know, and for a device that is not
    available here (the message lists those that are).
    """
    if device is None:
        from nlgmetrics.engine.distributed import process_state

        state = process_state()
        default = "cuda" if torch.cuda.is_available() else "cpu"
        return torch.device(default if state is None else state.device)
    if isinstance(device, bool) or not isinstance(device, (str, int, torch.device)):
        raise ValueError(f"device must be a string such as 'cpu' or 'cuda:0', a torch.device or None, got {device!r}. {_available_text()}")
    if isinstance(device, int):  # torch reads a bare index as an accelerator's device number
        try:
            return resolve_device(f"cuda:{device}")
        except ValueError as error:
            raise ValueError(f"device={device!r} means 'cuda:{device}': {error}") from None
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"device={device!r} is not a torch device name. {_available_text()}") from None
    if resolved.type == "cpu":
        if resolved.index not in (None, 0):
            raise ValueError(f"device={device!r}: the CPU has no numbered devices; pass 'cpu'. {_available_text()}")
        return torch.device("cpu")
    if resolved.type == "meta":
        raise ValueError(
            f"device={device!r} is not usable: meta tensors hold no values, so every score would be "
            f"undefined. {_available_text()}"
        )
    if resolved.type in ("cuda", "xpu"):
        count = _accelerator_count(resolved.type)
        if count == 0:
            raise ValueError(f"device={device!r} asks for {resolved.type.upper()}, but no {resolved.type.upper()} device is available here. {_available_text()}")
        if resolved.index is not None and resolved.index >= count:
            raise ValueError(
                f"device={device!r}: this machine has {count} {resolved.type.upper()} device(s) "
                f"({resolved.type}:0..{resolved.type}:{count - 1}). {_available_text()}"
            )
        if resolved.index is None:  # name the device: 'cuda' and 'cuda:0' are one place, one cache entry
            resolved = torch.device(resolved.type, getattr(torch, resolved.type).current_device())
        return resolved
    if resolved.type == "mps" and torch.backends.mps.is_available():
        return resolved
    raise ValueError(f"device={device!r} is not available here (no {resolved.type} backend in this process). {_available_text()}")


#: accelerate's strategies for ``device_map``: fill the devices in order ("sequential"), or evenly
#: ("auto" is "balanced"; "balanced_low_0" keeps GPU 0 light).
DEVICE_MAP_STRATEGIES = ("auto", "balanced", "balanced_low_0", "sequential")
_STRATEGY_TEXT = ", ".join(repr(name) for name in DEVICE_MAP_STRATEGIES)
_OTHER_STRATEGIES = ", ".join(repr(name) for name in DEVICE_MAP_STRATEGIES[1:])


@dataclass(frozen=True)
class Placement:
    """Where ``from_pretrained`` puts a named model's modules: ``device_map`` (a strategy, or
    ``(module, device)`` pairs with devices such as ``'cuda:0'``, ``'cpu'``, ``'disk'``),
    ``max_memory`` (``(device, bytes)`` pairs a strategy may fill; a GPU by its index, as
    accelerate names it) and ``offload_folder`` (where weights offloaded to the disk are re-saved
    when they cannot be read from the checkpoint itself). Normalised and hashable: part of the
    load cache's key, like ``device`` (it decides where the model lives, not what it computes).

    >>> placement = check_placement("auto", {"cpu": "1GiB"}, None)
    >>> placement.from_pretrained_options()
    {'device_map': 'auto', 'max_memory': {'cpu': 1073741824}}
    """

    device_map: str | tuple[tuple[str, str], ...]
    max_memory: tuple[tuple[int | str, int], ...] | None = None
    offload_folder: str | None = None

    @property
    def uses_disk(self) -> bool:
        """Whether the map sends a module to the disk by name (a strategy may too, when
        ``max_memory`` leaves no room elsewhere)."""
        return not isinstance(self.device_map, str) and any(device == "disk" for _, device in self.device_map)

    def from_pretrained_options(self) -> dict[str, Any]:
        """The keyword arguments of ``from_pretrained`` that place the model."""
        device_map = self.device_map if isinstance(self.device_map, str) else dict(self.device_map)
        memory = None if self.max_memory is None else dict(self.max_memory)
        options = {"device_map": device_map, "max_memory": memory, "offload_folder": self.offload_folder}
        return {key: value for key, value in options.items() if value is not None}


def _placed_device(where: str, value: Any, alternatives: str = "'disk' to offload it") -> str:
    """``'disk'`` or the name of an available device (``'cuda:0'`` for ``0``), else a one-line error."""
    if value == "disk":
        return "disk"
    try:
        return str(resolve_device(value))
    except ValueError as error:
        raise ValueError(f"{where}={value!r} is not a device here: {error} Or {alternatives}.") from None


def _memory_key(value: Any) -> int | str:
    """A ``max_memory`` key as accelerate reads it: a GPU by its index, else ``'cpu'``, ``'mps'``, ``'disk'``."""
    if value == "disk":
        return "disk"
    device = torch.device(_placed_device("max_memory key", value, "'disk'"))
    if device.type == "cuda":
        return int(device.index)
    if device.type in ("cpu", "mps"):
        return device.type
    raise ValueError(f"max_memory key {value!r}: accelerate plans memory for GPUs (by index), 'cpu', 'mps' and 'disk' only; drop it.")


def _memory_bytes(key: Any, value: Any) -> int:
    from accelerate.utils import convert_file_size_to_int

    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"max_memory[{key!r}]={value!r}: give a number of bytes or a size such as '10GiB'.")
    try:
        size = convert_file_size_to_int(value) if isinstance(value, str) else value
    except ValueError:
        raise ValueError(f"max_memory[{key!r}]={value!r} is not a size: give a number of bytes or a size such as '10GiB' or '500MB'.") from None
    if size < 0:
        raise ValueError(f"max_memory[{key!r}]={value!r} is negative: give a number of bytes >= 0 or a size such as '10GiB'.")
    return int(size)


def check_placement(device_map: Any, max_memory: Any, offload_folder: Any, device: Any = None) -> Placement | None:
    """The :class:`Placement` of ``load_lm``'s options (``None`` without ``device_map``), each value
    checked here with a one-line error naming the fix: a strategy name or a ``{module: device}``
    mapping of available devices or ``'disk'`` (a single device, such as ``'cpu'`` or ``0``, places
    the whole model there); ``max_memory`` only with a strategy; ``offload_folder`` only with a
    ``device_map``; not with ``device=`` (the map says where each module goes).

    >>> check_placement({"transformer": "cpu", "lm_head": "disk"}, None, None).device_map
    (('lm_head', 'disk'), ('transformer', 'cpu'))
    >>> check_placement(None, None, None) is None
    True
    >>> check_placement({"lm_head": "tpu"}, None, None)
    Traceback (most recent call last):
    ...
    ValueError: device_map['lm_head']='tpu' is not a device here: ...
    """
    if device_map is None:
        if max_memory is not None:
            raise ValueError(f"max_memory= bounds what device_map= may put on each device: pass device_map='auto' (or {_OTHER_STRATEGIES}) with it.")
        if offload_folder is not None:
            raise ValueError("offload_folder= holds the weights device_map= sends to the disk: pass device_map= with it, or drop it.")
        return None
    if device is not None:
        raise ValueError(f"device={device!r} and device_map= both say where the model goes: pass device_map= alone (or device= alone).")
    placed: str | tuple[tuple[str, str], ...]
    if isinstance(device_map, str) and device_map in DEVICE_MAP_STRATEGIES:
        placed = device_map
    elif isinstance(device_map, Mapping):
        if not device_map:
            raise ValueError(f"device_map={{}} places no module: map module names to devices, or pass one of {_STRATEGY_TEXT}.")
        for module in device_map:
            if not isinstance(module, str):
                raise ValueError(f"device_map key {module!r} is not a module name: use names such as 'model.layers.0' ('' for the whole model).")
        placed = tuple(sorted((module, _placed_device(f"device_map[{module!r}]", value)) for module, value in device_map.items()))
    elif isinstance(device_map, (str, int, torch.device)) and not isinstance(device_map, bool):
        placed = (("", _placed_device("device_map", device_map, f"a strategy: {_STRATEGY_TEXT}")),)
    else:
        raise ValueError(f"device_map={device_map!r}: pass one of {_STRATEGY_TEXT}, a device name, or a {{module name: device}} dict.")
    memory = None
    if max_memory is not None:
        if not isinstance(placed, str):
            raise ValueError(f"max_memory= is read by the device_map strategies only ({_STRATEGY_TEXT}); the device_map given places every module itself: drop max_memory.")
        if not isinstance(max_memory, Mapping) or not max_memory:
            raise ValueError(f"max_memory={max_memory!r}: pass a dict of device to size, e.g. {{0: '20GiB', 'cpu': '60GiB'}}.")
        sizes = {_memory_key(key): _memory_bytes(key, value) for key, value in max_memory.items()}
        memory = tuple(sorted(sizes.items(), key=lambda item: (isinstance(item[0], str), str(item[0]))))
    folder = None
    if offload_folder is not None:
        if not isinstance(offload_folder, (str, os.PathLike)) or not os.fspath(offload_folder):
            raise ValueError(f"offload_folder={offload_folder!r}: pass the path of a folder (created if missing) with room for the offloaded weights.")
        folder = str(Path(offload_folder).expanduser().resolve())
        if Path(folder).exists() and not Path(folder).is_dir():
            raise ValueError(f"offload_folder={os.fspath(offload_folder)!r} is a file: pass a folder (created if missing).")
    return Placement(device_map=placed, max_memory=memory, offload_folder=folder)


def module_device(model: torch.nn.Module) -> torch.device:
    """The device a model instance's inputs go to: that of its first parameter (CPU without
    parameters); for a model accelerate dispatched over devices, the CPU and the disk, where its
    input embedding runs (:func:`nlgmetrics.engine.dispatch.input_device`).

    Raises ``ValueError`` when some tensors of a model that is not dispatched are on the meta
    device (weights never loaded, e.g. built under ``init_empty_weights``), and when the device is
    not available here.
    """
    from nlgmetrics.engine.dispatch import input_device, is_dispatched

    tensors = [*model.parameters(), *model.buffers()]
    if is_dispatched(model):  # its offloaded tensors are meta by design: hooks load them
        current = input_device(model)
    elif any(t.device.type == "meta" for t in tensors):
        raise ValueError(
            f"The {type(model).__name__} instance has tensors on the meta device: its weights were never loaded "
            "(built under init_empty_weights / device_map='meta'), and no accelerate hook loads them. Load its "
            "weights first (from_pretrained), or pass the model's directory."
        )
    else:
        current = tensors[0].device if tensors else torch.device("cpu")
    try:
        resolve_device(current)
    except ValueError as error:
        raise ValueError(f"The {type(model).__name__} instance is on {current}, which is not usable here: {error}") from None
    return current


def resolve_dtype(dtype: str | torch.dtype | None) -> torch.dtype:
    """``None`` means float32 (exact parity with reference implementations); bf16/fp16 allowed."""
    if dtype is None:
        return torch.float32
    key = str(dtype).lower().removeprefix("torch.")  # a torch.dtype by its name: "torch.bfloat16"
    if key not in _DTYPES:
        raise ValueError(f"dtype must be one of 'float32', 'bfloat16', 'float16', got {dtype!r}.")
    return _DTYPES[key]


# CPU feature flags (Linux /proc/cpuinfo names) that mean native half-precision matmuls: without
# them oneDNN emulates the dtype, and a bf16 matmul runs several times slower than float32.
_HALF_PRECISION_FLAGS = {
    torch.bfloat16: ("avx512_bf16", "amx_bf16", "bf16"),  # x86 AVX-512 BF16 / AMX; Arm "bf16"
    torch.float16: ("avx512_fp16", "amx_fp16", "asimdhp"),  # x86 AVX512-FP16 / AMX-FP16; Arm SIMD FP16
}
_WARNED_EMULATED: set[torch.dtype] = set()


@functools.lru_cache(maxsize=4)  # read once per process, not at every bf16 model load
def cpu_flags(path: str = "/proc/cpuinfo") -> frozenset[str] | None:
    """The CPU's feature flags (x86 ``flags``, Arm ``Features``), or ``None`` where they cannot be read."""
    with contextlib.suppress(OSError), open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key.strip().lower() in ("flags", "features"):
                return frozenset(value.split())
    return None


def emulated_half_precision(device: torch.device, dtype: torch.dtype, flags: frozenset[str] | None = None) -> str | None:
    """A warning for half precision on a CPU without native units for it (oneDNN then emulates the
    dtype, slower than float32: ``benchmarks/results/speed_limits/speed_limits.md``), else ``None``. Unknown
    flags (not Linux) give no warning.

    >>> emulated_half_precision(torch.device("cpu"), torch.bfloat16, frozenset({"avx2"}))[:42]
    'dtype=bfloat16 on this CPU is emulated (no'
    >>> emulated_half_precision(torch.device("cpu"), torch.bfloat16, frozenset({"avx2", "amx_bf16"})) is None
    True
    """
    if device.type != "cpu" or dtype not in _HALF_PRECISION_FLAGS:
        return None
    flags = cpu_flags() if flags is None else flags
    wanted = _HALF_PRECISION_FLAGS[dtype]
    if flags is None or any(flag in flags for flag in wanted):
        return None
    name = str(dtype).removeprefix("torch.")
    return (f"dtype={name} on this CPU is emulated (no {' / '.join(wanted[:2])} in its flags): its matmuls run "
            f"several times slower than float32 here (7-8x measured on an AVX2-only CPU), and the scores are "
            f"{name}'s, not float32's. Pass dtype='float32' (the default) on this machine.")


def warn_if_emulated(device: torch.device, dtype: torch.dtype) -> None:
    """:func:`emulated_half_precision` as a ``UserWarning``, once per dtype and process."""
    if dtype not in _WARNED_EMULATED and (message := emulated_half_precision(device, dtype)):
        import warnings

        _WARNED_EMULATED.add(dtype)
        warnings.warn(message, UserWarning, stacklevel=3)


def same_device(a: torch.device, b: torch.device) -> bool:
    """Whether two devices of this process are the same place (``cuda`` without an index is the
    current one): equal once :func:`resolve_device` has named them."""
    return resolve_device(a) == resolve_device(b)
