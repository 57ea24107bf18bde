"""Load-time self-checks: does a fast path give a model's own logits?

The engine's fast paths (gathered head rows, right padding without a mask, packed rows behind a
cached prefix) are taken only where a short probe shows the model gives, through the fast path,
the logits of the plain computation. A probe is a function of the model returning pairs
``(fast, plain)`` of float32 logits; :func:`probe_passes` runs it and judges the pairs.

In float32 the pairs must agree within float32 rounding. In half precision two computations of
the same logits in different batch shapes can differ by as much as half precision differs from
float32 (SmolLM2-135M in bf16: 1.2 on logits of scale 33) wherever the kernels round different
batch shapes differently (the packing probe failed in bf16 on an AVX-512 BF16 CPU without AMX;
with AMX the same probes agree bit for bit). So a
half-precision pair outside the dtype's tolerance is judged against float32 truth: the probe is
run again on a float32 copy of the model (the model itself is never converted), which must agree
within float32 rounding (the fast path's semantics), and the half-precision fast logits must be
no farther from that truth than rounding takes the plain ones (twice their error, plus the
dtype's tolerance). Where the copy does not fit in memory, the fast path is not taken: slower,
never wrong. A model load's checks share one copy (:func:`sharing_float32_copies`).

>>> a = torch.tensor([[1.0, 2.0]])
>>> logits_agree(a, a + 1e-6, torch.float32), logits_agree(a, a + 1e-3, torch.float32)
(True, False)
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import torch

LogitPairs = Sequence[tuple[torch.Tensor, torch.Tensor]]

# Share of the available memory a float32 copy of a half-precision model may take for a probe.
_COPY_MEMORY_SHARE = 0.5


def probe_setting(model: torch.nn.Module) -> tuple[torch.device, torch.dtype, int] | None:
    """``(device, dtype, vocabulary size)`` for a load-time self-check of ``model``, or ``None``
    when it cannot be probed (no parameters, or a vocabulary too small for distinct probe ids)."""
    try:
        parameter = next(model.parameters())
    except StopIteration:
        return None
    vocab = model.get_output_embeddings().weight.shape[0]
    return None if vocab < 4 else (parameter.device, parameter.dtype, vocab)


def _tolerance(dtype: torch.dtype) -> float:
    return 1e-5 if dtype == torch.float32 else 2e-2


def logits_agree(got: torch.Tensor, want: torch.Tensor, dtype: torch.dtype) -> bool:
    """Same shape, finite, and equal within the rounding of ``dtype`` relative to the logits'
    scale (1e-5 in float32, 2e-2 in half precision)."""
    if got.shape != want.shape or not bool(torch.isfinite(got).all()):
        return False
    return (got - want).abs().max().item() <= _tolerance(dtype) * (1.0 + want.abs().max().item())


def _available_bytes(device: torch.device) -> int | None:
    """Free memory on ``device`` (CPU: the kernel's MemAvailable), or ``None`` when unknown."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    if device.type == "cpu":
        try:
            with open("/proc/meminfo", encoding="ascii") as meminfo:
                for line in meminfo:
                    if line.startswith("MemAvailable:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            return None
    return None


def float32_copy(model: torch.nn.Module) -> torch.nn.Module | None:
    """A float32 copy of ``model`` on its device, or ``None`` when it would take more than half
    of the memory known to be free there (or that is unknown)."""
    first = next(model.parameters())
    needed = sum(t.numel() for t in [*model.parameters(), *model.buffers()]) * 4
    available = _available_bytes(first.device)
    if available is None or needed > _COPY_MEMORY_SHARE * available:
        return None
    return copy.deepcopy(model).to(torch.float32).eval()


_SHARED = threading.local()


@contextmanager
def sharing_float32_copies() -> Iterator[None]:
    """Within, the self-checks of a model share one float32 copy of it, made when the first one
    needs it (a model load runs three checks; copying a large model three times costs seconds)."""
    outermost = getattr(_SHARED, "copies", None) is None
    if outermost:
        _SHARED.copies = {}
    try:
        yield
    finally:
        if outermost:
            del _SHARED.copies


def _float32_reference(model: torch.nn.Module) -> torch.nn.Module | None:
    copies = getattr(_SHARED, "copies", None)
    if copies is None:
        return float32_copy(model)
    if id(model) not in copies:  # None (no room) is kept too: the next check need not look again
        copies[id(model)] = float32_copy(model)
    return copies[id(model)]


def _error(got: torch.Tensor, truth: torch.Tensor) -> float:
    return (got - truth).abs().max().item()


def probe_passes(model: torch.nn.Module, probe: Callable[[torch.nn.Module], LogitPairs]) -> bool:
    """Whether every ``(fast, plain)`` pair of ``probe(model)`` agrees (see the module docstring);
    any error in the probe means it does not."""
    dtype = next(model.parameters()).dtype
    try:
        with torch.inference_mode():
            pairs = list(probe(model))
    except Exception:  # noqa: BLE001 - any failure means: do not use the fast path
        return False
    if all(logits_agree(fast, plain, dtype) for fast, plain in pairs):
        return True
    if dtype == torch.float32:
        return False
    try:
        reference = _float32_reference(model)
        if reference is None:
            return False
        with torch.inference_mode():
            exact = list(probe(reference))
    except Exception:  # noqa: BLE001 - as above (a model that cannot be copied included)
        return False
    return agree_with_float32_truth(pairs, exact, dtype)


def agree_with_float32_truth(pairs: LogitPairs, exact: LogitPairs, dtype: torch.dtype) -> bool:
    """The half-precision judgement: the float32 pairs ``exact`` agree within float32 rounding,
    and each half-precision fast result is finite and no farther from the float32 plain result
    than twice the half-precision plain result's distance to it, plus the ``dtype`` tolerance.

    >>> truth = torch.tensor([0.0, 10.0])
    >>> plain = truth + torch.tensor([1.0, 0.0])                  # rounding moved it by 1.0
    >>> exact = [(truth, truth)]
    >>> [agree_with_float32_truth([(truth + d, plain)], exact, torch.bfloat16) for d in (2.1, 2.5)]
    [True, False]
    """
    if len(exact) != len(pairs) or not all(logits_agree(fast, plain, torch.float32) for fast, plain in exact):
        return False
    for (fast, plain), (_, truth) in zip(pairs, exact):
        if fast.shape != truth.shape or plain.shape != truth.shape or not bool(torch.isfinite(fast).all()):
            return False
        slack = _tolerance(dtype) * (1.0 + truth.abs().max().item())
        if _error(fast, truth) > 2.0 * _error(plain, truth) + slack:
            return False
    return True
