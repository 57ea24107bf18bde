"""Check a re-run's per-example scores against the committed ones, value by value.

The meta-evaluation caches per-example scores as ``<dataset>/<family>-<options hash>.jsonl``
(:class:`benchmarks.meta.cache.ScoreCache`); a re-run with the same options writes a file of the
same name. This command pairs every file of a re-run's cache folder with the committed file of the
same name and compares every value the two share:

- a *continuous* column (log-probabilities, divergences, FFLM, InfoLM) must agree within
  ``--rtol`` relative or ``--atol`` absolute, whichever is looser: float32 rounding depends on the
  CPU's kernels and on the batch shapes, and FFLM (differences of mean log-probabilities) can sit
  near 0, where a relative bound alone says nothing;
- a *count* column (the share of tokens whose argmax guess is right, e.g. ``blanc_shannon``) moves
  in steps of one token: a near-tie between the two best logits can flip under float32 rounding,
  so at most ``--max-flips`` values of a file may move, each by at most ``--step`` (one token of
  the shortest text scored: 1/20 by default; a REALSumm document has 288 to 1,146 tokens).

Usage (the command of benchmarks/results/README.md)::

    python -m benchmarks.reproduce_scores /tmp/repro/cache benchmarks/results/scores

It prints one line per file and column and exits 1 when a value is outside its bound.

>>> _bound(0.5, 0.5000001, rtol=2e-5, atol=1e-5)
True
>>> _bound(0.0, 3e-5, rtol=2e-5, atol=1e-5)
False
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path

#: Columns that count tokens (a share of argmax hits), compared in steps of one token.
COUNT_COLUMNS = frozenset({"blanc_shannon"})


def read_scores(path: Path) -> dict[tuple[str, str], float]:
    """Every ``(example key, column) -> value`` of one cache file (all its chunks)."""
    values: dict[tuple[str, str], float] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            for key, columns in json.loads(line).get("scores", {}).items():
                for column, value in columns.items():
                    values[(key, column)] = value
    return values


def _bound(new: float, old: float, *, rtol: float, atol: float) -> bool:
    return abs(new - old) <= max(atol, rtol * abs(old))


def paired_files(rerun: Path, stored: Path) -> Iterator[tuple[Path, Path]]:
    """Each re-run file with the committed file of the same dataset and name."""
    for path in sorted(rerun.glob("*/*.jsonl")):
        partner = stored / path.parent.name / path.name
        if partner.is_file():
            yield path, partner


def compare(rerun: Path, stored: Path, *, rtol: float, atol: float, step: float, max_flips: int) -> list[str]:
    """One report line per (file, column); lines of values outside their bound start with FAIL."""
    lines = []
    for new_path, old_path in paired_files(rerun, stored):
        new, old = read_scores(new_path), read_scores(old_path)
        by_column: dict[str, list[tuple[float, float]]] = {}
        for key in new.keys() & old.keys():
            by_column.setdefault(key[1], []).append((new[key], old[key]))
        for column, pairs in sorted(by_column.items()):
            bad_values = [p for p in pairs if not all(map(math.isfinite, p))]
            largest = max((abs(a - b) for a, b in pairs if not bad_values), default=0.0)
            exact = sum(a == b for a, b in pairs)
            if column in COUNT_COLUMNS:
                flips = sum(a != b for a, b in pairs)
                ok = not bad_values and flips <= max_flips and largest <= step
                detail = f"{flips} value(s) moved, largest {largest:.3g} (one token <= {step:.3g})"
            else:
                outside = [p for p in pairs if not _bound(*p, rtol=rtol, atol=atol)]
                relative = max((abs(a - b) / abs(b) for a, b in pairs if b), default=0.0)
                ok = not bad_values and not outside
                detail = f"max abs {largest:.2e}, max rel {relative:.2e}, {len(outside)} outside"
            name = f"{new_path.parent.name}/{new_path.name}"
            lines.append(f"{'ok  ' if ok else 'FAIL'} {name} {column}: {len(pairs)} values, {exact} bit-identical, {detail}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reproduce_scores", description=__doc__.split("\n\n")[0])
    parser.add_argument("rerun", type=Path, help="the re-run's --cache-dir")
    parser.add_argument("stored", type=Path, help="the committed scores folder (benchmarks/results/scores)")
    parser.add_argument("--rtol", type=float, default=2e-5, help="relative bound of continuous columns")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute bound of continuous columns")
    parser.add_argument("--step", type=float, default=1 / 20, help="largest one-token step of a count column (1 / shortest token count)")
    parser.add_argument("--max-flips", type=int, default=1, help="count-column values that may move by one token")
    args = parser.parse_args(argv)
    lines = compare(args.rerun, args.stored, rtol=args.rtol, atol=args.atol, step=args.step, max_flips=args.max_flips)
    if not lines:
        print(f"no file of {args.rerun} has a committed partner in {args.stored}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 1 if any(line.startswith("FAIL") for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
