"""A comparison as a text table, CSV rows and a plot.

>>> from nlgmetrics.compare.result import ComparisonResult, SystemScore
>>> result = ComparisonResult(
...     metric="bleu", main="bleu", column="bleu", higher_is_better=True, baseline="a",
...     systems=(SystemScore("a", 30.0, 30.1, 28.0, 32.0, True),
...              SystemScore("b", 33.0, 33.2, 31.0, 35.0, False, 3.0, 0.001, 0.0002)),
...     n_examples=100, n_bootstrap=1000, n_permutations=10000, seed=12345, count_ties=True,
...     tests=("bs", "ar"), metric_signature="bleu|nrefs:1|version:0.1.0", corpus_level=True)
>>> print(format_table(result))
system        bleu  95% CI        bootstrap mean  delta  p (paired bs)  p (paired ar)
------------  ----  ------------  --------------  -----  -------------  -------------
a (baseline)  30.0  [28.0, 32.0]  30.1 ± 2.0
b             33.0  [31.0, 35.0]  33.2 ± 2.0      +3.0   0.0010*        0.0002*
<BLANKLINE>
bleu (higher is better) on 100 examples; * p < 0.05 against the baseline a.
signature: bleu|nrefs:1|bs:1000|ar:10000|paired_seed:12345|ties:count|version:0.1.0
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from nlgmetrics.compare.result import ComparisonResult

#: Significance level of the ``*`` marks (sacrebleu's too).
ALPHA = 0.05

CSV_FIELDS = ("system", "is_baseline", "score", "bootstrap_mean", "ci_low", "ci_high", "ci_half_width",
              "delta", "p_bootstrap", "p_randomization", "metric", "column", "signature")


def _digits(result: ComparisonResult) -> int:
    """Decimals for the scores: 1 on a 0-100 scale (sacrebleu's), 4 otherwise."""
    largest = max(max(abs(s.ci_low), abs(s.ci_high), abs(s.score)) for s in result.systems)
    return 1 if largest > 1.5 else 4


def _p(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}{'*' if value < ALPHA else ''}"


def format_table(result: ComparisonResult) -> str:
    """system, score, 95% CI, bootstrap mean ± half width, delta to the baseline, p-values."""
    d = _digits(result)
    tests = [test for test in ("bs", "ar") if test in result.tests]
    rows = [["system", result.column, "95% CI", "bootstrap mean", "delta",
             *(f"p (paired {t})" for t in tests)]]
    for s in result.systems:
        p_values = {"bs": s.p_bootstrap, "ar": s.p_randomization}
        rows.append([f"{s.name} (baseline)" if s.is_baseline else s.name, f"{s.score:.{d}f}",
                     f"[{s.ci_low:.{d}f}, {s.ci_high:.{d}f}]",
                     f"{s.bootstrap_mean:.{d}f} ± {s.ci_half_width:.{d}f}",
                     "" if s.delta is None else f"{s.delta:+.{d}f}", *(_p(p_values[t]) for t in tests)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    direction = "higher" if result.higher_is_better else "lower"
    lines += ["", f"{result.column} ({direction} is better) on {result.n_examples} examples; "
              f"* p < {ALPHA:g} against the baseline {result.baseline}.", f"signature: {result.signature}"]
    return "\n".join(lines)


def write_csv(path: str | Path, result: ComparisonResult) -> None:
    """One row per system (:data:`CSV_FIELDS`); floats exactly (``repr``), None as an empty cell."""
    shared = {"metric": result.metric, "column": result.column, "signature": result.signature}
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for s in result.systems:
            row = {"system": s.name, **{k: v for k, v in s.to_dict().items() if k in CSV_FIELDS}, **shared}
            writer.writerow({k: ("" if v is None else repr(v) if isinstance(v, float) else v) for k, v in row.items()})


def plot(result: ComparisonResult, path: str | Path) -> None:
    """Each system's score with its 95% interval (horizontal error bars). The baseline is an orange
    diamond, its score a dashed line; every other system a blue circle, filled where p < 0.05
    against the baseline (in every test run), hollow otherwise; a legend says which is which.
    Needs matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # a file, no display
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install matplotlib") from None
    systems = list(result.systems)
    if not all(math.isfinite(v) for s in systems for v in (s.ci_low, s.ci_high)):
        raise ValueError("cannot plot infinite intervals")
    legend_height = 0.35  # inches below the axes, for the one-row legend
    figure, axis = plt.subplots(figsize=(7, 0.45 * len(systems) + 1.4 + legend_height))
    for position, s in enumerate(systems):
        p_values = [p for p in (s.p_bootstrap, s.p_randomization) if p is not None]
        significant = bool(p_values) and max(p_values) < ALPHA
        # the baseline has no p-value of its own: its own marker, so that "filled" means p < ALPHA only
        marker, color = ("D", "tab:orange") if s.is_baseline else ("o", "tab:blue")
        face = color if (s.is_baseline or significant) else "white"
        axis.errorbar(s.score, position, xerr=[[s.score - s.ci_low], [s.ci_high - s.score]], fmt=marker,
                      color=color, mfc=face, capsize=3)
    axis.axvline(result[result.baseline].score, color="tab:orange", linestyle="--", linewidth=1)
    axis.set_yticks(range(len(systems)), [f"{s.name} (baseline)" if s.is_baseline else s.name for s in systems])
    axis.invert_yaxis()
    direction = "higher" if result.higher_is_better else "lower"
    axis.set_xlabel(f"{result.column} ({direction} is better), 95% bootstrap interval")
    axis.set_title(f"{result.metric} against {result.baseline}", fontsize=10)
    legend = [
        Line2D([], [], marker="D", color="tab:orange", linestyle="--", linewidth=1, label="baseline"),
        Line2D([], [], marker="o", color="tab:blue", linestyle="", label=f"p < {ALPHA:g}"),
        Line2D([], [], marker="o", color="tab:blue", mfc="white", linestyle="", label=f"p ≥ {ALPHA:g}"),
    ]
    figure.legend(handles=legend, loc="lower center", ncol=3, fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, legend_height / figure.get_figheight(), 1, 1))
    figure.savefig(path, dpi=120)
    plt.close(figure)
