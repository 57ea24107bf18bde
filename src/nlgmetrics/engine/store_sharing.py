"""The store under several processes (one node or many): one process opens it, the others hand
it what they compute.

SQLite's locks and WAL index hold between the processes of one host only, and a run over several
nodes must never have the store file open on two hosts. So in a run of several processes only
the main process (global rank 0) opens ``store.sqlite``: it looks every query up and broadcasts
what it found; every other process appends the results it computes to a spool file of its own
(:mod:`~nlgmetrics.engine.spool`, flushed to disk per work unit), which the main process copies
into the store at each lookup and at the end of the call, then deletes. Spool files a killed run
left behind are copied in when a store is next opened (with any number of processes), so a kill
loses only the units in flight. A clear of the store records, in its transaction, how far each
spool file reached (:func:`spool_reaches`): records up to there are never copied in.

Whether a call uses the store is decided once, by every process together (:func:`open_shared_store`):
a store that one process cannot use (no ``cache_dir`` there, a folder it cannot write, or one the
main process does not see) is used by none, with one :class:`~nlgmetrics.engine.store.StoreWarning`
per process, and the numbers are those of a call without a store.

This module sits below :mod:`~nlgmetrics.engine.store` (which opens stores through it): the
store's value encoding and warning come in as a :class:`StoreFormat`.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from nlgmetrics.engine.distributed import broadcast_from_main, gather_from_every_process
from nlgmetrics.engine.spool import SPOOL_DIR, SUFFIX, SpoolWriter, read_records, writer_is_gone

Arrays = tuple[np.ndarray | None, ...]


class Store(Protocol):
    """What this module uses of :class:`nlgmetrics.engine.store.Store`."""

    writable: bool
    hits: int
    misses: int
    recomputed: int

    def get(self, namespace: str, queries: Sequence[bytes], *,
            accept: Callable[[bytes, Arrays], bool] | None = None) -> dict[bytes, Arrays]: ...

    def put(self, namespace: str, items: Iterable[tuple[bytes, Sequence[np.ndarray | None]]],
            description: str = "") -> None: ...

    def put_spooled(self, spool: str | None,
                    items: Sequence[tuple[int, str, str, bytes, Arrays]]) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class StoreFormat:
    """The store's value encoding (``encode`` arrays to bytes, ``decode`` back, ``ValueError`` for
    malformed bytes) and the warning category of its problems."""

    encode: Callable[[Sequence[np.ndarray | None]], bytes]
    decode: Callable[[bytes], Arrays]
    warning: type[Warning]


# Spool files of live writers that this process copied already, and up to where: a later call
# copies only what was appended since.
_COPIED: dict[str, int] = {}


def copy_spool(store: Store, form: StoreFormat, path: Path, offset: int = 0, end: int | None = None) -> int:
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
        try:
            arrays = form.decode(record.value)
        except (ValueError, TypeError):
            continue
        items.append((record.end, record.namespace, record.description, record.query, arrays))
    if items:
        store.put_spooled(path.name, items)
    return stop


def spool_reaches(directory: Path) -> list[tuple[Path, int, bool]]:
    """What a clear of the store in ``directory`` needs of its spool files: each file's path, its
    length now (every record that ends there or before was written before the clear; records are
    appended whole, in order) and whether its writer is gone
    (:func:`~nlgmetrics.engine.spool.writer_is_gone`)."""
    reaches = []
    for path in sorted((directory / SPOOL_DIR).glob(f"*{SUFFIX}")):  # none where there is no folder
        gone = writer_is_gone(path)  # decided first: a writer gone then appends nothing after
        with suppress(OSError):  # deleted meanwhile: copied in whole already
            reaches.append((path, path.stat().st_size, gone))
    return reaches


def copy_leftovers(store: Store, form: StoreFormat, directory: Path, skip: Iterable[str] = ()) -> None:
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
        stop = copy_spool(store, form, path, _COPIED.get(str(path), 0))
        _COPIED[str(path)] = stop
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

    def __init__(self, directory: Path, store: Store | None, spool: SpoolWriter | None, rank: int,
                 form: StoreFormat) -> None:
        self.directory = directory
        self._form = form
        self.is_main = store is not None
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
                              f"queries are computed without it.", self._form.warning, stacklevel=3)
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
                records = [(query, self._form.encode(arrays)) for query, arrays in items]
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
            elif copy_spool(self._store, self._form, path, 0, size) == size and self._store.writable:
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
            f"store. Check that {self.directory} has room.", self._form.warning, stacklevel=3)


def open_shared_store(
    state: Any, directory: Path | None, setup_error: str | None, open_main: Callable[[Path], Store],
    form: StoreFormat,
) -> SharedStore | None:
    """The call's store in a run of several processes, decided by all of them together (a collective).

    ``state``: the run's :func:`~nlgmetrics.engine.distributed.process_state`; ``directory``: this
    process's store folder (None: it asks for none); ``setup_error``: a problem with this process's
    settings (raised as ``ValueError`` on every process); ``open_main`` opens the store on the main
    process (``OSError`` / ``sqlite3.Error`` when it cannot). None on every process unless every
    process can take its part: then one ``form.warning`` each, unless no process asked for a store."""
    rank, main = state.process_index, state.is_main_process
    store: Store | None = None
    spool: SpoolWriter | None = None
    problem: str | None = None
    if setup_error is None and directory is not None:
        try:
            if main:
                store = open_main(directory)
            else:
                spool = SpoolWriter(directory / SPOOL_DIR, rank)
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
            form.warning, stacklevel=3)
        return None
    if read_only and spool is not None:  # nothing is written: the spool files are not needed
        spool.discard()
        spool = None
    assert directory is not None
    if store is not None:  # this run's own spool files are not leftovers
        copy_leftovers(store, form, directory, skip=[report[3] for report in reports[1:] if report[3]])
    return SharedStore(directory, store, spool, rank, form)


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
