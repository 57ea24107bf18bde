"""Run planned work units with a progress bar, locally or split across processes.

Both :func:`~nlgmetrics.engine.masked.iter_masked` and :func:`~nlgmetrics.engine.causal.iter_causal`
reduce to: a list of *units* (a batch of distinct queries, or one shared prefix with its targets),
each producing ``[(distinct_index, result), ...]``. This module runs them, yields results as they
come in one process, and balances units over processes (round-robin) in several.

>>> list(run_units([[0, 1], [2]], lambda u: [(i, i * 2) for i in u], len, progress=False, desc="x"))
[(0, 0), (1, 2), (2, 4)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, TypeVar

from tqdm.auto import tqdm

from nlgmetrics.engine.budget import logits_width, planned_budget
from nlgmetrics.engine.distributed import distributed_map, process_state
from nlgmetrics.engine.planning import dedupe
from nlgmetrics.engine.rope import (
    LengthDependentRope,
    dynamic_rotary_modules,
    fresh_dynamic_rope,
    length_dependent_rope,
)
from nlgmetrics.engine.store_sharing import recall
from nlgmetrics.engine.transfer import resolve_results

U = TypeVar("U")
Q = TypeVar("Q")


def prepare_queries(
    lm: Any, queries: Sequence[Q], kind: str, query_type: type[Q], check: Callable[[Any, int, Q], None],
    token_budget: int | str,
) -> tuple[list[Q], list[list[int]], int, int]:
    """``(distinct, copies, token_budget, vocab_size)`` of a path's call, once ``lm`` is checked to
    be a ``kind`` LM and each query a ``query_type`` that passes the path's own ``check(lm, index,
    query)``: the distinct queries and the copies of each (:func:`~nlgmetrics.engine.planning.dedupe`),
    the budget to plan with (:func:`~nlgmetrics.engine.budget.planned_budget`) and the width of the
    model's logits (a larger vocabulary's logits take a larger share of the budget)."""
    if lm.kind != kind:
        raise ValueError(f"iter_{kind} needs a {kind} LM, but {lm.name!r} is a {lm.kind} LM; load one with "
                         f"load_lm(..., kind='{kind}').")
    queries = list(queries)
    for index, query in enumerate(queries):
        if not isinstance(query, query_type):
            raise TypeError(f"queries[{index}] is {type(query).__name__}, expected {query_type.__name__}.")
        check(lm, index, query)
    distinct, copies = dedupe(queries)  # frozen dataclasses of tuples hash by value
    return distinct, copies, planned_budget(lm, token_budget), logits_width(lm.model)


def run_distinct(
    lm: Any, reduce: Any, store: Any, keys: dict[int, bytes], copies: list[list[int]],
    plan: Callable[[list[int], LengthDependentRope | None], Sequence[U]],
    run_unit: Callable[[U], list[tuple[int, Any]]], unit_size: Callable[[U], int], *, progress: bool,
    desc: str, ready: Iterable[tuple[int, Any]] = (),
) -> Iterator[tuple[int, Any]]:
    """Yield ``(query_index, result)`` for every copy (``copies``, from
    :func:`~nlgmetrics.engine.planning.dedupe`) of the distinct queries: the ``ready`` results, then
    those the store holds for the queries of ``keys`` (index -> key bytes), then those of the units
    ``plan`` makes of the others under the model's length-dependent rotary scaling, if any.

    Dynamic NTK state left by an earlier pass (this call's or the caller's) must not reach a unit:
    each runs from a fresh state, so its short passes keep the original frequencies and its passes
    of one long length grow them for that length only."""
    found, keep = recall(store, lm, lm.kind, reduce, keys)
    rope = length_dependent_rope(getattr(lm.model, "config", None))
    dynamic = dynamic_rotary_modules(lm.model) if rope is not None and rope.stateful else []

    def fresh_run(unit: U) -> list[tuple[int, Any]]:
        with fresh_dynamic_rope(dynamic):
            return run_unit(unit)

    units = plan([j for j in keys if j not in found], rope)
    computed = run_units(units, fresh_run, unit_size, progress=progress, desc=desc, keep=keep)
    for j, result in chain(ready, found.items(), computed):
        for original in copies[j]:
            yield original, result


def run_units(
    units: Sequence[U],
    run_unit: Callable[[U], list[tuple[int, Any]]],
    unit_size: Callable[[U], int],
    *,
    progress: bool,
    desc: str,
    keep: Callable[[list[tuple[int, Any]]], None] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield every ``(distinct_index, result)`` of every unit, each once, with deferred results
    read (:class:`~nlgmetrics.engine.transfer.DeferredHost`); the bar counts ``unit_size``
    (queries), not units. ``keep`` (the store's writer) gets each unit's results as soon as they
    are read, in the process that computed them, before they are yielded.

    In one process the units run in order; under several, each unit runs on exactly one process
    and every process yields every result, so the results do not depend on the process count.
    """
    total = sum(unit_size(u) for u in units)
    state = process_state()
    if state is None:
        with tqdm(total=total, desc=desc, disable=not progress or total == 0, unit="seq") as bar:
            # Read each unit's results one unit late: deferred device->host copies (transfer.py)
            # of unit k are read after unit k+1 has been launched, so the device is never idle
            # while the host reads numbers and builds the next batch.
            pending: list[tuple[int, Any]] = []
            for unit in units:
                results = run_unit(unit)
                bar.update(unit_size(unit))
                yield from _kept(resolve_results(pending), keep)
                pending = results
            yield from _kept(resolve_results(pending), keep)
        return
    # Units are planned longest first, so contiguous shards would give rank 0 all the long ones.
    # Deal them round-robin: shard k = units[k::n]. split_between_processes gives the first
    # (len % n) ranks one extra item, exactly the sizes of these strided slices.
    n = state.num_processes
    dealt = [i for k in range(n) for i in range(k, len(units), n)]

    def run_shard(shard: list[int]) -> list[list[tuple[int, Any]]]:
        out = []
        for i in shard:
            out.append(_kept(resolve_results(run_unit(units[i])), keep))  # gathered across processes: read now
            bar.update(unit_size(units[i]))
        return out

    with tqdm(total=total // n or None, desc=desc, disable=not progress or not state.is_main_process,
              unit="seq") as bar:
        per_unit = distributed_map(dealt, run_shard)
    yield from chain.from_iterable(per_unit)


def _kept(results: list[tuple[int, Any]], keep: Callable[[list[tuple[int, Any]]], None] | None) -> list[tuple[int, Any]]:
    if keep is not None and results:
        keep(results)
    return results
