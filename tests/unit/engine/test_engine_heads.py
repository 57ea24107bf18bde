"""The gathered LM head (engine/heads.py) under threads: each thread's forward passes gather their
own rows, whether the threads share one model or not, and none waits for another."""

from __future__ import annotations

import threading

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from nlgmetrics.engine import CausalQuery, causal_target_scores, load_lm
from nlgmetrics.engine.heads import logits_at


def _tiny_gpt2(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return GPT2LMHeadModel(GPT2Config(n_embd=16, n_layer=2, n_head=2, vocab_size=50, n_positions=32)).eval()


def _meet_inside_the_forward(model: torch.nn.Module, barrier: threading.Barrier) -> torch.utils.hooks.RemovableHandle:
    """Each pass through the first block waits for the other thread's pass: both threads are then
    inside a forward of theirs at once, each with its gathering hook on the base model."""
    return model.transformer.h[0].register_forward_hook(lambda *_: _wait(barrier))


def _wait(barrier: threading.Barrier) -> None:
    barrier.wait()


# Two requests of different shapes, gathering different rows: thread-crossed hooks would give one
# thread the other's rows (wrong numbers) or index rows that were already gathered (an error).
REQUESTS = [
    (torch.tensor([[1, 2, 3, 4, 5, 6]]), torch.tensor([0, 0, 0]), torch.tensor([1, 3, 5])),
    (torch.tensor([[7, 8, 9, 10], [11, 12, 13, 14]]), torch.tensor([1, 0]), torch.tensor([2, 0])),
]


def _in_two_threads(work) -> list:
    results: list = [None, None]
    errors: list[BaseException] = []

    def run(which: int) -> None:
        try:
            results[which] = work(which)
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(which,)) for which in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    return results


@pytest.mark.parametrize("shared", [True, False], ids=["one model", "two models"])
def test_threads_gather_their_own_rows_at_the_same_time(shared):
    models = [_tiny_gpt2(0)] * 2 if shared else [_tiny_gpt2(0), _tiny_gpt2(1)]
    with torch.inference_mode():
        # Oracle: the plain forward's logits at the rows, each request alone.
        serial = [models[i](input_ids=ids).logits[b, p] for i, (ids, b, p) in enumerate(REQUESTS)]
    barrier = threading.Barrier(2, timeout=20)  # a lock between the threads would break it
    for model in set(models):
        _meet_inside_the_forward(model, barrier)

    def gather(which: int) -> torch.Tensor:
        ids, batch_index, position_index = REQUESTS[which]
        with torch.inference_mode():
            return logits_at(models[which], True, {"input_ids": ids}, batch_index, position_index)

    for got, want in zip(_in_two_threads(gather), serial):
        torch.testing.assert_close(got, want)


def test_two_threads_scoring_with_one_loaded_model_match_serial_scores(tiny_gpt2_dir):
    lm = load_lm(tiny_gpt2_dir, "causal", device="cpu")
    assert lm.gather_head
    bos = lm.tokenizer.bos_token_id
    # Same shapes (so the same passes in both threads), different tokens.
    requests = [
        [CausalQuery((bos, 5, 6), (7, 8, 9)), CausalQuery((bos,), (10, 11))],
        [CausalQuery((bos, 15, 16), (17, 18, 19)), CausalQuery((bos,), (20, 21))],
    ]
    serial = [[s.logprobs for s in causal_target_scores(lm, queries, progress=False)] for queries in requests]
    barrier = threading.Barrier(2, timeout=20)
    handle = _meet_inside_the_forward(lm.model, barrier)
    try:
        threaded = _in_two_threads(
            lambda which: [s.logprobs for s in causal_target_scores(lm, requests[which], progress=False)]
        )
    finally:
        handle.remove()
    for got, want in zip(threaded, serial):
        assert [g.tolist() for g in got] == [w.tolist() for w in want]
