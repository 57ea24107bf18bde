"""Split distinct work across processes with accelerate; same results for any number of processes.

Launch a script with ``accelerate launch`` or ``torchrun --nproc_per_node N``: every process runs
the same code, :func:`distributed_map` gives each one a contiguous shard of the items, and gathers
the results back, in the original order, on every process. In a plain single process it is just
``fn(items)``.

>>> distributed_map([1, 2, 3], lambda shard: [x * x for x in shard])
[1, 4, 9]
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch
import torch.distributed as dist

T = TypeVar("T")
R = TypeVar("R")


def process_state() -> Any | None:
    """accelerate's ``PartialState`` when running under several processes, else ``None``.

    CPU runs (no CUDA) initialise a gloo process group (``PartialState(cpu=True)``).
    """
    try:  # a cheap check before touching accelerate: a launcher sets WORLD_SIZE (torchrun, accelerate)
        several = int(os.environ.get("WORLD_SIZE", "1")) > 1
    except ValueError:
        several = False
    if not several:
        return None
    from accelerate import PartialState

    state = PartialState(cpu=not torch.cuda.is_available())
    return state if state.num_processes > 1 else None


def is_main_process() -> bool:
    """True in a single process, and on rank 0 of a distributed run (for progress bars, printing)."""
    state = process_state()
    return state is None or state.is_main_process


def to_cpu(value: Any) -> Any:
    """Move tensors (also inside tuples, lists, dicts) to CPU so they can be pickled and gathered."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu")
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(to_cpu(v) for v in value)
    if isinstance(value, list):
        return [to_cpu(v) for v in value]
    if isinstance(value, dict):
        return {k: to_cpu(v) for k, v in value.items()}
    return value


_OBJECT_GROUPS: dict[int, Any] = {}


def _object_group() -> Any:
    """A gloo group over every process, for gathering pickled results on the CPU.

    Under NCCL (the default on GPUs) an object gather goes through the GPU, and NCCL refuses two
    processes on one GPU ("Duplicate GPU detected"), which is what ``accelerate launch
    --num_processes 2`` on a one-GPU machine gives (both ranks on ``cuda:0``); the pickles gain
    nothing from a GPU anyway. Every process reaches this in the same order (all run the same
    code), as creating a group requires; a new default group gets a new gloo group.
    """
    key = id(dist.group.WORLD)
    if key not in _OBJECT_GROUPS:
        _OBJECT_GROUPS[key] = dist.new_group(backend="gloo")
    return _OBJECT_GROUPS[key]


def distributed_map(items: Sequence[T], fn: Callable[[list[T]], list[R]]) -> list[R]:
    """``fn`` over ``items``, split across processes; results in the order of ``items``, everywhere.

    ``fn`` receives a list (this process's shard) and must return one result per item, picklable
    (tensors are moved to CPU before gathering). Each item is computed by exactly one process, so
    any number of processes gives the same results as one.
    """
    items = list(items)
    state = process_state()
    # split_between_processes hands out contiguous chunks, rank order == item order, without
    # padding; gathered in rank order, they restore the original order.
    with contextlib.nullcontext(items) if state is None else state.split_between_processes(items) as shard:
        local = list(fn(list(shard)))
        if len(local) != len(shard):
            raise ValueError(f"fn returned {len(local)} results for {len(shard)} items.")
    if state is None:
        return local
    # Each shard gave one result per item and the shards partition ``items``: the gathered list is whole.
    return [r for chunk in gather_from_every_process([to_cpu(r) for r in local]) for r in chunk]


def gather_from_every_process(value: Any) -> list[Any]:
    """``value`` of every process, in rank order, on every process (``[value]`` in one process).
    A collective: every process must call it, in the same order."""
    state = process_state()
    if state is None:
        return [value]
    gathered: list[Any] = [None] * state.num_processes
    dist.all_gather_object(gathered, value, group=_object_group())
    return gathered


def broadcast_from_main(value: Any) -> Any:
    """The main process's ``value`` on every process (what the others pass is ignored). A
    collective: every process must call it, in the same order."""
    state = process_state()
    if state is None:
        return value
    box = [value if state.is_main_process else None]
    dist.broadcast_object_list(box, src=0, group=_object_group())
    return box[0]


def agreed_subset(local: set[int]) -> set[int]:
    """The members of ``local`` that every process also holds (all of ``local`` in one process).

    Each process looks the store up on its own, and another job may write between two of those
    lookups: planning only what *every* process found lets all of them plan the same misses."""
    return set(local).intersection(*gather_from_every_process(sorted(local)))
