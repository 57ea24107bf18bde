"""Planning: dedupe, token-budget batching, OOM back-off (pure Python, no model)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlgmetrics.engine.planning import (
    PADDING_SLACK,
    dedupe,
    is_out_of_memory,
    plan_batches,
    run_with_backoff,
)


def test_dedupe_keeps_first_occurrence_and_maps_back():
    keys = ["b", "a", "b", "c", "a"]
    distinct, copies = dedupe(keys)
    assert distinct == ["b", "a", "c"]
    assert copies == [[0, 2], [1, 4], [3]]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=30))
def test_dedupe_copies_partition_the_indices(keys):
    distinct, copies = dedupe(keys)
    assert len(set(distinct)) == len(distinct) == len(copies)
    assert sorted(i for indices in copies for i in indices) == list(range(len(keys)))
    assert all(keys[i] == item for item, indices in zip(distinct, copies) for i in indices)
    assert [indices[0] for indices in copies] == sorted(indices[0] for indices in copies)  # first-seen order


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 300), max_size=60),
    budget=st.integers(1, 2000),
    batch_size=st.one_of(st.none(), st.integers(1, 9)),
)
def test_plan_batches_partitions_and_respects_budget(lengths, budget, batch_size):
    batches = plan_batches(lengths, budget, batch_size)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(len(lengths)))  # every index exactly once
    for batch in batches:
        padded = len(batch) * max(lengths[i] for i in batch)
        # Budget holds, except a single over-long sequence that has to run alone.
        assert padded <= budget or len(batch) == 1
        if batch_size is not None:
            assert len(batch) <= batch_size
    # Longest first: batch maxima never increase.
    maxima = [max(lengths[i] for i in b) for b in batches]
    assert maxima == sorted(maxima, reverse=True)


def _closes(batch: list[int], nxt: int, lengths: list[int], budget: int, batch_size, context: int, slack: float) -> bool:
    """Whether adding ``nxt`` to ``batch`` breaks a bound (written out independently of the planner)."""
    members = [max(lengths[i], 1) for i in batch] + [max(lengths[nxt], 1)]
    width = max(members)
    return (
        (batch_size is not None and len(members) > batch_size)
        or len(members) * (context + width) > budget
        or len(members) * width > (1 + slack) * sum(members)
    )


@settings(max_examples=300, deadline=None)
@given(
    # Skewed lengths too: a few long sequences among many short ones.
    lengths=st.lists(st.one_of(st.integers(0, 20), st.integers(1, 600)), max_size=80),
    budget=st.integers(1, 5000),
    batch_size=st.one_of(st.none(), st.integers(1, 30)),
    context=st.integers(0, 300),
    slack=st.sampled_from([0.0, 0.1, PADDING_SLACK, 1.0, 3.0]),
)
def test_plan_batches_bounds_padding(lengths, budget, batch_size, context, slack):
    batches = plan_batches(lengths, budget, batch_size, context=context, padding_slack=slack)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(len(lengths)))  # every index exactly once
    for batch in batches:
        assert batch
        sizes = [max(lengths[i], 1) for i in batch]
        if len(batch) == 1:
            continue  # a lone sequence runs whatever its size
        # padded positions bounded against the real ones; budget with the context rows hold
        assert len(batch) * max(sizes) <= (1 + slack) * sum(sizes)
        assert len(batch) * (context + max(sizes)) <= budget
        if batch_size is not None:
            assert len(batch) <= batch_size
    # Longest first, and batches are runs of the (length, index) order: deterministic.
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    assert [i for b in batches for i in b] == order
    # Greedy, not over-split: each batch was closed because its successor's first member breaks a bound.
    for batch, following in zip(batches, batches[1:]):
        assert _closes(batch, following[0], lengths, budget, batch_size, context, slack)
    assert plan_batches(lengths, budget, batch_size, context=context, padding_slack=slack) == batches


def test_plan_batches_padding_bound_on_skewed_lengths():
    """One long sequence among short ones (the Shannon score's document sentences): it runs
    alone instead of padding the short ones to its length."""
    lengths = [576] + [20] * 20 + [16] * 5
    unbounded = plan_batches(lengths, 8192, padding_slack=float("inf"))
    assert unbounded == [list(range(14)), list(range(14, 26))]  # 14 x 576 = 8064 <= 8192
    bounded = plan_batches(lengths, 8192)
    assert bounded == [[0], list(range(1, 26))]
    positions = sum(len(b) * max(lengths[i] for i in b) for b in bounded)
    assert positions == 576 + 25 * 20 and positions <= (1 + PADDING_SLACK) * sum(lengths)


def test_plan_batches_context_counts_against_the_budget_only():
    # 3 rows x (100 cached + 10) = 330 > 300; 2 rows fit. The context is not padding.
    assert plan_batches([10, 10, 10], 300, context=100) == [[0, 1], [2]]
    assert plan_batches([10, 10, 10], 330, context=100, padding_slack=0.0) == [[0, 1, 2]]


def test_plan_batches_rejects_bad_budget():
    with pytest.raises(ValueError, match="token_budget"):
        plan_batches([3], 0)
    with pytest.raises(ValueError, match="batch_size"):
        plan_batches([3], 10, 0)


def test_backoff_halves_on_oom_and_keeps_order():
    calls = []

    def fn(items):
        calls.append(len(items))
        if len(items) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return [x * 10 for x in items]

    assert run_with_backoff(list(range(7)), fn) == [x * 10 for x in range(7)]
    assert calls[:3] == [7, 3, 1] and max(calls[1:]) <= 4  # 7 -> 3 + 4 -> 1 + 2 | 2 + 2


def test_backoff_reraises_other_errors_and_single_item_oom():
    with pytest.raises(KeyError):
        run_with_backoff([1, 2], lambda xs: {}[0])

    def always_oom(items):
        raise torch.OutOfMemoryError("CUDA out of memory (simulated)")

    with pytest.raises(torch.OutOfMemoryError, match="single sequence"):
        run_with_backoff([1, 2, 3], always_oom)


def test_is_out_of_memory():
    assert is_out_of_memory(torch.OutOfMemoryError("x"))
    # torch's own CPU allocation failure, raised for real (a plain RuntimeError):
    with pytest.raises(RuntimeError) as failed:
        torch.empty(2**62, dtype=torch.uint8)
    assert is_out_of_memory(failed.value)
    assert is_out_of_memory(RuntimeError("MPS backend out of memory"))
    assert not is_out_of_memory(RuntimeError("shape mismatch"))
