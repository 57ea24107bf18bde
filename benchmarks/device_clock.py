"""Wall-clock timing of device work for the speed benchmarks: one convention for all of them.

CUDA kernels run asynchronously, so a timer read right after a call measures the launches, not the
work: on CUDA the device is synchronised before both clock reads. Each timed call also records the
GPU memory allocated when it started and the peak allocated during it (the peak counter is reset
first), so a benchmark can report the absolute peak or the peak above what was already resident
(the loaded model). On CPU only the wall time is taken (memory fields are ``None``).

>>> timing = timed(sum, "cpu", [1, 2, 3])
>>> timing.result, timing.seconds >= 0, timing.peak_bytes, timing.peak_above_start_bytes
(6, True, None, None)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _cuda(device: Any) -> bool:
    return str(device).startswith("cuda")


def synchronize(device: Any) -> None:
    """Wait for every kernel queued on ``device`` (a no-op off CUDA)."""
    if _cuda(device):
        import torch

        torch.cuda.synchronize(torch.device(device))


@dataclass(frozen=True)
class Timing:
    """One timed call: its result, wall seconds, and (CUDA) GPU bytes allocated at its start and at its peak."""

    result: Any
    seconds: float
    start_bytes: int | None
    peak_bytes: int | None

    @property
    def peak_above_start_bytes(self) -> int | None:
        """Peak allocated above what was resident when the call started (never negative)."""
        if self.peak_bytes is None or self.start_bytes is None:
            return None
        return max(self.peak_bytes - self.start_bytes, 0)


def timed(call: Callable[..., Any], device: Any, *args: Any, **kwargs: Any) -> Timing:
    """``call(*args, **kwargs)`` timed on ``device`` (see the module docstring)."""
    if not _cuda(device):
        start = time.perf_counter()
        result = call(*args, **kwargs)
        return Timing(result, time.perf_counter() - start, None, None)
    import torch

    where = torch.device(device)
    torch.cuda.synchronize(where)
    start_bytes = torch.cuda.memory_allocated(where)
    torch.cuda.reset_peak_memory_stats(where)
    start = time.perf_counter()
    result = call(*args, **kwargs)
    torch.cuda.synchronize(where)
    seconds = time.perf_counter() - start
    return Timing(result, seconds, start_bytes, torch.cuda.max_memory_allocated(where))
