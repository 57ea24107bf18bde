"""A call's store: opening it (:func:`open_store`), asking it (:func:`recall`), and sharing it
between the processes of a run (one node or many). The store itself: :mod:`~nlgmetrics.engine.store`.

SQLite's locks and WAL index hold between the processes of one host only, and a run over several
nodes must never have the store file open on two hosts. So in a run of several processes only
the main process (global rank 0) opens ``store.sqlite``: it looks every query up and broadcasts
what it found; every other process appends the results it computes to a spool file of its own
(:mod:`~nlgmetrics.engine.spool`, flushed to disk per work unit), which the main process copies
into the store at each lookup and at the end of the call, then deletes. Spool files a killed run
left behind are copied in when a store is next opened (with any number of processes), so a kill
loses only the units in flight. A clear of the store records, in its transaction, how far each
spool file reached (:func:`~nlgmetrics.engine.spool.spool_reaches`): records up to there are
never copied in.

Whether a call uses the store is decided once, by every process together (:func:`open_shared_store`):
a store that one process cannot use (no ``cache_dir`` there, a folder it cannot write, or one the
main process does not see) is used by none, with one :class:`~nlgmetrics.engine.store.StoreWarning`
per process, and the numbers are those of a call without a store.

>>> import tempfile, numpy as np
>>> store = open_store(tempfile.mkdtemp())
>>> space = namespace_of({"model": "demo", "reduction": "sum"})
>>> store.put(space, [(b"query", (np.arange(3.0), None))])
>>> found = store.get(space, [b"query", b"other"])
>>> list(found), found[b"query"][0].tolist(), found[b"query"][1]
([b'query'], [0.0, 1.0, 2.0], None)
>>> store.close()
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import numpy as np

from nlgmetrics.core.validation import check_cache_dir
from nlgmetrics.engine.distributed import (
    agreed_subset, broadcast_from_main, gather_from_every_process, is_main_process, process_state,
)
from nlgmetrics.engine.filesystems import journal_mode_for
from nlgmetrics.engine.spool import SPOOL_DIR, SpoolWriter, read_records, spool_reaches
from nlgmetrics.engine.store import (
    CACHE_DIR_ENV, UNHASHED_WEIGHTS, Arrays, Store, StoredReduction, StoreWarning, decode_arrays,
    encode_arrays, max_bytes_from_env, namespace_of,
)

def open_store(cache_dir: str | os.PathLike | None) -> Store | SharedStore | None:
    """The store in ``cache_dir`` (or ``$NLGMETRICS_CACHE_DIR``), ``None`` when none is asked for:
    a :class:`~nlgmetrics.engine.store.Store` in a run of one process, a :class:`SharedStore` (on
    every process) in a run of several. Hand either to :func:`recall` / :func:`recall_arrays`, and
    ``close()`` it at the end of the call.

    A folder that cannot hold a store (read-only, not a folder, a damaged file) gives a
    :class:`StoreWarning` and ``None``: the call goes on without it. On a network filesystem
    (:mod:`~nlgmetrics.engine.filesystems`) the store uses sqlite's rollback journal, not WAL.

    In a run of several processes this is a collective (every process calls it): only the main
    process opens the file, and either every process uses the store or none does
    (:func:`open_shared_store`). Spool files a killed run of several processes left in the folder
    are copied into the store first, whatever the process count now."""
    # An argument of another type is refused naming the option (the environment is a string);
    # None or empty: no store.
    cache_dir = check_cache_dir(cache_dir)
    text = os.fspath(cache_dir) if cache_dir is not None else os.environ.get(CACHE_DIR_ENV, "")
    directory = Path(text).expanduser() if text else None
    if (state := process_state()) is not None:
        return open_shared_store(state, directory)
    if directory is None:
        return None
    try:  # a wrong setting (ValueError) is refused, not warned about
        store = Store(directory, max_bytes_from_env(), journal_mode=journal_mode_for(directory))
    except (OSError, sqlite3.Error) as error:
        warnings.warn(
            f"nlgmetrics: cache_dir {os.fspath(directory)!r} cannot hold a store ({error}); the numbers "
            f"are computed without it. Pass a writable folder, or empty this one with `nlgmetrics "
            f"cache clear {os.fspath(directory)}`.",
            StoreWarning, stacklevel=2,
        )
        return None
    copy_leftovers(store, directory)
    return store


def recall(
    store: Store | SharedStore | None, lm: Any, path: str, reduce: Any, queries: dict[int, bytes]
) -> tuple[dict[int, Any], Callable[[list[tuple[int, Any]]], None] | None]:
    """``(found, keep)`` for the engine: the results the store holds for ``queries`` (index ->
    the query's key bytes), decoded, and a function that keeps a unit's ``(index, result)`` pairs
    (each process keeps what it computed: see :func:`recall_arrays`).

    ``({}, None)`` without a store, for a reduce not declared a :class:`StoredReduction` or a model
    kept out of the store (:func:`recall_arrays`). Under
    several processes only the results every process found are returned (all plan the same rest)."""
    if store is None or not isinstance(reduce, StoredReduction):
        return {}, None
    found, keep_arrays = recall_arrays(store, lm, f"{path}:{reduce.name}", queries, every_process_writes=True,
                                       accept=reduce.accepts)
    if keep_arrays is None:  # a model kept out of the store (UNHASHED_WEIGHTS)
        return {}, None

    def keep(unit_results: list[tuple[int, Any]]) -> None:
        keep_arrays([(j, reduce.to_arrays(r)) for j, r in unit_results])

    return {j: reduce.from_arrays(arrays) for j, arrays in found.items()}, keep


def recall_arrays(
    store: Store | SharedStore | None, lm: Any, what: str, queries: dict[int, bytes], *,
    every_process_writes: bool = False, accept: Callable[[bytes, Arrays], bool] | None = None,
) -> tuple[dict[int, Arrays], Callable[[list[tuple[int, Arrays]]], None] | None]:
    """:func:`recall` for values a metric reduces from the engine's results over several queries
    (InfoLM's bag of distributions per text): ``what`` names the reduction and its parameters;
    ``queries`` maps an index to the bytes of everything else it depends on. ``keep`` writes
    ``(index, arrays)`` pairs; where every process holds every value (``every_process_writes``
    False), only the main process writes. ``accept`` (see :meth:`Store.get`) says whether stored
    arrays fit their query; those that do not are recomputed.

    With the store of a run of several processes (:class:`SharedStore`,
    what :func:`open_store` gives there) the main process looks up for all and the others write
    through it; a :class:`Store` opened by each process itself is looked up by each, and only what
    every process found is returned (all plan the same rest). A model whose weights could not be
    hashed (:data:`UNHASHED_WEIGHTS`) is computed without the store, with one :class:`StoreWarning`."""
    if store is None:
        return {}, None
    if lm.fingerprint == UNHASHED_WEIGHTS:
        warnings.warn(f"The store is not used for {lm.name!r}: its weights could not be hashed (a tensor whose "
                      "values cannot be read here), so its numbers are computed afresh.", StoreWarning, stacklevel=3)
        return {}, None

    # What of the LoadedLM decides its outputs: weights, tokenizer, dtype, device type and attention
    # implementation (``name`` only to describe the namespace).
    config = getattr(lm.model, "config", None)
    fields = {
        "weights": lm.fingerprint, "tokenizer": lm.tokenizer_id, "dtype": str(lm.dtype),
        "device": lm.device.type, "attention": str(getattr(config, "_attn_implementation", None)),
        "kind": lm.kind, "name": lm.name,
    }
    namespace = namespace_of({**fields, "what": what})
    description = (f"{fields['name']} weights:{fields['weights']} tokenizer:{fields['tokenizer']} "
                   f"{fields['dtype']} {fields['device']} {fields['kind']} {what}")
    stored = store.get(namespace, list(queries.values()), accept=accept)
    hits = [j for j, key in queries.items() if key in stored]
    shared = isinstance(store, SharedStore)  # its get gives every process the same answer
    found = {j: stored[queries[j]] for j in (hits if shared else agreed_subset(set(hits)))}
    writes = every_process_writes or is_main_process()  # a SharedStore's main process holds the store

    def keep(results: list[tuple[int, Arrays]]) -> None:
        if writes:
            store.put(namespace, [(queries[j], arrays) for j, arrays in results], description)

    return found, keep


# Spool files of live writers that this process copied already, and up to where: a later call
# copies only what was appended since.
_COPIED: dict[str, int] = {}


def copy_spool(store: Store, path: Path, offset: int = 0, end: int | None = None) -> int:
    """Copy the verified records of ``path`` (from ``offset``, up to ``end`` bytes) into ``store``,
    less those a clear of the store dropped (:meth:`Store.put_spooled`); the offset after the last
    complete record (``offset`` when the file cannot be read). A value that does not decode is
    skipped."""
    try:
        records, stop = read_records(path, offset, end)
    except OSError:
        return offset
    items: list[tuple[int, str, str, bytes, Arrays]] = []
    for record in records:
        with suppress(ValueError, TypeError):  # a value that does not decode is skipped
            items.append((record.end, record.namespace, record.description, record.query,
                          decode_arrays(record.value)))
    if items:
        store.put_spooled(path.name, items)
    return stop


def copy_leftovers(store: Store, directory: Path, skip: Iterable[str] = ()) -> None:
    """Copy into ``store`` the spool files in ``directory`` other runs left (a killed run's, or
    one that ended before its main process could copy them); delete those whose writer is gone.
    Files named in ``skip`` (this run's own) are left alone."""
    if not store.writable:  # a read-only store keeps them for a writer
        return
    skip = set(skip)
    # Whether each writer is gone is decided before copying: a writer gone then wrote nothing after.
    for path, _, gone in spool_reaches(directory):
        if path.name in skip:
            continue
        _COPIED[str(path)] = copy_spool(store, path, _COPIED.get(str(path), 0))
        if gone and store.writable:
            with suppress(OSError):  # a folder this process may not change: copied again next time
                path.unlink(missing_ok=True)
                _COPIED.pop(str(path), None)


class SharedStore:
    """A call's store in a run of several processes, on every process (see the module docstring).

    ``get`` and ``close`` are collectives: every process calls them, in the same order (the
    engine does, as every process runs the same code). ``put`` writes to the store on the main
    process and to this process's spool file on the others. At each lookup every other process
    hands over its spool file (it starts a new one when the old one holds records), so that the
    spool files hold only what is not in the store yet, and a killed run leaves little to copy."""

    def __init__(self, directory: Path, store: Store | None, spool: SpoolWriter | None, rank: int) -> None:
        self.directory = directory
        self._store = store
        self._spool = spool
        self._rank = rank
        # What the progress bar shows (the main process's store counts; the others count lookups).
        self.hits = self.misses = self.recomputed = 0

    def get(self, namespace: str, queries: Sequence[bytes], *,
               accept: Callable[[bytes, Arrays], bool] | None = None) -> dict[bytes, Arrays]:
        """:meth:`Store.get` on the main process, its answer on every process (``queries``: the same
        list on each): the main process first copies in what the others spooled so far."""
        handed = self._hand_over(closing=False)
        found: dict[int, Arrays] | None = None
        if self._store is not None:
            try:
                self._copy_in(handed, closing=False)
                stored = self._store.get(namespace, list(queries), accept=accept)
                found = {i: stored[q] for i, q in enumerate(queries) if q in stored}
            except Exception as error:  # noqa: BLE001 - the others wait in the broadcast: it must be reached
                found = {}
                warnings.warn(f"nlgmetrics: could not read the store in {self.directory} ({error!r}); these "
                              f"queries are computed without it.", StoreWarning, stacklevel=3)
        found = broadcast_from_main(found)
        if self._store is None:
            self.hits += len(found)
            self.misses += len(queries) - len(found)
        else:
            store = self._store
            self.hits, self.misses, self.recomputed = store.hits, store.misses, store.recomputed
        return {queries[i]: arrays for i, arrays in found.items()}

    def put(self, namespace: str, items: Iterable[tuple[bytes, Sequence[np.ndarray | None]]], description: str = "") -> None:
        if self._store is not None:
            self._store.put(namespace, items, description)
        elif self._spool is not None:
            try:
                records = [(query, encode_arrays(arrays)) for query, arrays in items]
                self._spool.append(namespace, description, records)
            except OSError as error:
                self._lose_spool(error)

    def close(self) -> None:
        """End of the call: the main process copies every spool file of the call into the store and
        deletes it (a file it could not read whole stays, for a later call to copy)."""
        handed = self._hand_over(closing=True)
        if self._store is not None:
            self._copy_in(handed, closing=True)
            self._store.close()

    def _hand_over(self, closing: bool) -> list[tuple[str, int] | None]:
        """Every process's spool file and its length now, by rank (a collective); this process's
        records up to there are on disk (the engine gathered after every unit it kept). Then a new
        file for what comes next, where this one holds records."""
        mine = (self._spool.path.name, self._spool.size) if self._spool is not None else None
        handed = gather_from_every_process(mine)
        if self._spool is not None and (closing or self._spool.size > self._spool.empty_size):
            self._spool.close()
            self._spool = None
            if not closing:
                try:
                    self._spool = SpoolWriter(self.directory / SPOOL_DIR, self._rank)
                except OSError as error:
                    self._lose_spool(error)
        elif self._spool is not None:
            with suppress(OSError):  # this writer is alive (the file's mtime), for other jobs that find it
                os.utime(self._spool.path)
        return handed

    def _copy_in(self, handed: list[tuple[str, int] | None], closing: bool) -> None:
        """Main process: copy the handed-over spool files into the store, and delete each one copied
        whole (every byte its writer reported; its writer has moved on to a new file). A file
        without records stays while its writer still appends to it."""
        assert self._store is not None
        for name, size in filter(None, handed):  # None: a process without a spool file
            path = self.directory / SPOOL_DIR / name
            if size <= SpoolWriter.empty_size:
                if closing:
                    path.unlink(missing_ok=True)
            elif copy_spool(self._store, path, 0, size) == size and self._store.writable:
                path.unlink(missing_ok=True)

    def _lose_spool(self, error: OSError) -> None:
        """A spool file that cannot be written (a full disk): the numbers stand, but what this
        process computes from now on is not kept."""
        if self._spool is not None:
            self._spool.close()
        self._spool = None
        warnings.warn(
            f"nlgmetrics: could not write a spool file in {self.directory / SPOOL_DIR} ({error}); the numbers "
            f"are computed as usual, but what process {self._rank} computes from now on is not kept in the "
            f"store. Check that {self.directory} has room.", StoreWarning, stacklevel=3)


def open_shared_store(state: Any, directory: Path | None) -> SharedStore | None:
    """The call's store in a run of several processes, decided by all of them together (a collective).

    ``state``: the run's :func:`~nlgmetrics.engine.distributed.process_state`; ``directory``: this
    process's store folder (None: it asks for none). A setting this process refuses (the cap or
    filesystem variable) is raised as ``ValueError`` on every process, not left to hang the others.
    None on every process unless every process can take its part: then one :class:`StoreWarning`
    each, unless no process asked for a store."""
    rank, main = state.process_index, state.is_main_process
    store: Store | None = None
    spool: SpoolWriter | None = None
    setup_error: str | None = None
    problem: str | None = None
    if directory is not None:
        try:
            max_bytes, journal_mode = max_bytes_from_env(), journal_mode_for(directory)
            if main:
                store = Store(directory, max_bytes, journal_mode=journal_mode)
            else:
                spool = SpoolWriter(directory / SPOOL_DIR, rank)
        except ValueError as error:
            setup_error = str(error)
        except (OSError, sqlite3.Error) as error:
            what = "open the store" if main else "create its spool file"
            problem = f"process {rank} cannot {what} in {os.fspath(directory)!r} ({error})"
    read_only = store is not None and not store.writable
    reports = gather_from_every_process((directory is not None, setup_error, problem, spool.path.name if spool else None, read_only))

    errors = [f"process {r}: {report[1]}" for r, report in enumerate(reports) if report[1] is not None]
    if errors:
        _discard(store, spool)
        raise ValueError("; ".join(errors))
    if not any(report[0] for report in reports):  # no process asked for a store
        return None
    # The main process decides (it alone can see whether the others' spool files reach its folder).
    use, read_only, why = broadcast_from_main(_decide(directory, reports) if main else None)
    if not use:
        _discard(store, spool)
        warnings.warn(
            f"nlgmetrics: not every process of this run can use the store ({why}), so none does; the "
            f"numbers are computed without it. Give every process the same writable cache_dir, on a "
            f"filesystem all nodes share (or set $NLGMETRICS_CACHE_DIR on every node).",
            StoreWarning, stacklevel=3)
        return None
    if read_only and spool is not None:  # nothing is written: the spool files are not needed
        spool.discard()
        spool = None
    assert directory is not None
    if store is not None:  # this run's own spool files are not leftovers
        copy_leftovers(store, directory, skip=[report[3] for report in reports[1:] if report[3]])
    return SharedStore(directory, store, spool, rank)


def _decide(directory: Path | None, reports: list[tuple]) -> tuple[bool, bool, str | None]:
    """``(use, read_only, why not)`` from every process's report, on the main process."""
    missing = [r for r, report in enumerate(reports) if not report[0]]
    if missing:
        return False, False, f"process(es) {missing} have no cache_dir (nor $NLGMETRICS_CACHE_DIR)"
    if reports[0][2] is not None:
        return False, False, reports[0][2]
    if reports[0][4]:  # read-only: the main process reads; the others need nothing
        return True, True, None
    problems = [report[2] for report in reports[1:] if report[2] is not None]
    if problems:
        return False, False, "; ".join(problems)
    assert directory is not None
    unseen = [r for r, report in enumerate(reports) if r and not (directory / SPOOL_DIR / report[3]).is_file()]
    if unseen:
        return False, False, (f"the spool file(s) of process(es) {unseen} do not reach process 0's folder "
                              f"{os.fspath(directory)!r} (the processes do not share it)")
    return True, False, None


def _discard(store: Store | None, spool: SpoolWriter | None) -> None:
    if store is not None:
        store.close()
    if spool is not None:
        spool.discard()
