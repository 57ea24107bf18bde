"""Causal-LM scoring: per-token distributions of a target span given a prefix, in one pass.

A :class:`CausalQuery` is ``prefix_ids`` (conditioning, not scored; at least one token, e.g. BOS)
and ``target_ids`` (scored). Teacher forcing: the model reads ``prefix + target[:-1]`` once and
the logits at the last ``len(target)`` positions predict the target tokens, so no token-by-token
loop is needed. Only those positions go through the LM head.

Prefix cache: when several queries share a prefix (one document, many summaries; or one summary
prefix, many document chunks), the prefix runs once with ``use_cache=True`` and its key/value
cache is replicated over a batch of targets. Results equal the uncached ones (fp32, <= 1e-5).

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

from nlgmetrics.engine.heads import logits_at
from nlgmetrics.engine.loading import LoadedLM
from nlgmetrics.engine.planning import dedupe, plan_batches, run_with_backoff
from nlgmetrics.engine.runner import run_units
from nlgmetrics.engine.transfer import DeferredHost, resolve, to_device


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


def _validate(lm: LoadedLM, queries: Sequence[CausalQuery]) -> None:
    if lm.kind != "causal":
        raise ValueError(
            f"iter_causal needs a causal LM, but {lm.name!r} is a {lm.kind} LM; load one with load_lm(..., kind='causal')."
        )
    for index, query in enumerate(queries):
        if not isinstance(query, CausalQuery):
            raise TypeError(f"queries[{index}] is {type(query).__name__}, expected CausalQuery.")
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


# A unit of work: ("plain", [distinct indices]) or ("prefix", [distinct indices sharing a prefix]).
_Unit = tuple[str, list[int]]


def iter_causal(
    lm: LoadedLM,
    queries: Sequence[CausalQuery],
    reduce: Callable[[torch.Tensor, CausalQuery], Any],
    *,
    token_budget: int = 8192,
    batch_size: int | None = None,
    prefix_cache: bool = True,
    progress: bool = True,
    desc: str = "causal LM",
) -> Iterator[tuple[int, Any]]:
    """Yield ``(query_index, reduce(logits, query))`` for every query, in no particular order.

    ``logits`` is float32 ``[len(query.target_ids), vocab]``; row ``i`` is the distribution that
    predicts ``target_ids[i]``. Identical queries run once. A batch holds at most ``token_budget``
    tokens counted with padding (for cached prefixes: ``rows * (prefix + longest target)``) and at
    most ``batch_size`` rows. Queries with an empty target get a ``[0, vocab]`` tensor without a
    model call. Validation happens immediately (not at the first ``next()``).
    """
    queries = list(queries)
    _validate(lm, queries)
    return _iter_causal(lm, queries, reduce, token_budget, batch_size, prefix_cache, progress, desc)


def _iter_causal(
    lm: LoadedLM,
    queries: list[CausalQuery],
    reduce: Callable[[torch.Tensor, CausalQuery], Any],
    token_budget: int,
    batch_size: int | None,
    prefix_cache: bool,
    progress: bool,
    desc: str,
) -> Iterator[tuple[int, Any]]:
    unique, inverse = dedupe(queries)  # frozen dataclasses of tuples hash by value
    copies: dict[int, list[int]] = {}
    for original, j in enumerate(inverse):
        copies.setdefault(j, []).append(original)
    distinct = [queries[i] for i in unique]

    empty = [j for j, q in enumerate(distinct) if not q.target_ids]
    if empty:
        vocab = lm.model.get_output_embeddings().weight.shape[0]
        for j in empty:
            result = resolve(reduce(torch.zeros((0, vocab), dtype=torch.float32), distinct[j]))
            for original in copies[j]:
                yield original, result
    todo = [j for j, q in enumerate(distinct) if q.target_ids]

    units: list[_Unit] = []
    plain: list[int] = todo
    if prefix_cache:
        groups: dict[tuple[int, ...], list[int]] = {}
        for j in todo:
            groups.setdefault(distinct[j].prefix_ids, []).append(j)
        # A cached prefix pays off from two targets on; a 1-token prefix has nothing to cache
        # (its last token is re-read with every target anyway).
        shared = {p: js for p, js in groups.items() if len(js) >= 2 and len(p) >= 2}
        # Longest prefixes first, like plan_batches: the heaviest work surfaces OOM early.
        for prefix in sorted(shared, key=lambda p: (-len(p), shared[p][0])):
            units.append(("prefix", shared[prefix]))
        plain = [j for j in todo if distinct[j].prefix_ids not in shared]
    lengths = [len(distinct[j].prefix_ids) + len(distinct[j].target_ids) - 1 for j in plain]
    for batch in plan_batches(lengths, token_budget, batch_size):
        units.append(("plain", [plain[b] for b in batch]))

    def run_unit(unit: _Unit) -> list[tuple[int, Any]]:
        kind, members = unit
        if kind == "plain":
            return run_with_backoff(members, lambda part: _forward_plain(lm, distinct, part, reduce))
        return _forward_prefix_group(lm, distinct, members, reduce, token_budget, batch_size)

    for j, result in run_units(units, run_unit, lambda u: len(u[1]), progress=progress, desc=desc):
        for original in copies[j]:
            yield original, result


def _reduce_rows(
    logits: torch.Tensor, members: list[int], distinct: list[CausalQuery], reduce: Callable[[torch.Tensor, CausalQuery], Any]
) -> list[tuple[int, Any]]:
    out = []
    start = 0
    for j in members:
        stop = start + len(distinct[j].target_ids)
        out.append((j, reduce(logits[start:stop], distinct[j])))
        start = stop
    return out


def _forward_plain(
    lm: LoadedLM, distinct: list[CausalQuery], members: list[int], reduce: Callable[[torch.Tensor, CausalQuery], Any]
) -> list[tuple[int, Any]]:
    """Right-padded batch of ``prefix + target[:-1]``; head applied at the target-predicting positions."""
    sequences = [distinct[j].prefix_ids + distinct[j].target_ids[:-1] for j in members]
    width = max(len(s) for s in sequences)
    input_ids = torch.zeros((len(members), width), dtype=torch.long)
    rows: list[int] = []
    cols: list[int] = []
    for b, (j, sequence) in enumerate(zip(members, sequences)):
        input_ids[b, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
        # Right padding keeps real tokens at positions 0..n-1 (absolute position embeddings agree
        # with an unpadded pass); the causal mask keeps them from seeing the pads after them.
        first = len(distinct[j].prefix_ids) - 1
        rows.extend([b] * len(distinct[j].target_ids))
        cols.extend(range(first, first + len(distinct[j].target_ids)))
    device = lm.device
    inputs = {"input_ids": to_device(input_ids, device), "use_cache": False}
    if not lm.unmasked_right_padding:  # else SDPA's causal kernel, no mask (engine.padding)
        lengths = torch.tensor([len(s) for s in sequences])
        inputs["attention_mask"] = to_device((torch.arange(width) < lengths[:, None]).long(), device)
    with torch.inference_mode():
        logits = logits_at(lm.model, lm.gather_head, inputs, to_device(torch.tensor(rows), device),
                           to_device(torch.tensor(cols), device))
        return _reduce_rows(logits, members, distinct, reduce)


def _forward_prefix_group(
    lm: LoadedLM,
    distinct: list[CausalQuery],
    members: list[int],
    reduce: Callable[[torch.Tensor, CausalQuery], Any],
    token_budget: int,
    batch_size: int | None,
) -> list[tuple[int, Any]]:
    """Run the shared prefix (minus its last token) once, then batches of targets on its KV cache.

    Each target row reads ``prefix[-1:] + target[:-1]`` at positions ``P-1 ...``, so all its
    logits come out of the target pass and the prefix pass needs no head at all.
    """
    device = lm.device
    prefix = distinct[members[0]].prefix_ids
    cached = len(prefix) - 1
    with torch.inference_mode():
        prefix_ids = to_device(torch.tensor([prefix[:-1]], dtype=torch.long), device)
        # The base model alone builds the cache: the head is not needed for the prefix.
        base = getattr(lm.model, "base_model", lm.model)
        mask = {} if lm.unmasked_right_padding else {"attention_mask": torch.ones_like(prefix_ids)}
        output = base(input_ids=prefix_ids, use_cache=True, **mask)
        cache = output["cache"] if "cache" in output else output["past_key_values"]
    lengths = [len(prefix) + len(distinct[j].target_ids) - 1 for j in members]
    out: list[tuple[int, Any]] = []
    for batch in plan_batches(lengths, token_budget, batch_size):
        part = [members[b] for b in batch]
        out.extend(run_with_backoff(part, lambda p: _forward_on_cache(lm, distinct, p, reduce, cache, cached)))
    return out


def _cache_argument(model: torch.nn.Module) -> str:
    """transformers >= 5.2x calls the KV cache argument ``cache``; earlier ones ``past_key_values``."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _forward_on_cache(
    lm: LoadedLM,
    distinct: list[CausalQuery],
    members: list[int],
    reduce: Callable[[torch.Tensor, CausalQuery], Any],
    cache: Any,
    cached: int,
) -> list[tuple[int, Any]]:
    device = lm.device
    sequences = [distinct[j].prefix_ids[-1:] + distinct[j].target_ids[:-1] for j in members]
    width = max(len(s) for s in sequences)
    batch = len(members)
    input_ids = torch.zeros((batch, width), dtype=torch.long)
    attention = torch.zeros((batch, cached + width), dtype=torch.long)
    attention[:, :cached] = 1
    rows: list[int] = []
    cols: list[int] = []
    for b, (j, sequence) in enumerate(zip(members, sequences)):
        input_ids[b, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
        attention[b, cached : cached + len(sequence)] = 1
        rows.extend([b] * len(distinct[j].target_ids))
        cols.extend(range(len(distinct[j].target_ids)))
    positions = torch.arange(cached, cached + width, dtype=torch.long).unsqueeze(0).expand(batch, -1)
    with torch.inference_mode():
        # The forward pass appends to the cache in place: give it a private copy, repeated over
        # the batch rows, and keep the prefix cache intact for the next batch.
        past = copy.deepcopy(cache)
        past.batch_repeat_interleave(batch)
        inputs = {
            "input_ids": to_device(input_ids, device),
            "attention_mask": to_device(attention, device),
            "position_ids": to_device(positions.contiguous(), device),
            _cache_argument(lm.model): past,
            "use_cache": True,
        }
        logits = logits_at(lm.model, lm.gather_head, inputs, to_device(torch.tensor(rows), device),
                           to_device(torch.tensor(cols), device))
        return _reduce_rows(logits, members, distinct, reduce)


def _target_scores(logits: torch.Tensor, query: CausalQuery) -> TargetScores:
    """log-softmax in float64 (sums over long documents stay exact), gather the targets, argmax."""
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    targets = torch.tensor(query.target_ids, dtype=torch.long, device=logits.device)
    chosen = logprobs.gather(1, targets.unsqueeze(1)).squeeze(1) if len(query.target_ids) else logprobs.new_zeros(0)
    return TargetScores(
        logprobs=chosen.cpu().numpy().astype(np.float64),
        argmax=logits.argmax(dim=-1).cpu().numpy().astype(np.int64),
    )


# Rows per reduction block on CPU: 16 x 50k-vocab float32 logits are ~3 MB, so the logsumexp
# temporaries and the argmax re-read stay in cache instead of streaming [rows, vocab] twice.
_REDUCE_ROWS = 16


def target_logprobs_float32(
    logits: torch.Tensor, target_ids: Sequence[int], *, with_argmax: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """``log p(target_i)`` per row as ``logit[target] - logsumexp(logits)`` in float32 (+ argmax).

    The cheap reduction for metrics whose reference implementation uses a float32 softmax (blanc's
    Shannon, the FFLM authors' scorer): nothing of ``[rows, vocab]`` size is allocated, and it is
    ~2.5x faster than the float64 log-softmax of :func:`causal_target_scores` (the vocabulary-wide
    work dominates on GPT-2-sized models). Each row is reduced on its own, in cache-sized blocks on
    CPU (one block per call on an accelerator, where kernel launches are the cost), so the values do
    not depend on the blocking. Returns float64 log-probs and int64 argmax ids (or ``None``).

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
    chosen = torch.empty(len(targets), dtype=logits.dtype, device=logits.device)
    best = torch.empty(len(targets), dtype=torch.long, device=logits.device) if with_argmax else None
    step = _REDUCE_ROWS if logits.device.type == "cpu" else max(1, len(targets))
    for first in range(0, len(targets), step):
        block = logits[first : first + step]
        rows = slice(first, first + len(block))
        chosen[rows] = block.gather(1, targets[rows].unsqueeze(1)).squeeze(1) - torch.logsumexp(block, dim=-1)
        if best is not None:
            best[rows] = block.argmax(dim=-1)

    def finish(arrays: list[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray | None]:
        logprobs, argmax = arrays
        return logprobs.astype(np.float64), (argmax.astype(np.int64) if argmax is not None else None)

    return DeferredHost([chosen, best], finish)


def causal_target_scores(lm: LoadedLM, queries: Sequence[CausalQuery], **kwargs: Any) -> list[TargetScores]:
    """Log-probability and argmax of every target token, aligned with ``queries``.

    Accepts the keyword arguments of :func:`iter_causal` (token_budget, batch_size, prefix_cache,
    progress, desc).
    """
    queries = list(queries)
    results: list[TargetScores | None] = [None] * len(queries)
    for index, scores in iter_causal(lm, queries, _target_scores, **kwargs):
        results[index] = scores
    return results  # type: ignore[return-value]
