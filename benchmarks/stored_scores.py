"""One stored score file as a ``--scores`` table: put two runs of a metric side by side.

The meta-evaluation stores per-example scores per (dataset, family, options) in
``benchmarks/results/scores/<dataset>/<family>-<hash>.jsonl`` (:class:`benchmarks.meta.cache.ScoreCache`).
A run with other options (``--dtype bfloat16``) goes to another file. This script writes one such
file as a csv with the dataset's key columns and the file's score columns renamed with a suffix
(``infolm_js_divergence`` -> ``infolm_js_divergence_bf16``), which the runner reads with
``--scores``: the same tables, bootstrap intervals and paired tests then show both runs, and
``--baseline <fp32 column>`` tests the bf16 column against the fp32 one on the same resamples.
Only the outputs the file holds are written; the tables keep the outputs every metric scored.

    python -m benchmarks.stored_scores benchmarks/results/scores/realsumm/infolm-c2513c8fac.jsonl \\
        --dataset realsumm --suffix _bf16 --out /tmp/infolm_bf16.csv
    python -m benchmarks.stored_scores FP32.jsonl --compare BF16.jsonl   # per-example agreement
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

from benchmarks.meta.cache import read_score_file
from benchmarks.meta.data import KEY_COLUMNS, parse_key_text


def read_stored(path: str | Path) -> tuple[dict, dict[tuple[str, ...], dict[str, float]], list[str]]:
    """``(options, {example key: {column: score}}, signatures)`` of a stored score file; keys are
    ``(doc, system)`` tuples read back from their stored text (``doc|system`` in the committed
    files, a JSON array where an id holds ``|``: :func:`benchmarks.meta.data.key_text`). The
    content hash after the last ``#`` is dropped: it only guards the cache against edited data."""
    options, scores, signatures = read_score_file(path)
    return options, {parse_key_text(key.rsplit("#", 1)[0]): row for key, row in scores.items()}, signatures


def key_parts(dataset: str, key: tuple[str, ...]) -> tuple[str, ...]:
    """The key columns' values of an example key (inverse of ``meta.data.key_from_parts``).

    >>> key_parts("realsumm", ("3", "abs:bart_out")), key_parts("webnlg2020", ("12", "Amazon_AI_(Shanghai)"))
    (('3', 'abs', 'bart_out'), ('12', 'Amazon_AI_(Shanghai)'))
    """
    doc, system = key
    if dataset == "realsumm":
        system_type, name = system.split(":", 1)
        return doc, system_type, name
    return doc, system


def write_scores_csv(path: str | Path, dataset: str, suffix: str, out: str | Path) -> dict[str, int]:
    """Write the ``--scores`` csv; returns ``{"rows": ..., "columns": ...}``. A score that is not
    finite is refused (the runner refuses it too): the file would not be a fair side-by-side."""
    _, scores, _ = read_stored(path)
    if not scores:
        raise SystemExit(f"{path} holds no scores")
    columns = sorted({column for row in scores.values() for column in row})
    keys = KEY_COLUMNS.get(dataset, ("doc", "system"))
    with Path(out).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*keys, *(c + suffix for c in columns)])
        for key, row in sorted(scores.items()):
            values = [row.get(c, math.nan) for c in columns]
            if not all(math.isfinite(v) for v in values):
                raise SystemExit(f"{path}: {key} has a non-finite score {values}; rerun that chunk")
            writer.writerow([*key_parts(dataset, key), *(repr(v) for v in values)])
    return {"rows": len(scores), "columns": len(columns)}


def compare_stored(first: str | Path, second: str | Path) -> dict[str, dict[str, float]]:
    """Per column, over the outputs both files hold: ``n``, the largest absolute difference, and the
    Pearson r and Kendall tau between the two runs' per-example scores (fp32 vs bf16: how much the
    numbers move, and whether their order does)."""
    from scipy import stats

    _, a, _ = read_stored(first)
    _, b, _ = read_stored(second)
    common = sorted(set(a) & set(b))
    out = {}
    for column in sorted({c for key in common for c in a[key]} & {c for key in common for c in b[key]}):
        pairs = [(a[k][column], b[k][column]) for k in common
                 if math.isfinite(a[k].get(column, math.nan)) and math.isfinite(b[k].get(column, math.nan))]
        x, y = [p[0] for p in pairs], [p[1] for p in pairs]
        out[column] = {"n": len(pairs), "max_abs_diff": max((abs(u - v) for u, v in pairs), default=math.nan),
                       "pearson": float(stats.pearsonr(x, y)[0]) if len(pairs) > 2 else math.nan,
                       "kendall": float(stats.kendalltau(x, y)[0]) if len(pairs) > 2 else math.nan}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", help="a stored score file (benchmarks/results/scores/<dataset>/<family>-<hash>.jsonl)")
    parser.add_argument("--dataset", help="realsumm or webnlg2020 (its key columns)")
    parser.add_argument("--suffix", help="appended to every score column, e.g. _bf16")
    parser.add_argument("--out", help="the csv to write")
    parser.add_argument("--compare", metavar="OTHER", help="instead: per-example agreement with another stored file")
    args = parser.parse_args(argv)
    if args.compare:
        print("| column | outputs in both | max abs diff | Pearson r | Kendall tau |\n|---|---:|---:|---:|---:|")
        for column, row in compare_stored(args.path, args.compare).items():
            print(f"| {column} | {row['n']} | {row['max_abs_diff']:.2e} | {row['pearson']:.6f} | {row['kendall']:.4f} |")
        return
    if not (args.dataset and args.suffix and args.out):
        parser.error("--dataset, --suffix and --out are needed (or --compare OTHER)")
    counts = write_scores_csv(args.path, args.dataset, args.suffix, args.out)
    print(f"wrote {args.out}: {counts['rows']} outputs x {counts['columns']} columns")


if __name__ == "__main__":
    main()
