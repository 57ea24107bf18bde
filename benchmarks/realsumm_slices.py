"""Slices of REALSumm for the speed benchmarks: a few documents, each with some of its 25 system summaries.

Plain JSON lines (``doc_id``, ``document``, ``prediction``, ``reference``, ...), read with the
standard library: the speed runs must work where ``datasets`` is not installed (the GPU machine).
The meta-evaluation (``benchmarks/meta_eval.py``) loads the full sets through ``datasets``.

>>> import json, tempfile
>>> path = tempfile.mktemp(suffix=".jsonl")
>>> rows = [{"doc_id": d, "document": f"D{d}", "prediction": f"P{d}{s}", "reference": f"R{d}"}
...         for d in (1, 0) for s in range(3)]
>>> _ = open(path, "w").write("\\n".join(json.dumps(r) for r in rows))
>>> realsumm_pairs(path, n_docs=1, per_doc=2)
(['D0', 'D0'], ['P00', 'P01'])
>>> realsumm_pairs(path, doc_ids=[1], per_doc=1, fields=("prediction", "reference"))
(['P10'], ['R1'])
"""

from __future__ import annotations

import json
import os
from pathlib import Path

REALSUMM_URL = "https://github.com/neulab/REALSumm"


def realsumm_by_document(path: str | os.PathLike) -> dict[int, list[dict]]:
    """REALSumm rows grouped by ``doc_id`` (rows of a document in file order)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"{path} not found: REALSumm ({REALSUMM_URL}) as JSON lines with 'doc_id', 'document', "
            "'prediction'; see shared/data/README.md, then pass --data / --data-dir or set NLGMETRICS_DATA."
        )
    by_doc: dict[int, list[dict]] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                by_doc.setdefault(row["doc_id"], []).append(row)
    return by_doc


def realsumm_pairs(
    path: str | os.PathLike,
    n_docs: int = 1,
    per_doc: int = 25,
    doc_ids: list[int] | None = None,
    fields: tuple[str, str] = ("document", "prediction"),
) -> tuple[list[str], list[str]]:
    """Two parallel lists (default: documents and summaries), one entry per (document, system) pair:
    the first ``per_doc`` systems of the ``n_docs`` lowest doc_ids, or of ``doc_ids`` when given."""
    by_doc = realsumm_by_document(path)
    ids = list(doc_ids) if doc_ids else sorted(by_doc)[:n_docs]
    missing = [i for i in ids if i not in by_doc]
    if missing:
        raise ValueError(f"doc_id(s) {missing} not in REALSumm (ids {min(by_doc)}..{max(by_doc)}).")
    first, second = [], []
    for doc_id in ids:
        for row in by_doc[doc_id][:per_doc]:
            first.append(row[fields[0]])
            second.append(row[fields[1]])
    return first, second
