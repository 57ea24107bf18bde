"""What each engine mechanism buys: the same workload with one mechanism switched off at a time.

The workload of the engine benchmarks: one REALSumm document with its system summaries, Shannon
and FFLM on SmolLM2-135M (the offline ``smollm2-135m``), in one process. Each variant is a copy of
the loaded model's :class:`~nlgmetrics.engine.LoadedLM` with one private flag changed (or an option
of the metric), timed after one untimed warm-up call; variants are interleaved over ``--repeats``
rounds (the median is reported) so that load on a shared machine hits them alike. Every variant's
scores are compared with the first variant's (a mechanism must not change a number beyond
float32 rounding of other batch shapes). A flag the engine no longer has is skipped.

Process-wide settings (glibc's allocator, thread counts) cannot be undone inside one process: run
the script twice (e.g. with ``NLGMETRICS_KEEP_FREED_MEMORY=0``) and compare the ``as is`` rows.

    python -m benchmarks.speed_engine --doc-id 44 --summaries 25 --repeats 2
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import machine, versions
from benchmarks.realsumm_slices import realsumm_pairs

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = Path(os.environ.get("NLGMETRICS_DATA", ROOT.parent / "shared" / "data")) / "realsumm" / "realsumm.jsonl"

#: variant name -> (LoadedLM field, value) or (None, metric keyword arguments)
VARIANTS: dict[str, tuple[str | None, Any]] = {
    "as is": (None, {}),
    "no packed rows": ("packed_rows", False),
    "head on every position": ("gather_head", False),
    "no prefix cache": (None, {"prefix_cache": False}),
}


def _metrics() -> dict[str, Any]:
    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    return {"shannon": shannon_score, "fflm": fflm}


def run(doc_id: int = 44, summaries: int = 25, repeats: int = 2, dtype: str = "float32",
        data: str | os.PathLike = DEFAULT_DATA, model: str = "smollm2-135m",
        scores_out: str | os.PathLike | None = None, variants: list[str] | None = None,
        metrics: list[str] | None = None) -> list[dict[str, Any]]:
    """Rows ``{metric, variant, seconds (median), rounds, max_abs_diff}``; with ``scores_out``, the
    ``as is`` scores of each metric are written there as JSON (to compare two checkouts bit for bit)."""
    from nlgmetrics.engine import load_lm

    documents, predictions = realsumm_pairs(data, doc_ids=[doc_id], per_doc=summaries)
    lm = load_lm(model, "causal", dtype=dtype)
    lms: dict[str, Any] = {}
    options: dict[str, dict[str, Any]] = {}
    for name, (field, value) in VARIANTS.items():
        if variants and name != "as is" and name not in variants:
            continue
        if field is None:
            lms[name], options[name] = lm, value
        elif hasattr(lm, field):
            lms[name], options[name] = dataclasses.replace(lm, **{field: value}), {}
    rows = []
    kept: dict[str, dict[str, list[float]]] = {}
    for metric, function in _metrics().items():
        if metrics and metric not in metrics:
            continue

        def call(name: str) -> dict[str, list[float]]:
            result = function(predictions, documents, model=lms[name], progress=False, **options[name])
            return {k: list(map(float, v)) for k, v in result.scores.items()}

        call("as is")  # warm-up
        times: dict[str, list[float]] = {name: [] for name in lms}
        scores: dict[str, dict[str, list[float]]] = {}
        for _ in range(repeats):
            for name in lms:
                start = time.perf_counter()
                scores[name] = call(name)
                times[name].append(time.perf_counter() - start)
        for name in lms:
            diff = max(abs(a - b) for k in scores["as is"] for a, b in zip(scores["as is"][k], scores[name][k]))
            rows.append({"metric": metric, "variant": name, "seconds": statistics.median(times[name]),
                         "rounds": [round(t, 2) for t in times[name]], "max_abs_diff": diff})
            print(json.dumps(rows[-1]), flush=True)
        kept[metric] = scores["as is"]
    if scores_out is not None:
        Path(scores_out).write_text(json.dumps(kept))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--doc-id", type=int, default=44)
    parser.add_argument("--summaries", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--scores-out", default=None, help="write the 'as is' scores here (JSON)")
    parser.add_argument("--variants", nargs="*", default=None, help=f"of {list(VARIANTS)} (default: all)")
    parser.add_argument("--metrics", nargs="*", default=None, help="shannon, fflm (default: both)")
    args = parser.parse_args()
    print(machine(), versions(), f"NLGMETRICS_KEEP_FREED_MEMORY={os.environ.get('NLGMETRICS_KEEP_FREED_MEMORY', 'unset')}")
    run(args.doc_id, args.summaries, args.repeats, args.dtype, args.data, scores_out=args.scores_out,
        variants=args.variants, metrics=args.metrics)


if __name__ == "__main__":
    main()
