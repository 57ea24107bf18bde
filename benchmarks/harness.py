"""What every benchmark shares: where data and results live, the command line, warm-up and timed
rounds, the numbers-agree check, the machine and versions lines, and the markdown/JSON writer.

A comparison against an anchor (``benchmarks/speed/<metric>.py``) and an engine study
(``benchmarks/studies/``) build on these; what each one times stays its own.

>>> both = compare(lambda: [1.0, 2.0], lambda: [1.0, 2.0 + 1e-9], repeats=3)
>>> len(both.anchor.seconds), len(both.ours.seconds), both.ours.value
(3, 3, [1.0, 2.000000001])
>>> agree(both.anchor.value, both.ours.value, atol=1e-6).within
True
>>> Spread.of([0.3, 0.1, 0.2])
Spread(median=0.2, low=0.1, high=0.3)
>>> print("\\n".join(markdown_table([{"metric": "bleu", "ratio": 2.5}, {"metric": "chrf", "note": "a|b"}])))
| metric | ratio | note |
|---|---|---|
| bleu | 2.5 |  |
| chrf |  | a/b |
>>> command_line("benchmarks.speed.text", ["--limit", "2"])
'python -m benchmarks.speed.text --limit 2'
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.device_clock import Timing, synchronize, timed
from benchmarks.machine import ROOT, git_commit, machine, report_head, versions

__all__ = [
    "ROOT", "RESULTS", "REPEATS", "Agreement", "Side", "Sides", "Spread", "Timing", "add_device_options", "agree",
    "command_line", "compare", "data_dir", "git_commit", "interleaved", "load_average", "load_averages", "machine",
    "markdown_table", "parser", "realsumm_file", "report_head", "result_path", "synchronize", "timed",
    "versions", "write_report",
]

#: The committed reports, one folder per report (``results/<report>/``).
RESULTS = ROOT / "benchmarks" / "results"
#: Timed rounds of a comparison: sub-second calls vary by tens of percent from one call to the
#: next, and a process's first call of anything pays its warm-up.
REPEATS = 5


# ------------------------------------------------------------------------------------------------
# where things are


def data_dir() -> Path:
    """The data sets' folder: ``$NLGMETRICS_DATA``, else ``../shared/data`` beside the checkout."""
    return Path(os.environ.get("NLGMETRICS_DATA", ROOT.parent / "shared" / "data"))


def realsumm_file() -> Path:
    """REALSumm as JSON lines (``realsumm/realsumm.jsonl`` in :func:`data_dir`)."""
    return data_dir() / "realsumm" / "realsumm.jsonl"


def result_path(report: str, name: str | None = None) -> Path:
    """``results/<report>/<name>`` (``name`` defaults to ``<report>.md``).

    >>> result_path("speed_text").relative_to(RESULTS).as_posix()
    'speed_text/speed_text.md'
    """
    return RESULTS / report / (name or f"{report}.md")


# ------------------------------------------------------------------------------------------------
# the command line


def parser(doc: str | None, *, out: Path | None = None, out_flag: str = "--out") -> argparse.ArgumentParser:
    """An argument parser described by the first line of ``doc`` (a module docstring), with the
    report's path as ``out_flag`` (default ``out``; ``None``: no file unless asked)."""
    made = argparse.ArgumentParser(description=(doc or "").strip().split("\n\n")[0].replace("\n", " "))
    made.add_argument(out_flag, default=None if out is None else str(out),
                      help="write the markdown report here" + (f" (default {out})" if out else ""))
    return made


def add_device_options(made: argparse.ArgumentParser, *, dtypes: Sequence[str] | None = ("float32", "bfloat16",
                       "float16"), threads: int | None = None, device_help: str = "cpu or cuda (both sides)",
                       dtype_help: str = "model dtype (both sides)") -> argparse.ArgumentParser:
    """``--device`` (default cpu), ``--dtype`` (default float32, one of ``dtypes``; any name where
    ``None``) and ``--threads`` (torch threads, default ``threads``)."""
    made.add_argument("--device", default="cpu", help=device_help)
    made.add_argument("--dtype", default="float32", choices=list(dtypes) if dtypes else None, help=dtype_help)
    made.add_argument("--threads", type=int, default=threads, help="torch threads (both sides)")
    return made


def command_line(module: str, argv: Sequence[str] | None = None) -> str:
    """The command a report records: ``python -m <module> <arguments>`` (``sys.argv`` when ``argv`` is None)."""
    return shlex.join(["python", "-m", module, *(sys.argv[1:] if argv is None else argv)])


# ------------------------------------------------------------------------------------------------
# timing


@dataclass(frozen=True)
class Spread:
    """The median of some timed rounds, with the fastest and the slowest."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Spread:
        return cls(statistics.median(seconds), min(seconds), max(seconds))


@dataclass(frozen=True)
class Side:
    """One side of a comparison: the value of its last call and its seconds per timed round."""

    value: Any
    seconds: list[float]

    @property
    def spread(self) -> Spread:
        return Spread.of(self.seconds)


@dataclass(frozen=True)
class Sides:
    """The anchor and ours, timed in the same rounds; ``ratio`` = anchor's median / ours (> 1: ours is faster)."""

    anchor: Side
    ours: Side

    @property
    def ratio(self) -> float:
        ours = self.ours.spread.median
        return self.anchor.spread.median / ours if ours > 0 else float("inf")


def interleaved(calls: dict[str, Callable[[], Any]], *, repeats: int = REPEATS, warmup: bool = True,
                reset: Callable[[], Any] | None = None,
                clock: Callable[[], float] = time.process_time) -> dict[str, Side]:
    """Each call once untimed (``warmup``: a process's first-call costs, imports, allocator, the
    libraries' own caches), then ``repeats`` rounds of every call, the order reversed every other
    round so that a drift in the machine's load hits all alike. ``reset`` runs before every call
    (a row meant to start cold starts cold in every round); ``clock`` reads seconds (default this
    process's CPU time, which a busy shared machine distorts less than wall time)."""
    if warmup:
        for call in calls.values():
            if reset is not None:
                reset()
            call()
    names = list(calls)
    values: dict[str, Any] = {}
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(repeats):
        for name in (names if round_ % 2 == 0 else names[::-1]):
            if reset is not None:
                reset()
            start = clock()
            values[name] = calls[name]()
            seconds[name].append(clock() - start)
    return {name: Side(values.get(name), seconds[name]) for name in names}


def compare(anchor: Callable[[], Any], ours: Callable[[], Any], *, repeats: int = REPEATS, warmup: bool = True,
            reset: Callable[[], Any] | None = None, clock: Callable[[], float] = time.process_time) -> Sides:
    """The anchor and ours through :func:`interleaved` (anchor first in even rounds, ours in odd ones)."""
    sides = interleaved({"anchor": anchor, "ours": ours}, repeats=repeats, warmup=warmup, reset=reset, clock=clock)
    return Sides(sides["anchor"], sides["ours"])


def load_average() -> float:
    """The 1-minute load average (NaN where the system has none): what else the machine was doing.

    >>> load_average() >= 0 or math.isnan(load_average())
    True
    """
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def load_averages() -> str:
    """The 1, 5 and 15 minute load averages, as ``uptime`` prints them ("n/a" where the system has none)."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


# ------------------------------------------------------------------------------------------------
# the numbers agree


@dataclass(frozen=True)
class Agreement:
    """``max_abs_diff`` over the pairs (NaN when any difference is not finite), how many are not
    finite, and whether every pair lies within ``atol + rtol * |ours|``."""

    max_abs_diff: float
    non_finite: int
    within: bool


def agree(anchor: Sequence[float], ours: Sequence[float], *, atol: float = 0.0, rtol: float = 0.0) -> Agreement:
    """The anchor's numbers against ours, pair by pair (the two must be as long as each other).

    >>> agree([1.0, float("nan")], [1.0, 2.0])
    Agreement(max_abs_diff=nan, non_finite=1, within=False)
    >>> agree([0.5], [0.5 + 1e-7], atol=1e-6).within
    True
    """
    diffs = [abs(a - o) for a, o in zip(anchor, ours, strict=True)]
    bad = sum(not math.isfinite(d) for d in diffs)
    within = all(abs(a - o) <= atol + rtol * abs(o) for a, o in zip(anchor, ours, strict=True))
    return Agreement(float("nan") if bad else max(diffs, default=0.0), bad, within)


# ------------------------------------------------------------------------------------------------
# the report


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, (list, tuple, dict)):
        text = json.dumps(value, default=str)
        return text if len(text) <= 60 else text[:57] + "..."
    return str(value).replace("|", "/")


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> list[str]:
    """A markdown table of ``rows``: ``columns``, else the union of the rows' keys in first-seen order."""
    if not rows:
        return ["(no rows)"]
    if columns is None:
        columns = list(dict.fromkeys(key for row in rows for key in row))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return lines


def write_report(out: str | os.PathLike, text: str | Sequence[str], record: dict[str, Any] | None = None) -> Path:
    """Write the markdown ``text`` (a string or its lines) to ``out``, creating its folder, and, with
    ``record`` (e.g. the command and the rows), the same run as JSON beside it (``.json``)."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = text if isinstance(text, str) else "\n".join(text) + "\n"
    path.write_text(body, encoding="utf-8")
    if record is not None:
        path.with_suffix(".json").write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
    return path
