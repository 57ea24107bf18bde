"""Correlation tables: every metric x split x human criterion x level x coefficient, with CIs.

For one dataset, :func:`correlation_tables` takes the examples, their per-example metric scores
and a baseline metric and returns a JSON-ready dict; :func:`to_markdown` renders it.

Fairness rules, decided here once for every table:

- all metrics are compared on the *same* examples: an example is kept only if every metric has a
  finite score for it (LM metrics run on a subset therefore restrict the whole table, baseline
  included, to that subset; the number of examples dropped is reported);
- every bootstrap uses the same document resamples for every metric (paired comparisons);
- "vs baseline": at text level a paired bootstrap over documents (one-sided p that the metric's
  correlation is higher than the baseline's); at system level the Williams test on the
  per-system means (Graham & Baldwin 2014; exact for Pearson, an approximation for Spearman and
  Kendall), one-sided. Markers: ``▲`` p < 0.05 (better than baseline), ``▼`` p > 0.95 (worse).

>>> from benchmarks.meta.data import Example
>>> exs = [Example((str(d), str(s)), str(d), s, "all", "", ("r",), "", {"h": float(d * s)})
...        for d in range(1, 5) for s in range(1, 5)]
>>> scores = {"m": [e.human["h"] + 0.1 * (i % 3) for i, e in enumerate(exs)]}
>>> t = correlation_tables(exs, scores, ("h",), ("all",), baseline="m", n_resamples=50)
>>> [round(r["value"], 3) for r in t["results"] if r["level"] == "system" and r["method"] == "pearson"]
[1.0]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from nlgmetrics.core.validation import check_choice
from nlgmetrics.stats.bootstrap import (
    check_confidence,
    check_resampling,
    interval_reason,
    one_sided_p,
    paired_reason,
    percentile_interval,
    resample_indices,
    statistic_samples,
)
from nlgmetrics.stats.correlation import LEVEL_FUNCTIONS, METHODS, SIGNIFICANCE, pivot, system_level, system_means
from benchmarks.meta.data import Example
from nlgmetrics.stats.williams import williams_from_scores, williams_undefined_reason

#: Levels of a table (see :mod:`nlgmetrics.stats.correlation`); the runner picks them per dataset.
LEVELS = ("text", "text_sig", "pooled", "system")
DEFAULT_LEVELS = ("text", "system")
#: What each level is, in the words every table header uses.
LEVEL_TITLES = {
    "text": "text level, all documents (REALSumm 'summary level': per document, correlate metric and human over "
            "the systems, then average over every document whose correlation is defined)",
    "text_sig": f"text level, significant documents only (REALSumm's analysis: the same average, but only over the "
                f"documents whose per-document correlation has scipy p <= {SIGNIFICANCE}; k = documents kept, per "
                f"metric and coefficient: metrics keep different documents)",
    "pooled": "pooled text level (WebNLG 2020 organisers: one correlation over every rated output, all items and "
              "systems together)",
    "system": "system level (average each system over the documents, then correlate the system means)",
}
#: Short names of the levels in table headings.
LEVEL_HEADINGS = {"text": "text level (all documents)", "text_sig": "text level (documents with p <= 0.05 only)",
                  "pooled": "pooled text level (all outputs, one correlation)", "system": "system level"}
METHOD_TITLES = {"pearson": "Pearson r", "spearman": "Spearman ρ", "kendall": "Kendall τ"}


def _finite(value: float) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def common_rows(examples: list[Example], scores: dict[str, list[float]]) -> list[int]:
    """Indices of the examples every metric scored (finite)."""
    return [i for i in range(len(examples)) if all(_finite(v[i]) for v in scores.values())]


def _matrices(examples: list[Example], values: list[float]) -> np.ndarray:
    return pivot(values, [e.doc for e in examples], [e.system for e in examples])[0]


def correlation_tables(
    examples: list[Example],
    scores: dict[str, list[float]],
    human_keys: tuple[str, ...],
    splits: tuple[str, ...],
    baseline: str | None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    methods: tuple[str, ...] = METHODS,
    levels: tuple[str, ...] = DEFAULT_LEVELS,
) -> dict[str, Any]:
    """Every correlation with its bootstrap CI and its comparison with ``baseline``.

    ``levels``: any of :data:`LEVELS` (``text``, ``text_sig``, ``pooled``, ``system``).

    ``n_resamples``, ``seed`` and ``confidence`` are checked before any work (they are recorded in
    the tables): see :func:`nlgmetrics.stats.bootstrap.check_resampling`.
    """
    n_resamples, seed = check_resampling(n_resamples, seed)
    confidence = check_confidence(confidence)
    for method in methods:
        check_choice("method", method, METHODS)
    for level in levels:
        check_choice("level", level, LEVELS)
    if baseline is not None and baseline not in scores:
        raise ValueError(f"baseline {baseline!r} has no scores; available: {sorted(scores)}.")
    keep = common_rows(examples, scores)
    rows_all = [examples[i] for i in keep]
    kept_scores = {name: [values[i] for i in keep] for name, values in scores.items()}
    results: list[dict[str, Any]] = []
    split_info: dict[str, Any] = {}
    for split in splits:
        idx = [i for i, e in enumerate(rows_all) if split == "all" or e.split == split]
        if not idx:
            continue
        rows = [rows_all[i] for i in idx]
        metric_mats = {name: _matrices(rows, [v[i] for i in idx]) for name, v in kept_scores.items()}
        n_docs, n_systems = next(iter(metric_mats.values())).shape
        split_info[split] = {"n_examples": len(rows), "n_docs": n_docs, "n_systems": n_systems}
        indices = resample_indices(n_docs, n_resamples, seed)
        memo: dict = {}  # resampled system means, shared by the coefficients (arrays alive in this loop)
        alive: list[np.ndarray] = []
        for human_key in human_keys:
            human = _matrices(rows, [e.human[human_key] for e in rows])
            alive.append(human)  # its id keys the memo: it must not be freed and the id reused
            for level in levels:
                for method in methods:
                    samples = {
                        name: statistic_samples(mat, human, level, method, indices, memo) for name, mat in metric_mats.items()
                    }
                    points = {name: LEVEL_FUNCTIONS[level](mat, human, method) for name, mat in metric_mats.items()}
                    for name, mat in metric_mats.items():
                        point = points[name]
                        low, high = percentile_interval(samples[name], confidence)
                        entry = {
                            "split": split,
                            "human": human_key,
                            "level": level,
                            "method": method,
                            "metric": name,
                            "value": point.value,
                            "low": low,
                            "high": high,
                            "n_used": point.n_used,
                            "n_skipped": point.n_skipped,
                        }
                        # Said only where something is undefined: a defined table's record is unchanged.
                        if point.reason is not None:
                            entry["reason"] = point.reason
                        why_interval = interval_reason(samples[name], point.reason)
                        if why_interval is not None:
                            entry["interval_reason"] = why_interval
                        if baseline is not None and name != baseline:
                            entry["vs_baseline"] = _compare(
                                (name, samples[name], point, mat), (baseline, samples[baseline], points[baseline],
                                                                    metric_mats[baseline]),
                                human, level, method, confidence,
                            )
                        results.append(entry)
    return {
        "n_examples_total": len(examples),
        "n_examples_used": len(rows_all),
        "n_examples_dropped": len(examples) - len(rows_all),
        "splits": split_info,
        "human_keys": list(human_keys),
        "baseline": baseline,
        "n_resamples": n_resamples,
        "confidence": confidence,
        "seed": seed,
        "levels": list(levels),
        "level_definitions": {level: LEVEL_TITLES[level] for level in levels},
        "results": results,
    }


def _compare(metric: tuple, base: tuple, human: np.ndarray, level: str, method: str, confidence: float) -> dict[str, Any]:
    """A metric against the baseline; ``metric`` and ``base``: ``(name, samples, point, matrix)``.

    Where ``p`` is undefined, ``p_reason`` says why; at system level, where ``p`` is Williams' p,
    ``p_bootstrap_reason`` says why the paired bootstrap's is, if it is.
    """
    name, samples_a, point_a, mat = metric
    base_name, samples_b, point_b, base_mat = base
    diffs = samples_a - samples_b
    finite = diffs[~np.isnan(diffs)]
    low, high = percentile_interval(diffs, confidence)
    out: dict[str, Any] = {
        "diff": point_a.value - point_b.value,
        "diff_low": low,
        "diff_high": high,
        "p_bootstrap": one_sided_p(finite),
    }
    reasons = {"p_bootstrap": paired_reason(samples_a, samples_b, point_a.reason, point_b.reason, (name, base_name))}
    if level == "system":
        a, b, h = system_means(mat), system_means(base_mat), system_means(human)
        present = ~(np.isnan(a) | np.isnan(b) | np.isnan(h))
        why = williams_undefined_reason(a[present], b[present], h[present], (name, base_name), unit="systems")
        reasons["p_williams"] = f"Williams test undefined: {why} (system means)" if why else None
        out["p_williams"] = math.nan
        if why is None:
            try:
                out["p_williams"] = williams_from_scores(a[present], b[present], h[present], method).p_value
            except ValueError as error:  # correlations that no data has together: the test says which
                reasons["p_williams"] = str(error)
    key = "p_williams" if level == "system" else "p_bootstrap"
    out["p"] = out[key]
    if reasons[key] is not None:
        out["p_reason"] = reasons[key]
    if level == "system" and reasons["p_bootstrap"] is not None:
        out["p_bootstrap_reason"] = reasons["p_bootstrap"]
    return out


def _fmt(x: float, digits: int = 3) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _undefined(x: float | None) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


#: The interval's reason when an older record lacks ``interval_reason``.
NO_INTERVAL = "no resample with a defined correlation"


def _value_cell(entry: dict[str, Any], bold: bool = False) -> str:
    """``value [low, high]`` (the value in bold if asked), or what is undefined and why (the
    correlation, else its interval)."""
    if _undefined(entry["value"]):
        return f"undefined: {entry.get('reason') or 'no defined correlation'}"
    value = f"**{_fmt(entry['value'])}**" if bold else _fmt(entry["value"])
    if _undefined(entry["low"]) or _undefined(entry["high"]):
        return f"{value} [CI undefined: {entry.get('interval_reason') or NO_INTERVAL}]"
    return f"{value} [{_fmt(entry['low'], 2)}, {_fmt(entry['high'], 2)}]"


def _marker(entry: dict[str, Any]) -> str:
    comp = entry.get("vs_baseline")
    if not comp or comp.get("p") is None or math.isnan(comp["p"]):
        return ""
    return "▲" if comp["p"] < 0.05 else ("▼" if comp["p"] > 0.95 else "")


def to_markdown(tables: dict[str, Any], title: str) -> str:
    """Markdown: one table per split x human criterion x level, metrics as rows."""
    lines = [f"## {title}", ""]
    lines.append(
        f"Examples used: {tables['n_examples_used']} of {tables['n_examples_total']} "
        f"(an example is kept only when every metric scored it). Baseline: `{tables['baseline']}`. "
        f"Cells: correlation [{int(tables['confidence'] * 100)}% bootstrap CI over documents, "
        f"{tables['n_resamples']} resamples]; ▲/▼: significantly better/worse than the baseline "
        f"(one-sided 5%: paired bootstrap over documents at text and pooled level, Williams test at system level)."
    )
    lines.append("")
    lines.append("Levels:")
    for level in tables.get("levels", DEFAULT_LEVELS):
        lines.append(f"- `{level}`: {LEVEL_TITLES[level]}")
    lines.append("")
    lines.append(summary_vs_baseline(tables))
    results = tables["results"]
    methods = [m for m in METHODS if any(r["method"] == m for r in results)]
    for split, info in tables["splits"].items():
        for human_key in tables["human_keys"]:
            for level in tables.get("levels", DEFAULT_LEVELS):
                subset = [r for r in results if r["split"] == split and r["human"] == human_key and r["level"] == level]
                if not subset:
                    continue
                lines.append(
                    f"### {split} · {human_key} · {LEVEL_HEADINGS[level]} "
                    f"({info['n_docs']} documents x {info['n_systems']} systems, {info['n_examples']} outputs)"
                )
                lines.append("")
                lines.append(f"Definition: {LEVEL_TITLES[level]}.")
                lines.append("")
                lines.append("| metric | " + " | ".join(METHOD_TITLES[m] for m in methods) + " |")
                lines.append("|---|" + "---|" * len(methods))
                names = list(dict.fromkeys(r["metric"] for r in subset))
                for name in names:
                    cells = []
                    for m in methods:
                        entry = next(r for r in subset if r["metric"] == name and r["method"] == m)
                        kept = f" k={entry['n_used']}" if level == "text_sig" else ""
                        cells.append(f"{_value_cell(entry)}{_marker(entry)}{kept}")
                    label = f"**{name}**" if name == tables["baseline"] else name
                    lines.append(f"| {label} | " + " | ".join(cells) + " |")
                lines.append("")
    return "\n".join(lines)


def _comparison_cell(comp: dict[str, Any]) -> str:
    """``+diff [low, high], p=...`` with each undefined part said as such, and why."""
    if _undefined(comp["diff"]):
        return f"vs baseline undefined: {comp.get('p_reason') or 'no defined difference'}"
    interval = (f"[{_fmt(comp['diff_low'], 2)}, {_fmt(comp['diff_high'], 2)}]"
                if not (_undefined(comp["diff_low"]) or _undefined(comp["diff_high"])) else "[CI undefined]")
    p = f"p={_fmt(comp['p'], 2)}" if not _undefined(comp["p"]) else f"p undefined: {comp.get('p_reason') or 'no p-value'}"
    return f"{comp['diff']:+.3f} {interval}, {p}"


def undefined_warnings(tables: dict[str, Any]) -> list[str]:
    """One line per (split, human criterion, metric) with an undefined correlation, interval or
    p-value: the levels and coefficients concerned and why (what the cells of the tables say).

    >>> from benchmarks.meta.data import Example
    >>> exs = [Example((str(d), str(s)), str(d), s, "all", "", (), "", {"h": 1.0}) for d in range(3) for s in range(4)]
    >>> t = correlation_tables(exs, {"m": [float(i % 5) for i in range(12)]}, ("h",), ("all",), None,
    ...                        n_resamples=20, levels=("pooled",))
    >>> undefined_warnings(t)
    ["split 'all', human 'h', metric 'm': pooled (pearson, spearman, kendall): human scores constant"]
    """
    grouped: dict[tuple[str, str, str], dict[tuple[str, str], list[str]]] = {}
    for entry in tables["results"]:
        parts = []
        if "reason" in entry:
            parts.append(entry["reason"])
        elif "interval_reason" in entry:
            parts.append(f"CI undefined: {entry['interval_reason']}")
        comp = entry.get("vs_baseline") or {}
        if "p_reason" in comp and "reason" not in entry:
            parts.append(f"p vs baseline {tables['baseline']!r} undefined: {comp['p_reason']}")
        for part in parts:
            what = grouped.setdefault((entry["split"], entry["human"], entry["metric"]), {})
            what.setdefault((entry["level"], part), []).append(entry["method"])
    lines = []
    for (split, human, metric), what in grouped.items():
        said = "; ".join(f"{level} ({', '.join(methods)}): {part}" for (level, part), methods in what.items())
        lines.append(f"split {split!r}, human {human!r}, metric {metric!r}: {said}")
    return lines


def summary_vs_baseline(tables: dict[str, Any], method: str = "kendall") -> str:
    """One compact table: each metric's ``method`` correlation and its difference to the baseline.

    Rows: metrics; columns: every (split, human criterion, level) with ``value (diff vs baseline
    [CI of the difference], p)``.
    """
    results = [r for r in tables["results"] if r["method"] == method]
    if not results or tables["baseline"] is None:
        return ""
    columns = list(dict.fromkeys((r["split"], r["human"], r["level"]) for r in results))
    lines = [
        f"### Summary: {METHOD_TITLES[method]} and difference to `{tables['baseline']}` "
        f"(paired bootstrap CI of the difference; p one-sided: bootstrap at text and pooled level, Williams at system level)",
        "",
        "Levels: " + "; ".join(f"`{lv}` = {LEVEL_TITLES[lv]}" for lv in dict.fromkeys(c[2] for c in columns)) + ".",
        "",
        "| metric | " + " | ".join(f"{s} · {h} · {lv}" for s, h, lv in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for name in dict.fromkeys(r["metric"] for r in results):
        cells = []
        for split, human, level in columns:
            entry = next(r for r in results if r["metric"] == name and (r["split"], r["human"], r["level"]) == (split, human, level))
            comp = entry.get("vs_baseline")
            kept = f" k={entry['n_used']}" if level == "text_sig" else ""
            if comp is None:
                cells.append(f"{_value_cell(entry, bold=True)}{kept}")
            elif _undefined(entry["value"]):
                cells.append(f"{_value_cell(entry)}{kept}")
            else:
                cells.append(f"{_fmt(entry['value'])} ({_comparison_cell(comp)}){_marker(entry)}{kept}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)
