"""Apply the LM head only where logits are needed.

A ``[batch, seq, vocab]`` logits tensor is the biggest thing a forward pass makes (bert-base:
30,522 floats per token), yet metrics need logits at a few positions: the masked ones (masked LM)
or the target span (causal LM). Instead of re-implementing each architecture's head (BERT's
``cls`` transform + decoder, RoBERTa's ``lm_head``, DistilBERT's four loose modules, Gemma's logit
soft-capping...), we let the model run its *own* forward and intercept the base model's output
with a forward hook: the hook replaces ``last_hidden_state [B, S, H]`` by the gathered rows
``[1, N, H]``, so whatever the model does after its base model (the head) runs on N rows only.

This relies on the head being position-wise, as every LM head is (the architecture matrix,
tests/parity/test_architectures.py, compares it with a plain forward on every family); a model without
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

import math
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
        hidden = output[0]
        # A model spread over several devices ends its base model on the last layer's device,
        # not on the input embedding's, where the engine made the indices.
        rows = hidden[batch_index.to(hidden.device), position_index.to(hidden.device)].unsqueeze(0)
        if isinstance(output, tuple):
            return (rows,) + tuple(output[1:])
        # ModelOutput keeps attribute and item views in sync, so heads reading either see the rows.
        output["last_hidden_state"] = rows
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
    head_buffer: HeadOutputBuffer | None = None,
) -> torch.Tensor:
    """Logits ``[N, vocab]`` at ``(batch_index[n], position_index[n])`` of ``model(**inputs)``.

    Float32, except with ``per_query_float32=True`` on CPU: then the model's dtype, for callers
    that convert one query's rows at a time (:func:`reduce_per_query`; on CPU one big conversion costs
    page faults, on an accelerator it is one kernel launch). With ``head_buffer`` the head writes
    into it (:func:`head_output_in`): the logits returned are then valid until the next pass."""
    with head_output_in(model, head_buffer):
        if gather_head:
            with gathered_base_output(model, batch_index, position_index) as fired:
                logits = model(**inputs).logits
            logits = logits[0] if fired else logits[batch_index, position_index]
        else:
            logits = model(**inputs).logits[batch_index, position_index]
    return logits if per_query_float32 and logits.device.type == "cpu" else logits.float()


def streams_logits(reduce: Any) -> bool:
    """Whether ``reduce`` declares (``streams_logits = True``, as a
    :class:`~nlgmetrics.engine.store.StoredReduction` may) that it takes a query's logits in the
    model's dtype and keeps no view of them once it returns."""
    return bool(getattr(reduce, "streams_logits", False))


def reuses_head_output(reduce: Any) -> bool:
    """Whether the engine should give ``reduce``'s calls a :class:`HeadOutputBuffer` on a CPU: it
    streams its logits and declares ``head_buffer = True``, set where a benchmark shows the gain
    (Shannon's many passes of ~100 MB of logits), not where one showed a loss (FFLM's few
    document-length passes: ``benchmarks/results/engine_mechanisms/engine_mechanisms.md``)."""
    return streams_logits(reduce) and bool(getattr(reduce, "head_buffer", False))


class HeadOutputBuffer:
    """Memory one engine call owns for its LM head's logits on a CPU, reused by every pass.

    A pass's logits (SmolLM2: 1,146 target rows x 49,152 in bfloat16 are 107 MB) are larger than
    glibc's largest mmap threshold (32 MiB), so without this every pass gets a fresh ``mmap`` and
    page-faults it in (a Shannon call on REALSumm document 0 x 8: ~280 k faults, ~1.1 GB). The
    buffer grows to the largest pass and is freed with the call, so the process's allocator is left
    as it was. The head writes into it with ``torch.matmul(..., out=)``, the same kernel as
    ``F.linear`` on the same operands (bit-identical, tested).

    >>> buffer = HeadOutputBuffer()
    >>> a = buffer.take((2, 3), torch.float32); b = buffer.take((1, 3), torch.float32)
    >>> a.data_ptr() == b.data_ptr()
    True
    """

    def __init__(self) -> None:
        self._storage: torch.Tensor | None = None

    def take(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        """A contiguous tensor of ``shape`` and ``dtype`` over the buffer's memory (grown if needed):
        its values are those of the last pass, to be overwritten."""
        count = math.prod(shape)
        if self._storage is None or self._storage.dtype != dtype or self._storage.numel() < count:
            self._storage = None  # the old memory goes back before the larger block is asked for
            self._storage = torch.empty(count, dtype=dtype)
        return self._storage[:count].view(shape)


# Heads routed into a buffer right now: id(head) -> (head, {thread id: buffer}). A head is routed
# through an instance ``forward`` for as long as any thread's pass uses it, and given back its own
# after the last one; other threads' passes through the same head compute as usual.
_ROUTED: dict[int, tuple[torch.nn.Module, dict[int, HeadOutputBuffer]]] = {}
_ROUTED_LOCK = threading.Lock()


def _plain_cpu_head(model: torch.nn.Module) -> torch.nn.Linear | None:
    """The model's LM head where it is a plain bias-free ``nn.Linear`` on a CPU, with nothing that
    changes what its call does (hooks, an accelerate wrapper, a quantized or subclassed weight)."""
    head = output_embeddings(model)
    if type(head) is not torch.nn.Linear or head.bias is not None:
        return None
    weight = head.weight
    plain = (type(weight) is torch.nn.Parameter and type(weight.data) is torch.Tensor
             and weight.device.type == "cpu" and weight.dtype.is_floating_point)
    hooked = bool(head._forward_hooks or head._forward_pre_hooks or hasattr(head, "_hf_hook"))
    wrapped = "forward" in vars(head) and id(head) not in _ROUTED  # someone else's wrapper: leave it be
    return head if plain and not hooked and not wrapped else None


def output_embeddings(model: torch.nn.Module) -> torch.nn.Module | None:
    """The model's LM head (``get_output_embeddings()``), None where it has none it can name."""
    try:
        return model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None


def _routed_forward(head: torch.nn.Linear) -> Callable[[torch.Tensor], torch.Tensor]:
    def forward(input: torch.Tensor) -> torch.Tensor:
        routes = _ROUTED.get(id(head))
        buffer = routes[1].get(threading.get_ident()) if routes is not None else None
        if (buffer is None or input.dtype != head.weight.dtype or input.device.type != "cpu"
                or not torch.is_inference_mode_enabled()):  # out= takes no autograd
            return torch.nn.Linear.forward(head, input)
        out = buffer.take((*input.shape[:-1], head.out_features), input.dtype)
        return torch.matmul(input, head.weight.t(), out=out)
    return forward


@contextmanager
def head_output_in(model: torch.nn.Module, buffer: HeadOutputBuffer | None) -> Iterator[None]:
    """While active, this thread's passes through ``model`` write the LM head's logits into
    ``buffer`` (where the head is a plain CPU ``nn.Linear``; elsewhere, or with ``buffer=None``,
    nothing changes). The model is given back as it was when the last such pass ends."""
    head = _plain_cpu_head(model) if buffer is not None else None
    if head is None or buffer is None:
        yield
        return
    key, thread = id(head), threading.get_ident()
    with _ROUTED_LOCK:
        if key not in _ROUTED:
            _ROUTED[key] = (head, {})
            head.forward = _routed_forward(head)  # type: ignore[method-assign]
        _ROUTED[key][1][thread] = buffer
    try:
        yield
    finally:
        with _ROUTED_LOCK:
            routes = _ROUTED[key][1]
            routes.pop(thread, None)
            if not routes:
                del _ROUTED[key]
                del head.forward


def reduce_per_query(
    logits: torch.Tensor, row_counts: Sequence[int], queries: Sequence[Any], members: Sequence[int],
    reduce: Callable[[torch.Tensor, Any], Any],
) -> list[tuple[int, Any]]:
    """``(members[k], reduce(rows of queries[k], queries[k]))`` for consecutive blocks of
    ``row_counts[k]`` rows of ``logits``, each block handed over as float32 (a view when it is),
    or as it is to a reduce that :func:`streams_logits` (it converts a few rows at a time).

    In half precision the whole ``[N, vocab]`` block converted at once is a fresh allocation of
    hundreds of MB, whose page faults cost more than the conversion itself; one query's rows at a
    time are a smaller buffer, and a reduce that converts 16 rows at a time needs none of query size
    (one query's float32 rows at a 49k vocabulary are ~60 MB: above glibc's largest mmap threshold,
    so a fresh ``mmap`` and its page faults on every query).

    >>> x = torch.arange(6.0).reshape(3, 2)
    >>> reduce_per_query(x.bfloat16(), [1, 2], ["a", "b"], [7, 9], lambda rows, q: (q, rows.dtype, rows.sum().item()))
    [(7, ('a', torch.float32, 1.0)), (9, ('b', torch.float32, 14.0))]
    """
    as_is = streams_logits(reduce)
    blocks = logits.split(list(row_counts))  # views, as slices are
    return [(member, reduce(rows if as_is else rows.float(), query))
            for member, query, rows in zip(members, queries, blocks, strict=True)]
