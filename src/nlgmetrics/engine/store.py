"""The store: what the engine computed for a query, kept on disk across calls and processes.

Opt-in: ``cache_dir=`` on every LM metric (default ``$NLGMETRICS_CACHE_DIR``; unset: no store).
The engine looks every distinct query up before planning; only the misses run, and each work
unit's results are written as soon as it completes, so a killed run loses only the units in
flight. What users see of it (the cap, clearing it under running jobs): metrics/engine.md,
"Reusing work across calls: the store". Layout, top down:

- values: raw numeric arrays behind a bounded JSON header (:func:`encode_arrays`; no pickle);
- keys: sha256 over a namespace (:func:`namespace_of`: weights, tokenizer, dtype, device,
  attention, engine path and reduction, software versions, :data:`FORMAT_VERSION`) and the
  query's token ids: whatever can change a value is in its key, so keys cannot go stale;
- what the engine may keep (:class:`StoredReduction`);
- :class:`Store`: one SQLite file (WAL on a local disk, the rollback journal on a network one),
  each value checksummed with its key and checked before use; a cap (least recently used
  entries go) kept against a running total. No store error escapes a call: one
  :class:`StoreWarning`, and the numbers are computed without it;
- :func:`clear_store`, :func:`set_max_bytes`. How a call opens and asks it (one process or
  several): :mod:`~nlgmetrics.engine.store_sharing`.

>>> import tempfile, numpy as np
>>> store = Store(Path(tempfile.mkdtemp()), None)
>>> store.put(namespace_of({"model": "demo"}), [(b"query", (np.ones(2), None))])
>>> {key: store.info()[key] for key in ("entries", "writable")}
{'entries': 1, 'writable': True}
>>> store.close()
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nlgmetrics.engine.filesystems import journal_mode_for
from nlgmetrics.engine.spool import spool_reaches

#: Bumped whenever the layout of keys or values changes: old entries are then never read (their
#: namespaces no longer match; they go first on eviction, never having been used since).
FORMAT_VERSION = 2
CACHE_DIR_ENV = "NLGMETRICS_CACHE_DIR"
MAX_BYTES_ENV = "NLGMETRICS_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 20 * 10**9
#: sqlite's INTEGER bound: the largest cap a store can record.
LARGEST_MAX_BYTES = 2**63 - 1
STORE_FILE = "store.sqlite"
_MAGIC = b"NLGS1"
# Only plain numeric dtypes are ever decoded: a header cannot ask numpy for objects.
_DTYPES = {np.dtype(code).newbyteorder(order).str: np.dtype(code).newbyteorder(order)
           for code in ("?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8") for order in "<>"}
#: A value's header is bounded (beyond any value the engine writes): longer, or with more arrays,
#: and it is damaged or hostile, refused before it is parsed.
MAX_HEADER_BYTES = 64 * 1024
MAX_ARRAYS = 1024
_MAX_DIMS = 8

Arrays = tuple[np.ndarray | None, ...]


class StoreWarning(UserWarning):
    """The store could not be used for part of a call; the numbers are computed without it."""


# ------------------------------------------------------------------------------------------------
# values: raw arrays, no pickle


def encode_arrays(arrays: Sequence[np.ndarray | None]) -> bytes:
    """A self-describing byte string of numeric arrays (``None`` kept as a hole).

    >>> decode_arrays(encode_arrays([np.array([1, 2], dtype=np.int64), None]))[0].tolist()
    [1, 2]
    """
    header: list[Any] = []
    parts: list[bytes] = []
    for array in arrays:
        if array is None:
            header.append(None)
            continue
        array = np.ascontiguousarray(array)
        if array.dtype.str not in _DTYPES:
            raise TypeError(f"the store keeps numeric arrays only, got dtype {array.dtype}.")
        header.append([array.dtype.str, list(array.shape)])
        parts.append(array.tobytes())
    head = json.dumps(header).encode()
    if len(header) > MAX_ARRAYS or len(head) > MAX_HEADER_BYTES or any(
            item is not None and len(item[1]) > _MAX_DIMS for item in header):
        raise ValueError("too many arrays, or dimensions, for one stored value")
    return _MAGIC + struct.pack("<I", len(head)) + head + b"".join(parts)


def decode_arrays(blob: bytes) -> Arrays:
    """The arrays of :func:`encode_arrays`; ``ValueError`` for anything malformed.

    Bounded by the blob itself, whatever it holds: a header over :data:`MAX_HEADER_BYTES` or of
    more than :data:`MAX_ARRAYS` arrays, anything but a flat list of ``null`` or ``[dtype, [dims]]``
    (checked before numpy sees it), or sizes that do not add up to the blob's length is refused
    before anything is allocated."""
    if not isinstance(blob, bytes) or not blob.startswith(_MAGIC) or len(blob) < len(_MAGIC) + 4:
        raise ValueError("not a stored value")
    (length,) = struct.unpack_from("<I", blob, len(_MAGIC))
    offset = len(_MAGIC) + 4
    if length > MAX_HEADER_BYTES or offset + length > len(blob):
        raise ValueError("header too long")
    head = blob[offset : offset + length]
    # A flat header nests two lists deep (the list, an item, its shape): anything deeper is refused
    # here, so that json never recurses on crafted input.
    if head.count(b"[") > 2 * MAX_ARRAYS + 1 or _depth(head) > 3:
        raise ValueError("bad array header")
    header = json.loads(head)
    if not isinstance(header, list) or len(header) > MAX_ARRAYS:
        raise ValueError("bad array header")
    offset += length
    layout: list[tuple[np.dtype, tuple[int, ...], int, int] | None] = []  # dtype, shape, count, offset
    for item in header:
        if item is None:
            layout.append(None)
            continue
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and item[0] in _DTYPES
                and isinstance(item[1], list)
                and len(item[1]) <= _MAX_DIMS and all(type(n) is int and 0 <= n <= len(blob) for n in item[1])):
            raise ValueError("bad array header")
        dtype, shape = _DTYPES[item[0]], tuple(item[1])
        count = 1
        for n in shape:  # Python ints: no overflow, and bounded by the blob's length at each step
            count *= n
            if count * dtype.itemsize > len(blob):
                raise ValueError("truncated value")
        layout.append((dtype, shape, count, offset))
        offset += count * dtype.itemsize
    if offset != len(blob):
        raise ValueError("sizes do not match the value's length")
    return tuple(None if item is None else
                 np.frombuffer(blob, dtype=item[0], count=item[2], offset=item[3]).reshape(item[1]).copy()
                 for item in layout)


def _depth(text: bytes) -> int:
    """How deep ``[`` nests in ``text`` (a JSON header holds no strings with brackets)."""
    depth = deepest = 0
    for char in text.translate(None, _NOT_BRACKETS):
        depth += 1 if char == 0x5B else -1
        deepest = max(deepest, depth)
    return deepest


_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]")


# ------------------------------------------------------------------------------------------------
# keys


def namespace_of(fields: dict[str, Any]) -> str:
    """A 64-hex-digit name for everything besides the query that decides a stored value.

    Adds the store format and the versions of the software that computes the values, so that an
    upgrade recomputes instead of reading numbers an older version made."""
    import torch
    import transformers

    from nlgmetrics import __version__

    full = {
        **fields, "format": FORMAT_VERSION, "torch": torch.__version__,
        "transformers": transformers.__version__, "nlgmetrics": __version__,
    }
    return hashlib.sha256(json.dumps(full, sort_keys=True, default=str).encode()).hexdigest()


def ids_bytes(*sequences: Sequence[int]) -> bytes:
    """Token-id sequences as bytes that tell every split apart (each one's length goes first)."""
    return b"".join(struct.pack("<q", len(s)) + np.asarray(s, dtype=np.int64).tobytes() for s in sequences)


@dataclass(frozen=True)
class OnePerId:
    """Accepts a value of exactly ``len(dtypes)`` arrays, each 1-D of its dtype with one entry per
    id of the query's ``sequence``-th id sequence (:func:`ids_bytes`), or ``None`` where its dtype
    is ``None``: the check a :class:`StoredReduction` runs on a stored value before using it.

    >>> accepts = OnePerId(1, ("f8", None))
    >>> accepts(ids_bytes([1, 2], [3, 4, 5]), (np.zeros(3), None)), accepts(ids_bytes([1], [3]), (np.zeros(2), None))
    (True, False)
    """

    sequence: int
    dtypes: tuple[str | None, ...]

    def __call__(self, query: bytes, arrays: Arrays) -> bool:
        offset = length = 0
        for _ in range(self.sequence + 1):  # each sequence's length goes first (ids_bytes)
            if offset + 8 > len(query):
                return False  # the query holds fewer sequences
            (length,) = struct.unpack_from("<q", query, offset)
            offset += 8 + 8 * length
            if length < 0 or offset > len(query):
                return False
        return len(arrays) == len(self.dtypes) and all(
            array is None if dtype is None else
            array is not None and array.shape == (length,) and array.dtype == np.dtype(dtype)
            for array, dtype in zip(arrays, self.dtypes))


# ------------------------------------------------------------------------------------------------
# what the engine may keep of a reduce


@dataclass(frozen=True)
class StoredReduction:
    """A ``reduce`` for :func:`~nlgmetrics.engine.iter_causal` / ``iter_masked`` that the store may
    keep: ``name`` says what it computes (and with which parameters; it is part of every key);
    ``to_arrays`` / ``from_arrays`` turn its (host) result into numeric arrays and back, exactly;
    ``accepts(query, arrays)``, where given, says whether stored arrays fit the query (e.g.
    :class:`OnePerId`): a stored value it refuses is damaged, recomputed and replaced.
    ``streams_logits``: the reduce takes a query's logits in the model's own dtype (it turns them
    into float32 itself, a few rows at a time, with the same values) and keeps no view of them once
    it returns, so the engine may hand them over unconverted, from a buffer the next pass reuses
    (:func:`~nlgmetrics.engine.heads.reduce_per_query`); with ``head_buffer`` too, the engine
    reuses one buffer for the head's logits on a CPU (:func:`~nlgmetrics.engine.heads.reuses_head_output`).

    >>> r = StoredReduction("sum-v1", lambda logits, query: logits.sum().item(),
    ...                     lambda x: (np.array([x]),), lambda a: float(a[0][0]))
    >>> r.from_arrays(r.to_arrays(2.5))
    2.5
    """

    name: str
    reduce: Callable[[Any, Any], Any]
    to_arrays: Callable[[Any], Arrays] = lambda result: tuple(result)
    from_arrays: Callable[[Arrays], Any] = lambda arrays: arrays
    accepts: Callable[[bytes, Arrays], bool] | None = None
    streams_logits: bool = False
    head_buffer: bool = False

    def __call__(self, logits: Any, query: Any) -> Any:
        return self.reduce(logits, query)


#: The ``weights`` of a model object whose values cannot be read (:mod:`nlgmetrics.engine.loading`):
#: two such objects cannot be told apart, so nothing is recalled or kept under it.
UNHASHED_WEIGHTS = "unhashed"


# ------------------------------------------------------------------------------------------------
# the store


# The running total of the values' bytes lives in ``settings`` and is kept by triggers, in the
# transaction of every insert, replace and delete (any writer's, this version's or not), so that
# a write never sums the table (a total that is not an integer, damaged, stays so until the next
# eviction check counts it again). A REPLACE deletes the row it replaces without firing delete
# triggers (recursive triggers are off), so the insert trigger subtracts that row itself.
_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS entries (
    key BLOB PRIMARY KEY,
    namespace TEXT NOT NULL,
    value BLOB NOT NULL,
    checksum BLOB NOT NULL,
    size INTEGER NOT NULL,
    used REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_used ON entries (used);
CREATE TABLE IF NOT EXISTS namespaces (namespace TEXT PRIMARY KEY, description TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value);
CREATE TRIGGER IF NOT EXISTS entries_total_insert BEFORE INSERT ON entries BEGIN
    UPDATE settings SET value = value + length(NEW.value)
        - COALESCE((SELECT length(value) FROM entries WHERE key = NEW.key), 0) WHERE name = 'total_bytes'
        AND typeof(value) = 'integer';
END;
CREATE TRIGGER IF NOT EXISTS entries_total_delete AFTER DELETE ON entries BEGIN
    UPDATE settings SET value = value - length(OLD.value) WHERE name = 'total_bytes' AND typeof(value) = 'integer';
END;
CREATE TRIGGER IF NOT EXISTS entries_total_update AFTER UPDATE OF value ON entries BEGIN
    UPDATE settings SET value = value - length(OLD.value) + length(NEW.value) WHERE name = 'total_bytes'
        AND typeof(value) = 'integer';
END;
INSERT INTO settings SELECT 'total_bytes', (SELECT COALESCE(SUM(length(value)), 0) FROM entries)
    WHERE NOT EXISTS (SELECT 1 FROM settings WHERE name = 'total_bytes');
COMMIT;
"""
_SCHEMA_OBJECTS = ("entries", "entries_used", "namespaces", "settings", "entries_total_insert",
                   "entries_total_delete", "entries_total_update")
# Where each spool file reached at the last clear: ``settings`` rows named this prefix + the file's
# name, whose value is the file's length then (records ending there or before are dropped).
_SPOOL_REACH = "spool_reach:"
_RECOUNT = "UPDATE settings SET value = (SELECT COALESCE(SUM(length(value)), 0) FROM entries) WHERE name = 'total_bytes'"
# Keys per SELECT: well under sqlite's limit on bound parameters.
_LOOKUP_ROWS = 500
#: What a damaged or hostile store can raise anywhere in a lookup, a decode, a write or an
#: eviction: each is one StoreWarning (or a damaged entry) and the numbers are computed without it.
STORE_ERRORS = (sqlite3.Error, OSError, ValueError, TypeError, KeyError, IndexError, OverflowError,
                RecursionError, MemoryError, struct.error)
# Caps this process already said it does not apply (one warning per store folder and value).
_CAP_NOTED: set[tuple[str, int]] = set()


def _key(namespace: str, query: bytes) -> bytes:
    return hashlib.sha256(namespace.encode() + b"\x00" + query).digest()


def _checksum(key: bytes, value: bytes) -> bytes:
    """Binds a value to its key: a row that a damaged key index returns for another key fails."""
    return hashlib.sha256(key + value).digest()


class Store:
    """One store folder. Open with :func:`~nlgmetrics.engine.store_sharing.open_store`; one object
    per call (sqlite connections are not shared between threads). ``hits``, ``misses`` and
    ``recomputed`` count this object's lookups (``recomputed``: entries found damaged, recomputed
    and replaced).

    ``max_bytes`` is this process's cap (``$NLGMETRICS_CACHE_MAX_BYTES``, ``None`` when unset): it
    is recorded only by the opening that creates the store; afterwards the store's recorded cap
    (``self.max_bytes``, changed by :func:`set_max_bytes`) applies to every process. A store
    this process cannot write (a read-only folder, file or mount) is opened read-only: its
    entries are served and nothing is written (``self.writable``). ``journal_mode`` (``WAL`` or
    ``DELETE``: :func:`~nlgmetrics.engine.filesystems.journal_mode_for`) is set on opening
    (``None``: left as the file has it); ``self.journal_mode`` is the one in use."""

    def __init__(self, directory: Path, max_bytes: int | None, *, journal_mode: str | None = "WAL") -> None:
        self.directory = directory
        self.hits = self.misses = self.recomputed = 0
        self._warned = False
        path = directory / STORE_FILE
        directory.mkdir(parents=True, exist_ok=True)
        self.writable = not path.exists() or (os.access(directory, os.W_OK) and os.access(path, os.W_OK))
        self._db = sqlite3.connect(path, timeout=120, isolation_level=None) if self.writable else _open_read_only(path)
        # Text a damaged file holds is read, never raised: it only ever fails a check.
        self._db.text_factory = lambda raw: raw.decode("utf-8", "replace")
        try:
            if self.writable:
                if journal_mode is not None:  # None: as the file has it (an inspection changes nothing)
                    _set_journal_mode(self._db, journal_mode)
                self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable against a killed process
                self._db.execute("PRAGMA recursive_triggers=OFF")  # the total's triggers count on it
                self._setup(DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)
            cap = self._setting("max_bytes")
            self.max_bytes = cap if type(cap) is int and cap >= 0 else DEFAULT_MAX_BYTES
            self.journal_mode = str(self._db.execute("PRAGMA journal_mode").fetchone()[0]).upper()
        except STORE_ERRORS as error:  # one kind of error for whoever opens it: cannot hold a store
            self._db.close()
            raise sqlite3.DatabaseError(str(error)) from error
        noted = (str(directory), max_bytes)
        if max_bytes is not None and max_bytes != self.max_bytes and noted not in _CAP_NOTED:
            _CAP_NOTED.add(noted)
            warnings.warn(
                f"nlgmetrics: the store in {directory} keeps its own cap of {self.max_bytes:,} bytes; "
                f"${MAX_BYTES_ENV}={max_bytes:,} applies only to a store it creates. Change the store's cap "
                f"with `nlgmetrics cache set-max-bytes {max_bytes} {directory}`.",
                StoreWarning, stacklevel=2,
            )
        self._wal = self._log_identity() if self.writable and self.journal_mode == "WAL" else None

    def _setup(self, cap: int) -> None:
        """Create what is missing (tables, triggers, the running total, the cap) in one transaction;
        a store that has it all takes no write lock."""
        names = {name for (name,) in self._db.execute("SELECT name FROM sqlite_master")}
        if not names.issuperset(_SCHEMA_OBJECTS) or self._setting("total_bytes") is None:
            with self._db:  # the script commits itself; a failure rolls back what it began
                self._db.executescript(_SCHEMA)
        if self._setting("max_bytes") is None:
            self._db.execute("INSERT OR IGNORE INTO settings VALUES ('max_bytes', ?)", (int(cap),))

    def _setting(self, name: str) -> Any:
        with suppress(sqlite3.OperationalError):  # no settings table: a store of an older version, read-only
            row = self._db.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
            return None if row is None else row[0]
        return None

    def _log_identity(self) -> tuple[int, int] | None:
        with suppress(OSError):
            stat = os.stat(self.directory / f"{STORE_FILE}-wal")
            return stat.st_dev, stat.st_ino
        return None

    # -- reading -------------------------------------------------------------------------------

    def get(self, namespace: str, queries: Sequence[bytes], *,
            accept: Callable[[bytes, Arrays], bool] | None = None) -> dict[bytes, Arrays]:
        """The stored arrays of those ``queries`` that are stored and intact: checksummed with
        their key, well-formed, and (with ``accept``) accepted for their query; any other row is
        damaged, left out (recomputed by the caller) and deleted. Never raises for the store's
        content or state: a failed lookup warns once and finds nothing."""
        keys = {_key(namespace, q): q for q in queries}
        found: dict[bytes, Arrays] = {}
        damaged: list[bytes] = []
        try:
            key_list = list(keys)
            for first in range(0, len(key_list), _LOOKUP_ROWS):
                part = key_list[first : first + _LOOKUP_ROWS]
                marks = ",".join("?" * len(part))
                for key, value, checksum in self._db.execute(
                        f"SELECT key, value, checksum FROM entries WHERE key IN ({marks})", part).fetchall():
                    query = keys.get(key) if isinstance(key, bytes) else None
                    if query is None or query in found:
                        continue  # a row for a key not asked (a damaged index): never used
                    arrays = self._intact(key, query, value, checksum, accept)
                    if arrays is None:
                        damaged.append(key)
                    else:
                        found[query] = arrays
        except STORE_ERRORS as error:
            self._fail("read", error)
            self.misses += len(keys)
            return {}
        if damaged:
            self.recomputed += len(damaged)
            self._write(lambda db: db.executemany("DELETE FROM entries WHERE key = ?", [(k,) for k in damaged]))
        if found:  # least recently used goes first on eviction
            now = time.time()
            hit_keys = [(now, k) for k, q in keys.items() if q in found]
            self._write(lambda db: db.executemany("UPDATE entries SET used = ? WHERE key = ?", hit_keys), quiet=True)
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    @staticmethod
    def _intact(key: bytes, query: bytes, value: Any, checksum: Any,
                accept: Callable[[bytes, Arrays], bool] | None) -> Arrays | None:
        """The arrays of a row, or ``None`` where it is damaged (or not what ``query`` needs)."""
        try:
            if not isinstance(value, bytes) or _checksum(key, value) != checksum:
                return None
            arrays = decode_arrays(value)
            return arrays if accept is None or accept(query, arrays) is True else None
        except STORE_ERRORS:
            return None

    # -- writing -------------------------------------------------------------------------------

    def put(self, namespace: str, items: Iterable[tuple[bytes, Sequence[np.ndarray | None]]], description: str = "") -> None:
        """Keep ``(query, arrays)`` items in one transaction, then evict beyond the store's cap.
        Arrays beyond what a value may hold (:data:`MAX_ARRAYS`) are not kept."""
        self.put_spooled(None, [(0, namespace, description, query, arrays) for query, arrays in items])

    def put_spooled(self, spool: str | None, items: Sequence[tuple[int, str, str, bytes, Arrays]]) -> None:
        """:meth:`put` for records of the spool file ``spool`` (None: :meth:`put`'s items):
        ``(end, namespace, description, query, arrays)``, ``end`` the offset just past the record in
        its file. A record that ends at or before where the file reached at the last clear
        (:func:`clear_store`) was written before the clear and is dropped; the check runs in the
        write's transaction, so a clear can never fall between it and the write."""
        if not self.writable:
            self._fail("write", None)
            return
        now = time.time()
        rows: list[tuple[int, bytes, str, bytes, bytes, int, float]] = []
        descriptions: dict[str, str] = {}
        for end, namespace, description, query, arrays in items:
            try:
                value = encode_arrays(arrays)
            except ValueError:
                continue  # more arrays than a stored value may hold: recomputed each time instead
            key = _key(namespace, query)
            rows.append((end, key, namespace, value, _checksum(key, value), len(value), now))
            descriptions.setdefault(namespace, description)
        if not rows:
            return

        def write(db: sqlite3.Connection) -> None:
            kept = rows
            if spool is not None:
                (reach,) = db.execute("SELECT COALESCE(MAX(value), 0) FROM settings WHERE name = ?",
                                      (_SPOOL_REACH + spool,)).fetchone()
                reach = reach if type(reach) is int else 0
                kept = [row for row in rows if row[0] > reach]
            db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?)", [row[1:] for row in kept])
            db.executemany("INSERT OR IGNORE INTO namespaces VALUES (?, ?)",
                           [(ns, descriptions[ns] or ns[:12]) for ns in {row[2] for row in kept}])

        if self._write(write):
            self._evict()

    def _evict(self) -> None:
        """Beyond the store's recorded cap, delete the least recently used entries down to 90 % of
        it (so that the next writes do not evict again at once). Reads the running total: the cost
        does not grow with the store."""
        try:
            if self._over_cap(self._db) is None:
                return
        except STORE_ERRORS as error:
            self._fail("read", error)
            return

        def evict(db: sqlite3.Connection) -> None:
            total = self._over_cap(db)  # again inside the lock: another process may have evicted
            if total is None:
                return
            excess = total - int(0.9 * self.max_bytes)
            doomed: list[tuple[bytes]] = []
            for key, size in db.execute("SELECT key, length(value) FROM entries ORDER BY used"):
                doomed.append((key,))
                excess -= size if type(size) is int else 0
                if excess <= 0:
                    break
            db.executemany("DELETE FROM entries WHERE key = ?", doomed)
            if excess > 0:  # the total said more than the rows hold (a damaged total): count again
                db.execute(_RECOUNT)

        self._write(evict)

    def _over_cap(self, db: sqlite3.Connection) -> int | None:
        """The running total when it exceeds the store's cap (both read from the store), else None."""
        settings = dict(db.execute("SELECT name, value FROM settings WHERE name IN ('total_bytes', 'max_bytes')"))
        cap, total = settings.get("max_bytes"), settings.get("total_bytes")
        if type(cap) is int and cap >= 0:
            self.max_bytes = cap  # `nlgmetrics cache set-max-bytes` applies to running jobs too
        if type(total) is not int or total < 0:  # damaged: count once, and keep counting from there
            if not db.in_transaction:
                self._write(lambda db: db.execute(_RECOUNT))
            else:
                db.execute(_RECOUNT)
            total = db.execute("SELECT COALESCE(SUM(length(value)), 0) FROM entries").fetchone()[0]
        return total if total > self.max_bytes else None

    def _write(self, action: Callable[[sqlite3.Connection], Any], quiet: bool = False) -> bool:
        if not self.writable:
            return False
        try:
            self._check_log()
            self._db.execute("BEGIN IMMEDIATE")
            with self._db:  # commits, or rolls back whatever the action raised
                action(self._db)
            return True
        except STORE_ERRORS as error:
            if not quiet:
                self._fail("write", error)
                self.writable = False
            return False

    def _check_log(self) -> None:
        """sqlite keeps writing into a write-ahead log deleted under it, and what it writes there
        is lost: refuse to write once the log this connection opened is gone or replaced."""
        if self._wal is not None and self._log_identity() != self._wal:
            self._wal = None
            raise OSError(f"{STORE_FILE}-wal was deleted or replaced while this process held the store, so "
                          f"its recent entries are lost; never delete the store's files by hand")

    def _fail(self, what: str, error: BaseException | None) -> None:
        """One :class:`StoreWarning` per store object: ``what`` failed (``error`` None: the store is
        read-only for this process)."""
        if self._warned:
            return
        self._warned = True
        warnings.warn(
            f"nlgmetrics: the store in {self.directory} is read-only for this process: its entries are "
            f"served, but nothing new is written. Make the folder and {STORE_FILE} writable to keep results."
            if error is None else
            f"nlgmetrics: could not {what} the store in {self.directory} ({error}); the numbers are "
            f"computed without it. Check that the folder is writable and the disk has room, or empty "
            f"it with `nlgmetrics cache clear {self.directory}`.",
            StoreWarning, stacklevel=3,
        )

    # -- upkeep ----------------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Entries, bytes, the store's cap, whether this process can write it, its journal mode
        (``WAL`` or ``DELETE``, as sqlite reports it), and what each namespace holds (the model and
        reduction it describes)."""
        spaces = {ns: desc for ns, desc in self._db.execute("SELECT namespace, description FROM namespaces")}
        per = self._db.execute(
            "SELECT namespace, COUNT(*), COALESCE(SUM(length(value)), 0) FROM entries GROUP BY namespace").fetchall()
        return {
            "directory": str(self.directory),
            "entries": sum(n for _, n, _ in per),
            "bytes": sum(b for _, _, b in per),
            "max_bytes": self.max_bytes,
            "writable": self.writable,
            "journal_mode": self.journal_mode,
            "namespaces": [{"namespace": str(ns)[:12], "describes": spaces.get(ns, ""), "entries": n, "bytes": b}
                           for ns, n, b in per],
        }

    def close(self) -> None:
        self._db.close()


def _set_journal_mode(db: sqlite3.Connection, mode: str, patience: float = 120.0) -> None:
    """``PRAGMA journal_mode``, retried while another connection holds the file: sqlite answers a
    journal-mode change that races another connection's "database is locked" at once, without
    waiting its busy timeout, so of several processes opening a new store together some would
    otherwise go on without it. Waits at most ``patience`` seconds, the connections' own timeout."""
    deadline, pause = time.monotonic() + patience, 0.005
    while True:
        try:
            db.execute(f"PRAGMA journal_mode={mode}")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.25)


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to a store this process cannot write. A WAL store needs its shared
    memory file: where that cannot be made either (a read-only folder or mount), the file is read
    as immutable (on a read-only mount nothing changes it; where its owner still writes it, a read
    torn by a write fails its checksum or sqlite's checks, and is a miss)."""
    for flags in ("mode=ro", "mode=ro&immutable=1"):
        db = sqlite3.connect(f"{path.resolve().as_uri()}?{flags}", uri=True, timeout=120, isolation_level=None)
        try:
            db.execute("SELECT COUNT(*) FROM entries").fetchone()
            return db
        except sqlite3.Error:
            db.close()
            if "immutable" in flags:  # the last way to read it: the file is no store
                raise


def max_bytes_from_env() -> int | None:
    """``$NLGMETRICS_CACHE_MAX_BYTES`` as bytes, ``None`` when unset: the cap of a store this
    process creates (an existing store keeps its own; :class:`Store`). One-line ``ValueError``
    for anything but a finite number of bytes from 0 to :data:`LARGEST_MAX_BYTES`."""
    text = os.environ.get(MAX_BYTES_ENV, "")
    return parse_max_bytes(text, f"${MAX_BYTES_ENV}") if text else None


def parse_max_bytes(text: str, source: str) -> int:
    """``text`` (``5e9``, ``5000000000``) as a whole number of bytes; one-line ``ValueError``
    naming ``source`` otherwise (``inf``, ``1e400``, ``nan``, ``-5``, ``abc``).

    >>> parse_max_bytes("5e9", "cap")
    5000000000
    """
    value = -1  # not a number, nan, inf
    for parse in (int, float):  # an exact integer first, else e.g. 5e9
        with suppress(ValueError, OverflowError):
            value = int(parse(text))
            break
    if not 0 <= value <= LARGEST_MAX_BYTES:
        raise ValueError(f"{source}={text!r}: expected a number of bytes from 0 to {LARGEST_MAX_BYTES:.2e} "
                         f"(e.g. 5e9).")
    return value


def store_files(directory: Path) -> list[Path]:
    """The store's files in ``directory``: sqlite's database, write-ahead log and shared memory."""
    return [directory / f"{STORE_FILE}{suffix}" for suffix in ("", "-wal", "-shm")]


def store_files_bytes(directory: Path) -> int:
    """The bytes the store's files take on disk."""
    return sum(path.stat().st_size for path in store_files(directory) if path.is_file())


def clear_store(cache_dir: str | os.PathLike) -> int:
    """Empty a store: every entry and namespace goes in one transaction (its cap stays), and the
    file shrinks where no other process is reading it. Returns the bytes freed on disk (0 when there
    was nothing to clear).

    The file is never deleted: a job that has the store open goes on writing into the same,
    now empty, store, and keeps what it computes after the clear. Only a file that is not a
    store (or is damaged beyond reading) is deleted, with its log. A one-line ``ValueError`` when
    a job holds the store's write lock for over a minute.

    Spool files (:mod:`~nlgmetrics.engine.store_sharing`) lose what they hold from before the
    clear too: in the clear's transaction the store records each file's length, and records that
    end there or before are never copied in (:meth:`Store.put_spooled`); files whose writer is
    gone are deleted. What a running job appends after the clear is copied in as usual."""
    directory = Path(os.fspath(cache_dir))
    path = directory / STORE_FILE
    reaches: list[tuple[Path, int, bool]] | None = None
    freed = 0
    if path.exists():
        before = store_files_bytes(directory)
        try:
            with closing(sqlite3.connect(path, timeout=60, isolation_level=None)) as db:
                db.execute("BEGIN IMMEDIATE")
                tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                for table in tables & {"entries", "namespaces"}:
                    db.execute(f"DELETE FROM {table}")
                # Read under the write lock: every copy of a spool record into the store runs
                # wholly before the clear (and is deleted now) or wholly after (and sees these).
                reaches = spool_reaches(directory)
                if "entries" in tables:
                    db.execute("CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value)")
                    db.execute(_RECOUNT)
                    db.execute("DELETE FROM settings WHERE substr(name, 1, ?) = ?", (len(_SPOOL_REACH), _SPOOL_REACH))
                    db.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)",
                                   [(_SPOOL_REACH + spool.name, size) for spool, size, _ in reaches])
                db.execute("COMMIT")
                # Shrink the file; another process's open read keeps the pages free for reuse instead.
                with suppress(sqlite3.OperationalError):
                    db.execute("VACUUM")
                    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.DatabaseError as error:
            if getattr(error, "sqlite_errorname", "") not in ("SQLITE_NOTADB", "SQLITE_CORRUPT"):
                raise ValueError(f"cannot clear the store in {directory} ({error}); stop the jobs writing to "
                                 f"it, or try again.") from None
            for file in store_files(directory):
                file.unlink(missing_ok=True)
        freed = max(0, before - store_files_bytes(directory))
    for spool, size, gone in spool_reaches(directory) if reaches is None else reaches:
        if gone:
            with suppress(OSError):  # deleted meanwhile, or a folder this process may not change
                spool.unlink()
                freed += size
    return freed


def set_max_bytes(cache_dir: str | os.PathLike, max_bytes: int) -> Store:
    """Record ``max_bytes`` as the store's cap (creating the store if needed): every process
    using it evicts down to it from its next write on. Returns the store, open."""
    store = Store(Path(os.fspath(cache_dir)), None, journal_mode=journal_mode_for(cache_dir))
    problem = "could not be written" if store.writable else "is read-only for this process"
    if not store._write(lambda db: db.execute("INSERT OR REPLACE INTO settings VALUES ('max_bytes', ?)",
                                               (int(max_bytes),))):
        store.close()
        raise ValueError(f"the store in {cache_dir} {problem}; its cap stays {store.max_bytes:,} bytes.")
    store.max_bytes = int(max_bytes)
    store._evict()
    return store
