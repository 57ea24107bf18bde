"""What each engine mechanism buys: the same workload with one mechanism switched off at a time.

The workload of the engine benchmarks: one REALSumm document with its system summaries, Shannon
and FFLM on SmolLM2-135M (the offline ``smollm2-135m``), in one process. Each variant is a copy of
the loaded model's :class:`~nlgmetrics.engine.LoadedLM` with one private flag changed (or an option
of the metric), timed after one untimed warm-up call; variants are interleaved over ``--repeats``
rounds (the median is reported) so that load on a shared machine hits them alike. Every variant's
scores are compared with the first variant's (a mechanism must not change a number beyond
float32 rounding of other batch shapes). A flag the engine no longer has is skipped.

Process-wide settings (glibc's allocator, thread counts) cannot be undone inside one process: run
the script twice (e.g. with ``NLGMETRICS_KEEP_FREED_MEMORY=1``) and compare the ``as is`` rows.

    python -m benchmarks.studies.engine --doc-id 44 --summaries 25 --repeats 2

With ``--against COMMIT`` the same workload runs on that commit's whole ``src/`` (taken with
``git archive``) and on the working tree's, each side in its own fresh process (``PYTHONPATH`` put
first, checked by the module path each child reports), one untimed warm-up call per metric and side,
then rounds interleaved old/new (the order swapped every round); the median of each side, the ratio
and the largest per-example score difference are appended to ``--results`` as a markdown section:

    python -m benchmarks.studies.engine --against 313266b --doc-id 0 --summaries 8 --dtype float32 \
        --repeats 2 --metrics shannon,fflm

The engine of 313266b applied glibc's ``mallopt`` (mmap threshold 1 GiB, trim threshold max) on its
first CPU load; the current one leaves the allocator alone unless asked (``NLGMETRICS_KEEP_FREED_MEMORY=1``,
passed on to both children and recorded). ``--same-allocator`` gives both children that setting
through ``GLIBC_TUNABLES``, so only the code differs.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from benchmarks import harness
from benchmarks.harness import ROOT, git_commit, machine, versions
from benchmarks.realsumm_slices import realsumm_pairs

DEFAULT_DATA = harness.realsumm_file()
DEFAULT_RESULTS = harness.result_path("speed_engine_vs_commit")
#: glibc's setting that the engine of 313266b applied with mallopt on its first CPU load
SAME_ALLOCATOR = "glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=2147483647"
#: the environment variable of the current engine's allocator opt-in (313266b read it as an opt-out)
KEEP_FREED_MEMORY = "NLGMETRICS_KEEP_FREED_MEMORY"
#: the prefix of the children's protocol lines (anything else they print is passed through)
MARK = "@@speed_engine "

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


# The child of ``--against``: the smallest code that both old and new trees run. It reads the pairs
# from a JSON file, then one metric name per stdin line, and answers each with one MARK line.
CHILD = """
import json, resource, sys, time
import nlgmetrics
from nlgmetrics.fflm import fflm
from nlgmetrics.shannon import shannon_score
mark, pairs, model, dtype = sys.argv[1:5]
documents, predictions = json.load(open(pairs))
functions = {"shannon": shannon_score, "fflm": fflm}
print(mark + json.dumps({"module": nlgmetrics.__file__}), flush=True)
def call(metric):
    return functions[metric](predictions, documents, model=model, dtype=dtype, progress=False)
for line in sys.stdin:
    words = line.split()
    if words[0] == "profile":  # one call under torch's profiler: its busiest operators
        import torch.profiler
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
            call(words[1])
        table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=int(words[2]))
        shapes = prof.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=int(words[2]))
        print(mark + json.dumps({"table": table, "shapes": shapes}), flush=True)
        continue
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    result = call(words[0])
    seconds = time.perf_counter() - start
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    scores = {k: [float(x) for x in v] for k, v in result.scores.items()}
    print(mark + json.dumps({"seconds": seconds, "minor_faults": faults, "scores": scores}), flush=True)
"""


def extract_src(commit: str, into: Path) -> Path:
    """``src/`` of ``commit`` unpacked under ``into`` (``git archive``, so no checkout is touched)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit, "src"],
                             capture_output=True, check=True).stdout
    tar_path = into / "src.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def child_env(src: Path, same_allocator: bool) -> dict[str, str]:
    """The parent's environment with ``src`` first on ``PYTHONPATH`` (ahead of the venv's editable
    install of the repo) and no store: a ``cache_dir`` from the environment would answer from disk."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NLGMETRICS_CACHE")}
    env["PYTHONPATH"] = os.pathsep.join([str(src)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    if same_allocator:
        env["GLIBC_TUNABLES"] = SAME_ALLOCATOR
    return env


class Child:
    """One side's process: started once, asked for one metric call at a time."""

    def __init__(self, src: Path, pairs: Path, model: str, dtype: str, same_allocator: bool) -> None:
        self.src = src
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, MARK, str(pairs), model, dtype], cwd=str(pairs.parent),
            env=child_env(src, same_allocator), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.module = self._answer()["module"]
        # The venv may install the repo in editable mode: a child that imports another tree than
        # the one it was given would time the wrong code, so it is refused here.
        if not Path(self.module).resolve().is_relative_to(src.resolve()):
            self.close()
            raise RuntimeError(f"child for {src} imported nlgmetrics from {self.module}")

    def _answer(self) -> dict[str, Any]:
        stdout: IO[str] = self.proc.stdout  # type: ignore[assignment]
        for line in stdout:
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
            sys.stdout.write(line)
        raise RuntimeError(f"child for {self.src} exited with {self.proc.wait()}")

    def call(self, metric: str) -> dict[str, Any]:
        """``{seconds, scores}`` of one call of ``metric`` on the pairs."""
        self.proc.stdin.write(metric + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return self._answer()

    def profile(self, metric: str, rows: int = 25) -> dict[str, str]:
        """torch profiler tables (by operator, and by operator and input shapes) of one call."""
        self.proc.stdin.write(f"profile {metric} {rows}\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return self._answer()

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait()


def max_abs_diff(a: dict[str, list[float]], b: dict[str, list[float]]) -> float:
    """Largest per-example difference over the columns both results have."""
    return max(abs(x - y) for k in a.keys() & b.keys() for x, y in zip(a[k], b[k]))


def run_against(commit: str, doc_id: int = 0, summaries: int = 8, repeats: int = 2, dtype: str = "float32",
                data: str | os.PathLike = DEFAULT_DATA, model: str = "smollm2-135m",
                metrics: list[str] | None = None, same_allocator: bool = False,
                profile: bool = False) -> dict[str, Any]:
    """Time the metrics on ``commit``'s ``src/`` (old) and the working tree's (new), one process each.

    Both children live for the whole run; each metric gets one untimed warm-up per side, then
    ``repeats`` rounds, old first in odd rounds and new first in even ones, so a drift in the
    machine's load hits both sides alike. With ``profile``, each side then runs each metric once
    more under torch's profiler (``report["profiles"]``, not timed)."""
    documents, predictions = realsumm_pairs(data, doc_ids=[doc_id], per_doc=summaries)
    metrics = metrics or ["shannon", "fflm"]
    report: dict[str, Any] = {"load_before": harness.load_averages(), "rows": []}
    with tempfile.TemporaryDirectory(prefix="speed_engine_") as tmp:
        tmp_path = Path(tmp)
        pairs = tmp_path / "pairs.json"
        pairs.write_text(json.dumps([documents, predictions]))
        sides = {"old": extract_src(commit, tmp_path), "new": ROOT / "src"}
        children = {side: Child(src, pairs, model, dtype, same_allocator) for side, src in sides.items()}
        report["modules"] = {side: child.module for side, child in children.items()}
        print(json.dumps(report["modules"]), flush=True)
        try:
            for metric in metrics:
                report["rows"].append(_time_metric(children, metric, repeats))
                print(json.dumps(report["rows"][-1]), flush=True)
                if profile:
                    report.setdefault("profiles", {})[metric] = {s: c.profile(metric) for s, c in children.items()}
                    for side, tables in report["profiles"][metric].items():
                        print(f"{metric} {side}\n{tables['table']}\n{tables['shapes']}", flush=True)
        finally:
            for child in children.values():
                child.close()
    report["load_after"] = harness.load_averages()
    return report


def _time_metric(children: dict[str, Child], metric: str, repeats: int) -> dict[str, Any]:
    """One metric's row: warm-ups, interleaved rounds, medians, ratio and score difference."""
    for child in children.values():
        child.call(metric)  # warm-up: loads the model, fills the load cache
    times: dict[str, list[float]] = {side: [] for side in children}
    faults: dict[str, list[int]] = {side: [] for side in children}
    scores: dict[str, dict[str, list[float]]] = {}
    loads = []
    for round_ in range(repeats):
        order = list(children) if round_ % 2 == 0 else list(reversed(children))
        for side in order:
            answer = children[side].call(metric)
            times[side].append(answer["seconds"])
            faults[side].append(answer["minor_faults"])
            scores[side] = answer["scores"]
        loads.append(harness.load_average())
    old, new = (statistics.median(times[s]) for s in ("old", "new"))
    return {"metric": metric, "old": old, "new": new, "ratio": new / old,
            "rounds": {s: [round(t, 2) for t in times[s]] for s in times},
            "minor_faults": {s: int(statistics.median(faults[s])) for s in faults},
            "max_abs_diff": max_abs_diff(scores["old"], scores["new"]),
            "load_1min_after_rounds": [round(x, 2) for x in loads]}


def commit_hash(commit: str) -> str:
    """The short hash ``commit`` names (a branch or tag becomes its commit)."""
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", commit], capture_output=True,
                          text=True, check=True).stdout.strip()


def markdown_section(report: dict[str, Any], command: str, commit: str, dtype: str,
                     same_allocator: bool) -> str:
    """One results section: how it was run, then one table row per metric."""
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "src"], capture_output=True,
                           text=True).stdout.strip()
    new_tree = f"{git_commit()}" + (" + uncommitted changes under src/" if dirty else " (src/ as committed)")
    lines = [
        f"## {commit_hash(commit)} against {new_tree.split()[0]}, {dtype}"
        + (", same allocator" if same_allocator else "") + f" ({datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"- command: `{command}`",
        f"- CPU: {machine()}",
        f"- software: {versions()}",
        f"- old: `src/` of {commit_hash(commit)}; new: the working tree at {new_tree}",
        f"- allocator: " + (f"`GLIBC_TUNABLES={SAME_ALLOCATOR}` in both children" if same_allocator
                            else "as each engine leaves it (the old one may call mallopt itself)")
        + (f"; `{KEEP_FREED_MEMORY}={os.environ[KEEP_FREED_MEMORY]}` in both children (the new engine's opt-in)"
           if KEEP_FREED_MEMORY in os.environ else ""),
        f"- load average (1, 5, 15 min) before: {report['load_before']}; after: {report['load_after']}",
        "",
        "| metric | old s (median) | new s (median) | new / old | old rounds | new rounds | max abs diff "
        "| minor page faults per call, old / new (median) | 1-min load after each round |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        lines.append(f"| {row['metric']} | {row['old']:.2f} | {row['new']:.2f} | {row['ratio']:.3f} | "
                     f"{row['rounds']['old']} | {row['rounds']['new']} | {row['max_abs_diff']:.3g} | "
                     f"{row['minor_faults']['old']:,} / {row['minor_faults']['new']:,} | "
                     f"{row['load_1min_after_rounds']} |")
    for metric, sides in report.get("profiles", {}).items():
        for side, tables in sides.items():
            lines += ["", f"torch profiler, {metric}, {side} side, one call (self CPU time; then by input shapes):",
                      "", "```", tables["table"].rstrip(), "", tables["shapes"].rstrip(), "```"]
    return "\n".join(lines) + "\n"


def append_results(path: Path, section: str) -> None:
    """Append ``section`` to ``path``, starting the file with its title when it is new."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# The engine against an earlier commit: Shannon and FFLM on SmolLM2-135M\n\n"
                        "Written by `python -m benchmarks.studies.engine --against COMMIT` (see its docstring);"
                        " each section is one run, newest last.\n\n")
    with path.open("a") as handle:
        handle.write("\n" + section)


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__, out=DEFAULT_RESULTS, out_flag="--results")
    parser.add_argument("--doc-id", type=int, default=44)
    parser.add_argument("--summaries", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--model", default="smollm2-135m", help="with --against: a name or path both trees load")
    parser.add_argument("--scores-out", default=None, help="write the 'as is' scores here (JSON)")
    parser.add_argument("--variants", nargs="*", default=None, help=f"of {list(VARIANTS)} (default: all)")
    parser.add_argument("--metrics", nargs="*", default=None,
                        help="shannon, fflm, space or comma separated (default: both)")
    parser.add_argument("--against", default=None, metavar="COMMIT",
                        help="time COMMIT's src/ against the working tree's, one process each")
    parser.add_argument("--same-allocator", action="store_true",
                        help="with --against: both children under GLIBC_TUNABLES as the old mallopt set it")
    parser.add_argument("--profile", action="store_true",
                        help="with --against: after the rounds, one profiled call per metric and side")
    args = parser.parse_args(argv)
    metrics = [m for item in args.metrics or [] for m in item.split(",") if m] or None
    if args.against:
        main_against(args, metrics, harness.command_line("benchmarks.studies.engine", argv))
        return
    print(machine(), versions(), f"NLGMETRICS_KEEP_FREED_MEMORY={os.environ.get('NLGMETRICS_KEEP_FREED_MEMORY', 'unset')}")
    run(args.doc_id, args.summaries, args.repeats, args.dtype, args.data, scores_out=args.scores_out,
        variants=args.variants, metrics=metrics)


def main_against(args: argparse.Namespace, metrics: list[str] | None, command: str) -> None:
    """``--against``: run both sides, print the section and append it to ``--results``."""
    print(machine(), versions(), f"load average {harness.load_averages()}", flush=True)
    report = run_against(args.against, args.doc_id, args.summaries, args.repeats, args.dtype, args.data,
                         model=args.model, metrics=metrics, same_allocator=args.same_allocator, profile=args.profile)
    section = markdown_section(report, command, args.against, args.dtype, args.same_allocator)
    print(section)
    append_results(Path(args.results), section)


if __name__ == "__main__":
    main()
