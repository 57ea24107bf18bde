"""Work planning: score each distinct input once, pack length-sorted batches, back off on OOM.

Every LM metric sends the engine many token sequences, often the same ones again (one reference
paired with 25 systems). Planning makes that cheap:

- :func:`dedupe` maps the queries to their distinct keys, so each distinct one runs once;
- :func:`plan_batches` sorts by length and packs batches so that the *padded* token count of a
  batch stays under a budget (short sequences travel in big batches, long ones in small ones);
- :func:`run_with_backoff` halves a batch that ran out of device memory and retries the halves.

>>> dedupe(["a", "b", "a"])
([0, 1], [0, 1, 0])
>>> plan_batches([5, 3, 5, 1], token_budget=10)
[[0, 2], [1, 3]]
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import torch

T = TypeVar("T")
R = TypeVar("R")


def dedupe(keys: Sequence[Hashable]) -> tuple[list[int], list[int]]:
    """Distinct keys, first occurrence kept.

    Returns ``(unique_indices, inverse)``: ``unique_indices[j]`` is the index in ``keys`` of the
    j-th distinct key, and ``inverse[i]`` is the position in ``unique_indices`` of ``keys[i]``.

    >>> dedupe([(1, 2), (3,), (1, 2)])
    ([0, 1], [0, 1, 0])
    """
    first: dict[Hashable, int] = {}
    unique: list[int] = []
    inverse: list[int] = []
    for i, key in enumerate(keys):
        j = first.get(key)
        if j is None:
            j = len(unique)
            first[key] = j
            unique.append(i)
        inverse.append(j)
    return unique, inverse


def plan_batches(
    lengths: Sequence[int], token_budget: int = 8192, batch_size: int | None = None
) -> list[list[int]]:
    """Group indices of ``lengths`` into batches, longest first, padded tokens <= ``token_budget``.

    A batch is padded to its longest member, so its cost is ``len(batch) * max(length)``; sorting
    by length keeps that padding small. ``batch_size`` additionally caps the number of sequences.
    A sequence longer than the budget gets a batch of its own (it must run somehow). Ties keep
    input order, so the plan is deterministic.

    >>> plan_batches([2, 8, 4, 4], token_budget=8)
    [[1], [2, 3], [0]]
    >>> plan_batches([2, 2, 2], token_budget=100, batch_size=2)
    [[0, 1], [2]]
    """
    if token_budget < 1:
        raise ValueError(f"token_budget must be a positive integer, got {token_budget!r}.")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer or None, got {batch_size!r}.")
    # Longest first: the first batch is the most memory-hungry, so an OOM shows up immediately.
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    current_max = 0
    for i in order:
        length = max(int(lengths[i]), 1)
        new_max = max(current_max, length)
        too_many = batch_size is not None and len(current) >= batch_size
        if current and (too_many or (len(current) + 1) * new_max > token_budget):
            batches.append(current)
            current, new_max = [], length
        current.append(i)
        current_max = new_max
    if current:
        batches.append(current)
    return batches


def is_out_of_memory(error: BaseException) -> bool:
    """True for device out-of-memory errors (CUDA, MPS, XPU), whatever torch version raised them."""
    oom_types = tuple(
        t
        for t in (getattr(torch, "OutOfMemoryError", None), getattr(torch.cuda, "OutOfMemoryError", None))
        if isinstance(t, type)
    )
    if oom_types and isinstance(error, oom_types):
        return True
    # MPS and some backends raise a plain RuntimeError with this text.
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def _free_device_memory() -> None:
    # Only a device allocator benefits; a full gc.collect() costs ~0.3 s on a big heap.
    if torch.cuda.is_available():
        gc.collect()
        torch.cuda.empty_cache()


def run_with_backoff(batch: Sequence[T], fn: Callable[[list[T]], list[R]]) -> list[R]:
    """``fn(batch)``; on out-of-memory, split the batch in two halves and run each (recursively).

    Results come back aligned with ``batch``. A single item that still does not fit re-raises the
    error, with a hint: nothing smaller can be tried.

    >>> run_with_backoff([1, 2, 3], lambda xs: [x * 10 for x in xs])
    [10, 20, 30]
    """
    items = list(batch)
    try:
        return fn(items)
    except Exception as error:  # noqa: BLE001 - re-raised unless it is an OOM we can split
        if not is_out_of_memory(error):
            raise
        if len(items) <= 1:
            raise type(error)(
                f"{error}\n[nlgmetrics] a single sequence does not fit in device memory; use a "
                "smaller model, dtype='bfloat16', or shorter inputs."
            ) from error
    # Outside the except block: the traceback no longer pins the failed batch's tensors.
    _free_device_memory()
    half = len(items) // 2
    return run_with_backoff(items[:half], fn) + run_with_backoff(items[half:], fn)


def chunk_by_key(keys: Sequence[Hashable], chunk_size: int) -> list[list[int]]:
    """Indices of ``keys`` in chunks of at most ``chunk_size`` *distinct* keys, each key whole.

    Metrics use it to bound memory on a large call: a chunk takes whole documents (every example
    that shares a document lands in the same chunk), so per-document reuse (one pass per distinct
    document, a shared prefix cache) is the same as in one big call. Keys keep their order of first
    appearance; inside a chunk, the indices of one key are contiguous and ascending.

    >>> chunk_by_key(["a", "b", "a", "c", "b"], chunk_size=2)
    [[0, 2, 1, 4], [3]]
    >>> chunk_by_key([], chunk_size=3)
    []
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}.")
    groups: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    members = list(groups.values())
    return [
        [i for group in members[first : first + chunk_size] for i in group]
        for first in range(0, len(members), chunk_size)
    ]
