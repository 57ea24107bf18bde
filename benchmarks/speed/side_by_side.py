"""Speed of every metric side by side with its anchor, in one run (``python -m benchmarks.speed``).

Each module ``benchmarks/speed/<name>.py`` (text, infolm, shannon, blanc, fflm) has a
``run(...) -> list[dict]`` that times nlgmetrics and the reference implementation on the same
inputs and the same weights and checks that the numbers agree (see ``benchmarks/speed/__init__.py``).
This script calls each ``run()`` in one process, with the flags below translated to whichever
keyword names that ``run()`` takes (``n_docs``/``docs``, ``limit``, ``size``, ``device``, ...),
and writes ``benchmarks/results/speed/speed.md`` (command, machine, versions, one table per metric).
A module that is missing or fails is reported with its one-line reason; the others still run.

    python -m benchmarks.speed --docs 1 --summaries 3 --limit 20 --size small        # CPU slice
    python -m benchmarks.speed --device cuda --size base --llama-size 1b --dtype bfloat16   # GPU

Random weights of real shapes (``nlgmetrics.testing.build_random_model``: bert-base, gpt2,
~1B Llama) are what each module builds: the cost of a forward pass does not depend on the
weights' values.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from benchmarks import harness

HERE = Path(__file__).resolve().parent
RESULTS = harness.result_path("speed")
MODULES = ("text", "infolm", "shannon", "blanc", "fflm")
TITLES = {
    "text": "ROUGE / BLEU vs rouge-score / sacrebleu",
    "infolm": "InfoLM vs torchmetrics",
    "shannon": "Shannon score vs blanc.Shannon",
    "blanc": "BLANC-help vs blanc.BlancHelp",
    "fflm": "FFLM vs the authors' per-example loop",
}


def load_module(name: str):
    """Import ``benchmarks.speed.<name>`` (run this script as ``python -m benchmarks.speed``)."""
    path = HERE / f"{name}.py"
    if not path.exists():
        raise FileNotFoundError(f"{path.name} does not exist yet")
    module = importlib.import_module(f"benchmarks.speed.{name}")
    if not hasattr(module, "run"):
        raise AttributeError(f"{path.name} has no run() function")
    return module


def default_data_dir(data_dir: str | None) -> Path | None:
    """``--data-dir``, else ``$NLGMETRICS_DATA``, else None (each module's own default).

    >>> str(default_data_dir("/x"))
    '/x'
    """
    if data_dir:
        return Path(data_dir)
    env = os.environ.get("NLGMETRICS_DATA")
    return Path(env) if env else None


def candidate_kwargs(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every keyword a speed module's run() might take, from our flags (filtered per module)."""
    data_dir = default_data_dir(args.data_dir)
    size = args.llama_size if name == "fflm" and args.llama_size else args.size
    kw: dict[str, Any] = {
        "n_docs": args.docs,
        "docs": args.docs,
        "summaries_per_doc": args.summaries,
        "n_systems": args.summaries,
        "summaries": args.summaries,
        "limit": args.limit,
        "size": size,
        "device": args.device,
        "threads": args.threads,
    }
    if args.dtype:
        kw["dtype"] = args.dtype
    if data_dir is not None:
        kw["data_dir"] = data_dir
        realsumm = data_dir / "realsumm" / "realsumm.jsonl"
        kw["data"] = realsumm
        kw["data_path"] = realsumm
    if name == "fflm" and args.llama_size:
        kw["architecture"] = "llama"
    # speed.infolm.run takes workloads (name, bert size, docs, systems per doc, max_length).
    if args.docs is not None and args.summaries is not None:
        kw["workloads"] = ((f"realsumm-{size}", size, args.docs, args.summaries, args.infolm_max_length),)
    return kw


def call_run(
    module, kwargs: dict[str, Any], explicit: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Call ``module.run`` with the subset of ``kwargs`` its signature accepts, plus every ``explicit``
    keyword (an error if ``run`` does not take one: a typo must not be dropped silently); returns
    its rows and the keywords it was given."""
    params = inspect.signature(module.run).parameters
    explicit = explicit or {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        accepted = {**kwargs, **explicit}
    else:
        unknown = sorted(set(explicit) - set(params))
        if unknown:
            raise TypeError(f"{module.__name__}.run() takes no {unknown}; it takes {sorted(params)}.")
        accepted = {k: v for k, v in kwargs.items() if k in params and v is not None}
        accepted.update(explicit)
    return module.run(**accepted), accepted


#: The anchors' packages, whose versions the report records.
ANCHOR_PACKAGES = ("accelerate", "torchmetrics", "blanc", "rouge-score", "sacrebleu")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed",
                                     description="Every metric vs its anchor, one run; writes benchmarks/results/speed/speed.md")
    parser.add_argument("--only", default=",".join(MODULES), help=f"comma list of {', '.join(MODULES)}")
    parser.add_argument("--docs", type=int, default=None,
                        help="REALSumm documents for the LM metrics (default: each module's own, which may depend on --device)")
    parser.add_argument("--summaries", type=int, default=None,
                        help="summaries per document for the LM metrics (default: each module's own)")
    parser.add_argument("--limit", type=int, default=20, help="ROUGE/BLEU: first N WebNLG items / REALSumm documents")
    parser.add_argument("--size", default="small", help="random model size for bert/gpt2: tiny, small, base")
    parser.add_argument("--llama-size", default=None, help="FFLM's Llama size (e.g. 1b on a GPU)")
    parser.add_argument("--device", default=None, help="cpu or cuda (modules default to cpu)")
    parser.add_argument("--dtype", default=None, help="e.g. bfloat16 on a GPU (only modules that take it)")
    parser.add_argument("--infolm-max-length", type=int, default=48, help="InfoLM tokens per text (torchmetrics needs one)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (modules that take it)")
    parser.add_argument("--data-dir", default=None, help="folder with realsumm/ and webnlg2020/ (default $NLGMETRICS_DATA)")
    parser.add_argument("--arg", action="append", default=[], metavar="MODULE:KEY=VALUE",
                        help="one keyword for one module's run(), e.g. shannon:doc_ids=[44] or fflm:n_systems=25 "
                        "(a Python literal, else a string); overrides the shared flags; repeatable")
    parser.add_argument("--out", default=str(RESULTS))
    return parser


def module_overrides(items: list[str]) -> dict[str, dict[str, Any]]:
    """``["shannon:doc_ids=[44]", "fflm:n_systems=25"]`` -> ``{"shannon": {"doc_ids": [44]}, "fflm": {...}}``."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        name, sep, assignment = item.partition(":")
        key, eq, text = assignment.partition("=")
        if not sep or not eq or name not in MODULES or not key.isidentifier():
            raise SystemExit(f"--arg {item!r}: write MODULE:KEY=VALUE with MODULE one of {list(MODULES)}.")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        out.setdefault(name, {})[key] = value
    return out


def main(argv: list[str] | None = None) -> int:
    # The speed modules are imported as benchmarks.speed.<name>: this folder must be in the `benchmarks`
    # package Python finds (pysbd installs an unrelated top-level `benchmarks` into site-packages).
    try:
        found = Path(importlib.import_module("benchmarks").__file__).resolve().parent
    except (ImportError, TypeError):
        found = None
    if found != HERE.parent:
        raise SystemExit(f"`import benchmarks` finds {found}, not {HERE.parent}: run this from the repository root "
                         f"as `python -m benchmarks.speed ...`.")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(names) - set(MODULES))
    if unknown:
        raise SystemExit(f"Unknown --only {unknown}; choose from {list(MODULES)}.")
    overrides = module_overrides(args.arg)
    sections, summary = [], []
    out = Path(args.out)
    command = harness.command_line("benchmarks.speed", argv)
    for name in names:
        started = time.perf_counter()
        try:
            module = load_module(name)
            rows, used = call_run(module, candidate_kwargs(name, args), overrides.get(name))
        except Exception as error:  # one module failing must not lose the others' numbers
            reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            print(f"speed.{name}: skipped ({reason})", file=sys.stderr, flush=True)
            traceback.print_exc(limit=2)
            summary.append(f"| {name} | skipped: {reason} | |")
            sections += [f"## {TITLES[name]} (`speed/{name}.py`)", "", f"Skipped: {reason}", ""]
            continue
        elapsed = time.perf_counter() - started
        print(f"speed.{name}: {len(rows)} rows in {elapsed:.0f}s", file=sys.stderr, flush=True)
        print("\n".join(harness.markdown_table(rows)), flush=True)
        summary.append(f"| {name} | {len(rows)} rows | {elapsed:.0f} s |")
        sections += [
            f"## {TITLES[name]} (`speed/{name}.py`)",
            "",
            f"`run({', '.join(f'{k}={v!r}' for k, v in used.items())})`",
            "",
            *harness.markdown_table(rows),
            "",
        ]
        # Written after every module, so that a run stopped by a time limit keeps what it measured.
        write_report(out, command, summary, sections)
    write_report(out, command, summary, sections)
    print(f"wrote {out}", file=sys.stderr)
    return 0


def write_report(out: Path, command: str, summary: list[str], sections: list[str]) -> None:
    """The markdown report: command, machine, versions, one line per module, one table per module."""
    header = harness.report_head(
        "Speed: nlgmetrics vs the reference implementations",
        "Each section is one `benchmarks/speed/<name>.py` module's `run()` (see its docstring for what "
        "is timed and how the numbers are compared); all ran in this one process, one after the other. "
        "On a shared machine, wall times vary from run to run; ratios measured back to back are more stable.",
        command.strip(), packages=ANCHOR_PACKAGES)
    header += ["", "| module | result | wall time |", "|---|---|---|", *summary, ""]
    harness.write_report(out, header + sections)


if __name__ == "__main__":
    raise SystemExit(main())
