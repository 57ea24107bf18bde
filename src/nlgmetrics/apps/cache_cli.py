"""``nlgmetrics cache info|clear|set-max-bytes``: see, empty and cap the LM metrics' store.

The store (:mod:`nlgmetrics.engine.store`) is ``DIR/store.sqlite``; ``DIR`` defaults to
``$NLGMETRICS_CACHE_DIR``. ``nlgmetrics cache info [--json] DIR``: entries, bytes, cap, one line
per namespace; ``clear DIR``: empty it, print the bytes freed; ``set-max-bytes 50e9 DIR``: its
cap, for every job. ``info`` and ``clear`` create no store. What ``clear`` and the cap do while
jobs run: metrics/engine.md ("Reusing work across calls: the store").

>>> print(format_info({"store": "/runs/store/store.sqlite", "entries": 3, "bytes": 1500, "file_bytes": 40960,
...                    "max_bytes": 20 * 10**9, "writable": True, "journal_mode": "DELETE",
...                    "journal_why": "network filesystem detected (nfs4)",
...                    "spool": {"files": 2, "bytes": 4096, "live": 1},
...                    "namespaces": [{"namespace": "0123456789ab", "entries": 3,
...                    "bytes": 1500, "describes": "gpt2 ... torch.float32 cpu causal causal:target_logprobs"}]}))
store: /runs/store/store.sqlite
entries: 3
bytes: 1,500 bytes (1.5 kB) of values; 40,960 bytes (41 kB) on disk
cap: 20,000,000,000 bytes (20 GB) (kept with the store: `nlgmetrics cache set-max-bytes`; beyond it the least recently used entries go)
journal: DELETE (network filesystem detected (nfs4))
spool: 2 files, 4,096 bytes (4.1 kB) not copied into the store yet (1 still written by running jobs)
writable by this process
namespaces: 1
  0123456789ab  entries 3  bytes 1,500  gpt2 ... torch.float32 cpu causal causal:target_logprobs
"""

from __future__ import annotations

import argparse
import json
import os
from contextlib import closing
from pathlib import Path
from typing import Any

# The engine (nlgmetrics.engine.store) is imported where a command runs, not here: importing it
# imports torch, which `nlgmetrics --help` and the other commands' parsers should not wait for.


def add_cache_parser(sub: Any) -> None:
    """Add ``cache`` (with ``info``, ``clear`` and ``set-max-bytes``) to the ``nlgmetrics``
    subcommands ``sub``."""
    cache = sub.add_parser(
        "cache",
        help="see (info), empty (clear) or cap (set-max-bytes) the store where LM metrics keep what their "
             "model computed",
        description="The store of the LM metrics (cache_dir=, --cache-dir, $NLGMETRICS_CACHE_DIR): what "
        "each model computed per distinct input, reused by later runs without changing a number. "
        "DIR defaults to $NLGMETRICS_CACHE_DIR. The store keeps its own size cap: the job that creates it "
        "records $NLGMETRICS_CACHE_MAX_BYTES (default 20 GB); later only `set-max-bytes` changes it, for "
        "every job using the store.",
    )
    # The nested parsers are of the command line's own class (argparse's default: the parent's), so
    # that a missing ACTION is one line on stderr and exit status 2, like every usage error.
    actions = cache.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    info = actions.add_parser("info", help="entries, bytes, the size cap, and what each namespace holds")
    clear = actions.add_parser("clear", help="empty the store in one transaction, with what spool files hold from "
                                             "before it (running jobs keep writing into it, and keep what they "
                                             "compute after); prints the bytes freed")
    cap = actions.add_parser("set-max-bytes", help="record the store's size cap, for every job using it "
                                                  "(beyond it the least recently used entries go)")
    cap.add_argument("max_bytes", metavar="BYTES", help="the cap in bytes, e.g. 50e9")
    for action in (info, clear, cap):
        action.add_argument("directory", nargs="?", metavar="DIR",
                            help="the store's folder (default: $NLGMETRICS_CACHE_DIR)")
        action.add_argument("--json", action="store_true", help="print JSON instead of text")


def cache_directory(given: str | None) -> Path:
    """The folder a ``cache`` command acts on: ``given``, else ``$NLGMETRICS_CACHE_DIR``; a
    ``ValueError`` (one line, naming the fix) when neither is set or it is a file."""
    from nlgmetrics.engine.store import CACHE_DIR_ENV

    text = given if given else os.environ.get(CACHE_DIR_ENV, "")
    if not text:
        raise ValueError(f"no store folder: pass DIR (e.g. `nlgmetrics cache info ~/.cache/nlgmetrics-store`) "
                         f"or set ${CACHE_DIR_ENV}.")
    directory = Path(text).expanduser()
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"{directory} is a file, not a store folder; pass the folder given as cache_dir.")
    return directory


def store_info(directory: Path) -> dict[str, Any]:
    """What ``nlgmetrics cache info`` reports: :meth:`~nlgmetrics.engine.store.Store.info` (entries,
    value bytes, the store's cap, whether this process can write it, its journal mode,
    namespaces, largest first), ``journal_why`` (why a job on this host opens it in the mode it
    does: the filesystem detected), ``spool`` (the spool files: results the processes of a
    multi-process run handed to the main process, not copied into the store yet: ``files``,
    ``bytes``, and ``live``, those whose writer may still append; the others are a stopped run's,
    copied in by the next run), ``env_max_bytes``
    (``$NLGMETRICS_CACHE_MAX_BYTES``, or None: it caps only a store it creates), plus ``store``
    (the database's path, None when the folder holds no store) and ``file_bytes`` (on disk). A
    folder without a store is described as empty and left as it is; looking changes nothing
    (not the journal mode either)."""
    from nlgmetrics.engine.filesystems import journal_choice
    from nlgmetrics.engine.store import (
        DEFAULT_MAX_BYTES, STORE_ERRORS, STORE_FILE, Store, max_bytes_from_env, store_files_bytes,
    )
    from nlgmetrics.engine.spool import spool_reaches

    asked = max_bytes_from_env()
    mode, why = journal_choice(directory)
    reaches = spool_reaches(directory)
    spool = {"files": len(reaches), "bytes": sum(size for _, size, _ in reaches),
             "live": sum(1 for _, _, gone in reaches if not gone)}
    if not (directory / STORE_FILE).is_file():
        return {"directory": str(directory), "store": None, "entries": 0, "bytes": 0, "file_bytes": 0,
                "max_bytes": DEFAULT_MAX_BYTES if asked is None else asked, "namespaces": [],
                "journal_mode": mode, "journal_why": why, "spool": spool}
    try:  # any store error: one line naming the fix
        with closing(Store(directory, None, journal_mode=None)) as store:
            info = store.info()
    except STORE_ERRORS as error:
        raise ValueError(f"cannot read the store in {directory} ({error}); check that the folder is "
                         f"readable, or empty it with `nlgmetrics cache clear {directory}`.") from None
    if info["journal_mode"] != mode:
        why = f"set when the store was made; a job on this host opens it in {mode} ({why})"
    info["namespaces"] = sorted(info["namespaces"], key=lambda space: (-space["bytes"], space["namespace"]))
    return {**info, "journal_why": why, "spool": spool, "env_max_bytes": asked, "store": str(directory / STORE_FILE),
            "file_bytes": store_files_bytes(directory)}


def _size(n: int) -> str:
    """``n`` bytes exactly, and in decimal units for reading.

    >>> _size(1_234_567), _size(999)
    ('1,234,567 bytes (1.23 MB)', '999 bytes')
    """
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n:,} bytes ({n / scale:.3g} {unit})"
    return f"{n:,} bytes"


def format_info(info: dict[str, Any]) -> str:
    """:func:`store_info` as text: one line each for entries, bytes and the cap, then one line per
    namespace (its id, entries, bytes, and the model, dtype, device and reduction it describes)."""
    from nlgmetrics.engine.store import MAX_BYTES_ENV, STORE_FILE

    spool = info["spool"]
    if info["store"] is None:
        pending = (f"; {spool['files']:,} spool files ({_size(spool['bytes'])}) wait for the next run to copy them in"
                   if spool["files"] else "")
        return f"no store in {info['directory']} (no {STORE_FILE}): nothing is stored there yet{pending}."
    lines = [
        f"store: {info['store']}",
        f"entries: {info['entries']:,}",
        f"bytes: {_size(info['bytes'])} of values; {_size(info['file_bytes'])} on disk",
        f"cap: {_size(info['max_bytes'])} (kept with the store: `nlgmetrics cache set-max-bytes`; beyond it "
        f"the least recently used entries go)",
    ]
    asked = info.get("env_max_bytes")
    if asked is not None and asked != info["max_bytes"]:
        lines.append(f"note: ${MAX_BYTES_ENV}={asked:,} here applies only to a store it creates, not to this one")
    lines += [
        f"journal: {info['journal_mode']} ({info['journal_why']})",
        f"spool: {spool['files']:,} files, {_size(spool['bytes'])} not copied into the store yet "
        f"({spool['live']:,} still written by running jobs)",
        "writable by this process" if info["writable"] else
        "read-only for this process: its entries are served, nothing new is written",
        f"namespaces: {len(info['namespaces'])}",
        *(f"  {space['namespace']}  entries {space['entries']:,}  bytes {space['bytes']:,}  "
          f"{space['describes']}" for space in info["namespaces"]),
    ]
    return "\n".join(lines)


def run_cache(args: argparse.Namespace) -> int:
    """``nlgmetrics cache info|clear|set-max-bytes``: print the report (text or ``--json``); exit
    status 0. ``info``: :func:`store_info`. ``set-max-bytes``: the cap recorded with the store
    (:func:`~nlgmetrics.engine.store.set_max_bytes`), with the ``entries`` and ``bytes`` left after
    evicting down to it. ``clear``: the store and what its spool files hold from before now
    emptied (:func:`~nlgmetrics.engine.store.clear_store`): ``cleared`` (whether there was a store
    or a spool file) and ``bytes_freed``."""
    from nlgmetrics.engine.spool import spool_reaches
    from nlgmetrics.engine.store import STORE_ERRORS, STORE_FILE, clear_store, parse_max_bytes, set_max_bytes

    directory = cache_directory(args.directory)
    done: dict[str, Any] = {"directory": str(directory)}
    if args.cache_command == "info":
        done = store_info(directory)
        text = format_info(done)
    elif args.cache_command == "set-max-bytes":
        max_bytes = parse_max_bytes(args.max_bytes, "BYTES")
        try:
            with closing(set_max_bytes(directory, max_bytes)) as store:
                info = store.info()
        except STORE_ERRORS as error:
            raise ValueError(f"cannot set the cap of the store in {directory} ({error}); check "
                             f"that the folder is writable.") from None
        done.update(max_bytes=max_bytes, entries=info["entries"], bytes=info["bytes"])
        text = f"the store in {directory} now keeps at most {_size(max_bytes)}."
    else:
        done["cleared"] = (directory / STORE_FILE).is_file() or bool(spool_reaches(directory))
        done["bytes_freed"] = clear_store(directory) if done["cleared"] else 0
        text = (f"cleared the store in {directory}: {_size(done['bytes_freed'])} freed." if done["cleared"]
                else f"no store in {directory} (no {STORE_FILE}): nothing to clear.")
    print(json.dumps(done, indent=2) if args.json else text)
    return 0
