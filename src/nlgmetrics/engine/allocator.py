"""An opt-in for CPU runs: keep a forward pass's freed buffers in glibc's heap for the next pass.

glibc's ``malloc`` serves a buffer above its mmap threshold (32 MiB at most, by default) with a
fresh ``mmap`` and unmaps it when freed, and hands the top of its heap back to the system above a
trim threshold; the next forward pass then page-faults the same amount of memory in again. On an
AMX Xeon that costs FFLM on SmolLM2-135M in bfloat16 (REALSumm document 0 x 8 summaries) 8.2 s ->
9.2-11.5 s, with 1.1-2.9 M minor page faults per call against ~100, most of them in the model
body's own activations (``benchmarks/results/speed_engine_vs_commit/speed_engine_vs_commit.md``). Raising both thresholds
keeps those buffers mapped for reuse. Numbers do not change: only where memory comes from.

The library never does this by itself: it changes ``malloc`` for the whole process, which then
keeps its peak heap instead of returning it. Ask for it with :func:`keep_freed_memory`, or with
``NLGMETRICS_KEEP_FREED_MEMORY=1`` in the environment (applied at the first CPU model load; unlike
``GLIBC_TUNABLES`` it can be set from inside a running notebook). Only glibc has the setting;
elsewhere nothing happens.

>>> requested_by(environment={"NLGMETRICS_KEEP_FREED_MEMORY": "1"}), requested_by(environment={})
(True, False)
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Mapping

ENV = "NLGMETRICS_KEEP_FREED_MEMORY"
_M_TRIM_THRESHOLD = -1  # mallopt parameter numbers (glibc's malloc.h)
_M_MMAP_THRESHOLD = -3
# Above every buffer of a pass at the default token budget (SmolLM2's 1,536-wide MLP over 8,192
# positions in float32 is 50 MB; a pass's gathered logits a few hundred MB); larger ones still mmap.
_MMAP_THRESHOLD = 1 << 30
_TRIM_THRESHOLD = (1 << 31) - 1  # the largest int mallopt takes: no trimming in practice

_LOCK = threading.Lock()
_applied = False


def requested_by(environment: Mapping[str, str] | None = None) -> bool:
    """Whether ``NLGMETRICS_KEEP_FREED_MEMORY=1`` is set (in ``environment``, default ``os.environ``)."""
    return (os.environ if environment is None else environment).get(ENV, "").strip() == "1"


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds for this process (once); whether they are raised.

    ``False`` where the C library is not glibc or glibc refused the values. Irreversible for the
    process: glibc's dynamic thresholds stay off once set.
    """
    global _applied
    with _LOCK:
        if not _applied:
            libc = _glibc()
            _applied = bool(libc is not None
                            and libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) == 1
                            and libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD) == 1)
        return _applied


class AllocatorHint(UserWarning):
    """The one-time hint that :func:`keep_freed_memory` exists (filter this category to silence it)."""


_HINTED = False


def after_cpu_load(dtype: object, native: bool) -> None:
    """What a model load on a CPU does here: the opt-in (:func:`keep_freed_memory`) where the user
    asked for it (never a default); else, once per process, an :class:`AllocatorHint` warning that
    names it, for a half-precision dtype the CPU has native units for while the opt-in is off
    (there glibc's page faults are a larger share of the time:
    ``benchmarks/results/engine_mechanisms/engine_mechanisms.md``)."""
    global _HINTED
    name = str(dtype).removeprefix("torch.")
    if requested_by():
        keep_freed_memory()
    elif not _HINTED and name in ("bfloat16", "float16") and native and not _applied and _glibc() is not None:
        import warnings

        _HINTED = True
        message = (f"dtype={name} on a CPU: {ENV}=1 before the first model load (or "
                   "nlgmetrics.engine.keep_freed_memory()) lets each forward pass reuse the large buffers "
                   "of the one before instead of page-faulting fresh ones, the same numbers faster; it "
                   "changes malloc for the whole process, which then keeps its peak heap, so the library "
                   "never does it by itself (measured gains: "
                   "benchmarks/results/engine_mechanisms/engine_mechanisms.md; silence this hint with "
                   "warnings.filterwarnings('ignore', category=nlgmetrics.engine.allocator.AllocatorHint)).")
        warnings.warn(message, AllocatorHint, stacklevel=3)


def trim_heap() -> None:
    """Hand freed heap memory back to the system (glibc's ``malloc_trim``): glibc keeps freed
    blocks below its mmap threshold (a bfloat16 model's converted tensors) in its heap. A one-off
    call, no setting: the allocator's thresholds stay as they are. Elsewhere nothing is done."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it (musl, macOS, Windows do not), and mallopt
    except (OSError, AttributeError, TypeError):
        return None
    return libc
