"""Several target sequences in one row behind a cached prefix (block attention, per-segment positions).

Behind a shared prefix cache (one summary, every sentence of a document), targets of very
different lengths share a batch: padded to the longest, a batch of one 288-token sentence and
short ones holds mostly padding, and bounding the padding (``planning.PADDING_SLACK``) splits the
work into many small passes instead. Packing puts several targets side by side in one row of
the batch's width: each *segment* attends to the cached prefix and to its own earlier tokens
only (a block-diagonal causal mask over the row, the prefix columns open to every segment), and
its positions restart after the prefix, so each segment's logits are those of the target run
alone on the cache (fp32: equal within rounding; a load-time self-check,
:func:`packed_rows_work`, compares them).

The mask is a 4-D additive float mask ``[rows, 1, width, cached + width]`` (0 where a query
may attend, the dtype's minimum elsewhere), which transformers passes to the attention as it is
(eager adds it, SDPA takes it as a float mask). A padding position attends to the prefix only,
so no query row is fully masked (a fully masked row is NaN in SDPA, and a NaN value would reach
real queries as a masked key times zero).

>>> ids, positions, mask, rows, cols = packed_inputs([[(5, 6, 7), (8, 9)], [(4,)]], cached=2,
...                                                  dtype=torch.float32)
>>> ids.tolist(), positions.tolist()
([[5, 6, 7, 8, 9], [4, 0, 0, 0, 0]], [[2, 3, 4, 2, 3], [2, 2, 2, 2, 2]])
>>> (mask[0, 0] == 0).int().tolist()   # row 0: prefix columns open; segments (5 6 7) and (8 9)
[[1, 1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 1, 0], [1, 1, 0, 0, 0, 1, 1]]
>>> rows.tolist(), cols.tolist()       # where each segment's tokens sit, segment after segment
([0, 0, 0, 0, 0, 1], [0, 1, 2, 3, 4, 0])
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import torch

from nlgmetrics.engine.self_checks import probe_passes, probe_setting


def cache_keyword(model: torch.nn.Module) -> str:
    """transformers >= 5.2x calls the KV cache argument ``cache``; earlier ones ``past_key_values``."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def packed_inputs(
    rows: Sequence[Sequence[Sequence[int]]], cached: int, dtype: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(input_ids, position_ids, mask, head_rows, head_cols)`` of rows of token segments behind
    ``cached`` cached positions (see the module docstring). ``head_rows``/``head_cols`` list every
    segment token's place, row by row and segment by segment, in order."""
    width = max(sum(len(segment) for segment in row) for row in rows)
    n_rows = len(rows)
    input_ids = torch.zeros((n_rows, width), dtype=torch.long)
    positions = torch.full((n_rows, width), cached, dtype=torch.long)
    segment_of = torch.full((n_rows, width), -1, dtype=torch.long)  # -1: padding
    head_rows: list[int] = []
    head_cols: list[int] = []
    for b, row in enumerate(rows):
        start = 0
        for s, segment in enumerate(row):
            n = len(segment)
            input_ids[b, start : start + n] = torch.tensor(segment, dtype=torch.long)
            positions[b, start : start + n] = torch.arange(cached, cached + n)
            segment_of[b, start : start + n] = s
            head_rows.extend([b] * n)
            head_cols.extend(range(start, start + n))
            start += n
    column = torch.arange(width)
    same = segment_of[:, :, None] == segment_of[:, None, :]
    allowed = same & (segment_of[:, :, None] >= 0) & (column[None, None, :] <= column[None, :, None])
    mask = torch.full((n_rows, 1, width, cached + width), torch.finfo(dtype).min, dtype=dtype)
    mask[:, :, :, :cached] = 0
    mask[:, 0, :, cached:] = torch.where(allowed, torch.zeros((), dtype=dtype), mask[:, 0, :, cached:])
    return input_ids, positions, mask, torch.tensor(head_rows), torch.tensor(head_cols)


# Probe: a prefix, then segments of different lengths packed two to a row and one alone.
_PROBE_PREFIX = 6
_PROBE_ROWS = ((4, 3), (2,))


def packed_rows_work(model: torch.nn.Module) -> bool:
    """Whether ``model`` gives each packed segment the logits of that segment run alone on the
    same prefix cache (a causal LM honouring a 4-D mask and per-token positions). Any error or
    mismatch means: do not pack."""
    if probe_setting(model) is None:
        return False
    keyword = cache_keyword(model)

    def probe(candidate: torch.nn.Module) -> list[tuple[torch.Tensor, torch.Tensor]]:
        device, dtype, vocab = probe_setting(candidate)
        base = getattr(candidate, "base_model", candidate)
        prefix = [(5 * i + 1) % vocab for i in range(_PROBE_PREFIX)]
        rows = [[[(3 * s + 7 * i + 2) % vocab for i in range(n)] for s, n in enumerate(row)] for row in _PROBE_ROWS]

        def cache_for(n_rows: int):
            ids = torch.tensor([prefix] * n_rows, device=device)
            output = base(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=True)
            return output["cache"] if "cache" in output else output["past_key_values"]

        def alone(segment: list[int]) -> torch.Tensor:
            ids = torch.tensor([segment], device=device)
            attention = torch.ones((1, _PROBE_PREFIX + len(segment)), dtype=torch.long, device=device)
            positions = torch.arange(_PROBE_PREFIX, _PROBE_PREFIX + len(segment), device=device)[None]
            return candidate(input_ids=ids, attention_mask=attention, position_ids=positions, use_cache=True,
                             **{keyword: cache_for(1)}).logits[0].float()

        ids, positions, mask, head_rows, head_cols = packed_inputs(rows, _PROBE_PREFIX, dtype)
        packed = candidate(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
                           use_cache=True, **{keyword: cache_for(len(rows))}).logits.float()
        got = packed[head_rows.to(device), head_cols.to(device)]
        return [(got, torch.cat([alone(segment) for row in rows for segment in row]))]

    return probe_passes(model, probe)
