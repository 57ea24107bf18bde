"""Keep a CPU forward pass's large buffers in the heap for reuse, not returned to the OS each time.

glibc's ``malloc`` serves every allocation above its mmap threshold (32 MiB at most, by default)
with a fresh ``mmap`` and unmaps it when freed. An LM forward pass on CPU allocates many buffers
of that size and frees them moments later (FFLM's document passes: each MLP activation of 6 rows x
1,318 positions x 1,536 floats is 48 MB), so every one of them pays a page fault per 4 KiB page on
first touch. Measured on this project's 2-core VMs: ~1.4 ms per MB, i.e. ``silu`` of that tensor
in 33-41 ms instead of 14-19 ms; SmolLM2-135M's FFLM on one REALSumm document x 4 summaries 45.4 s
-> 37.9 s in float32, Shannon in bf16 10.8 s -> 7.9 s. Raising the mmap threshold keeps such
buffers in the heap, where the next pass reuses them already mapped (and the trim threshold keeps
the heap from being handed back between passes). Numbers do not change: only where memory comes
from.

The cost: the process keeps its peak heap after scoring (it is reused by the next call, not
returned to the OS). ``NLGMETRICS_KEEP_FREED_MEMORY=0`` leaves malloc as it was. Applied once, on
the first CPU model load, where the C library is glibc (elsewhere nothing happens).

>>> keep_freed_memory() in (True, False)
True
"""

from __future__ import annotations

import ctypes
import os
import threading

_M_TRIM_THRESHOLD = -1  # mallopt parameter numbers, from glibc's malloc.h
_M_MMAP_THRESHOLD = -3
# Above every buffer of the engine's passes (a token budget of 8,192 positions x SmolLM2's 1,536-wide
# MLP in float32 is 50 MB; a pass's [rows, vocab] logits a few hundred MB); larger ones still mmap.
_MMAP_THRESHOLD = 1 << 30
_TRIM_THRESHOLD = (1 << 31) - 1  # an int for mallopt: never trim in practice
ENV = "NLGMETRICS_KEEP_FREED_MEMORY"

_LOCK = threading.Lock()
_applied: bool | None = None


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it (musl, macOS, Windows do not)
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError, TypeError):
        return None
    return libc


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds, once per process; whether they are now raised.

    ``False`` where the C library is not glibc, where ``NLGMETRICS_KEEP_FREED_MEMORY=0``, or where
    glibc refused the values."""
    global _applied
    with _LOCK:
        if _applied is None:
            libc = _glibc() if os.environ.get(ENV, "1").strip() != "0" else None
            _applied = bool(libc is not None
                            and libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) == 1
                            and libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD) == 1)
        return _applied
