"""Plots for the meta-evaluation (matplotlib, PNG, headless).

- :func:`plot_distributions`: each metric's score distribution for outputs with low vs high
  human scores (bottom vs top third), one panel per metric (InfoLM paper, Fig. 3 style). A metric
  that separates the two histograms well discriminates good from bad outputs.
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


def plot_temperature(
    temperatures: list[float], correlations: dict[str, list[float]], path: str | Path, title: str
) -> Path:
    """Correlation (one line per coefficient) against the InfoLM temperature (log x axis)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.8, 3.4))
    for method, values in correlations.items():
        ax.plot(temperatures, values, marker="o", label=method)
    ax.set_xscale("log")
    ax.set_xlabel("temperature T")
    ax.set_ylabel("correlation with human")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(plt, fig, path)
