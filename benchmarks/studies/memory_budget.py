"""Peak memory against ``token_budget``: one FFLM (or Shannon) call per budget, in a fresh process each.

Each point runs in a child process that loads the model (float32, CPU), resets the kernel's
peak-RSS counter (``/proc/self/clear_refs``), makes one call on REALSumm document 0 and its first
``--summaries`` system summaries, and reports its peak RSS (``VmHWM``) and the RSS before the
call: their difference is what the call itself took. The parent checks that every budget gives the
same scores (float32: within 1e-5), and lists beside each peak the largest pass the plan made
(tokens with padding and cached prefix, head rows, float32 logits) and the cost model's bound
(:func:`nlgmetrics.engine.budget.pass_cost`, per budget token), with what ``token_budget="auto"``
picks on this machine now.

    python -m benchmarks.studies.memory_budget
    python -m benchmarks.studies.memory_budget --models smollm2-135m --metrics shannon_score fflm --budgets 1024 4096

FFLM is the default: its passes hold a whole document, so every budget up to the work's size binds;
Shannon's passes are a sentence behind a cached prefix, smaller than most budgets. The models named by
``--token-only`` (default Gemma 3) also run every budget with the planner counting tokens only, as
before the budget counted logits (``planning.head_row_allowance`` lifted in the child).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from nlgmetrics.engine.planning import LOGITS_VOCABULARY, head_row_allowance

from benchmarks.harness import (command_line, markdown_table, parser, realsumm_file, report_head, result_path,
                                write_report)

MODELS = ("smollm2-135m", "gemma3-270m")
METRICS = ("shannon_score", "fflm")
BUDGETS = (1024, 2048, 4096, 8192, 16384)
OUT = result_path("memory_budget")
MiB = 2**20


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _child(model: str, metric: str, budget: int | str, summaries: int, planner: str) -> dict[str, Any]:
    """One point, in this (fresh) process: load, reset the peak, call, read the peak. ``planner``
    "tokens": the budget counts tokens only, as before it counted logits (for comparison)."""
    import torch

    from benchmarks.realsumm_slices import realsumm_pairs
    from nlgmetrics.engine import causal, load_lm, planning
    from nlgmetrics.engine.budget import auto_token_budget, free_memory, pass_cost
    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    if planner == "tokens":
        planning.head_row_allowance = lambda token_budget, vocab_size: 2**62

    documents, predictions = realsumm_pairs(realsumm_file(), n_docs=1, per_doc=summaries)
    lm = load_lm(model, "causal", device="cpu", dtype="float32")
    passes: list[tuple[int, int]] = []  # (tokens in the pass with padding and cached prefix, head rows)
    real = causal.logits_at

    def counting(model_, gather_head, inputs, batch_index, position_index, **kwargs):
        ids = inputs["input_ids"]
        mask = inputs.get("attention_mask")  # 2-d or 4-d, its last axis spans the cached prefix too
        width = ids.shape[-1] if mask is None else mask.shape[-1]
        passes.append((int(ids.shape[0] * width), int(batch_index.numel())))
        return real(model_, gather_head, inputs, batch_index, position_index, **kwargs)

    causal.logits_at = counting
    cost = pass_cost(lm.model, lm.dtype)
    free = free_memory(lm.device)
    auto = auto_token_budget(lm)
    score = {"shannon_score": shannon_score, "fflm": fflm}[metric]
    # A short call first: the weights are mapped from their file and count in the RSS once a pass
    # has read them (SmolLM2: 0.5 GB, Gemma 3: 1.1 GB), which is the load's memory, not the call's.
    score(["warm up"], documents[:1], model=lm, max_length=64, progress=False, cache_dir=None)
    passes.clear()
    Path("/proc/self/clear_refs").write_text("5")  # the peak RSS counter restarts from the RSS now
    before = _status_kib("VmRSS")
    started = time.perf_counter()
    result = score(predictions, documents, model=lm, token_budget=budget, progress=False, cache_dir=None)
    seconds = time.perf_counter() - started
    peak = _status_kib("VmHWM")
    vocab = lm.model.get_output_embeddings().out_features
    largest_logits = max(rows for _tokens, rows in passes) * vocab * 4
    point = {
        "model": model, "metric": metric, "budget": budget, "summaries": summaries, "planner": planner,
        "scores": [float(v) for name in sorted(result.scores) for v in result.scores[name]], "seconds": seconds,
        "rss_before_mib": before / 1024, "peak_mib": peak / 1024, "call_mib": (peak - before) / 1024,
        "passes": len(passes), "max_pass_tokens": max(t for t, _ in passes),
        "max_pass_head_rows": max(r for _, r in passes), "max_pass_logits_mib": largest_logits / MiB, "vocab": vocab,
        "cost_per_token": cost.per_token, "cost_logits_per_token": cost.logits,
        "auto_budget": auto, "free_mib": None if free is None else free / MiB, "threads": torch.get_num_threads(),
    }
    point["bound_mib"] = _bound_bytes(point) / MiB
    return point


def _run_point(model: str, metric: str, budget: int, summaries: int, planner: str,
               yield_to: Path | None) -> dict[str, Any]:
    """One point in a fresh child process; while ``yield_to`` exists (another job timing on a shared
    machine) no child runs, and one running when it appears is stopped and run again afterwards."""
    command = [sys.executable, "-m", "benchmarks.studies.memory_budget", "--child", model, metric, str(budget),
               str(summaries), planner]
    while True:
        while yield_to is not None and yield_to.exists():
            time.sleep(30)
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while child.poll() is None:
            if yield_to is not None and yield_to.exists():
                child.kill()
                child.communicate()
                break
            time.sleep(2)
        else:
            out, err = child.communicate()
            if child.returncode != 0:
                raise RuntimeError(f"{' '.join(command)} failed:\n{err[-3000:]}")
            return json.loads(out.strip().splitlines()[-1])


def _bound_bytes(point: dict[str, Any]) -> int:
    """The cost model's bound on a pass of this point's plan: the budget's tokens and head rows, each
    widened to the largest pass's where a sequence longer than the budget had to run alone."""
    budget, vocab = int(point["budget"]), int(point["vocab"])
    per_value = point["cost_logits_per_token"] // min(vocab, LOGITS_VOCABULARY)
    rest = point["cost_per_token"] - point["cost_logits_per_token"]
    rows = max(head_row_allowance(budget, vocab), point["max_pass_head_rows"])
    return max(budget, point["max_pass_tokens"]) * rest + rows * vocab * per_value


def _report(points: list[dict[str, Any]], command: str, summaries: int) -> list[str]:
    metrics = ", ".join(dict.fromkeys(p["metric"] for p in points))
    models = ", ".join(dict.fromkeys(p["model"] for p in points))
    lines = report_head(
        f"Peak memory against token_budget ({metrics}; {models}; float32, CPU)",
        f"One call per point, each in a fresh process: REALSumm document 0 x its first {summaries} system "
        "summaries. `call MiB` is the peak RSS during the call less the RSS before it (the model loaded "
        "and its weights read by a short warm-up call); "
        "`largest pass` is the plan's largest forward pass (tokens counted with padding and cached prefix; "
        "head rows, the positions given logits, and their float32 logits); `bound` is the cost model's "
        "(`nlgmetrics.engine.budget.pass_cost`): `token_budget x (activations + cache per token) + "
        "head rows allowed x vocabulary x 4`, each count widened to the largest pass's where one sequence "
        "longer than the budget had to run alone (a pass never splits a sequence).",
        command)
    rows = []
    for p in points:
        p["bound_mib"] = _bound_bytes(p) / MiB
        rows.append({
            "model": p["model"], "metric": p["metric"], "budget counts": p.get("planner", "logits"),
            "token_budget": p["budget"], "passes": p["passes"],
            "largest pass: tokens": p["max_pass_tokens"], "head rows": p["max_pass_head_rows"],
            "logits MiB": round(p["max_pass_logits_mib"], 1), "call MiB": round(p["call_mib"]),
            "peak RSS MiB": round(p["peak_mib"]), "bound MiB": round(p["bound_mib"]), "seconds": round(p["seconds"], 1),
            "max abs diff vs first budget": p["diff"],
        })
    lines += ["", *markdown_table(rows), ""]
    lines.append("Cost model (bytes per budget token, float32) and what `token_budget=\"auto\"` picked in the "
                 "child process (half the free memory, rounded down to a power of two, within [512, 65536]):")
    lines.append("")
    seen: dict[str, dict[str, Any]] = {}  # the cost model and "auto" are the planner's own
    for p in points:
        seen.setdefault(p["model"], p)
    lines += markdown_table([{"model": m, "vocabulary": p["vocab"], "bytes per budget token": p["cost_per_token"],
                              "of which logits": p["cost_logits_per_token"],
                              "free MiB when measured": None if p["free_mib"] is None else round(p["free_mib"]),
                              "auto budget": p["auto_budget"]} for m, p in seen.items()])
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        model, metric, budget, summaries, planner = argv[1:6]
        budget_value = budget if budget == "auto" else int(budget)
        print(json.dumps(_child(model, metric, budget_value, int(summaries), planner)))
        return 0
    made = parser(__doc__, out=OUT)
    made.add_argument("--models", nargs="+", default=list(MODELS))
    made.add_argument("--metrics", nargs="+", default=["fflm"], choices=list(METRICS))
    made.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS))
    made.add_argument("--summaries", type=int, default=1, help="system summaries of REALSumm document 0")
    made.add_argument("--yield-to", type=Path, default=None,
                      help="run no point while this file exists (a machine shared with timing runs)")
    made.add_argument("--token-only", nargs="*", default=["gemma3-270m"],
                      help="models also run with the budget counting tokens only (the planner before it "
                           "counted logits)")
    made.add_argument("--from-record", type=Path, default=None,
                      help="write the report again from a run's JSON record (no model runs)")
    args = made.parse_args(argv)
    if args.from_record is not None:
        record = json.loads(args.from_record.read_text(encoding="utf-8"))
        return _write(record["points"], record["command"], record["points"][0]["summaries"], args.out)
    points: list[dict[str, Any]] = []
    for model in args.models:
        for metric in args.metrics:
            first: list[float] | None = None
            planners = ["logits", "tokens"] if model in args.token_only else ["logits"]
            for planner, budget in [(planner, budget) for planner in planners for budget in args.budgets]:
                point = _run_point(model, metric, budget, args.summaries, planner, args.yield_to)
                first = point["scores"] if first is None else first
                point["diff"] = max(abs(a - b) for a, b in zip(point["scores"], first, strict=True))
                print(f"{model} {metric} {planner} budget {budget}: call {point['call_mib']:.0f} MiB, "
                      f"peak {point['peak_mib']:.0f} MiB, {point['seconds']:.1f} s, diff {point['diff']:.2e}",
                      flush=True)
                points.append(point)
    return _write(points, command_line("benchmarks.studies.memory_budget", argv), args.summaries, args.out)


def _write(points: list[dict[str, Any]], command: str, summaries: int, out: str | None) -> int:
    """Print the report (and write it with its JSON record to ``out``); exit status 1 when two
    budgets' scores differ by more than float32's batching tolerance."""
    worst = max(p["diff"] for p in points)
    lines = _report(points, command, summaries)
    lines += ["", f"Largest score difference between budgets: {worst:.2e} (float32; must be <= 1e-5)."]
    if out:
        write_report(out, lines, {"command": command, "points": points})
    print("\n".join(lines))
    return 0 if worst <= 1e-5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
