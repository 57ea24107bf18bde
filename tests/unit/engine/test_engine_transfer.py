"""Deferred device->host results (engine/transfer.py) and the one-unit-late reading in run_units.

The GPU behaviour (copies that do not wait for later kernels) needs a GPU; what is checked here on
the CPU is the contract every platform shares: the same values, read exactly once, in the same
order, and unit k's results read only after unit k+1 has been launched.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nlgmetrics.engine import CausalQuery, iter_causal, load_lm, target_logprobs_float32
from nlgmetrics.engine.causal import target_logprobs_float32_deferred
from nlgmetrics.engine.runner import run_units
from nlgmetrics.engine.transfer import DeferredHost, resolve, resolve_results, to_device


def test_deferred_host_returns_the_arrays():
    pending = DeferredHost([torch.tensor([1.0, -2.0]), None, torch.tensor([3], dtype=torch.long)],
                           lambda arrays: [None if a is None else a.copy() for a in arrays])
    values = pending.get()
    assert values[0].tolist() == [1.0, -2.0] and values[1] is None and values[2].tolist() == [3]
    assert resolve(pending)[2].dtype == np.int64
    assert resolve(7) == 7 and resolve_results([(0, pending), (1, "x")])[1] == (1, "x")


def test_to_device_on_cpu_is_an_exact_copy():
    source = torch.arange(5)
    moved = to_device(source, torch.device("cpu"))
    assert moved.tolist() == [0, 1, 2, 3, 4] and moved.device.type == "cpu"


def test_deferred_target_logprobs_equal_the_immediate_ones():
    torch.manual_seed(0)
    logits = torch.randn(9, 50)
    targets = [int(t) for t in torch.randint(0, 50, (9,))]
    lp, best = target_logprobs_float32(logits, targets, with_argmax=True)
    lp_d, best_d = target_logprobs_float32_deferred(logits, targets, with_argmax=True).get()
    assert np.array_equal(lp, lp_d) and np.array_equal(best, best_d)
    assert lp_d.dtype == np.float64 and best_d.dtype == np.int64
    # Naive oracle: float64 log-softmax of the same rows.
    oracle = torch.log_softmax(logits.double(), dim=-1)[torch.arange(9), torch.tensor(targets)]
    assert np.max(np.abs(lp_d - oracle.numpy())) < 1e-5


def test_run_units_reads_each_unit_after_launching_the_next():
    events: list[str] = []

    class Recorded(DeferredHost):
        def __init__(self, unit, value):
            super().__init__([torch.tensor([float(value)])], lambda arrays: float(arrays[0][0]))
            self.unit = unit

        def get(self):
            events.append(f"read {self.unit}")
            return super().get()

    def run_unit(unit):
        events.append(f"launch {unit[0]}")
        return [(i, Recorded(unit[0], 10 * i)) for i in unit]

    out = list(run_units([[0, 1], [2], [3, 4]], run_unit, len, progress=False, desc="t"))
    assert out == [(0, 0.0), (1, 10.0), (2, 20.0), (3, 30.0), (4, 40.0)]
    assert events == ["launch 0", "launch 2", "read 0", "read 0", "launch 3", "read 2", "read 3", "read 3"]


def test_iter_causal_yields_plain_arrays_with_the_deferred_reduce(tiny_gpt2_dir):
    lm = load_lm(str(tiny_gpt2_dir))
    bos = lm.tokenizer.bos_token_id
    queries = [CausalQuery((bos, 5, 6), (7, 8, 9)), CausalQuery((bos, 5, 6), (10,)), CausalQuery((bos,), ()),
               CausalQuery((bos, 11), (12, 13))]
    deferred = dict(iter_causal(lm, queries, lambda logits, q: target_logprobs_float32_deferred(logits, q.target_ids),
                                progress=False, token_budget=8))
    immediate = dict(iter_causal(lm, queries, lambda logits, q: target_logprobs_float32(logits, q.target_ids),
                                 progress=False, token_budget=8))
    assert sorted(deferred) == [0, 1, 2, 3]
    for i in range(4):
        assert isinstance(deferred[i], tuple) and np.array_equal(deferred[i][0], immediate[i][0])
    assert deferred[2][0].shape == (0,)


def test_deferred_host_reads_several_cpu_tensors():
    assert DeferredHost([torch.zeros(1), torch.ones(1)], lambda a: [x.tolist() for x in a]).get() == [[0.0], [1.0]]


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_deferred_host_waits_for_the_copies_of_every_device():
    """Each device's copies are awaited on its own stream: large tensors made by queued kernels on
    two devices read back exactly, with no synchronisation by the caller."""
    a = torch.arange(1 << 22, device="cuda:0", dtype=torch.float32) * 3
    b = torch.arange(1 << 22, device="cuda:1", dtype=torch.float32) * 5
    got = DeferredHost([a, None, b], lambda arrays: arrays).get()
    assert got[1] is None
    assert (got[0] == np.arange(1 << 22, dtype=np.float32) * 3).all()
    assert (got[2] == np.arange(1 << 22, dtype=np.float32) * 5).all()


@pytest.mark.parametrize("vocab", [7, 1024, 3000, 49152])
def test_logsumexp_and_argmax_equal_torch_bit_for_bit(vocab):
    from nlgmetrics.engine.causal import logsumexp_and_argmax

    torch.manual_seed(vocab)
    # bf16-rounded logits tie often; plant ties across and inside slices, and the special values.
    logits = (torch.randn(12, vocab) * 4).bfloat16().float()
    logits[1, :] = 2.5  # all tied: the first index wins
    logits[2, vocab // 2] = logits[2, vocab - 1] = 99.0  # tie across slices
    logits[3, vocab - 1] = 99.0  # maximum in the last (possibly short) slice
    logits[4, vocab // 3] = float("nan")
    logits[5, vocab // 2] = float("inf")
    logits[6, :] = float("-inf")
    logits[7, 0] = float("nan")
    logits[7, vocab - 1] = 1e30
    normaliser, best = logsumexp_and_argmax(logits)
    assert torch.equal(best, logits.argmax(dim=-1))
    torch.testing.assert_close(normaliser, torch.logsumexp(logits, dim=-1), rtol=0, atol=0, equal_nan=True)
    assert best[1] == 0 and best[2] == vocab // 2 and best[4] == vocab // 3
    assert torch.isnan(normaliser[4]) and normaliser[6] == float("-inf")


def test_target_logprobs_with_argmax_on_bfloat16_rounded_logits():
    torch.manual_seed(1)
    logits = (torch.randn(40, 5000) * 3).bfloat16().float()
    targets = [int(t) for t in logits.argmax(dim=-1)[:20]] + [int(t) for t in torch.randint(0, 5000, (20,))]
    lp, best = target_logprobs_float32(logits, targets, with_argmax=True)
    want = logits.gather(1, torch.tensor(targets)[:, None]).squeeze(1) - torch.logsumexp(logits, dim=-1)
    assert np.array_equal(lp, want.double().numpy()) and np.array_equal(best, logits.argmax(dim=-1).numpy())
