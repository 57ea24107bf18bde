"""Models that accelerate has spread over devices, the CPU and the disk (``device_map``).

accelerate dispatches a model by hooks (``AlignDevicesHook``): each placed module moves its
inputs to its execution device, and a module whose weights are offloaded (to the CPU under a GPU,
or to the disk) keeps them on the meta device, loads them from its hook's ``weights_map`` just
before it runs and drops them after. The engine needs three things from such a model, all here,
none of which changes the model:

- whether it is dispatched (:func:`is_dispatched`: some module carries a placement hook);
- where its inputs go (:func:`input_device`): where its input embedding runs. From there every
  hook moves the activations on, the LM head runs where it was placed, and the model's outer hook
  hands its outputs back on the device of its inputs;
- the values its forward reads for each offloaded tensor (:func:`offloaded_readers`), read as the
  hook reads them (its map's entry cast to the parameter's dtype), one at a time, for the weights
  fingerprint.

>>> import torch
>>> is_dispatched(torch.nn.Linear(2, 2))
False
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from typing import Any

import torch


def _placement_hooks(module: torch.nn.Module) -> list:
    """The accelerate ``AlignDevicesHook`` objects on ``module`` (inside a ``SequentialHook`` too)."""
    hooks_module = sys.modules.get("accelerate.hooks")  # no hook exists before accelerate is imported
    hook = module.__dict__.get("_hf_hook")
    if hooks_module is None or hook is None:
        return []
    chained = hook.hooks if isinstance(hook, hooks_module.SequentialHook) else (hook,)
    return [h for h in chained if isinstance(h, hooks_module.AlignDevicesHook)]


def only_placement_hooks(module: torch.nn.Module) -> bool:
    """Whether ``module`` carries accelerate hooks and all of them only place tensors: its
    ``forward`` attribute is then accelerate's wrapper, which computes nothing of its own."""
    placing, hook = _placement_hooks(module), module.__dict__.get("_hf_hook")
    return bool(placing) and len(placing) == len(getattr(hook, "hooks", None) or (hook,))


def is_dispatched(model: torch.nn.Module) -> bool:
    """Whether accelerate placed ``model`` with hooks (``from_pretrained(device_map=...)``,
    ``dispatch_model``, ``cpu_offload``, ``disk_offload``)."""
    return any(_placement_hooks(module) for module in model.modules())


def _as_device(device: int | str | torch.device) -> torch.device:
    if isinstance(device, int):  # accelerate's GPU index
        from accelerate.hooks import normalize_device

        device = normalize_device(device)
    return torch.device("cuda", device) if isinstance(device, int) else torch.device(device)


def _ancestors(model: torch.nn.Module, target: torch.nn.Module) -> list[torch.nn.Module]:
    """``target`` and the modules above it, nearest first, up to ``model``."""
    for path, module in model.named_modules():
        if module is target:
            parts = path.split(".") if path else []
            return [model.get_submodule(".".join(parts[:n])) for n in range(len(parts), -1, -1)]
    return [model]


def input_device(model: torch.nn.Module) -> torch.device:
    """The device a dispatched model's input ids go to: the execution device of the hook that
    places its input embedding (on the embedding or the nearest module above it), else the
    embedding weight's own device.

    Raises ``ValueError`` when neither says (an input embedding offloaded by a hook without an
    execution device)."""
    embedding = model.get_input_embeddings()
    for module in _ancestors(model, embedding):
        for hook in _placement_hooks(module):
            if hook.execution_device is not None:
                return _as_device(hook.execution_device)
    weight = getattr(embedding, "weight", None)
    if weight is not None and not weight.is_meta:
        return weight.device
    raise ValueError(
        f"The {type(model).__name__} object is dispatched by accelerate, but no hook says where its input "
        "embedding runs: dispatch it with an execution device for every module (accelerate's dispatch_model "
        "with a device_map, or from_pretrained(device_map=...))."
    )


def _read(weights_map, name: str, dtype: torch.dtype) -> torch.Tensor:
    # accelerate's set_module_tensor_to_device casts the stored value to the parameter's dtype
    # before the module runs: the forward computes with the cast value (.to returns it uncopied
    # where the dtype is already that).
    return weights_map[name].to(dtype)


def _offloaded(model: torch.nn.Module) -> Iterator[tuple[str, Any, str, torch.Tensor]]:
    """``(module path, hook, name, tensor)`` of each tensor a hook of ``model`` loads from its map
    before the module runs (AlignDevicesHook._onload_weights), a placeholder or not."""
    from accelerate.utils import named_module_tensors

    for path, module in model.named_modules():
        for hook in _placement_hooks(module):
            if hook.offload and hook.weights_map is not None:
                tensors = named_module_tensors(module, include_buffers=hook.offload_buffers,
                                               recurse=hook.place_submodules, remove_non_persistent=True)
                yield from ((path, hook, name, tensor) for name, tensor in tensors)


def offloaded_readers(model: torch.nn.Module) -> dict[int, Callable[[], torch.Tensor]]:
    """For each tensor of ``model`` that a hook keeps offloaded (on the meta device), keyed by the
    tensor object's ``id``: a function returning the values its module computes with, read from
    the hook's map (the disk, for disk offload) at each call. Nothing is cached: a big model's
    offloaded weights are read one tensor at a time."""
    return {id(tensor): functools.partial(_read, hook.weights_map, name, tensor.dtype)
            for _, hook, name, tensor in _offloaded(model) if tensor.is_meta}


def unreadable_offloaded(model: torch.nn.Module) -> list[str]:
    """Names of the offloaded tensors that their hook's map does not hold, so that the module
    would fail when it runs (a tied LM head sent to the disk while the embedding it shares its
    weight with is not). Reads the maps' keys only, no value."""
    missing: list[str] = []
    known: dict[int, set[str]] = {}
    # Every tensor a hook loads, a placeholder or not (transformers ties a head back to its embedding
    # after dispatching).
    for path, hook, name, _ in _offloaded(model):
        weights_map = hook.weights_map
        # A PrefixedDataset reads its source's full keys.
        source = getattr(weights_map, "dataset", weights_map)
        if id(source) not in known:  # read each map's keys once
            known[id(source)] = set(iter(source))
        keys = known[id(source)]
        if name not in keys and f"{getattr(weights_map, 'prefix', '')}{name}" not in keys:
            missing.append(f"{path}.{name}" if path else name)
    return missing


def placed_devices(model: torch.nn.Module) -> list[str]:
    """The places a dispatched model's modules were given (``hf_device_map``'s values, e.g.
    ``['cpu', 'disk']``), for messages."""
    device_map = getattr(model, "hf_device_map", None) or {}
    return sorted({str(value) for value in device_map.values()})
