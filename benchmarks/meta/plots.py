"""Plots for the meta-evaluation (matplotlib, PNG, headless).

- :func:`plot_distributions`: each metric's score distribution for outputs with low vs high
  human scores (bottom vs top third), one panel per metric (InfoLM paper, Fig. 3 style). A metric
  that separates the two histograms well discriminates good from bad outputs.
- :func:`plot_level_bars`: each metric's correlation with its CI, one panel per level.
- :func:`plot_temperature`: correlation with human judgment versus InfoLM's temperature, one
  line per coefficient (InfoLM paper, Fig. 4 style).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # no display on servers / CI
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, fig: Any, path: str | Path) -> Path:
    """Lay out ``fig``, write it as a PNG at ``path`` (creating its folder) and free it."""
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_distributions(
    human: list[float], scores: dict[str, list[float]], path: str | Path, title: str, human_label: str
) -> Path:
    """Histograms of each metric for the bottom and top third of ``human`` scores."""
    plt = _pyplot()
    h = np.asarray(human, dtype=float)
    low_cut, high_cut = np.quantile(h, [1 / 3, 2 / 3])
    low, high = h <= low_cut, h >= high_cut
    names = list(scores)
    cols = min(4, len(names))
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        v = np.asarray(scores[name], dtype=float)
        bins = np.histogram_bin_edges(v[np.isfinite(v)], bins=20)
        ax.hist(v[low], bins=bins, density=True, alpha=0.55, label=f"low {human_label}", color="tab:red")
        ax.hist(v[high], bins=bins, density=True, alpha=0.55, label=f"high {human_label}", color="tab:blue")
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return _save(plt, fig, path)


def plot_level_bars(tables: dict[str, Any], split: str, human: str, method: str, path: str | Path, title: str) -> Path:
    """One panel per correlation level: a bar per metric with its bootstrap CI; the baseline in grey,
    metrics significantly better / worse than it (the table's ▲ / ▼) in blue / red."""
    plt = _pyplot()
    levels = [lv for lv in tables.get("levels", ("text", "system"))
              if any(r["level"] == lv and r["split"] == split and r["human"] == human for r in tables["results"])]
    names = list(dict.fromkeys(r["metric"] for r in tables["results"]))
    fig, axes = plt.subplots(len(levels), 1, figsize=(max(6.0, 0.42 * len(names) + 2), 2.5 * len(levels)), squeeze=False)
    for ax, level in zip(axes[:, 0], levels):
        rows = {r["metric"]: r for r in tables["results"]
                if r["level"] == level and r["split"] == split and r["human"] == human and r["method"] == method}
        values = np.array([rows[n]["value"] if n in rows else np.nan for n in names], dtype=float)
        low = np.array([rows[n]["low"] if n in rows else np.nan for n in names], dtype=float)
        high = np.array([rows[n]["high"] if n in rows else np.nan for n in names], dtype=float)
        colors = []
        for n in names:
            comp = rows.get(n, {}).get("vs_baseline")
            p = comp.get("p") if comp else None
            if n == tables.get("baseline"):
                colors.append("tab:gray")
            elif p is not None and not math.isnan(p) and p < 0.05:
                colors.append("tab:blue")
            elif p is not None and not math.isnan(p) and p > 0.95:
                colors.append("tab:red")
            else:
                colors.append("tab:olive")
        x = np.arange(len(names))
        err = np.vstack([np.clip(values - low, 0, None), np.clip(high - values, 0, None)])
        ax.bar(x, values, color=colors, yerr=np.nan_to_num(err), capsize=2, width=0.7)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel(method, fontsize=8)
        ax.set_title(f"{level} level", fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"{title}: {method} with 95% bootstrap CI; grey = baseline, blue/red = significantly "
                 f"better/worse than it", fontsize=9)
    return _save(plt, fig, path)


def plot_temperature(
    temperatures: list[float], correlations: dict[str, list[float]], path: str | Path, title: str,
    lows: dict[str, list[float]] | None = None, highs: dict[str, list[float]] | None = None,
) -> Path:
    """Correlation (one line per coefficient) against the InfoLM temperature (log x axis), with a
    shaded confidence band where ``lows``/``highs`` are given."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.8, 3.4))
    for method, values in correlations.items():
        line = ax.plot(temperatures, values, marker="o", label=method)[0]
        if lows and highs and method in lows:
            ax.fill_between(temperatures, lows[method], highs[method], color=line.get_color(), alpha=0.15)
    ax.set_xscale("log")
    ax.set_xlabel("temperature T")
    ax.set_ylabel("correlation with human")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(plt, fig, path)
