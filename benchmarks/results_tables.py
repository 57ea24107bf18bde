"""Condensed Markdown tables of a meta-evaluation result (``<dataset>_<tag>.json``) for the results README.

    python -m benchmarks.results_tables benchmarks/results/realsumm_full/realsumm_full.json --split all --method kendall
    python -m benchmarks.results_tables benchmarks/results/webnlg2020_full/webnlg2020_full.json --level pooled --method pearson

Rows: metrics; columns: levels (one criterion) or criteria (one level); cells: correlation
[95% CI], ▲/▼ significantly better/worse than the result's baseline, ``k=`` documents kept by the
significant-documents level. Then the list of metrics significantly better than the baseline.
Every number is read from the JSON; nothing is recomputed.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from benchmarks.meta.tables import LEVEL_HEADINGS, METHOD_TITLES


def _fmt(x: float | None, digits: int = 3) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _cell(entry: dict[str, Any]) -> str:
    comp = entry.get("vs_baseline") or {}
    p = comp.get("p")
    mark = ""
    if p is not None and not math.isnan(p):
        mark = "▲" if p < 0.05 else ("▼" if p > 0.95 else "")
    kept = f" k={entry['n_used']}" if entry["level"] == "text_sig" else ""
    return f"{_fmt(entry['value'])} [{_fmt(entry['low'], 2)}, {_fmt(entry['high'], 2)}]{mark}{kept}"


def table(record: dict[str, Any], split: str, method: str, human: str | None = None, level: str | None = None,
          metrics: list[str] | None = None) -> str:
    """One criterion across levels (``human``) or one level across criteria (``level``)."""
    results = [r for r in record["tables"]["results"] if r["split"] == split and r["method"] == method]
    names = metrics or list(dict.fromkeys(r["metric"] for r in results))
    if level is None:
        human = human or record["tables"]["human_keys"][0]
        columns = [(lv, human) for lv in record["tables"]["levels"]]
        heads = [LEVEL_HEADINGS[lv] for lv, _ in columns]
    else:
        columns = [(level, h) for h in record["tables"]["human_keys"]]
        heads = [h for _, h in columns]
    lines = ["| metric | " + " | ".join(heads) + " |", "|---|" + "---|" * len(columns)]
    for name in names:
        cells = []
        for lv, h in columns:
            entry = next((r for r in results if r["metric"] == name and r["level"] == lv and r["human"] == h), None)
            cells.append(_cell(entry) if entry else "")
        label = f"**{name}**" if name == record["tables"]["baseline"] else name
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def better_than_baseline(record: dict[str, Any], method: str, worse: bool = False) -> list[str]:
    """``level · split · criterion: metrics`` significantly better (or worse) than the baseline."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for r in record["tables"]["results"]:
        p = (r.get("vs_baseline") or {}).get("p")
        if r["method"] != method or p is None or math.isnan(p):
            continue
        if (p > 0.95) if worse else (p < 0.05):
            groups.setdefault((r["level"], r["split"], r["human"]), []).append(r["metric"])
    return [f"{level} · {split} · {human}: {', '.join(names)}" for (level, split, human), names in groups.items()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result", help="a <dataset>_<tag>.json written by benchmarks.meta_eval")
    parser.add_argument("--split", default="all")
    parser.add_argument("--method", default="kendall", choices=sorted(METHOD_TITLES))
    parser.add_argument("--human", default=None, help="criterion (columns = levels)")
    parser.add_argument("--level", default=None, help="level (columns = criteria)")
    parser.add_argument("--metrics", default=None, help="comma list of rows (default: every metric)")
    args = parser.parse_args(argv)
    record = json.loads(Path(args.result).read_text(encoding="utf-8"))
    metrics = [m for m in (args.metrics or "").split(",") if m] or None
    print(table(record, args.split, args.method, args.human, args.level, metrics))
    print()
    print(f"Significantly better than `{record['tables']['baseline']}` ({METHOD_TITLES[args.method]}):")
    for line in better_than_baseline(record, args.method):
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
