"""Apply the LM head only where logits are needed.

A ``[batch, seq, vocab]`` logits tensor is the biggest thing a forward pass makes (bert-base:
30,522 floats per token), yet metrics need logits at a few positions: the masked ones (masked LM)
or the target span (causal LM). Instead of re-implementing each architecture's head (BERT's
``cls`` transform + decoder, RoBERTa's ``lm_head``, DistilBERT's four loose modules, Gemma's logit
soft-capping...), we let the model run its *own* forward and intercept the base model's output
with a forward hook: the hook replaces ``last_hidden_state [B, S, H]`` by the gathered rows
``[1, N, H]``, so whatever the model does after its base model (the head) runs on N rows only.

This relies on the head being position-wise, as every LM head is (the architecture matrix,
tests/test_architectures.py, compares it with a plain forward on every family); a model without
a separate base model uses the plain forward and slices its logits.

>>> import torch
>>> from transformers import GPT2Config, GPT2LMHeadModel
>>> model = GPT2LMHeadModel(GPT2Config(n_embd=16, n_layer=1, n_head=2, vocab_size=50)).eval()
>>> ids = torch.tensor([[1, 2, 3, 4]])
>>> rows = logits_at(model, True, {"input_ids": ids}, torch.tensor([0, 0]), torch.tensor([1, 3]))
>>> full = model(input_ids=ids).logits[0, [1, 3]]
>>> bool(torch.allclose(rows, full, atol=1e-5)), tuple(rows.shape)
(True, (2, 50))
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch


@contextmanager
def gathered_base_output(model: torch.nn.Module, batch_index: torch.Tensor, position_index: torch.Tensor) -> Iterator[list[bool]]:
    """While active, the base model's hidden states in *this thread's* forward passes are replaced
    by rows ``[batch_index, position_index]``; other threads' passes through the same model are
    left alone, so threads sharing one model need no lock.

    Yields a list that holds ``True`` once the hook has fired: some causal LMs (OPT) call a module
    inside their base model directly and never run the base model's own forward, so their logits
    come back whole and the caller must gather them itself."""
    base = getattr(model, "base_model", model)
    if base is model:
        raise ValueError(f"{type(model).__name__} has no separate base model; cannot gather before the head.")
    fired: list[bool] = []
    owner = threading.get_ident()

    def hook(_module: torch.nn.Module, _args: Any, output: Any) -> Any:
        # The hook sits on a module that other threads may run at the same time (a Gradio app
        # scoring two requests with one model): each thread's hook acts on its own passes only.
        if threading.get_ident() != owner:
            return None
        fired.append(True)
        if isinstance(output, tuple):
            return (output[0][batch_index, position_index].unsqueeze(0),) + tuple(output[1:])
        hidden = output[0]
        # ModelOutput keeps attribute and item views in sync, so heads reading either see the rows.
        output["last_hidden_state"] = hidden[batch_index, position_index].unsqueeze(0)
        return output

    handle = base.register_forward_hook(hook)
    try:
        yield fired
    finally:
        handle.remove()


def logits_at(
    model: torch.nn.Module,
    gather_head: bool,
    inputs: dict[str, Any],
    batch_index: torch.Tensor,
    position_index: torch.Tensor,
    *,
    per_query_float32: bool = False,
) -> torch.Tensor:
    """Logits ``[N, vocab]`` at ``(batch_index[n], position_index[n])`` of ``model(**inputs)``.

    Float32, except with ``per_query_float32=True`` on CPU: then the model's dtype, for callers
    that convert one query's rows at a time (:func:`reduce_per_query`; on CPU one big conversion costs
    page faults, on an accelerator it is one kernel launch)."""
    if gather_head:
        with gathered_base_output(model, batch_index, position_index) as fired:
            logits = model(**inputs).logits
        logits = logits[0] if fired else logits[batch_index, position_index]
    else:
        logits = model(**inputs).logits[batch_index, position_index]
    return logits if per_query_float32 and logits.device.type == "cpu" else logits.float()


def reduce_per_query(
    logits: torch.Tensor, row_counts: Sequence[int], queries: Sequence[Any], members: Sequence[int],
    reduce: Callable[[torch.Tensor, Any], Any],
) -> list[tuple[int, Any]]:
    """``(members[k], reduce(rows of queries[k], queries[k]))`` for consecutive blocks of
    ``row_counts[k]`` rows of ``logits``, each block handed over as float32 (a view when it is).

    In half precision the whole ``[N, vocab]`` block converted at once is a fresh allocation of
    hundreds of MB, whose page faults cost more than the conversion itself; one query's rows at a
    time are a small buffer the allocator reuses, and still in cache when the reduction reads them.

    >>> x = torch.arange(6.0).reshape(3, 2)
    >>> reduce_per_query(x.bfloat16(), [1, 2], ["a", "b"], [7, 9], lambda rows, q: (q, rows.dtype, rows.sum().item()))
    [(7, ('a', torch.float32, 1.0)), (9, ('b', torch.float32, 14.0))]
    """
    out: list[tuple[int, Any]] = []
    start = 0
    for member, query, count in zip(members, queries, row_counts, strict=True):
        out.append((member, reduce(logits[start : start + count].float(), query)))
        start += count
    return out
