"""Spool files: append-only logs of finished results that the main process copies into the store.

A process that does not hold the store (any rank but 0 of a run with several processes) appends
the results of each work unit it finishes to a file of its own, ``<cache>/spool/<host>~<pid>~
<token>~rank<k>.spool``, and flushes it to disk before the unit counts as done: a kill loses only
the units in flight. One writer per file, so no locks are needed, on any filesystem.

Each record is ``<u64 length> body sha256(length + body)`` where the body holds the namespace, the
namespace's description, the query and the value's bytes (the store's encoding of raw numeric
arrays, no pickle; opaque here). The checksum binds the value to its key: a record whose bytes do
not verify is skipped, and a torn last record (a writer killed mid-append) is not read at all.

>>> import tempfile
>>> from pathlib import Path
>>> writer = SpoolWriter(Path(tempfile.mkdtemp()), rank=1)
>>> writer.append("space", "what it is", [(b"query", b"value")])
>>> records, end = read_records(writer.path)
>>> [(r.namespace, r.query, r.value) for r in records], end == writer.size
([('space', b'query', b'value')], True)
>>> writer.close()
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import struct
import time
import uuid
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

SPOOL_DIR = "spool"
SUFFIX = ".spool"
_FILE_MAGIC = b"NLGSPOOL1\n"
_LENGTH = struct.Struct("<Q")
_PART = struct.Struct("<I")
_DIGEST = 32
#: A record longer than this is damaged (no stored value comes near it): reading stops there.
MAX_RECORD_BYTES = 1 << 34
#: A spool file not written for this long, whose writer cannot be checked (another host), is
#: taken as abandoned and deleted once copied. A live writer touches its file at least at every
#: lookup and every finished unit.
STALE_SECONDS = 6 * 3600


@dataclass(frozen=True)
class SpoolRecord:
    """One verified record; ``end`` is the offset just past it in its file (a clear of the store
    records how far each spool file reached, and records that end there or before are dropped)."""

    namespace: str
    description: str
    query: bytes
    value: bytes
    end: int = 0


def this_host() -> str:
    """This host's name as spool file names hold it (letters, digits, ``.``, ``-``, ``_``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname()) or "host"


def _encode_record(namespace: str, description: str, query: bytes, value: bytes) -> bytes:
    parts = [namespace.encode(), description.encode(), query]
    body = b"".join(_PART.pack(len(p)) + p for p in parts) + value
    head = _LENGTH.pack(len(body))
    return head + body + hashlib.sha256(head + body).digest()


def _decode_body(body: bytes, end: int) -> SpoolRecord:
    parts: list[bytes] = []
    offset = 0
    for _ in range(3):
        (length,) = _PART.unpack_from(body, offset)
        offset += _PART.size
        if offset + length > len(body):
            raise ValueError("truncated record")
        parts.append(body[offset : offset + length])
        offset += length
    return SpoolRecord(parts[0].decode(), parts[1].decode(), parts[2], body[offset:], end)


class SpoolWriter:
    """This process's spool file in ``folder`` (created, with the folder, now; ``OSError`` when it
    cannot be). ``append`` writes a unit's results and flushes them to disk before returning;
    ``size`` is the file's length so far, ``empty_size`` its length without records."""

    empty_size = len(_FILE_MAGIC)

    def __init__(self, folder: Path, rank: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{this_host()}~{os.getpid()}~{uuid.uuid4().hex[:12]}~rank{rank}{SUFFIX}"
        self._file = open(self.path, "xb")  # noqa: SIM115 - kept open for the whole call
        self.size = 0
        self._write(_FILE_MAGIC)

    def append(self, namespace: str, description: str, items: Iterable[tuple[bytes, bytes]]) -> None:
        """Append ``(query, value bytes)`` records, on disk when it returns."""
        data = b"".join(_encode_record(namespace, description, query, value) for query, value in items)
        if data:
            self._write(data)

    def _write(self, data: bytes) -> None:
        self._file.write(data)
        self._file.flush()
        os.fsync(self._file.fileno())
        self.size += len(data)

    def close(self) -> None:
        self._file.close()

    def discard(self) -> None:
        """Close and delete the file (a call that does not use the store)."""
        self.close()
        self.path.unlink(missing_ok=True)


def read_records(path: Path, offset: int = 0, end: int | None = None) -> tuple[list[SpoolRecord], int]:
    """The verified records of ``path`` from ``offset`` (0: the start) up to ``end`` bytes (None:
    all there are), and the offset after the last complete record. Records that do not verify are
    skipped; a record that is not complete yet (or a length beyond the file) ends the reading.
    ``OSError`` when the file cannot be read."""
    with open(path, "rb") as handle:
        data = handle.read() if end is None else handle.read(end)
    if offset == 0:
        if not data.startswith(_FILE_MAGIC):
            return [], 0
        offset = len(_FILE_MAGIC)
    records: list[SpoolRecord] = []
    while offset + _LENGTH.size <= len(data):
        (length,) = _LENGTH.unpack_from(data, offset)
        stop = offset + _LENGTH.size + length + _DIGEST
        if length > MAX_RECORD_BYTES or stop > len(data):
            break
        head_body = data[offset : stop - _DIGEST]
        if hashlib.sha256(head_body).digest() == data[stop - _DIGEST : stop]:
            # Verified bytes that do not parse were written by another format: skipped.
            with suppress(ValueError, struct.error, UnicodeDecodeError):
                records.append(_decode_body(head_body[_LENGTH.size :], stop))
        offset = stop
    return records, offset


def writer_is_gone(path: Path) -> bool:
    """True when no live process can still append to ``path``: its writer was on this host and has
    exited, or the file has not been written for :data:`STALE_SECONDS`."""
    fields = path.name.removesuffix(SUFFIX).split("~")  # host~pid~token~rank<k>
    if not path.name.endswith(SUFFIX) or len(fields) != 4 or not fields[1].isdigit():
        return False  # not a spool file
    if fields[0] == this_host() and not _alive(int(fields[1])):
        return True
    with suppress(OSError):
        return time.time() - path.stat().st_mtime > STALE_SECONDS
    return False


def _alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (a zombie, killed but not reaped, does not)."""
    try:
        os.kill(pid, 0)
        # The state follows the command's closing parenthesis in /proc/<pid>/stat.
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError, IndexError):  # no right to signal it, or no /proc: say alive
        return True


def spool_reaches(directory: Path) -> list[tuple[Path, int, bool]]:
    """What a clear of the store in ``directory`` needs of its spool files: each file's path, its
    length now (every record that ends there or before was written before the clear; records are
    appended whole, in order) and whether its writer is gone
    (:func:`writer_is_gone`)."""
    reaches = []
    for path in sorted((directory / SPOOL_DIR).glob(f"*{SUFFIX}")):  # none where there is no folder
        gone = writer_is_gone(path)  # decided first: a writer gone then appends nothing after
        with suppress(OSError):  # deleted meanwhile: copied in whole already
            reaches.append((path, path.stat().st_size, gone))
    return reaches
