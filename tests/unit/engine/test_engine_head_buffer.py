"""The LM head's logits on a CPU: written into one buffer the call owns, with the same numbers.

A pass's logits are larger than glibc's largest mmap threshold, so a fresh tensor per pass (and a
float32 copy per query) is a fresh ``mmap`` and its page faults every time. The engine hands a
reduce that declares ``streams_logits`` a query's logits in the model's dtype, converted to float32
a few rows at a time, and, where it also declares ``head_buffer`` (Shannon's), the head's output
from one reused buffer. These tests check that nothing of ``[rows, vocab]`` size is made per
pass any more, that the numbers are bit for bit those of the plain path and of a naive forward,
and that the model is left as it was (also under threads and after an error).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from nlgmetrics.engine import TARGET_LOGPROBS, TARGET_LOGPROBS_ARGMAX, load_lm
from nlgmetrics.engine import causal as causal_module
from nlgmetrics.engine import heads as heads_module
from nlgmetrics.engine.causal import CausalQuery, iter_causal

TEXTS = ["The cat sat on the mat and looked at the door.", "A storm hit the coast on Monday night.",
         "Prices rose again.", "The committee met twice but reached no decision on the budget.",
         "He said nothing.", "Rain is expected in the north later this week, with snow on high ground."]


def _queries(lm) -> list[CausalQuery]:
    start = lm.tokenizer.bos_token_id if lm.tokenizer.bos_token_id is not None else lm.tokenizer.eos_token_id
    prefix = tuple(lm.tokenizer("Some context first.")["input_ids"])
    texts = [f"{a} {b}" for a in TEXTS for b in TEXTS[:3]]  # 18 texts of 10-30 tokens
    out = [CausalQuery((start,), tuple(lm.tokenizer(t)["input_ids"])) for t in texts]
    out += [CausalQuery(prefix, tuple(lm.tokenizer(t)["input_ids"])) for t in texts]  # behind a cached prefix
    return out


def _run(lm, queries, reduce, **options) -> list:
    results = dict(iter_causal(lm, queries, reduce, progress=False, **options))
    return [results[i] for i in range(len(queries))]


class _VocabSizedTensors(TorchDispatchMode):
    """Counts the tensors made whose last dimension is the vocabulary and which hold more rows
    than the 16-row blocks the float32 reduction converts."""

    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.vocab, self.made = vocab, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and out.dim() and out.shape[-1] == self.vocab:
            rows = out.numel() // self.vocab
            inputs = list(args) + list((kwargs or {}).values())  # out= writes into a given tensor
            already_there = any(isinstance(a, torch.Tensor) and a.data_ptr() == out.data_ptr() for a in inputs)
            if rows > 16 and not already_there and func.__name__ not in ("view.default", "slice.Tensor",
                                                                         "_unsafe_view.default", "select.int"):
                self.made.append((func.__name__, tuple(out.shape)))
        return out


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_no_vocab_sized_tensor_per_pass_and_the_same_bits(tiny_llama_dir, dtype, monkeypatch):
    lm = load_lm(tiny_llama_dir, "causal", dtype=dtype)
    queries = _queries(lm)
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    counter = _VocabSizedTensors(vocab)
    with counter:
        new = _run(lm, queries, TARGET_LOGPROBS_ARGMAX, token_budget=64)
    # The buffer grows only where a pass is larger than every pass before it (passes are planned
    # longest first): a few allocations in all, against one per pass and one per query before.
    assert len(counter.made) <= 3, counter.made
    monkeypatch.setattr(causal_module, "reuses_head_output", lambda reduce: False)
    monkeypatch.setattr(heads_module, "streams_logits", lambda reduce: False)
    counter_plain = _VocabSizedTensors(vocab)
    with counter_plain:
        plain = _run(lm, queries, TARGET_LOGPROBS_ARGMAX, token_budget=64)
    assert len(counter_plain.made) > 2 * len(counter.made)  # the check above can tell the two apart
    for (lp_new, best_new), (lp_plain, best_plain) in zip(new, plain, strict=True):
        assert np.array_equal(lp_new, lp_plain) and np.array_equal(best_new, best_plain)


def test_numbers_equal_a_naive_forward(tiny_llama_dir):
    lm = load_lm(tiny_llama_dir, "causal")
    queries = _queries(lm)
    got = _run(lm, queries, TARGET_LOGPROBS_ARGMAX, token_budget=64)
    with torch.inference_mode():
        for query, (logprobs, _) in zip(queries, got, strict=True):
            ids = torch.tensor([query.prefix_ids + query.target_ids])
            logits = lm.model(input_ids=ids).logits[0].float()
            first = len(query.prefix_ids) - 1
            rows = torch.log_softmax(logits[first : first + len(query.target_ids)], dim=-1)
            naive = rows.gather(1, torch.tensor(query.target_ids)[:, None])[:, 0].numpy()
            np.testing.assert_allclose(logprobs, naive, atol=2e-5)


def test_the_model_is_given_back_as_it_was_also_after_an_error(tiny_llama_dir):
    lm = load_lm(tiny_llama_dir, "causal")
    head = lm.model.get_output_embeddings()
    _run(lm, _queries(lm), TARGET_LOGPROBS_ARGMAX)
    assert "forward" not in vars(head) and not heads_module._ROUTED

    class Boom(RuntimeError):
        pass

    def failing(logits, query):
        raise Boom
    failing.streams_logits = failing.head_buffer = True  # type: ignore[attr-defined]
    with pytest.raises(Boom):
        _run(lm, _queries(lm), failing)
    assert "forward" not in vars(head) and not heads_module._ROUTED


def test_a_reduce_that_keeps_its_rows_gets_its_own(tiny_llama_dir):
    """A reduce that does not declare ``streams_logits`` may keep a view of its rows: those must
    not be overwritten by later passes."""
    lm = load_lm(tiny_llama_dir, "causal", dtype="bfloat16")
    queries = _queries(lm)
    kept = _run(lm, queries, lambda logits, query: logits, token_budget=64)
    copied = _run(lm, queries, lambda logits, query: logits.clone(), token_budget=64)
    for a, b in zip(kept, copied, strict=True):
        assert torch.equal(a, b)


def test_threads_sharing_one_model_get_their_own_numbers(tiny_llama_dir):
    lm = load_lm(tiny_llama_dir, "causal", dtype="bfloat16")
    queries = _queries(lm)
    alone = {budget: _run(lm, queries, TARGET_LOGPROBS_ARGMAX, token_budget=budget) for budget in (64, 160)}
    got: dict[int, list] = {}

    def score(budget: int) -> None:
        for _ in range(3):
            got[budget] = _run(lm, queries, TARGET_LOGPROBS_ARGMAX, token_budget=budget)

    threads = [threading.Thread(target=score, args=(b,)) for b in (64, 160)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for budget in (64, 160):
        for (a, _), (b, _) in zip(got[budget], alone[budget], strict=True):
            assert np.array_equal(a, b)
    assert "forward" not in vars(lm.model.get_output_embeddings()) and not heads_module._ROUTED


def test_heads_that_are_not_plain_linear_layers_are_left_alone(tiny_llama_dir):
    lm = load_lm(tiny_llama_dir, "causal")
    head = lm.model.get_output_embeddings()
    calls = []
    handle = head.register_forward_hook(lambda module, args, output: calls.append(output.shape))
    try:
        with heads_module.head_output_in(lm.model, heads_module.HeadOutputBuffer()):
            assert "forward" not in vars(head)  # a hook sees what the head makes: not rerouted
    finally:
        handle.remove()
    with heads_module.head_output_in(lm.model, heads_module.HeadOutputBuffer()):
        assert "forward" in vars(head)
    assert "forward" not in vars(head)


def test_half_precision_logits_become_float32_a_few_rows_at_a_time(tiny_llama_dir):
    """FFLM's reduce (no head buffer) still converts no query's whole ``[rows, vocab]`` block."""
    lm = load_lm(tiny_llama_dir, "causal", dtype="bfloat16")
    counter = _VocabSizedTensors(lm.model.get_output_embeddings().weight.shape[0])
    with counter:
        _run(lm, _queries(lm), TARGET_LOGPROBS, token_budget=64)
    made = [name for name, _ in counter.made]
    assert made and not {"to.dtype", "_to_copy.default"} & set(made), made  # the head's own outputs only
