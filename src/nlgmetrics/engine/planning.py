"""Work planning: score each distinct input once, pack length-sorted batches, back off on OOM.

Every LM metric sends the engine many token sequences, often the same ones again (one reference
paired with 25 systems). Planning makes that cheap:

- :func:`dedupe` keeps each distinct query once and remembers where its copies were;
- :func:`plan_batches` sorts by length and packs batches so that the *padded* token count of a
  batch stays under a budget (short sequences travel in big batches, long ones in small ones), its
  logits under what the budget allows at the model's vocabulary (:func:`head_row_allowance`), and
  its padding under a fraction (:data:`PADDING_SLACK`) of its real tokens;
- :func:`run_with_backoff` halves a batch that ran out of device memory and retries the halves;
- :func:`chunk_by_key` cuts a metric's large call into chunks of whole documents.

>>> dedupe(["a", "b", "a"])
(['a', 'b'], [[0, 2], [1]])
>>> plan_batches([5, 3, 5, 1], token_budget=10)   # [3, 1] would be 6 positions for 4 tokens
[[0, 2], [1], [3]]
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import torch

H = TypeVar("H", bound=Hashable)
T = TypeVar("T")
R = TypeVar("R")


def dedupe(items: Sequence[H]) -> tuple[list[H], list[list[int]]]:
    """``(distinct, copies)``: the distinct items in order of first appearance, and for each the
    ascending indices in ``items`` where it occurs (every index appears in exactly one list).

    >>> dedupe([(1, 2), (3,), (1, 2)])
    ([(1, 2), (3,)], [[0, 2], [1]])
    """
    number: dict[H, int] = {}  # in order of first appearance; a repeat keeps the first item
    copies: list[list[int]] = []
    for i, item in enumerate(items):
        j = number.setdefault(item, len(number))
        if j == len(copies):  # a new item
            copies.append([])
        copies[j].append(i)
    return list(number), copies


#: Padding allowed per batch, as a fraction of its real tokens: a batch never holds more than
#: ``(1 + PADDING_SLACK) x`` its real tokens in positions (a lone sequence excepted). Length
#: sorting alone is not enough when lengths are skewed: under a token budget one long sequence
#: takes many short ones padded to its length along. A quarter bounds that padding while one pass
#: still takes many similar lengths; a smaller slack splits the work into many small passes, each
#: with its fixed costs (kernel launches, a KV-cache copy). The measurements behind the value are
#: in ``benchmarks/results/engine_mechanisms/engine_mechanisms.md``.
PADDING_SLACK = 0.25


#: A budget counts each token's logits as if the vocabulary held at most this many entries, so one
#: pass makes at most ``token_budget x LOGITS_VOCABULARY`` logits whatever the model: a 262k
#: vocabulary (Gemma 3) gets a quarter of the head rows a 65k one gets, the same logits memory.
#: Up to this vocabulary (GPT-2, SmolLM2, BERT) a budget plans as a count of tokens alone: a
#: sequence never asks for more head rows than it holds tokens, so the token bound already holds
#: the logits bound.
LOGITS_VOCABULARY = 65_536


def head_row_allowance(token_budget: int, vocab_size: int) -> int:
    """The head rows (positions given logits) a pass of ``token_budget`` may make at a vocabulary of
    ``vocab_size``: ``rows x max(vocab_size, LOGITS_VOCABULARY) <= token_budget x LOGITS_VOCABULARY``.

    >>> head_row_allowance(8192, 49_152), head_row_allowance(8192, 262_144)
    (8192, 2048)
    """
    return token_budget * LOGITS_VOCABULARY // max(int(vocab_size), LOGITS_VOCABULARY)


def _checked_plan(
    lengths: Sequence[int], token_budget: int, batch_size: int | None, head_rows: Sequence[int] | None,
    vocab_size: int,
) -> tuple[list[int], int]:
    """The planners' shared argument checks; ``(each sequence's head rows, the head rows a pass
    may make)``, the former zeros when the caller counts none. Only the budget and the batch cap
    come from a user (``iter_causal``, ``iter_masked``); the engine's own callers pass a context
    and head rows of real sequences, one per length, and keep the default padding slack."""
    if token_budget < 1:
        raise ValueError(f"token_budget must be a positive integer, got {token_budget!r}.")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer or None, got {batch_size!r}.")
    rows = [0] * len(lengths) if head_rows is None else [int(r) for r in head_rows]
    return rows, head_row_allowance(token_budget, vocab_size)


def plan_batches(
    lengths: Sequence[int],
    token_budget: int = 8192,
    batch_size: int | None = None,
    *,
    context: int = 0,
    padding_slack: float = PADDING_SLACK,
    head_rows: Sequence[int] | None = None,
    vocab_size: int = 0,
) -> list[list[int]]:
    """Group indices of ``lengths`` into batches, longest first, by a token budget and a padding bound.

    A batch is padded to its longest member, so it holds ``len(batch) * max(length)`` positions.
    Sequences are sorted by length and packed greedily; a batch is closed before the next (shorter
    or equal) sequence when adding it would

    - hold more than ``token_budget`` tokens: ``len(batch) * (context + max(length))``, where
      ``context`` is what every row also holds without computing it (a cached prefix's keys and
      values, replicated per row: memory, not work);
    - hold more than ``batch_size`` sequences;
    - make more logits than the budget allows: ``sum(head_rows)`` over the batch above
      :func:`head_row_allowance` at ``vocab_size`` (``head_rows[i]``: the positions of sequence
      ``i`` that go through the LM head, at most its length; none counted when not given);
    - hold more than ``(1 + padding_slack) * sum(length)`` positions (padding bounded against the
      real tokens; ``context`` plays no part, it is not padding).

    A sequence alone in a batch is always allowed (it must run somehow), so every bound holds for
    every batch of two or more. Ties keep input order: the plan is deterministic. Since lengths
    only decrease inside a batch, the padding ratio only grows with each member, so closing at the
    first violation loses nothing.

    >>> plan_batches([2, 8, 4, 4], token_budget=8)
    [[1], [2, 3], [0]]
    >>> plan_batches([2, 2, 2], token_budget=100, batch_size=2)
    [[0, 1], [2]]
    >>> plan_batches([40, 10, 9, 9], token_budget=1000)   # 10 would make 80 positions for 50 tokens
    [[0], [1, 2, 3]]
    >>> plan_batches([40, 10, 9, 9], token_budget=1000, padding_slack=float("inf"))
    [[0, 1, 2, 3]]
    >>> plan_batches([3, 3, 3], token_budget=20, context=6)  # a row costs 6 + 3 of the budget
    [[0, 1], [2]]
    >>> plan_batches([4, 4, 4], token_budget=12, head_rows=[4, 4, 4], vocab_size=131_072)  # 6 head rows a pass
    [[0], [1], [2]]
    """
    heads, allowance = _checked_plan(lengths, token_budget, batch_size, head_rows, vocab_size)
    limit = 1.0 + padding_slack
    # Longest first: the first batch is the most memory-hungry, so an OOM shows up immediately.
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    width = real = logits = 0
    for i in order:
        length = max(int(lengths[i]), 1)
        if current:
            rows, new_width = len(current) + 1, max(width, length)
            too_many = batch_size is not None and len(current) >= batch_size
            over_budget = rows * (context + new_width) > token_budget or logits + heads[i] > allowance
            too_padded = rows * new_width > limit * (real + length)
            if too_many or over_budget or too_padded:
                batches.append(current)
                current, width, real, logits = [], 0, 0, 0
        current.append(i)
        width = max(width, length)
        real += length
        logits += heads[i]
    if current:
        batches.append(current)
    return batches


def pack_segments(
    lengths: Sequence[int],
    token_budget: int = 8192,
    batch_size: int | None = None,
    *,
    context: int = 0,
    padding_slack: float = PADDING_SLACK,
    head_rows: Sequence[int] | None = None,
    vocab_size: int = 0,
) -> list[list[list[int]]]:
    """Batches of rows of indices of ``lengths``: several sequences side by side in one row
    (:mod:`nlgmetrics.engine.packing`), first-fit decreasing.

    A batch's width is the longest sequence not yet placed. The others, longest first, each go
    into the first row with room for them, else into a new row while the batch holds at most
    ``token_budget`` tokens, ``rows x (context + width)`` (``context``: a cached prefix every row
    also holds), at most ``batch_size`` sequences, and at most :func:`head_row_allowance` head rows
    (``head_rows``, as in :func:`plan_batches`); a sequence that fits nowhere waits for a later batch
    (a shorter one may still fill a gap). Then, as in :func:`plan_batches`, a batch of
    two or more rows holds at most ``(1 + padding_slack) x`` its real tokens in positions: its last
    (sparsest) rows go back to the waiting sequences until it does. A sequence alone is always
    allowed. Ties keep input order: the plan is deterministic.

    >>> pack_segments([5, 3, 2, 4, 1], token_budget=100)   # 15 positions for 15 tokens
    [[[0], [3, 4], [1, 2]]]
    >>> pack_segments([5, 3, 2, 4, 1], token_budget=12)    # two rows of width 5, then one of width 3
    [[[0], [3, 4]], [[1], [2]]]
    >>> pack_segments([2, 2, 2], token_budget=100, batch_size=2)
    [[[0], [1]], [[2]]]
    >>> pack_segments([39, 4, 4, 3, 2])   # one row of 39 and one of 13 would pad 26 positions
    [[[0]], [[1], [2], [3], [4]]]
    >>> pack_segments([5, 3, 2], token_budget=100, head_rows=[5, 3, 2], vocab_size=1_310_720)  # 5 head rows
    [[[0]], [[1], [2]]]
    """
    heads, allowance = _checked_plan(lengths, token_budget, batch_size, head_rows, vocab_size)
    remaining = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    size = {i: max(int(lengths[i]), 1) for i in remaining}
    batches: list[list[list[int]]] = []
    while remaining:
        width = size[remaining[0]]
        max_rows = max(1, token_budget // (context + width))
        rows: list[list[int]] = []
        room: list[int] = []
        count = logits = 0
        waiting: list[int] = []
        for position, i in enumerate(remaining):
            if batch_size is not None and count >= batch_size:
                waiting.extend(remaining[position:])
                break
            if count and logits + heads[i] > allowance:
                waiting.append(i)
                continue
            fit = next((r for r, free in enumerate(room) if free >= size[i]), None)
            if fit is not None:
                rows[fit].append(i)
                room[fit] -= size[i]
            elif len(rows) < max_rows:
                rows.append([i])
                room.append(width - size[i])
            else:
                waiting.append(i)
                continue
            count += 1
            logits += heads[i]
        real = sum(size[i] for row in rows for i in row)
        while len(rows) > 1 and len(rows) * width > (1 + padding_slack) * real:
            sparse = rows.pop()
            real -= sum(size[i] for i in sparse)
            waiting.extend(sparse)
        batches.append(rows)
        remaining = sorted(waiting, key=lambda i: (-size[i], i))
    return batches


# What torch's CPU allocator raises when malloc fails (a plain RuntimeError, not OutOfMemoryError):
# "[enforce fail at alloc_cpu.cpp:...] DefaultCPUAllocator: can't allocate memory: you tried to
# allocate N bytes. Error code 12 (Cannot allocate memory)".
_CPU_ALLOCATION_FAILURE = "defaultcpuallocator: can't allocate memory"


def is_out_of_memory(error: BaseException) -> bool:
    """True for out-of-memory errors of a device (CUDA, MPS, XPU) or of the CPU allocator, whatever
    torch version raised them."""
    if isinstance(error, torch.cuda.OutOfMemoryError):  # torch.OutOfMemoryError itself from torch 2.5 on
        return True
    # MPS and some backends raise a plain RuntimeError with this text; so does the CPU allocator.
    text = str(error).lower()
    return isinstance(error, RuntimeError) and ("out of memory" in text or _CPU_ALLOCATION_FAILURE in text)


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
                f"{error}\n[nlgmetrics] a single sequence does not fit in memory; use a "
                "smaller model, dtype='bfloat16', or shorter inputs."
            ) from error
    # Outside the except block: the traceback no longer pins the failed batch's tensors. Only a
    # device allocator gets memory back from this, and a full gc.collect() is slow on a big heap.
    if torch.cuda.is_available():
        gc.collect()
        torch.cuda.empty_cache()
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
    members = dedupe(keys)[1]
    chunks = (members[first : first + chunk_size] for first in range(0, len(members), chunk_size))
    return [[i for group in chunk for i in group] for chunk in chunks]
