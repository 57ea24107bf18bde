"""The store: what the engine computed for a query, kept on disk across calls and processes.

Opt-in: ``cache_dir=`` on every LM metric (default ``$NLGMETRICS_CACHE_DIR``; unset: no store, and
nothing is kept between calls). Before planning, the engine looks every distinct query up; only the
misses run, and each work unit's results are written as soon as that unit completes, so a killed
run loses at most the units in flight and a new run (with any number of processes) recomputes
only what is missing.

**Keys cannot go stale.** A key is sha256 over a *namespace* and the query. The namespace holds
everything that can change a stored value (:func:`namespace_of`): the weights fingerprint the
signature carries (for a model object, a hash of its current values), the tokenizer fingerprint,
dtype, device type, attention implementation, which engine path and which reduction produced the
value (with the reduction's own parameters), the versions of torch, transformers and nlgmetrics,
and :data:`FORMAT_VERSION`. The query part is its token ids (and masked positions). Change any of
them and the value is recomputed, never read.

**Safe.** One SQLite file (``store.sqlite``) in WAL mode: readers and writers in several
processes (accelerate / torchrun ranks, two jobs) see whole transactions only, and sqlite's own
locking serialises writers. Values are raw numeric arrays behind a small JSON header
(:func:`encode_arrays`), each with its sha256: no pickle, so a shared cache folder cannot run code;
an entry whose checksum or header does not hold is recomputed (and replaced). A store that cannot
be opened, read or written (read-only folder, full disk, a file that is not a database) gives one
warning and the call completes without it: the store only ever saves time.

**Bounded.** ``$NLGMETRICS_CACHE_MAX_BYTES`` (default 20 GB) caps the values' total size; beyond
it the least recently used entries go. ``nlgmetrics cache info DIR`` / ``nlgmetrics cache clear
DIR`` show and empty a store.

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

import hashlib
import json
import os
import sqlite3
import struct
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: Bumped whenever the layout of keys or values changes: old entries are then never read.
FORMAT_VERSION = 1
CACHE_DIR_ENV = "NLGMETRICS_CACHE_DIR"
MAX_BYTES_ENV = "NLGMETRICS_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 20 * 10**9
STORE_FILE = "store.sqlite"
_MAGIC = b"NLGS1"
# Only plain numeric dtypes are ever decoded: a header cannot ask numpy for objects.
_ALLOWED_KINDS = "biuf"

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
        if array.dtype.kind not in _ALLOWED_KINDS:
            raise TypeError(f"the store keeps numeric arrays only, got dtype {array.dtype}.")
        header.append([array.dtype.str, list(array.shape)])
        parts.append(array.tobytes())
    head = json.dumps(header).encode()
    return _MAGIC + struct.pack("<I", len(head)) + head + b"".join(parts)


def decode_arrays(blob: bytes) -> Arrays:
    """The arrays of :func:`encode_arrays`; ``ValueError`` for anything malformed."""
    if not blob.startswith(_MAGIC) or len(blob) < len(_MAGIC) + 4:
        raise ValueError("not a stored value")
    (length,) = struct.unpack_from("<I", blob, len(_MAGIC))
    offset = len(_MAGIC) + 4
    header = json.loads(blob[offset : offset + length])
    offset += length
    out: list[np.ndarray | None] = []
    for item in header:
        if item is None:
            out.append(None)
            continue
        dtype, shape = np.dtype(item[0]), tuple(int(n) for n in item[1])
        if dtype.kind not in _ALLOWED_KINDS or any(n < 0 for n in shape):
            raise ValueError("bad array header")
        size = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
        if offset + size > len(blob):
            raise ValueError("truncated value")
        out.append(np.frombuffer(blob, dtype=dtype, count=size // dtype.itemsize, offset=offset).reshape(shape).copy())
        offset += size
    if offset != len(blob):
        raise ValueError("trailing bytes")
    return tuple(out)


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


def lm_fields(lm: Any) -> dict[str, Any]:
    """What of a :class:`~nlgmetrics.engine.LoadedLM` decides its outputs: weights, tokenizer,
    dtype, device type and attention implementation (``name`` only to describe the namespace)."""
    config = getattr(lm.model, "config", None)
    return {
        "weights": lm.fingerprint, "tokenizer": lm.tokenizer_id, "dtype": str(lm.dtype),
        "device": lm.device.type, "attention": str(getattr(config, "_attn_implementation", None)),
        "kind": lm.kind, "name": lm.name,
    }


def ids_bytes(*sequences: Sequence[int]) -> bytes:
    """Token-id sequences as bytes that tell every split apart (each one's length goes first)."""
    return b"".join(struct.pack("<q", len(s)) + np.asarray(s, dtype=np.int64).tobytes() for s in sequences)


# ------------------------------------------------------------------------------------------------
# what the engine may keep of a reduce


@dataclass(frozen=True)
class StoredReduction:
    """A ``reduce`` for :func:`~nlgmetrics.engine.iter_causal` / ``iter_masked`` that the store may
    keep: ``name`` says what it computes (and with which parameters; it is part of every key);
    ``to_arrays`` / ``from_arrays`` turn its (host) result into numeric arrays and back, exactly.

    >>> r = StoredReduction("sum-v1", lambda logits, query: logits.sum().item(),
    ...                     lambda x: (np.array([x]),), lambda a: float(a[0][0]))
    >>> r.from_arrays(r.to_arrays(2.5))
    2.5
    """

    name: str
    reduce: Callable[[Any, Any], Any]
    to_arrays: Callable[[Any], Arrays] = lambda result: tuple(result)
    from_arrays: Callable[[Arrays], Any] = lambda arrays: arrays

    def __call__(self, logits: Any, query: Any) -> Any:
        return self.reduce(logits, query)


def recall(
    store: Store | None, lm: Any, path: str, reduce: Any, queries: dict[int, bytes]
) -> tuple[dict[int, Any], Callable[[list[tuple[int, Any]]], None] | None]:
    """``(found, keep)`` for the engine: the results the store holds for ``queries`` (index ->
    the query's key bytes), decoded, and a function that writes a unit's ``(index, result)`` pairs
    (each process writes what it computed).

    ``({}, None)`` without a store or for a reduce not declared a :class:`StoredReduction`. Under
    several processes only the results every process found are returned (all plan the same rest)."""
    if store is None or not isinstance(reduce, StoredReduction):
        return {}, None
    found, keep_arrays = recall_arrays(store, lm, f"{path}:{reduce.name}", queries, every_process_writes=True)
    assert keep_arrays is not None
    results = {j: reduce.from_arrays(arrays) for j, arrays in found.items()}

    def keep(unit_results: list[tuple[int, Any]]) -> None:
        keep_arrays([(j, reduce.to_arrays(r)) for j, r in unit_results])

    return results, keep


def recall_arrays(
    store: Store | None, lm: Any, what: str, queries: dict[int, bytes], *, every_process_writes: bool = False
) -> tuple[dict[int, Arrays], Callable[[list[tuple[int, Arrays]]], None] | None]:
    """:func:`recall` for values a metric reduces from the engine's results over several queries
    (InfoLM's bag of distributions per text): ``what`` names the reduction and its parameters;
    ``queries`` maps an index to the bytes of everything else it depends on. ``keep`` writes
    ``(index, arrays)`` pairs; where every process holds every value (``every_process_writes``
    False), only the main process writes."""
    if store is None:
        return {}, None
    from nlgmetrics.engine.distributed import agreed_subset, is_main_process

    fields = lm_fields(lm)
    namespace = namespace_of({**fields, "what": what})
    description = (f"{fields['name']} weights:{fields['weights']} tokenizer:{fields['tokenizer']} "
                   f"{fields['dtype']} {fields['device']} {fields['kind']} {what}")
    stored = store.get(namespace, list(queries.values()))
    agreed = agreed_subset({j for j, key in queries.items() if key in stored})
    found = {j: stored[queries[j]] for j in agreed}
    writes = every_process_writes or is_main_process()

    def keep(results: list[tuple[int, Arrays]]) -> None:
        if writes:
            store.put(namespace, [(queries[j], arrays) for j, arrays in results], description)

    return found, keep


# ------------------------------------------------------------------------------------------------
# the store


_SCHEMA = """
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
"""
# Keys per SELECT: well under sqlite's limit on bound parameters.
_LOOKUP_ROWS = 500


def _key(namespace: str, query: bytes) -> bytes:
    return hashlib.sha256(namespace.encode() + b"\x00" + query).digest()


class Store:
    """One store folder. Open with :func:`open_store`; one object per call (sqlite connections are
    not shared between threads). ``hits``, ``misses`` and ``recomputed`` count this object's
    lookups (``recomputed``: entries found damaged, recomputed and replaced)."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self.hits = self.misses = self.recomputed = 0
        self._writable = True
        directory.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(directory / STORE_FILE, timeout=120, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable against a killed process
        self._db.executescript(_SCHEMA)
        self._described: set[str] = set()

    # -- reading -------------------------------------------------------------------------------

    def get(self, namespace: str, queries: Sequence[bytes]) -> dict[bytes, Arrays]:
        """The stored arrays of those ``queries`` that are stored and intact."""
        keys = {_key(namespace, q): q for q in queries}
        found: dict[bytes, Arrays] = {}
        damaged: list[bytes] = []
        try:
            rows: list[tuple[bytes, bytes, bytes]] = []
            key_list = list(keys)
            for first in range(0, len(key_list), _LOOKUP_ROWS):
                part = key_list[first : first + _LOOKUP_ROWS]
                rows += self._db.execute(
                    f"SELECT key, value, checksum FROM entries WHERE key IN ({','.join('?' * len(part))})", part
                ).fetchall()
        except sqlite3.Error as error:
            self._fail("read", error)
            self.misses += len(keys)
            return {}
        for key, value, checksum in rows:
            try:
                if hashlib.sha256(value).digest() != checksum:
                    raise ValueError("checksum mismatch")
                found[keys[key]] = decode_arrays(value)
            except (ValueError, TypeError, json.JSONDecodeError):
                damaged.append(key)
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

    # -- writing -------------------------------------------------------------------------------

    def put(self, namespace: str, items: Iterable[tuple[bytes, Sequence[np.ndarray | None]]], description: str = "") -> None:
        """Keep ``(query, arrays)`` items in one transaction, then evict beyond the size cap."""
        if not self._writable:
            return
        now = time.time()
        rows = []
        for query, arrays in items:
            value = encode_arrays(arrays)
            rows.append((_key(namespace, query), namespace, value, hashlib.sha256(value).digest(), len(value), now))
        if not rows:
            return

        def write(db: sqlite3.Connection) -> None:
            db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?)", rows)
            if namespace not in self._described:
                db.execute("INSERT OR IGNORE INTO namespaces VALUES (?, ?)", (namespace, description or namespace[:12]))

        if self._write(write):
            self._described.add(namespace)
            self._evict()

    def _evict(self) -> None:
        try:
            total = self._db.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0]
        except sqlite3.Error as error:
            self._fail("read", error)
            return
        if total <= self.max_bytes:
            return
        # Down to 90 % of the cap, so that the next writes do not evict again at once.
        excess = total - int(0.9 * self.max_bytes)
        doomed: list[tuple[bytes]] = []
        for key, size in self._db.execute("SELECT key, size FROM entries ORDER BY used"):
            doomed.append((key,))
            excess -= size
            if excess <= 0:
                break
        self._write(lambda db: db.executemany("DELETE FROM entries WHERE key = ?", doomed))

    def _write(self, action: Callable[[sqlite3.Connection], Any], quiet: bool = False) -> bool:
        if not self._writable:
            return False
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                action(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return True
        except sqlite3.Error as error:
            if not quiet:
                self._fail("write", error)
                self._writable = False
            return False

    def _fail(self, what: str, error: BaseException) -> None:
        warnings.warn(
            f"nlgmetrics: could not {what} the store in {self.directory} ({error}); the numbers are "
            f"computed without it. Check that the folder is writable and the disk has room, or empty "
            f"it with `nlgmetrics cache clear {self.directory}`.",
            StoreWarning, stacklevel=3,
        )

    # -- upkeep ----------------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Entries, bytes and what each namespace holds (the model and reduction it describes)."""
        spaces = {ns: desc for ns, desc in self._db.execute("SELECT namespace, description FROM namespaces")}
        per = self._db.execute("SELECT namespace, COUNT(*), SUM(size) FROM entries GROUP BY namespace").fetchall()
        return {
            "directory": str(self.directory),
            "entries": sum(n for _, n, _ in per),
            "bytes": sum(b for _, _, b in per),
            "max_bytes": self.max_bytes,
            "namespaces": [{"namespace": ns[:12], "describes": spaces.get(ns, ""), "entries": n, "bytes": b}
                           for ns, n, b in per],
        }

    def close(self) -> None:
        self._db.close()


def resolve_cache_dir(cache_dir: str | os.PathLike | None) -> Path | None:
    """``cache_dir`` as given, else ``$NLGMETRICS_CACHE_DIR``; ``None`` (or empty) means no store.
    An argument of another type is refused naming the option (the environment is a string)."""
    from nlgmetrics.core.validation import check_cache_dir

    cache_dir = check_cache_dir(cache_dir)
    if cache_dir is None:
        cache_dir = os.environ.get(CACHE_DIR_ENV) or None
    if cache_dir is None or os.fspath(cache_dir) == "":
        return None
    return Path(os.fspath(cache_dir)).expanduser()


def max_bytes_from_env() -> int:
    text = os.environ.get(MAX_BYTES_ENV, "")
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        value = int(float(text))
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"{MAX_BYTES_ENV}={text!r}: expected a number of bytes >= 0 (e.g. 5e9).")
    return value


def open_store(cache_dir: str | os.PathLike | None) -> Store | None:
    """The store in ``cache_dir`` (or ``$NLGMETRICS_CACHE_DIR``), ``None`` when none is asked for.

    A folder that cannot hold a store (read-only, not a folder, a damaged file) gives a
    :class:`StoreWarning` and ``None``: the call goes on without it."""
    directory = resolve_cache_dir(cache_dir)
    if directory is None:
        return None
    max_bytes = max_bytes_from_env()
    try:
        return Store(directory, max_bytes)
    except (OSError, sqlite3.Error) as error:
        warnings.warn(
            f"nlgmetrics: cache_dir {os.fspath(directory)!r} cannot hold a store ({error}); the numbers "
            f"are computed without it. Pass a writable folder, or empty this one with `nlgmetrics "
            f"cache clear {os.fspath(directory)}`.",
            StoreWarning, stacklevel=2,
        )
        return None


def clear_store(cache_dir: str | os.PathLike) -> int:
    """Delete a store's files; returns the bytes freed (0 when there was none)."""
    directory = Path(os.fspath(cache_dir))
    freed = 0
    for name in (STORE_FILE, STORE_FILE + "-wal", STORE_FILE + "-shm"):
        path = directory / name
        if path.exists():
            freed += path.stat().st_size
            path.unlink()
    return freed
