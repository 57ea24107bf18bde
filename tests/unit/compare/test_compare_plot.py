"""``compare --plot``: every marker on the figure means what its legend entry says.

The figure is caught as ``plot`` saves it (its PNG is written as usual), then each system's
marker (shape, filled or hollow) is looked up among the legend's entries: the entry it matches
must be true of that system (the baseline; p < 0.05 in every test; or not).
"""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from nlgmetrics.compare.result import ComparisonResult, SystemScore  # noqa: E402
from nlgmetrics.compare.table import plot  # noqa: E402

ALPHA = 0.05  # the significance level the figure states, written here by hand


def _result() -> ComparisonResult:
    """A baseline, a system that differs (p < 0.05 in both tests) and one that does not."""
    return ComparisonResult(
        metric="bleu", main="bleu", column="bleu", higher_is_better=True, baseline="base",
        systems=(SystemScore("base", 30.0, 30.1, 28.0, 32.0, True),
                 SystemScore("better", 34.0, 34.1, 32.0, 36.0, False, 4.0, 0.001, 0.0002),
                 SystemScore("same", 30.5, 30.4, 28.5, 32.5, False, 0.5, 0.40, 0.38)),
        n_examples=100, n_bootstrap=1000, n_permutations=10000, seed=12345, count_ties=True,
        tests=("bs", "ar"), metric_signature="bleu|nrefs:1|version:0.1.0", corpus_level=True)


def _saved_figure(result: ComparisonResult, path, monkeypatch):
    from matplotlib.figure import Figure

    saved = []
    save = Figure.savefig

    def keep(self, *args, **kwargs):
        saved.append(self)
        return save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    plot(result, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (figure,) = saved
    return figure


def _looks(line) -> tuple[str, bool]:
    """A marker's shape and whether it is filled (face the colour of its edge)."""
    from matplotlib.colors import to_rgba

    filled = to_rgba(line.get_markerfacecolor()) == to_rgba(line.get_markeredgecolor())
    return str(line.get_marker()), filled


def test_every_marker_means_what_the_legend_says(tmp_path, monkeypatch):
    result = _result()
    figure = _saved_figure(result, tmp_path / "c.png", monkeypatch)
    (axis,) = figure.axes
    legends = [legend for legend in (axis.get_legend(), *figure.legends) if legend is not None]
    assert len(legends) == 1, f"{len(legends)} legends; the title says {axis.get_title()!r}"
    (legend,) = legends
    entries = {_looks(handle): text.get_text() for handle, text in zip(legend.legend_handles, legend.get_texts())}
    assert len(entries) == len(legend.get_texts()), f"two legend entries look alike: {entries}"
    truth = {"base": "baseline", "better": f"p < {ALPHA:g}", "same": f"p ≥ {ALPHA:g}"}
    for system, container in zip(result.systems, axis.containers):
        looks = _looks(container.lines[0])
        assert looks in entries, f"{system.name} is drawn {looks}, which no legend entry names: {entries}"
        assert entries[looks] == truth[system.name], (system.name, looks, entries)

