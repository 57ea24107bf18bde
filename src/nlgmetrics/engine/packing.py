"""Several targets side by side in one row behind a cached prefix, where the model's config allows it.

Behind a shared prefix cache (one summary, every sentence of a document) the targets have very
different lengths. Padded to the longest, one batch of them is mostly padding, and bounding the
padding (``planning.PADDING_SLACK``) splits them into many small passes whose matrix products
have a few hundred rows, which a CPU runs at a lower rate than the ~1,000-row products of one
packed pass (``benchmarks/results/speed_engine_vs_commit/speed_engine_vs_commit.md``). Packing puts several targets in
one row: each *segment* attends to the cached prefix and to its own earlier tokens only, and its
positions restart after the prefix, so its logits are those of the target run alone on the cache.

The mask is transformers' own: :func:`transformers.masking_utils.create_causal_mask` with the
segment rule ``and``-ed into the causal and padding rules, so it comes out in the form the model's
attention implementation takes (a boolean mask for SDPA, an additive float mask for eager), and the
model uses a 4-D mask as given. That expresses what a layer does only where every layer is plain
causal attention over positions the model reads from ``position_ids``; :func:`packing_allowed`
decides that from the config (nothing is probed) and everything else takes the plain path.

>>> layout = packed_layout([[(5, 6, 7), (8, 9)], [(4,)]], cached=2)
>>> layout.input_ids.tolist(), layout.position_ids.tolist()
([[5, 6, 7, 8, 9], [4, 0, 0, 0, 0]], [[2, 3, 4, 2, 3], [2, 2, 2, 2, 2]])
>>> layout.segment_of.tolist()       # -2: the cached prefix, -1: padding
[[-2, -2, 0, 0, 0, 1, 1], [-2, -2, 0, -1, -1, -1, -1]]
>>> layout.head_rows.tolist(), layout.head_cols.tolist()   # every segment token, segment by segment
([0, 0, 0, 0, 0, 1], [0, 1, 2, 3, 4, 0])
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from nlgmetrics.engine.kinds import keeps_causal_attention

#: Families whose modeling code reads positions from ``position_ids`` and takes a 4-D attention
#: mask as given for every layer (transformers' ``masking_utils``), each checked against a naive
#: forward with packed rows in ``tests/parity/test_architectures.py``. ALiBi families (BLOOM, MPT) bias
#: attention by the keys' offsets in the row and are not listed (Falcon is, refused when ``alibi``).
PACKABLE_MODEL_TYPES = frozenset({
    "falcon", "gemma", "gpt2", "gpt_bigcode", "gpt_neox", "gptj", "llama", "mistral", "olmo", "olmo2", "opt",
    "qwen2", "qwen3", "smollm3", "stablelm",
})

#: The attention implementations whose mask form ``create_causal_mask`` produces and the layers
#: apply as a plain 4-D mask (flash-attention kernels take no such mask; flex takes a block mask).
_PACKABLE_ATTENTION = frozenset({"sdpa", "eager"})

# segment_of values besides segment numbers
_PREFIX = -2
_PADDING = -1


def packing_allowed(model: torch.nn.Module, max_length: int) -> bool:
    """Whether packed rows give ``model`` the logits of each target run alone, read from its config.

    Every layer must be causal attention over the whole context: a family in
    :data:`PACKABLE_MODEL_TYPES`, an SDPA or eager attention implementation, no ALiBi, no chunked
    attention, and any sliding window at least ``max_length`` long (a window never reaches past
    the context, so the full causal mask is what the windowed one would be).

    >>> from transformers import LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM
    >>> small = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, vocab_size=64)
    >>> packing_allowed(LlamaForCausalLM(LlamaConfig(**small)), max_length=128)
    True
    >>> packing_allowed(MistralForCausalLM(MistralConfig(sliding_window=16, **small)), max_length=128)
    False
    """
    config = getattr(model, "config", None)
    if config is None or getattr(config, "text_config", None) is not None:
        return False
    window = getattr(config, "sliding_window", None)
    return (getattr(config, "model_type", None) in PACKABLE_MODEL_TYPES
            and getattr(config, "_attn_implementation", None) in _PACKABLE_ATTENTION
            and not getattr(config, "alibi", False) and not getattr(config, "attention_chunk_size", None)
            and keeps_causal_attention(model) and (window is None or window >= max_length))


@dataclass(frozen=True)
class PackedLayout:
    """The inputs of one packed batch: ``input_ids``/``position_ids`` ``[rows, width]``;
    ``segment_of`` ``[rows, cached + width]`` numbers each key position's segment in its row
    (``-2`` cached prefix, ``-1`` padding); ``head_rows``/``head_cols`` place every segment token,
    row by row and segment by segment."""

    input_ids: torch.Tensor
    position_ids: torch.Tensor
    segment_of: torch.Tensor
    head_rows: torch.Tensor
    head_cols: torch.Tensor


def packed_layout(rows: Sequence[Sequence[Sequence[int]]], cached: int) -> PackedLayout:
    """Lay rows of token segments out side by side behind ``cached`` cached positions; each
    segment's positions run from ``cached`` as if it were alone behind the prefix."""
    width = max(sum(len(segment) for segment in row) for row in rows)
    input_ids = torch.zeros((len(rows), width), dtype=torch.long)
    positions = torch.full((len(rows), width), cached, dtype=torch.long)
    segment_of = torch.full((len(rows), cached + width), _PADDING, dtype=torch.long)
    segment_of[:, :cached] = _PREFIX
    head_rows: list[int] = []
    head_cols: list[int] = []
    for b, row in enumerate(rows):
        start = 0
        for s, segment in enumerate(row):
            n = len(segment)
            input_ids[b, start : start + n] = torch.tensor(segment, dtype=torch.long)
            positions[b, start : start + n] = torch.arange(cached, cached + n)
            segment_of[b, cached + start : cached + start + n] = s
            head_rows.extend([b] * n)
            head_cols.extend(range(start, start + n))
            start += n
    return PackedLayout(input_ids, positions, segment_of, torch.tensor(head_rows), torch.tensor(head_cols))


def segment_attention_mask(
    model: torch.nn.Module, layout: PackedLayout, position_ids: torch.Tensor, cache: Any, cached: int,
    dtype: torch.dtype,
) -> Any:
    """The 4-D mask of a packed batch behind ``cache`` (which holds ``cached`` positions), built
    by transformers for the model's attention implementation: causal, padding and segment rules.
    ``position_ids`` are the layout's, already on the model's device (the mask is built there).

    The segment rule: a query sees the cached prefix and its own segment's keys (``and``-ed with
    the causal rule, which keeps it to the earlier ones). A padding query still sees the prefix, so
    no query row is fully masked (SDPA would give NaN).
    """
    from transformers.masking_utils import create_causal_mask

    rows, width = layout.input_ids.shape
    device = position_ids.device
    segment_of = layout.segment_of.to(device)

    def same_segment(batch_idx: Any, head_idx: Any, q_idx: Any, kv_idx: Any) -> Any:
        return (kv_idx < cached) | (segment_of[batch_idx, kv_idx] == segment_of[batch_idx, q_idx])

    shape_only = torch.empty((rows, width, 0), dtype=dtype, device=device)  # batch, length, dtype, device
    keywords: dict[str, Any] = {
        "position_ids": position_ids,
        "and_mask_function": same_segment,
    }
    if _mask_builder_takes_cache_position():  # transformers < 5.2x: the query positions, and past_key_values
        keywords["cache_position"] = torch.arange(cached, cached + width, device=device)
        keywords["past_key_values"] = cache
    else:
        keywords["cache"] = cache
    padding_mask = (segment_of != _PADDING).long()  # 1 for the prefix and every segment token
    return create_causal_mask(model.config, shape_only, padding_mask, **keywords)


@functools.cache
def _mask_builder_takes_cache_position() -> bool:
    from transformers.masking_utils import create_causal_mask

    return "cache_position" in inspect.signature(create_causal_mask).parameters
