"""Causal-LM scoring: the distribution behind every target token, given a prefix, in one pass.

A :class:`CausalQuery` is ``prefix_ids`` (conditioning, not scored; at least one token, e.g. BOS)
and ``target_ids`` (scored). The path, top to bottom:

1. plan: each distinct query once; queries sharing a prefix of two or more tokens form a group
   behind one prefix cache, the rest go into length-sorted, right-padded batches within the
   token budget (:func:`~nlgmetrics.engine.planning.plan_batches`);
2. forward: teacher forcing, a row reads ``prefix + target[:-1]`` once. A group runs its prefix
   (but the last token) once and its targets on that cache (:func:`replicated_cache`), packed
   side by side in a row where the config allows it (:mod:`nlgmetrics.engine.packing`). Queries
   past a length-dependent rotary scaling's threshold (:mod:`nlgmetrics.engine.rope`) run whole,
   in passes of their own;
3. heads: only the target-predicting positions go through the LM head
   (:func:`~nlgmetrics.engine.heads.logits_at`), and ``reduce`` turns each query's logits into
   what the metric keeps (:func:`target_logprobs_float32_deferred`) before the next are made.

>>> from nlgmetrics.testing import build_random_model
>>> from nlgmetrics.engine import load_lm
>>> import tempfile
>>> lm = load_lm(build_random_model("gpt2", tempfile.mkdtemp(), size="tiny"))
>>> bos = lm.tokenizer.bos_token_id
>>> ids = tuple(lm.tokenizer("The cat sat on the mat.")["input_ids"])
>>> [s] = causal_target_scores(lm, [CausalQuery((bos,), ids)], progress=False)
>>> s.logprobs.shape == (len(ids),) and bool((s.logprobs < 0).all())
True
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from transformers.cache_utils import DynamicLayer as _DynamicLayer  # a cache as a list of layers

from nlgmetrics.engine.heads import HeadOutputBuffer, logits_at, reduce_per_query, reuses_head_output
from nlgmetrics.engine.kinds import keeps_causal_attention
from nlgmetrics.engine.loading import LoadedLM
from nlgmetrics.engine.packing import packed_layout, packing_allowed, segment_attention_mask
from nlgmetrics.engine.planning import pack_segments, plan_batches, run_with_backoff
from nlgmetrics.engine.rope import LengthDependentRope
from nlgmetrics.engine.runner import prepare_queries, run_distinct
from nlgmetrics.engine.store import OnePerId, Store, StoredReduction, ids_bytes
from nlgmetrics.engine.transfer import DeferredHost, resolve, to_device

Reduce = Callable[[torch.Tensor, "CausalQuery"], Any]


@dataclass(frozen=True)
class CausalQuery:
    """``target_ids[i]`` is scored given ``prefix_ids + target_ids[:i]``; the prefix is not scored."""

    prefix_ids: tuple[int, ...]
    target_ids: tuple[int, ...]


@dataclass(frozen=True)
class TargetScores:
    """Per target token: ``log p(target_i | prefix, target_<i)`` (float64) and the argmax id (int64)."""

    logprobs: np.ndarray
    argmax: np.ndarray


def iter_causal(
    lm: LoadedLM,
    queries: Sequence[CausalQuery],
    reduce: Reduce,
    *,
    token_budget: int | str = 8192,
    batch_size: int | None = None,
    prefix_cache: bool = True,
    progress: bool = True,
    desc: str = "causal LM",
    store: Store | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(query_index, reduce(logits, query))`` once for every query, in no particular order.

    ``logits`` is float32 ``[len(query.target_ids), vocab]``; row ``i`` is the distribution that
    predicts ``target_ids[i]``. Guarantees:

    - the numbers do not depend on the token budget, the batch size, the order of the queries,
      their duplicates or the prefix cache, up to float rounding (``tests/unit/engine/test_engine_causal.py``
      compares them with a naive token-by-token loop, ``tests/parity/test_architectures.py`` with a plain
      forward pass on every causal family);
    - each query gets the numbers of one forward pass over its own ``prefix + target`` on the
      freshly loaded model, also where the rotary scaling depends on the pass's length
      (``longrope``, dynamic NTK: :mod:`nlgmetrics.engine.rope`): queries past the scaling's
      threshold never share a pass, a prefix cache or a packed row with shorter ones
      (``tests/unit/engine/test_engine_rope.py``);
    - identical queries run once and share their result; a query with an empty target gets a
      ``[0, vocab]`` tensor without a model call;
    - a batch holds at most ``token_budget`` tokens counted with padding (behind a cached prefix:
      ``rows * (prefix + row width)``, a row holding one target or several packed ones), at most
      ``batch_size`` targets, at most the head rows the budget allows at the model's vocabulary
      (:func:`~nlgmetrics.engine.planning.head_row_allowance`: the budget itself up to a 65,536
      vocabulary, a quarter of it at 262,144), and at most ``1 + PADDING_SLACK`` positions per
      real token (the cached prefix is not padding); ``token_budget="auto"``: the largest that fits
      the memory free now (:mod:`nlgmetrics.engine.budget`); on out-of-memory (a device's or the
      CPU allocator's) a batch is halved and retried;
    - under several processes (accelerate / torchrun) the work is split across them and every
      process yields every result;
    - the queries are validated now, not at the first ``next()``;
    - with a ``store`` (:mod:`nlgmetrics.engine.store`) and a ``reduce`` declared a
      :class:`~nlgmetrics.engine.store.StoredReduction`, the results it holds are yielded without
      a model call (bit for bit what was stored) and each unit's new results are written to it as
      the unit completes.
    """
    distinct, copies, token_budget, vocab_size = prepare_queries(lm, queries, "causal", CausalQuery, _check,
                                                                 token_budget)
    # On a CPU the head's logits go into one buffer this call owns and every pass reuses, for a
    # reduce that reads them at once and keeps nothing (heads.HeadOutputBuffer: same values).
    head_buffer = HeadOutputBuffer() if reuses_head_output(reduce) and lm.device.type == "cpu" else None

    def plan(todo: list[int], rope: LengthDependentRope | None) -> list[tuple[str, list[int]]]:
        # Long queries first, then groups, longest prefix first, like plan_batches: the heaviest
        # work surfaces OOM early.
        long_batches, todo = _long_queries(distinct, todo, token_budget, batch_size, rope, vocab_size)
        groups, batches = _plan(distinct, todo, token_budget, batch_size, prefix_cache, vocab_size)
        return ([("long", m) for m in long_batches] + [("group", m) for m in groups]
                + [("batch", m) for m in batches])

    def run_unit(unit: tuple[str, list[int]]) -> list[tuple[int, Any]]:
        kind, members = unit
        if kind == "group":
            return _run_behind_prefix(lm, distinct, members, reduce, token_budget, batch_size, head_buffer,
                                      vocab_size)
        return run_with_backoff(members, lambda part: _forward(lm, distinct, part, reduce,
                                                               whole=kind == "long", head_buffer=head_buffer))

    def without_target() -> Iterator[tuple[int, Any]]:
        empty = [j for j, q in enumerate(distinct) if not q.target_ids]
        if empty:
            vocab = lm.model.get_output_embeddings().weight.shape[0]
            for j in empty:
                yield j, resolve(reduce(torch.zeros((0, vocab), dtype=torch.float32), distinct[j]))

    keys = {j: ids_bytes(q.prefix_ids, q.target_ids) for j, q in enumerate(distinct) if q.target_ids}
    return run_distinct(lm, reduce, store, keys, copies, plan, run_unit, lambda unit: len(unit[1]),
                        progress=progress, desc=desc, ready=without_target())


def causal_target_scores(lm: LoadedLM, queries: Sequence[CausalQuery], **kwargs: Any) -> list[TargetScores]:
    """Log-probability (float64 log-softmax) and argmax of every target token, aligned with ``queries``.

    Takes the keyword arguments of :func:`iter_causal` (token_budget, batch_size, prefix_cache,
    progress, desc) and gives its guarantees.
    """
    queries = list(queries)
    scores = dict(iter_causal(lm, queries, _target_scores, **kwargs))
    return [scores[index] for index in range(len(queries))]


def _check(lm: LoadedLM, index: int, query: CausalQuery) -> None:
    if len(query.prefix_ids) == 0:
        raise ValueError(
            f"queries[{index}] has an empty prefix; the first target token needs context, e.g. "
            "prefix_ids=(tokenizer.bos_token_id,)."
        )
    # The pass reads prefix + target[:-1]; those are the positions the model must hold.
    needed = len(query.prefix_ids) + max(len(query.target_ids) - 1, 0)
    if needed > lm.max_length:
        raise ValueError(
            f"queries[{index}] needs {needed} positions (prefix {len(query.prefix_ids)} + target "
            f"{len(query.target_ids)} - 1), more than {lm.name!r} has ({lm.max_length}); truncate "
            "before scoring."
        )


def _long_queries(
    distinct: list[CausalQuery], todo: list[int], token_budget: int, batch_size: int | None,
    rope: LengthDependentRope | None, vocab_size: int = 0,
) -> tuple[list[list[int]], list[int]]:
    """``(batches, rest)``: the queries past a length-dependent rotary scaling's threshold in
    batches of their own, and the others.

    Such a query alone reads its whole ``prefix + target``, one pass whose longest position sets
    its frequencies; a pass shorter by the last target token (as the other paths read) could fall
    back to the short regime. Its batches read whole sequences too, right-padded: the pass's
    longest position is then past the threshold, and for a scaling that follows the exact length
    every row has that length (no padding at all). The others keep every path: all their passes
    (padded, packed, behind a cached prefix) stay below the threshold, since each pass is as wide
    as its widest query reads, one token short of its whole sequence.
    """
    if rope is None:
        return [], todo
    full = {j: len(distinct[j].prefix_ids) + len(distinct[j].target_ids) for j in todo}
    rest: list[int] = []
    by_pass: dict[int, list[int]] = {}  # the queries that may share a pass (LengthDependentRope.pass_group)
    for j in todo:
        if rope.is_long(full[j]):
            by_pass.setdefault(rope.pass_group(full[j]), []).append(j)
        else:
            rest.append(j)
    batches = []
    for members in by_pass.values():
        plan = plan_batches([full[j] for j in members], token_budget, batch_size,
                            head_rows=[len(distinct[j].target_ids) for j in members], vocab_size=vocab_size)
        batches.extend([members[b] for b in batch] for batch in plan)
    return batches, rest


def _plan(
    distinct: list[CausalQuery], todo: list[int], token_budget: int, batch_size: int | None, prefix_cache: bool,
    vocab_size: int = 0,
) -> tuple[list[list[int]], list[list[int]]]:
    """``(groups, batches)`` of indices into ``distinct``: the groups sharing a cached prefix,
    longest prefix first, and the length-sorted batches of the queries read whole."""
    groups: list[list[int]] = []
    if prefix_cache:
        by_prefix: dict[tuple[int, ...], list[int]] = {}
        for j in todo:
            by_prefix.setdefault(distinct[j].prefix_ids, []).append(j)
        # A cached prefix pays off from two targets on; a 1-token prefix has nothing to cache
        # (its last token is re-read with every target anyway).
        shared = {p: js for p, js in by_prefix.items() if len(js) >= 2 and len(p) >= 2}
        groups = [shared[p] for p in sorted(shared, key=lambda p: (-len(p), shared[p][0]))]
        todo = [j for j in todo if distinct[j].prefix_ids not in shared]
    lengths = [len(distinct[j].prefix_ids) + len(distinct[j].target_ids) - 1 for j in todo]
    heads = [len(distinct[j].target_ids) for j in todo]
    plan = plan_batches(lengths, token_budget, batch_size, head_rows=heads, vocab_size=vocab_size)
    return groups, [[todo[b] for b in batch] for batch in plan]


def _run_behind_prefix(
    lm: LoadedLM, distinct: list[CausalQuery], members: list[int], reduce: Reduce, token_budget: int,
    batch_size: int | None, head_buffer: HeadOutputBuffer | None, vocab_size: int,
) -> list[tuple[int, Any]]:
    """Run the shared prefix (but its last token) once, then batches of targets on its cache.

    Each target row reads ``prefix[-1:] + target[:-1]``, so all its logits come out of the target
    pass and the prefix pass needs no head at all.
    """
    prefix = distinct[members[0]].prefix_ids
    cached = len(prefix) - 1
    with torch.inference_mode():
        prefix_ids = to_device(torch.tensor([prefix[:-1]], dtype=torch.long), lm.device)
        base = getattr(lm.model, "base_model", lm.model)  # the cache needs the body, not the head
        output = base(input_ids=prefix_ids, attention_mask=torch.ones_like(prefix_ids), use_cache=True)
        cache = output["cache"] if "cache" in output else output["past_key_values"]
    # A row holds the cached prefix's keys and values besides its own tokens: memory against the
    # budget, but not padding.
    lengths = [len(distinct[j].target_ids) for j in members]
    sizes = {"context": cached, "head_rows": lengths, "vocab_size": vocab_size}
    packs = packing_allowed(lm.model, lm.max_length) if lm.packed_rows is None else lm.packed_rows
    if packs:  # several targets per row: almost no padding, larger matrix products
        batches: list[Any] = [[[members[b] for b in row] for row in packed]
                              for packed in pack_segments(lengths, token_budget, batch_size, **sizes)]

        def forward(rows: Any) -> list[tuple[int, Any]]:
            return _forward_packed(lm, distinct, rows, reduce, cache, cached, head_buffer)
    else:
        batches = [[members[b] for b in batch]
                   for batch in plan_batches(lengths, token_budget, batch_size, **sizes)]

        def forward(rows: Any) -> list[tuple[int, Any]]:
            return _forward(lm, distinct, rows, reduce, cache, cached, head_buffer=head_buffer)
    return [pair for batch in batches for pair in run_with_backoff(batch, forward)]


def _forward_packed(
    lm: LoadedLM, distinct: list[CausalQuery], rows: list[list[int]], reduce: Reduce, cache: Any, cached: int,
    head_buffer: HeadOutputBuffer | None,
) -> list[tuple[int, Any]]:
    """One batch of rows of several targets each behind ``cache`` (:mod:`nlgmetrics.engine.packing`):
    every target reads ``prefix[-1:] + target[:-1]`` in its own segment, with the positions and
    the view of the cached prefix it has alone; the head runs at the target-predicting positions."""
    segments = [[distinct[j].prefix_ids[-1:] + distinct[j].target_ids[:-1] for j in row] for row in rows]
    layout = packed_layout(segments, cached)
    members = [j for row in rows for j in row]
    queries = [distinct[j] for j in members]
    device = lm.device
    with torch.inference_mode():
        replica = replicated_cache(cache, len(rows))
        position_ids = to_device(layout.position_ids, device)
        inputs = {
            "input_ids": to_device(layout.input_ids, device),
            "position_ids": position_ids,
            "attention_mask": segment_attention_mask(lm.model, layout, position_ids, replica, cached, lm.dtype),
            cache_keyword(lm.model): replica,
            "use_cache": True,
        }
        logits = logits_at(lm.model, lm.gather_head, inputs, to_device(layout.head_rows, device),
                           to_device(layout.head_cols, device), per_query_float32=True, head_buffer=head_buffer)
        return reduce_per_query(logits, [len(q.target_ids) for q in queries], queries, members, reduce)


# Callbacks told the real length of each row of a pass that goes without a padding mask, just
# before it runs (benchmarks/counting.py: such a pass carries nothing else that tells its pads from
# its tokens). Empty unless a benchmark or test is counting.
UNMASKED_PASS_OBSERVERS: list[Callable[[torch.Tensor], None]] = []


def _forward(
    lm: LoadedLM, distinct: list[CausalQuery], members: list[int], reduce: Reduce, cache: Any = None,
    cached: int = 0, *, whole: bool = False, head_buffer: HeadOutputBuffer | None = None,
) -> list[tuple[int, Any]]:
    """One right-padded batch: row ``b`` reads its query's ``prefix + target[:-1]`` but the first
    ``cached`` tokens, whose keys and values ``cache`` holds (none without a cache); the head runs
    at the positions that predict the targets only. With ``whole`` (no cache) a row reads the whole
    ``prefix + target``: the last token predicts nothing, but the pass is as long as the query's own.

    Right padding keeps every real token at the position it has in an unpadded pass. A batch behind
    a cache carries a 2-D padding mask over ``cached + width`` keys: the model builds its own
    attention masks and positions from it and the cache (causal, sliding-window, ALiBi and RoPE-free
    layers alike), as it does when generating after a prompt. A plain batch goes without one where
    :func:`right_padding_needs_no_mask` says the model's causal attention already keeps the pads out
    of every real token's view.
    """
    queries = [distinct[j] for j in members]
    sequences = [(q.prefix_ids + (q.target_ids if whole else q.target_ids[:-1]))[cached:] for q in queries]
    width = max(len(s) for s in sequences)
    input_ids = torch.zeros((len(queries), width), dtype=torch.long)
    rows: list[int] = []
    cols: list[int] = []
    for b, (query, sequence) in enumerate(zip(queries, sequences)):
        input_ids[b, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
        first = len(query.prefix_ids) - 1 - cached  # the position that predicts target_ids[0]
        rows.extend([b] * len(query.target_ids))
        cols.extend(range(first, first + len(query.target_ids)))
    device = lm.device
    with torch.inference_mode():
        inputs = {"input_ids": to_device(input_ids, device), "use_cache": cache is not None}
        if cache is not None:
            inputs[cache_keyword(lm.model)] = replicated_cache(cache, len(queries))
        lengths = torch.tensor([len(s) for s in sequences])
        if cache is not None or not right_padding_needs_no_mask(lm.model):
            mask = (torch.arange(cached + width) < cached + lengths[:, None]).long()
            inputs["attention_mask"] = to_device(mask, device)
        else:
            for observe in UNMASKED_PASS_OBSERVERS:
                observe(lengths)
        logits = logits_at(lm.model, lm.gather_head, inputs, to_device(torch.tensor(rows), device),
                           to_device(torch.tensor(cols), device), per_query_float32=True, head_buffer=head_buffer)
        return reduce_per_query(logits, [len(q.target_ids) for q in queries], queries, members, reduce)


def right_padding_needs_no_mask(model: torch.nn.Module) -> bool:
    """Whether a right-padded batch with nothing cached may go without its padding mask, read from
    the model's config (nothing is probed).

    In a causal model every real token of a right-padded row comes before every pad, so causal
    attention keeps the pads out of its view, and positions (rotary, learned, ALiBi) count from the
    row's start as in an unpadded pass: the mask changes nothing that is scored. Sliding windows
    and chunked or RoPE-free layers are built by transformers from the config with or without a
    padding mask. Leaving the mask out is what lets transformers hand SDPA its causal kernel, which
    skips the key blocks above the diagonal; with a mask it materialises ``[rows, 1, width, width]``
    and SDPA computes the whole square (on SmolLM2-135M at FFLM's document-length batches, ~40 % of
    the attention time). Kept wherever the config turns causal attention off (transformers'
    ``is_causal`` switch, or Gemma's ``use_bidirectional_attention``): there pads would be seen.

    >>> from transformers import LlamaConfig, LlamaForCausalLM
    >>> model = LlamaForCausalLM(LlamaConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                                      intermediate_size=32, vocab_size=64))
    >>> right_padding_needs_no_mask(model)
    True
    >>> model.config.is_causal = False
    >>> right_padding_needs_no_mask(model)
    False
    """
    return keeps_causal_attention(model)


def replicated_cache(cache: Any, rows: int) -> Any:
    """A private copy of a 1-row prefix cache for a batch of ``rows`` targets, leaving ``cache`` intact.

    The forward pass appends each layer's new keys and values to the cache (``torch.cat`` into a
    new tensor, which the prefix's tensors are never part of), so the copy of a plain
    :class:`~transformers.DynamicCache` holds *views* of the prefix's tensors expanded over the
    rows: nothing of ``rows x prefix`` size is written before that concatenation. Other caches
    (sliding-window or quantised layers, older transformers) are deep-copied and repeated per row.

    >>> import torch
    >>> from transformers import DynamicCache
    >>> cache = DynamicCache()
    >>> _ = cache.update(torch.ones(1, 2, 3, 4), torch.zeros(1, 2, 3, 4), 0)
    >>> past = replicated_cache(cache, 5)
    >>> keys, _ = past.update(torch.full((5, 2, 1, 4), 7.0), torch.ones(5, 2, 1, 4), 0)
    >>> tuple(keys.shape), cache.get_seq_length(), tuple(cache.layers[0].keys.shape)
    ((5, 2, 4, 4), 3, (1, 2, 3, 4))
    """
    layers = getattr(cache, "layers", None)
    if layers and all(type(layer) is _DynamicLayer for layer in layers):
        past = copy.copy(cache)
        past.layers = []
        for layer in layers:
            private = copy.copy(layer)
            if layer.is_initialized and layer.keys.numel():
                private.keys = layer.keys.expand(rows, *layer.keys.shape[1:])
                private.values = layer.values.expand(rows, *layer.values.shape[1:])
            past.layers.append(private)
        return past
    past = copy.deepcopy(cache)
    past.batch_repeat_interleave(rows)
    return past


def cache_keyword(model: torch.nn.Module) -> str:
    """The KV-cache argument of ``model.forward``: ``cache`` in recent transformers, ``past_key_values`` before."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


# ------------------------------------------------------------------------------------------------
# Reductions: what a metric keeps of a query's logits, computed as soon as they exist.


def _target_scores(logits: torch.Tensor, query: CausalQuery) -> TargetScores:
    """log-softmax in float64 (sums over long documents stay exact), gather the targets, argmax."""
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    targets = torch.tensor(query.target_ids, dtype=torch.long, device=logits.device)
    chosen = logprobs.gather(1, targets.unsqueeze(1)).squeeze(1)
    argmax = logits.argmax(dim=-1)
    return TargetScores(chosen.cpu().numpy().astype(np.float64), argmax.cpu().numpy().astype(np.int64))


# Columns per slice in logsumexp_and_argmax: the per-slice maxima are vectorised; the argmax
# proper then reads one slice per row.
_ARGMAX_SLICE = 1024


def logsumexp_and_argmax(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(torch.logsumexp(logits, -1), logits.argmax(-1))`` of a 2-d float tensor, bit for bit,
    with one vectorised pass for the maximum.

    On CPU ``amax`` is vectorised and ``argmax`` is not: the row maximum comes from the maxima of
    1,024-column slices; the first slice holding it holds the first maximal index (earlier slices
    are smaller), so only that slice is searched. NaN propagates as in ``argmax``: a slice holding
    one is the maximal slice. The logsumexp reuses the maximum and runs the same operations as
    ``torch.logsumexp`` (shift, exp, sum, log, add).

    >>> x = torch.tensor([[0.0, 3.0, 3.0, 1.0], [2.0, 0.0, 0.0, 0.0]])
    >>> lse, best = logsumexp_and_argmax(x)
    >>> best.tolist(), bool(torch.equal(lse, torch.logsumexp(x, -1)))
    ([1, 0], True)
    """
    rows, vocab = logits.shape
    if rows == 0 or vocab == 0:
        return torch.logsumexp(logits, dim=-1), logits.argmax(dim=-1) if vocab else torch.zeros(0, dtype=torch.long)
    width = min(_ARGMAX_SLICE, vocab)
    whole = vocab // width * width
    maxima = logits[:, :whole].unflatten(-1, (-1, width)).amax(-1)
    if whole < vocab:
        maxima = torch.cat([maxima, logits[:, whole:].amax(-1, keepdim=True)], dim=-1)
    first_slice = maxima.argmax(dim=-1)
    starts = first_slice * width
    columns = (starts.unsqueeze(1) + torch.arange(width, device=logits.device)).clamp_(max=vocab - 1)
    best = starts + logits.gather(1, columns).argmax(dim=-1)
    maximum = maxima.amax(dim=-1)
    shift = maximum.masked_fill(maximum.abs() == float("inf"), 0.0)  # as torch.logsumexp: no inf - inf
    normaliser = (logits - shift.unsqueeze(1)).exp_().sum(dim=-1).log_().add_(shift)
    return normaliser, best


# Rows per reduction block on CPU: 16 x 50k-vocab float32 logits are ~3 MB, so the logsumexp
# temporaries and the argmax re-read stay in cache instead of streaming [rows, vocab] twice.
_REDUCE_ROWS = 16


def target_logprobs_float32(
    logits: torch.Tensor, target_ids: Sequence[int], *, with_argmax: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """``log p(target_i)`` per row as ``logit[target] - logsumexp(logits)`` in float32 (+ argmax).

    The reduction for metrics whose reference implementation uses a float32 softmax (blanc's
    Shannon, the FFLM authors' scorer): nothing of ``[rows, vocab]`` size is allocated. Each row is
    reduced on its own, in cache-sized blocks on CPU (one block per call on an accelerator, where
    kernel launches are the cost), so the values do not depend on the blocking. Half-precision
    logits become float32 one block at a time (an exact conversion: the same values as converting
    them all first). Returns float64 log-probs and int64 argmax ids (or ``None``).

    >>> lp, best = target_logprobs_float32(torch.tensor([[0.0, 0.0], [0.0, 2.0]]), [0, 1], with_argmax=True)
    >>> [round(float(v), 4) for v in lp], best.tolist()
    ([-0.6931, -0.1269], [0, 1])
    """
    return target_logprobs_float32_deferred(logits, target_ids, with_argmax=with_argmax).get()


def target_logprobs_float32_deferred(
    logits: torch.Tensor, target_ids: Sequence[int], *, with_argmax: bool = False
) -> DeferredHost:
    """:func:`target_logprobs_float32`, with the device -> host copy read later (``.get()``).

    As a ``reduce`` of :func:`iter_causal` it lets the engine launch the next batch before this
    one's numbers reach the host (the engine reads them; callers see plain arrays). Same values.

    >>> lp, best = target_logprobs_float32_deferred(torch.tensor([[0.0, 0.0]]), [1]).get()
    >>> round(float(lp[0]), 4), best
    (-0.6931, None)
    """
    targets = to_device(torch.as_tensor(list(target_ids), dtype=torch.long), logits.device)
    chosen = torch.empty(len(targets), dtype=torch.float32, device=logits.device)
    best = torch.empty(len(targets), dtype=torch.long, device=logits.device) if with_argmax else None
    step = _REDUCE_ROWS if logits.device.type == "cpu" else max(1, len(targets))
    for first in range(0, len(targets), step):
        block = logits[first : first + step].float()  # a view when float32 already
        rows = slice(first, first + len(block))
        if best is not None and block.device.type == "cpu":  # CPU argmax is the slow part there
            normaliser, best[rows] = logsumexp_and_argmax(block)
        else:  # on an accelerator two kernels beat the slice-wise search's dozen
            normaliser = torch.logsumexp(block, dim=-1)
            if best is not None:
                best[rows] = block.argmax(dim=-1)
        chosen[rows] = block.gather(1, targets[rows].unsqueeze(1)).squeeze(1) - normaliser

    def finish(arrays: list[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray | None]:
        logprobs, argmax = arrays
        return logprobs.astype(np.float64), (argmax.astype(np.int64) if argmax is not None else None)

    return DeferredHost([chosen, best], finish)


def _logprobs_deferred(logits: torch.Tensor, query: CausalQuery) -> DeferredHost:
    return target_logprobs_float32_deferred(logits, query.target_ids)


def _logprobs_and_argmax_deferred(logits: torch.Tensor, query: CausalQuery) -> DeferredHost:
    return target_logprobs_float32_deferred(logits, query.target_ids, with_argmax=True)


#: ``reduce`` for :func:`iter_causal`: each target's float32 log-probability as float64 (and its
#: argmax id), deferred (:func:`target_logprobs_float32_deferred`), declared for the store: its
#: results are ``(logprobs, argmax or None)``, kept as they are.
#: A stored result is used only with one entry per target id (the query's second id sequence).
TARGET_LOGPROBS = StoredReduction("target_logprobs_float32", _logprobs_deferred,
                                  accepts=OnePerId(1, ("f8", None)), streams_logits=True)
TARGET_LOGPROBS_ARGMAX = StoredReduction("target_logprobs_float32+argmax", _logprobs_and_argmax_deferred,
                                         accepts=OnePerId(1, ("f8", "i8")), streams_logits=True, head_buffer=True)
