"""Run planned work units with a progress bar, locally or split across processes.

Both :func:`~nlgmetrics.engine.masked.iter_masked` and :func:`~nlgmetrics.engine.causal.iter_causal`
reduce to: a list of *units* (a batch of distinct queries, or one shared prefix with its targets),
each producing ``[(distinct_index, result), ...]``. This module runs them, yields results as they
come in one process, and balances units over processes (round-robin) in several.

>>> list(run_units([[0, 1], [2]], lambda u: [(i, i * 2) for i in u], len, progress=False, desc="x"))
[(0, 0), (1, 2), (2, 4)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from tqdm.auto import tqdm

from nlgmetrics.engine.distributed import distributed_map, process_state
from nlgmetrics.engine.transfer import resolve_results

U = TypeVar("U")


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
            pending: list[tuple[int, Any]] | None = None
            for unit in units:
                results = run_unit(unit)
                bar.update(unit_size(unit))
                if pending is not None:
                    yield from _kept(resolve_results(pending), keep)
                pending = results
            if pending is not None:
                yield from _kept(resolve_results(pending), keep)
        return
    # Units are planned longest first, so contiguous shards would give rank 0 all the long ones.
    # Deal them round-robin: shard k = units[k::n]. split_between_processes gives the first
    # (len % n) ranks one extra item, exactly the sizes of these strided slices.
    n = state.num_processes
    dealt = [i for k in range(n) for i in range(k, len(units), n)]
    bar = tqdm(total=total // n or None, desc=desc, disable=not progress or not state.is_main_process, unit="seq")

    def run_shard(shard: list[int]) -> list[list[tuple[int, Any]]]:
        out = []
        for i in shard:
            out.append(_kept(resolve_results(run_unit(units[i])), keep))  # gathered across processes: read now
            bar.update(unit_size(units[i]))
        return out

    try:
        per_unit = distributed_map(dealt, run_shard)
    finally:
        bar.close()
    for results in per_unit:
        yield from results


def _kept(results: list[tuple[int, Any]], keep: Callable[[list[tuple[int, Any]]], None] | None) -> list[tuple[int, Any]]:
    if keep is not None and results:
        keep(results)
    return results
