"""Which filesystem holds a folder, and whether SQLite's WAL mode is safe there.

SQLite's WAL keeps its index in shared memory (``store.sqlite-shm``), which only processes on one
host can share: on a network or cluster filesystem (NFS, Lustre, BeeGFS, GPFS, SMB, CephFS, FUSE
mounts such as sshfs) two hosts would each keep their own index of one file and corrupt it. There
the store uses SQLite's rollback journal (``DELETE``), which relies on file locks only.

The filesystem is read from ``/proc/mounts`` (the mount point that is the longest prefix of the
resolved folder). ``$NLGMETRICS_CACHE_FS`` (``network`` or ``local``) overrides the detection,
for filesystems it cannot see (and for tests).

>>> mounts = "server:/home /home nfs4 rw 0 0\\n/dev/sda1 / ext4 rw 0 0\\n"
>>> filesystem_type("/home/ada/cache", mounts), filesystem_type("/tmp/cache", mounts)
('nfs4', 'ext4')
>>> journal_mode_for("/home/ada/cache", mounts), journal_mode_for("/tmp/cache", mounts)
('DELETE', 'WAL')
"""

from __future__ import annotations

import os
import re
from pathlib import Path

FILESYSTEM_ENV = "NLGMETRICS_CACHE_FS"
MOUNTS_FILE = "/proc/mounts"

# Filesystems whose files other hosts can open too (or whose host we cannot know).
NETWORK_FILESYSTEMS = frozenset({
    "nfs", "nfs4", "lustre", "beegfs", "gpfs", "cifs", "smb3", "smbfs", "ceph", "cephfs", "glusterfs",
    "9p", "afs", "openafs", "panfs", "pvfs2", "orangefs", "wekafs", "gfs2", "ocfs2", "davfs", "virtiofs",
    "ncpfs", "coda", "lizardfs", "moosefs", "quobyte", "weka",
})


def filesystem_type(path: str | os.PathLike, mounts_text: str | None = None) -> str | None:
    """The filesystem type of the mount holding ``path`` (resolved), from ``mounts_text`` (the
    text of /proc/mounts; read when None); ``None`` when it cannot be told (no /proc/mounts)."""
    if mounts_text is None:
        try:
            mounts_text = Path(MOUNTS_FILE).read_text()
        except OSError:
            return None
    target = os.path.realpath(os.fspath(path))
    best: tuple[int, str] | None = None
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        # The kernel writes a space, tab, newline or backslash in a mount point as octal.
        point, kind = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[1]), fields[2]
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        # A later line with the same mount point is mounted over the earlier one: it wins ties.
        if inside and (best is None or len(point) >= best[0]):
            best = (len(point), kind)
    return None if best is None else best[1]


def is_network_filesystem(kind: str | None) -> bool:
    """True for a filesystem other hosts may share: the known network and cluster types, and every
    FUSE mount (sshfs, gcsfuse, s3fs, ...: where its data live cannot be told)."""
    return kind is not None and (kind in NETWORK_FILESYSTEMS or kind.startswith("fuse.") or kind == "fuse")


def journal_mode_for(path: str | os.PathLike, mounts_text: str | None = None) -> str:
    """``"WAL"`` for a folder on a local filesystem, ``"DELETE"`` (the rollback journal) on a network
    one; ``$NLGMETRICS_CACHE_FS`` = ``network`` / ``local`` decides instead when set."""
    return journal_choice(path, mounts_text)[0]


def journal_choice(path: str | os.PathLike, mounts_text: str | None = None) -> tuple[str, str]:
    """:func:`journal_mode_for` and why, in words (for ``nlgmetrics cache info``).

    >>> journal_choice("/home/ada/cache", "server:/home /home nfs4 rw 0 0\\n/dev/sda1 / ext4 rw 0 0\\n")[1]
    'network filesystem detected (nfs4): no WAL, whose index holds on one host only'
    """
    forced = os.environ.get(FILESYSTEM_ENV, "").strip().lower()
    if forced in ("network", "local"):
        return ("DELETE" if forced == "network" else "WAL"), f"${FILESYSTEM_ENV}={forced}"
    if forced:
        raise ValueError(f"{FILESYSTEM_ENV}={forced!r}: expected 'network' or 'local' (or unset: detected).")
    # The folder may not exist yet: its nearest existing parent is on the same mount.
    probe = Path(os.path.realpath(os.fspath(path)))
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    kind = filesystem_type(probe, mounts_text)
    if is_network_filesystem(kind):
        return "DELETE", f"network filesystem detected ({kind}): no WAL, whose index holds on one host only"
    if kind is None:
        return "WAL", f"filesystem unknown (no {MOUNTS_FILE}; set ${FILESYSTEM_ENV}=network if it is shared)"
    return "WAL", f"local filesystem ({kind})"
