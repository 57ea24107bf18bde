"""The named offline models side by side: conversion, memory after loading, Shannon and FFLM time.

For each alias (default ``smollm2-135m`` and ``gemma3-270m``; the second needs the opt-in
``gemma`` extra):

- conversion: the alias's first use, in a fresh process with an empty ``NLGMETRICS_CACHE``: wall
  time of the build alone (imports done before), the process's peak resident memory (and what it
  held before the build), the converted folder's bytes on disk;
- loading: in a fresh process per dtype, the resident memory that ``load_lm`` adds when it reads
  the converted folder (float32, then bfloat16), right after the load (float32 weights may still be
  file pages mapped but not yet read) and after one short forward pass (every weight read), beside
  the parameters' own bytes;
- scoring: in this process, Shannon and FFLM on one REALSumm document with its first system
  summaries, CPU; one untimed warm-up call per model and metric, then ``--repeats`` rounds
  interleaved over the models (the order reversed every round), so a change of the shared
  machine's load hits both alike; the median and the fastest round are reported (on a machine
  shared with other jobs the fastest round is the one least slowed by them).

    python -m benchmarks.studies.models --doc-id 0 --summaries 8 --repeats 3 \\
        --out benchmarks/results/gemma3_270m.md

>>> megabytes(3_275_692 * 1024)
'3354 MB'
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchmarks import harness
from benchmarks.harness import ROOT, report_head
from benchmarks.realsumm_slices import realsumm_pairs

DEFAULT_DATA = harness.realsumm_file()
DEFAULT_MODELS = ("smollm2-135m", "gemma3-270m")
#: alias -> (module, function) that builds its converted folder
BUILDERS = {"smollm2-135m": ("nlgmetrics.engine.smollm2", "smollm2_dir"),
            "gemma3-270m": ("nlgmetrics.engine.gemma3", "gemma3_dir")}

# Children print one JSON line. Resident memory from /proc (current) and getrusage (peak, KiB on Linux).
_RSS = """
import json, os, resource, sys, time
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
"""
CONVERT = _RSS + """
import importlib
import torch, transformers  # imported before the clock starts
from transformers import AutoModelForCausalLM, AutoTokenizer
module, function = sys.argv[1:3]
build = getattr(importlib.import_module(module), function)
before = peak()
start = time.perf_counter()
folder = build()
seconds = time.perf_counter() - start
size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
print(json.dumps({"seconds": seconds, "peak_before": before, "peak": peak(), "folder_bytes": size}))
"""
LOAD = _RSS + """
import torch, transformers
from transformers import AutoModelForCausalLM, AutoTokenizer
from nlgmetrics.engine import load_lm
name, dtype = sys.argv[1:3]
before = rss()
lm = load_lm(name, "causal", device="cpu", dtype=dtype)
after = rss()
with torch.inference_mode():
    lm.model(**lm.tokenizer(["Every weight is read once."], return_tensors="pt"))
used = rss()
parameters = sum(p.numel() * p.element_size() for p in lm.model.parameters())
print(json.dumps({"added": after - before, "added_after_forward": used - before, "peak": peak(),
                  "parameters_bytes": parameters}))
"""


def megabytes(value: float) -> str:
    """Bytes as whole megabytes (10^6), as the README and the issues write them."""
    return f"{value / 1e6:.0f} MB"


def _child(code: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=str(ROOT), check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child {args} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def conversion(name: str) -> dict[str, Any]:
    """The alias's conversion in a fresh process with an empty cache (deleted afterwards)."""
    with tempfile.TemporaryDirectory(prefix="speed_models_") as cache:
        env = {**os.environ, "NLGMETRICS_CACHE": cache}
        env.pop("NLGMETRICS_CACHE_DIR", None)  # no score store either
        return _child(CONVERT, *BUILDERS[name], env=env)


def loading(name: str, dtype: str) -> dict[str, Any]:
    """Resident memory that loading the converted folder adds, in a fresh process."""
    return _child(LOAD, name, dtype)


def scoring(models: list[str], doc_id: int, summaries: int, repeats: int, dtype: str,
            data: str | os.PathLike) -> list[dict[str, Any]]:
    """Rows ``{model, metric, seconds (median), rounds, tokens, mean}``, rounds interleaved over models."""
    from nlgmetrics.engine import load_lm
    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    documents, predictions = realsumm_pairs(data, doc_ids=[doc_id], per_doc=summaries)
    lms = {name: load_lm(name, "causal", device="cpu", dtype=dtype) for name in models}
    rows = []
    for metric, function, main in (("shannon", shannon_score, "shannon_score"), ("fflm", fflm, "fflm")):
        def call(name: str) -> Any:
            return function(predictions, documents, model=lms[name], progress=False)

        results = {name: call(name) for name in models}  # warm-up
        times: dict[str, list[float]] = {name: [] for name in models}
        for round_ in range(repeats):
            for name in models if round_ % 2 == 0 else list(reversed(models)):
                start = time.perf_counter()
                results[name] = call(name)
                times[name].append(time.perf_counter() - start)
        for name in models:
            tokenizer = lms[name].tokenizer
            rows.append({
                "model": name, "metric": metric, "seconds": statistics.median(times[name]),
                "rounds": [round(t, 2) for t in times[name]],
                "document_tokens": len(tokenizer(documents[0], add_special_tokens=False)["input_ids"]),
                "summary_tokens": sum(len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in predictions),
                "vocabulary": len(tokenizer), "mean": statistics.fmean(results[name].scores[main]),
                "signature": results[name].signature,
            })
            print(json.dumps(rows[-1]), flush=True)
    return rows


def report(command: str, converted: dict[str, dict], loaded: dict[str, dict[str, dict]],
           scored: list[dict], loads: tuple[str, str], doc_id: int, summaries: int, dtype: str) -> str:
    """The markdown report of one run."""
    lines = report_head(
        "Offline models side by side: SmolLM2-135M and Gemma 3 270M",
        "Conversion of each alias's GGUF on first use, memory after loading its converted folder, "
        f"and Shannon / FFLM time on REALSumm document {doc_id} x {summaries} summaries (CPU, {dtype}), "
        "written by `benchmarks/studies/models.py` (its docstring says how each number is taken).",
        command)
    lines += [f"- load average (1, 5, 15 min) before: {loads[0]}; after: {loads[1]} (a shared machine: "
              "the rounds are interleaved over the models)", ""]
    if converted:
        lines += ["## Conversion (first use, empty cache, fresh process)", "",
                  "| model | seconds | peak resident memory | of which before the build (imports) | converted folder |",
                  "|---|---|---|---|---|"]
        for name, row in converted.items():
            lines.append(f"| `{name}` | {row['seconds']:.1f} | {megabytes(row['peak'])} | "
                         f"{megabytes(row['peak_before'])} | {megabytes(row['folder_bytes'])} |")
        lines.append("")
    if loaded:
        lines += ["## Loading the converted folder (fresh process per dtype)", "",
                  "| model | dtype | resident memory added by `load_lm` | ... and after one short forward | parameters' bytes | process peak |",
                  "|---|---|---|---|---|---|"]
        for name, by_dtype in loaded.items():
            for load_dtype, row in by_dtype.items():
                lines.append(f"| `{name}` | {load_dtype} | {megabytes(row['added'])} | "
                             f"{megabytes(row['added_after_forward'])} | {megabytes(row['parameters_bytes'])} | "
                             f"{megabytes(row['peak'])} |")
        lines.append("")
    lines += [f"## Shannon and FFLM, REALSumm document {doc_id} x {summaries} summaries, {dtype}", "",
              "| metric | model | median s | fastest s | rounds (s) | document tokens | summary tokens (all) | vocabulary "
              "| mean main score |",
              "|---|---|---|---|---|---|---|---|---|"]
    for row in scored:
        lines.append(f"| {row['metric']} | `{row['model']}` | {row['seconds']:.2f} | {min(row['rounds']):.2f} | "
                     f"{row['rounds']} | {row['document_tokens']} | {row['summary_tokens']} | {row['vocabulary']} | "
                     f"{row['mean']:.4f} |")
    median = {(r["metric"], r["model"]): r["seconds"] for r in scored}
    fastest = {(r["metric"], r["model"]): min(r["rounds"]) for r in scored}
    models = list(dict.fromkeys(r["model"] for r in scored))
    if len(models) == 2:
        lines.append("")
        for metric in dict.fromkeys(r["metric"] for r in scored):
            new, old = (metric, models[1]), (metric, models[0])
            lines.append(f"- {metric}: `{models[1]}` / `{models[0]}` = {median[new] / median[old]:.2f}x (medians), "
                         f"{fastest[new] / fastest[old]:.2f}x (fastest rounds)")
    lines += ["", "Signatures:", ""] + [f"- `{row['signature']}`" for row in scored]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated aliases")
    parser.add_argument("--doc-id", type=int, default=0)
    parser.add_argument("--summaries", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--skip-conversion", action="store_true", help="no conversion nor loading children")
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    loads_before = harness.load_averages()
    converted: dict[str, dict] = {}
    loaded: dict[str, dict[str, dict]] = {}
    if not args.skip_conversion:
        for name in models:
            converted[name] = conversion(name)
            print(name, "conversion", json.dumps(converted[name]), flush=True)
            loaded[name] = {dtype: loading(name, dtype) for dtype in ("float32", "bfloat16")}
            print(name, "loading", json.dumps(loaded[name]), flush=True)
    scored = scoring(models, args.doc_id, args.summaries, args.repeats, args.dtype, args.data)
    loads_after = harness.load_averages()
    command = harness.command_line("benchmarks.studies.models", argv)
    text = report(command, converted, loaded, scored, (loads_before, loads_after), args.doc_id, args.summaries, args.dtype)
    print(text)
    if args.out:
        harness.write_report(args.out, text)


if __name__ == "__main__":
    main()
