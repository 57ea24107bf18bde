"""Planning: dedupe, token-budget batching, OOM back-off (pure Python, no model)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlgmetrics.engine.planning import dedupe, is_out_of_memory, plan_batches, run_with_backoff


def test_dedupe_keeps_first_occurrence_and_maps_back():
    keys = ["b", "a", "b", "c", "a"]
    unique, inverse = dedupe(keys)
    assert unique == [0, 1, 3]
    assert [keys[unique[j]] for j in inverse] == keys


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
    assert is_out_of_memory(RuntimeError("MPS backend out of memory"))
    assert not is_out_of_memory(RuntimeError("shape mismatch"))
