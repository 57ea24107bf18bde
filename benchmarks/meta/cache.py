"""On-disk per-example score cache for benchmarks: reruns and interrupted runs do not recompute.

One JSON Lines file per (dataset, metric family, options): the first line records the options,
then one line per computed chunk ``{"scores": {example_key: {output: score|null}}, "signature": ...}``
(``example_key``: the runner's text of an example's ``(doc, system)`` key and a content hash, see
:func:`benchmarks.meta.runner._content_key`; this module keeps it as an opaque string).
A chunk is appended (and flushed) as soon as it is computed, so a run killed half-way keeps every
finished chunk. The file name carries a hash of the options: changing the model, measure or
temperature starts a new file instead of mixing numbers.

>>> import tempfile
>>> cache = ScoreCache(tempfile.mkdtemp(), "toy", "bleu", {"tok": "13a"})
>>> cache.append({"a": {"bleu": 12.5}}, signature="bleu|tok:13a")
>>> ScoreCache(cache.path.parent.parent, "toy", "bleu", {"tok": "13a"}).load()["a"]
{'bleu': 12.5}
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def options_hash(options: dict[str, Any]) -> str:
    """Short stable hash of the options that change a family's numbers."""
    blob = json.dumps(options, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode("utf-8")).hexdigest()[:10]


def read_score_file(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, dict[str, float]], list[str]]:
    """``(options, {key: {output: score}}, signatures)`` of one cache file (``None`` becomes ``nan``;
    a line cut short by a killed run is skipped: its chunk is simply recomputed)."""
    options: dict[str, Any] = {}
    scores: dict[str, dict[str, float]] = {}
    signatures: list[str] = []
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "options" in record and not options:
                options = record["options"]
            if "scores" not in record:
                continue
            if record.get("signature") and record["signature"] not in signatures:
                signatures.append(record["signature"])
            for key, outputs in record["scores"].items():
                scores[key] = {k: (math.nan if v is None else float(v)) for k, v in outputs.items()}
    return options, scores, signatures


@contextlib.contextmanager
def _exclusive(handle: Any) -> Iterator[None]:
    """Hold an exclusive advisory lock on an open file (no-op where ``fcntl`` does not exist)."""
    try:
        import fcntl
    except ImportError:  # Windows: one process per cache file
        yield
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class ScoreCache:
    """Append-only cache of per-example scores for one metric family and one set of options."""

    def __init__(self, root: str | os.PathLike, dataset: str, family: str, options: dict[str, Any]):
        self.options = dict(options)
        safe = family.replace("/", "_").replace(":", "_")
        self.path = Path(root) / dataset / f"{safe}-{options_hash(self.options)}.jsonl"
        self.signatures: list[str] = []

    def load(self) -> dict[str, dict[str, float]]:
        """Every cached ``{key: {output: score}}`` (``None`` in the file becomes ``nan``)."""
        if not self.path.exists():
            return {}
        _, scores, signatures = read_score_file(self.path)
        self.signatures.extend(s for s in signatures if s not in self.signatures)
        return scores

    def _ends_with_newline(self) -> bool:
        with self.path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return True
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) == b"\n"

    def append(self, scores: dict[str, dict[str, float]], signature: str | None = None) -> None:
        """Write one computed chunk (``nan`` stored as ``null``) and flush it to disk.

        The file is locked while the chunk is written (POSIX ``flock``), so several runner
        processes (``--shard``) may append to one file without interleaving their lines.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        clean = {
            key: {k: (None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)) for k, v in outputs.items()}
            for key, outputs in scores.items()
        }
        record = json.dumps({"scores": clean, "signature": signature}) + "\n"
        with self.path.open("a", encoding="utf-8") as handle, _exclusive(handle):
            if os.fstat(handle.fileno()).st_size == 0:
                handle.write(json.dumps({"options": self.options}, sort_keys=True, default=str) + "\n")
            elif not self._ends_with_newline():
                # A run killed mid-line left a partial record: end it, so that this chunk is a line
                # of its own (glued to the partial one it would be unreadable, and lost).
                handle.write("\n")
            handle.write(record)
            handle.flush()
            os.fsync(handle.fileno())
        if signature and signature not in self.signatures:
            self.signatures.append(signature)
