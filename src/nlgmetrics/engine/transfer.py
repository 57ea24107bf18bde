"""Host <-> device copies that do not stall the device's queue of work.

On a GPU, ``cpu_tensor.to("cuda")`` from ordinary (pageable) memory and ``cuda_tensor.cpu()`` both
wait until every kernel queued before them has run. Between two batches that drains the GPU's
queue: it sits idle while Python builds the next batch. Here host -> device copies go through
pinned memory without waiting (:func:`to_device`), and device -> host results are copied
asynchronously and read later (:class:`DeferredHost`): the engine launches batch k+1 before it
reads batch k's numbers (:func:`nlgmetrics.engine.runner.run_units` reads one unit late). On the
CPU both are plain, immediate copies: nothing changes there.

>>> import torch
>>> pending = DeferredHost([torch.tensor([1.5, 2.5])], lambda arrays: arrays[0].tolist())
>>> resolve(pending), resolve("not deferred")
([1.5, 2.5], 'not deferred')
>>> to_device(torch.tensor([1, 2]), torch.device("cpu")).tolist()
[1, 2]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch


def to_device(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``tensor`` (on the host) on ``device``; on CUDA an asynchronous copy from pinned memory.

    The pinned staging buffer stays valid until the copy has run: PyTorch's pinned-memory cache
    frees it only after the stream has passed the copy.
    """
    if device.type != "cuda" or tensor.device.type != "cpu":
        return tensor.to(device)
    try:
        pinned = tensor.pin_memory()
    except RuntimeError:  # page-locked memory refused (container limits): a plain, blocking copy
        return tensor.to(device)
    return pinned.to(device, non_blocking=True)


class DeferredHost:
    """Device tensors copied to host memory without waiting; :meth:`get` waits for the copies only.

    ``finish`` turns the host arrays (``None`` stays ``None``) into the result. The copies are
    queued behind the kernels that compute the tensors and ahead of anything launched later, so
    :meth:`get` does not wait for work launched after this object was made.
    """

    def __init__(self, tensors: Sequence[torch.Tensor | None], finish: Callable[[list[np.ndarray | None]], Any]):
        self._finish = finish
        self._host: list[torch.Tensor | None] = []
        devices = {t.device for t in tensors if t is not None and t.device.type == "cuda"}
        for tensor in tensors:
            if tensor is None or tensor.device.type != "cuda":
                self._host.append(tensor)
                continue
            try:
                host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
            except RuntimeError:  # page-locked memory refused: a plain copy (waits; same values)
                self._host.append(tensor.cpu())
                continue
            host.copy_(tensor, non_blocking=True)  # queued on the tensor's device's current stream
            self._host.append(host)
        # One event on each device's stream (not the current device's: the model may sit on cuda:1).
        self._events = [torch.cuda.Event() for _ in devices]
        for event, device in zip(self._events, devices):
            event.record(torch.cuda.current_stream(device))

    def get(self) -> Any:
        """The result, once the copies have landed."""
        for event in self._events:
            event.synchronize()
        return self._finish([None if t is None else t.numpy() for t in self._host])


def resolve(value: Any) -> Any:
    """``value.get()`` for a :class:`DeferredHost`, else ``value`` itself."""
    return value.get() if isinstance(value, DeferredHost) else value


def resolve_results(results: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    """A unit's ``[(index, result), ...]`` with every deferred result read."""
    return [(index, resolve(result)) for index, result in results]
