"""Masked-LM scoring: output distributions at masked positions only.

A :class:`MaskedQuery` is a token sequence plus the positions to mask in this copy (one position
for InfoLM, every gap-th token for BLANC). The path, top to bottom: each *distinct* query once
(:func:`~nlgmetrics.engine.planning.dedupe`), in length-sorted batches within a token budget
(:func:`~nlgmetrics.engine.planning.plan_batches`); one right-padded forward pass per batch with
the LM head applied at the masked positions only (:func:`~nlgmetrics.engine.heads.logits_at`);
``reduce(logits[n_masked, vocab] float32, query)`` hands each query's distributions to the
caller, so a metric turns them into whatever it keeps (a weighted sum, log-probs, argmax) as soon
as they exist.

>>> from nlgmetrics.testing import build_random_model
>>> from nlgmetrics.engine import load_lm
>>> import tempfile
>>> lm = load_lm(build_random_model("bert", tempfile.mkdtemp(), size="tiny"))
>>> ids = tuple(lm.tokenizer("a cat sat")["input_ids"])      # [CLS] a cat sat [SEP]
>>> queries = [MaskedQuery(ids, (1,)), MaskedQuery(ids, (2, 3)), MaskedQuery(ids, (1,))]
>>> out = dict(iter_masked(lm, queries, lambda logits, q: tuple(logits.shape), progress=False))
>>> [out[i] for i in range(3)]
[(1, 30522), (2, 30522), (1, 30522)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from nlgmetrics.engine.heads import logits_at, reduce_per_query
from nlgmetrics.engine.loading import LoadedLM
from nlgmetrics.engine.planning import plan_batches, run_with_backoff
from nlgmetrics.engine.rope import LengthDependentRope
from nlgmetrics.engine.runner import prepare_queries, run_distinct
from nlgmetrics.engine.store import Store, ids_bytes


@dataclass(frozen=True)
class MaskedQuery:
    """A sequence (with special tokens) and the positions replaced by the mask token in this copy.

    The original ids at ``mask_positions`` are the true tokens; the engine does the masking.
    """

    input_ids: tuple[int, ...]
    mask_positions: tuple[int, ...]


def _check(lm: LoadedLM, index: int, query: MaskedQuery) -> None:
    length = len(query.input_ids)
    if length == 0:
        raise ValueError(f"queries[{index}] has no input_ids.")
    if length > lm.max_length:
        raise ValueError(
            f"queries[{index}] has {length} tokens, more than {lm.name!r} accepts ({lm.max_length}); "
            "truncate or split the text before scoring."
        )
    if not query.mask_positions:
        raise ValueError(f"queries[{index}] masks no position; give at least one mask position.")
    if len(set(query.mask_positions)) != len(query.mask_positions):
        raise ValueError(f"queries[{index}] repeats a mask position: {query.mask_positions}.")
    bad = [p for p in query.mask_positions if not 0 <= p < length]
    if bad:
        raise ValueError(f"queries[{index}] has mask positions {bad} outside 0..{length - 1}.")


def iter_masked(
    lm: LoadedLM,
    queries: Sequence[MaskedQuery],
    reduce: Callable[[torch.Tensor, MaskedQuery], Any],
    *,
    token_budget: int | str = 8192,
    batch_size: int | None = None,
    progress: bool = True,
    desc: str = "masked LM",
    store: Store | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(query_index, reduce(logits, query))`` once for every query, in no particular order.

    ``logits`` is float32 ``[len(query.mask_positions), vocab]``, raw (no temperature), row ``j``
    for ``query.mask_positions[j]``. Guarantees:

    - the numbers do not depend on the token budget, the batch size, the order of the queries or
      their duplicates, up to float rounding (``tests/unit/engine/test_engine_masked.py`` compares them with
      the full logits of one forward pass per query, ``tests/parity/test_architectures.py`` on every
      masked family);
    - identical queries run once and share their result;
    - under a rotary scaling that depends on the pass's length (``longrope``, dynamic NTK:
      :mod:`nlgmetrics.engine.rope`) each query gets the numbers of its own pass on the freshly
      loaded model: queries past the threshold never share a batch with shorter ones;
    - a batch holds at most ``token_budget`` padded tokens, ``batch_size`` sequences, the masked
      positions the budget allows at the model's vocabulary
      (:func:`~nlgmetrics.engine.planning.head_row_allowance`) and ``1 + PADDING_SLACK`` positions
      per real token; ``token_budget="auto"``: the largest that fits the memory free now
      (:mod:`nlgmetrics.engine.budget`); on out-of-memory a batch is halved and retried;
    - under several processes (accelerate / torchrun) the distinct queries are split across them
      and every process yields every result;
    - the queries are validated now, not at the first ``next()``;
    - with a ``store`` and a ``reduce`` declared a :class:`~nlgmetrics.engine.store.StoredReduction`,
      stored results are yielded without a model call and new ones written as each batch completes.
    """
    distinct, copies, token_budget, vocab_size = prepare_queries(lm, queries, "masked", MaskedQuery, _check,
                                                                 token_budget)

    def plan(todo: list[int], rope: LengthDependentRope | None) -> list[list[int]]:
        # Under a rotary scaling that depends on the pass's length (a longrope or dynamic-NTK
        # ModernBERT), a padded batch takes its frequencies from its widest row: only queries of one
        # regime (of one length, for dynamic NTK) share a batch.
        groups: dict[int, list[int]] = {}
        for j in todo:
            length = len(distinct[j].input_ids)
            groups.setdefault(0 if rope is None else rope.pass_group(length), []).append(j)
        return [[members[b] for b in batch] for members in groups.values()
                for batch in plan_batches([len(distinct[j].input_ids) for j in members], token_budget,
                                          batch_size, vocab_size=vocab_size,
                                          head_rows=[len(distinct[j].mask_positions) for j in members])]

    def run_batch(members: list[int]) -> list[tuple[int, Any]]:
        return run_with_backoff(members, lambda part: _forward(lm, distinct, part, reduce))

    keys = {j: ids_bytes(q.input_ids, q.mask_positions) for j, q in enumerate(distinct)}
    return run_distinct(lm, reduce, store, keys, copies, plan, run_batch, len, progress=progress, desc=desc)


def _forward(
    lm: LoadedLM, distinct: list[MaskedQuery], members: list[int], reduce: Callable[[torch.Tensor, MaskedQuery], Any]
) -> list[tuple[int, Any]]:
    """One right-padded forward pass of the ``members`` of ``distinct``, their masked positions
    replaced by the mask token; the head runs at those positions only."""
    batch = [distinct[j] for j in members]
    tokenizer = lm.tokenizer
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    width = max(len(q.input_ids) for q in batch)
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    rows: list[int] = []
    cols: list[int] = []
    for b, query in enumerate(batch):
        input_ids[b, : len(query.input_ids)] = torch.tensor(query.input_ids, dtype=torch.long)
        attention[b, : len(query.input_ids)] = 1
        rows.extend([b] * len(query.mask_positions))
        cols.extend(query.mask_positions)
    row_index = torch.tensor(rows, dtype=torch.long)
    col_index = torch.tensor(cols, dtype=torch.long)
    input_ids[row_index, col_index] = tokenizer.mask_token_id
    device = lm.device
    inputs = {"input_ids": input_ids.to(device), "attention_mask": attention.to(device)}
    with torch.inference_mode():
        logits = logits_at(lm.model, lm.gather_head, inputs, row_index.to(device), col_index.to(device),
                           per_query_float32=True)
        return reduce_per_query(logits, [len(q.mask_positions) for q in batch], batch, members, reduce)
