"""Count the work an LM metric sends through a model, from outside the engine.

:func:`count_work` watches a loaded model while a metric runs and adds up, per pass through the
model body: the pass itself, its token positions (``rows x width``, padding included), the real
tokens among them, the rows that went through the LM head, and the (query, key) pairs of real
tokens that attention needs. The engine does the same work whether it is watched or not.

Where each number comes from:

- a forward pre-hook on the base model (the transformer body) reads ``input_ids``' shape and the
  2-D ``attention_mask``; with a prefix cache the mask spans the cached keys and the new tokens,
  so a row's new real tokens are the ones in its last ``width`` columns; a pass of packed rows
  (several targets per row behind a cache) carries a 4-D mask instead, read as it is
  (:func:`real_and_pairs_of_4d_mask`);
- a forward hook on the output embeddings (the LM head) counts the rows it receives.

A causal model's plain right-padded pass goes without a padding mask (its causal attention keeps
the pads out of view; ``engine.causal.right_padding_needs_no_mask``): for such a pass the engine
tells :data:`~nlgmetrics.engine.causal.UNMASKED_PASS_OBSERVERS` each row's real length just before
it runs, and the counter builds the mask it would have had from them. Any other pass without a
mask (a caller's own forward) counts every position as real.

Attention pairs: causal, a real query sees the real keys at or before it (cached ones included);
masked (bidirectional), every real token of a row sees every real token of that row.

>>> import tempfile
>>> from nlgmetrics.engine import CausalQuery, causal_target_scores, load_lm
>>> from nlgmetrics.testing import build_random_model
>>> lm = load_lm(build_random_model("gpt2", tempfile.mkdtemp(), size="tiny"))
>>> with count_work(lm) as counts:
...     _ = causal_target_scores(lm, [CausalQuery((1,), (5, 6, 7, 8)), CausalQuery((1,), (9, 10, 11))],
...                              progress=False)
>>> counts.forwards, counts.positions, counts.real, counts.head_rows   # one batch: 2 rows x 4 positions
(1, 8, 7, 7)
>>> counts.attention_pairs   # causal: 4 real tokens see 1+2+3+4 keys, 3 see 1+2+3
16
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass(frozen=True)
class Pass:
    """One pass through the model body: ``rows x width`` positions, ``real`` of them real tokens."""

    rows: int
    width: int
    real: int


@dataclass
class WorkCounts:
    """The work counted by :func:`count_work` (see the module docstring for each number)."""

    forwards: int = 0
    positions: int = 0
    real: int = 0
    head_rows: int = 0
    attention_pairs: int = 0
    passes: list[Pass] = field(default_factory=list)


def attention_pairs(mask: torch.Tensor, width: int, causal: bool) -> int:
    """(query, key) pairs of real tokens for a 2-D padding ``mask`` whose last ``width`` columns are
    the pass's new tokens (the columns before them: cached keys).

    >>> attention_pairs(torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]]), 4, causal=True)   # 1+2+3, 1+2
    9
    >>> attention_pairs(torch.tensor([[1, 1, 1, 1, 0]]), 3, causal=True)   # 2 cached keys: 3 + 4
    7
    >>> attention_pairs(torch.tensor([[1, 1, 1, 0]]), 4, causal=False)     # 3 x 3
    9
    """
    new = mask[:, -width:]
    if not causal:
        return int((new.sum(dim=1) ** 2).sum())
    keys_so_far = mask.cumsum(dim=1)[:, -width:]  # real keys at or before each position
    return int((keys_so_far * new).sum())


def real_and_pairs_of_4d_mask(mask: torch.Tensor, width: int) -> tuple[int, int]:
    """``(real tokens, attention pairs)`` of a pass with a 4-D mask ``[rows, 1, width, keys]`` (boolean,
    True = seen, or additive float, 0 = seen) over cached keys then the pass's ``width`` new ones:
    a real token sees itself, a padding position does not; a real query's pairs are the keys it sees.

    >>> seen = torch.tensor([[[[1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0]]]], dtype=torch.bool)   # 1 cached key
    >>> real_and_pairs_of_4d_mask(seen, 3)    # queries 0 and 1 see themselves (2 + 3 keys); 2 is padding
    (2, 5)
    """
    seen = mask[:, 0].to("cpu")
    seen = seen if seen.dtype == torch.bool else seen == 0
    columns = torch.arange(width)
    real = seen[:, columns, seen.shape[-1] - width + columns]  # [rows, width]: sees itself
    return int(real.sum()), int((seen & real[:, :, None]).sum())


@contextmanager
def count_work(lm: Any) -> Iterator[WorkCounts]:
    """Count what goes through ``lm``'s model (a :class:`~nlgmetrics.engine.LoadedLM`) while active.

    Not thread-safe and not nested: one counter per model at a time (benchmarks and tests only).
    """
    from nlgmetrics.engine.causal import UNMASKED_PASS_OBSERVERS

    counts = WorkCounts()
    causal = lm.kind == "causal"
    model = lm.model
    base = getattr(model, "base_model", model)
    told: list[torch.Tensor] = []  # the row lengths of the unmasked pass about to run

    def body(_module: Any, args: tuple, kwargs: dict) -> None:
        ids = kwargs.get("input_ids", args[0] if args else None)
        rows, width = ids.shape
        mask = kwargs.get("attention_mask")
        if isinstance(mask, torch.Tensor) and mask.dim() == 4:  # packed rows: counted from the 4-D mask
            real, pairs = real_and_pairs_of_4d_mask(mask, width)
        else:
            if mask is not None:
                mask = mask.to("cpu", torch.long)
            elif told and len(told[-1]) == rows:
                mask = (torch.arange(width) < told.pop()[:, None]).long()
            else:
                mask = torch.ones((rows, width), dtype=torch.long)
            real, pairs = int(mask[:, -width:].sum()), attention_pairs(mask, width, causal)
        told.clear()
        counts.forwards += 1
        counts.positions += rows * width
        counts.real += real
        counts.attention_pairs += pairs
        counts.passes.append(Pass(rows, width, real))

    def head(_module: Any, args: tuple, _output: Any) -> None:
        counts.head_rows += int(args[0].shape[:-1].numel())

    handles = [base.register_forward_pre_hook(body, with_kwargs=True),
               model.get_output_embeddings().register_forward_hook(head)]
    UNMASKED_PASS_OBSERVERS.append(told.append)
    try:
        yield counts
    finally:
        UNMASKED_PASS_OBSERVERS.remove(told.append)
        for handle in handles:
            handle.remove()
