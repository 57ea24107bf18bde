"""FFLM speed: nlgmetrics (engine: dedupe, length batching, shared document prefix, head only at
scored rows) against the authors' per-example loop (five forward passes per example, batch 1),
side by side in one run, on a SummEval-shaped workload (each document paired with many summaries),
with the same numbers checked.

The naive loop is the oracle of the tests (tests/test_fflm_oracle.py), so the baseline is exactly
what the parity tests compare against. Both run the same model object (random weights of a real
architecture: the cost of a forward pass does not depend on the weights' values).

    python benchmarks/speed_fflm.py                      # writes benchmarks/results/speed_fflm.md
    python benchmarks/speed_fflm.py --docs 2 --systems 25 --size small --max-length 2048

>>> rows = run(n_docs=1, n_systems=2, size="tiny", max_length=64)  # doctest: +SKIP
>>> sorted(rows[0])[:3]  # doctest: +SKIP
['examples', 'fflm_max_abs_diff', 'impl']
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = Path(os.environ.get("NLGMETRICS_DATA", REPO.parent / "shared" / "data")) / "realsumm" / "realsumm.jsonl"
RESULTS = REPO / "benchmarks" / "results" / "speed_fflm.md"


def _oracle():
    """Import the naive loop from tests/test_fflm_oracle.py (one copy of the baseline)."""
    spec = importlib.util.spec_from_file_location("fflm_oracle", REPO / "tests" / "test_fflm_oracle.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def load_summeval_shaped(path: str | os.PathLike = DEFAULT_DATA, n_docs: int = 1, n_systems: int = 25):
    """The first ``n_docs`` documents of RealSumm (file order), each with its first ``n_systems``
    system summaries: (documents, summaries), one row per (document, summary) pair."""
    from datasets import load_dataset

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"{path} not found: RealSumm (Bhandari et al. 2020, github.com/neulab/REALSumm) as JSON lines "
            f"with 'doc_id', 'document', 'prediction'; set NLGMETRICS_DATA or pass --data."
        )
    rows = load_dataset("json", data_files=str(path), split="train")
    per_doc: dict[Any, list[int]] = {}
    for index, doc_id in enumerate(rows["doc_id"]):
        per_doc.setdefault(doc_id, []).append(index)
    documents, summaries = [], []
    for doc_id in list(per_doc)[:n_docs]:
        for index in per_doc[doc_id][:n_systems]:
            documents.append(rows[index]["document"])
            summaries.append(rows[index]["prediction"])
    return documents, summaries


def work_counts(documents, summaries, tokenizer, bos: int, limit: int) -> dict[str, int]:
    """Hardware-independent work: tokens read by the model body and rows put through the LM head.

    Naive: five full sequences per example, head on every position. Ours: the queries that
    nlgmetrics.fflm sends to the engine, after dedupe, with the engine's prefix-sharing rule (a
    prefix of >= 2 tokens used by >= 2 distinct queries is read once), head on scored rows only.
    """
    from nlgmetrics.fflm import _build_queries, _plan  # internal: counting only
    from nlgmetrics.engine import CausalQuery

    oracle = _oracle()
    naive_tokens = 0
    for document, summary in zip(documents, summaries):
        for args in ((summary, document, "TL;DR "), (summary,), (summary, summary + " " + document, "TL;DR "),
                     (document, summary, "TL;DR ", True), (document, None, None, True)):
            ids, _ = oracle._prepare(tokenizer, bos, limit, *args)
            naive_tokens += len(ids)
    cache: dict = {}
    sep = tuple(tokenizer.convert_tokens_to_ids(tokenizer.tokenize("TL;DR ")))
    plans = [_plan(d, s, tokenizer, cache, limit, limit - 1 - len(sep)) for d, s in zip(documents, summaries)]
    queries, _ = _build_queries(plans, bos, sep, limit, CausalQuery)
    by_prefix: dict = {}
    for q in set(queries):
        by_prefix.setdefault(q.prefix_ids, []).append(q)
    body = head = 0
    for prefix, group in by_prefix.items():
        targets = sum(len(q.target_ids) for q in group)
        head += targets
        if len(group) >= 2 and len(prefix) >= 2:
            body += len(prefix) - 1 + targets
        else:
            body += sum(len(prefix) + len(q.target_ids) - 1 for q in group)
    return dict(naive_body_tokens=naive_tokens, naive_head_rows=naive_tokens, ours_body_tokens=body, ours_head_rows=head)


def run(
    *,
    data: str | os.PathLike = DEFAULT_DATA,
    n_docs: int = 1,
    n_systems: int = 25,
    architecture: str = "llama",
    size: str = "small",
    max_length: int = 2048,
    token_budget: int = 4096,
    threads: int | None = None,
    naive: bool = True,
) -> list[dict[str, Any]]:
    """Time both implementations on the same data and model; one row per implementation."""
    import numpy as np
    import torch

    from nlgmetrics.engine import load_lm
    from nlgmetrics.fflm import fflm
    from nlgmetrics.testing import build_random_model

    if threads:
        torch.set_num_threads(threads)
    documents, summaries = load_summeval_shaped(data, n_docs, n_systems)
    model_dir = build_random_model(architecture, Path(tempfile.mkdtemp()) / f"{architecture}-{size}", size=size)
    lm = load_lm(model_dir, kind="causal", dtype="float32")
    limit = min(max_length, lm.max_length)
    bos = lm.tokenizer.bos_token_id
    # Warm up both paths (allocator, kernels) on one short example; not timed.
    fflm(documents[:1], ["warm up"], model=lm, max_length=64, progress=False)
    oracle = _oracle()
    oracle.naive_fflm(lm.model, lm.tokenizer, documents[:1], ["warm up"], bos=bos, max_len=64)

    common = dict(
        examples=len(documents),
        documents=len(set(documents)),
        distinct_pairs=len(set(zip(documents, summaries))),
        model=f"random {architecture}-{size} ({sum(p.numel() for p in lm.model.parameters()) / 1e6:.1f}M params)",
        max_length=limit,
        threads=torch.get_num_threads(),
        vocab=len(lm.tokenizer),
    )
    common.update(work_counts(documents, summaries, lm.tokenizer, bos, limit))
    start = time.perf_counter()
    ours = fflm(documents, summaries, model=lm, max_length=max_length, token_budget=token_budget, progress=False)
    ours_seconds = time.perf_counter() - start
    rows = [dict(impl="nlgmetrics.fflm", seconds=ours_seconds, **common)]
    if naive:
        start = time.perf_counter()
        _, scores = oracle.naive_fflm(lm.model, lm.tokenizer, documents, summaries, bos=bos, max_len=limit)
        naive_seconds = time.perf_counter() - start
        theirs = np.array([s[0] for s in scores])
        diff = float(np.max(np.abs(np.array(ours.fflm) - theirs)))
        component_diff = max(
            float(np.max(np.abs(np.array(getattr(ours, name)) - np.array([s[k] for s in scores]))))
            for k, name in ((1, "delta_prior_summary"), (2, "delta_prior_document"), (3, "delta_cond_summary"))
        )
        rows[0].update(fflm_max_abs_diff=diff, component_max_abs_diff=component_diff,
                       speedup=naive_seconds / ours_seconds)
        rows.append(dict(impl="naive loop (authors', 5 passes/example, batch 1)", seconds=naive_seconds, **common))
    return rows


def _machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} logical CPUs visible"


def _versions() -> str:
    import torch
    import transformers

    import nlgmetrics

    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return (f"python {platform.python_version()}, torch {torch.__version__}, transformers {transformers.__version__}, "
            f"nlgmetrics {nlgmetrics.__version__} (git {commit})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--docs", type=int, default=1, help="documents (first ones in file order)")
    parser.add_argument("--systems", type=int, default=25, help="summaries per document")
    parser.add_argument("--architecture", default="llama", choices=["llama", "gpt2"])
    parser.add_argument("--size", default="small", choices=["tiny", "small", "base", "1b"])
    parser.add_argument("--max-length", type=int, default=2048)
    parser.add_argument("--token-budget", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    rows = run(data=args.data, n_docs=args.docs, n_systems=args.systems, architecture=args.architecture,
               size=args.size, max_length=args.max_length, token_budget=args.token_budget, threads=args.threads)
    print(json.dumps(rows, indent=2))
    command = "python benchmarks/speed_fflm.py " + " ".join(argv if argv is not None else sys.argv[1:])
    ours = rows[0]
    lines = [
        "# FFLM speed: nlgmetrics vs the authors' per-example loop",
        "",
        f"- command: `{command.strip()}`",
        f"- machine: {_machine()}; torch threads: {ours['threads']} (machine shared with other jobs)",
        f"- versions: {_versions()}",
        f"- workload: RealSumm, first {args.docs} document(s) x {args.systems} system summaries = "
        f"{ours['examples']} examples ({ours['distinct_pairs']} distinct pairs), max_length {ours['max_length']}",
        f"- model: {ours['model']}, float32, CPU",
        "",
        "| implementation | seconds | examples/s |",
        "|---|---:|---:|",
    ]
    for row in rows:
        lines.append(f"| {row['impl']} | {row['seconds']:.1f} | {row['examples'] / row['seconds']:.3f} |")
    if "speedup" in ours:
        lines += [
            "",
            f"**Speed-up: {ours['speedup']:.2f}x.** Same numbers: max |FFLM diff| = {ours['fflm_max_abs_diff']:.2e}, "
            f"max |component diff| = {ours['component_max_abs_diff']:.2e}.",
        ]
    lines += [
        "",
        "## Work, independent of the machine",
        "",
        "| | naive loop | nlgmetrics | ratio |",
        "|---|---:|---:|---:|",
        f"| tokens read by the model body | {ours['naive_body_tokens']:,} | {ours['ours_body_tokens']:,} | "
        f"{ours['naive_body_tokens'] / ours['ours_body_tokens']:.2f}x |",
        f"| rows through the LM head (vocab {ours['vocab']:,}) | {ours['naive_head_rows']:,} | {ours['ours_head_rows']:,} | "
        f"{ours['naive_head_rows'] / ours['ours_head_rows']:.2f}x |",
        "",
        "## Notes",
        "",
        "- Shared work: `p(X | BOS)` once per distinct document, the `(BOS, X, \"TL;DR \")` prefix of s2s once per",
        "  document (KV cache, summaries batched on it), `p(Y | BOS)` once per distinct summary, identical pairs once,",
        "  LM head (and the float32 vocabulary reduction) only at scored rows, length-sorted batches.",
        "- What cannot be shared: `prefix = p(Y | BOS, Y + \" \" + X, sep)` and `s2s_doc = p(X | BOS, Y, sep)` put",
        "  the summary *before* the document, so every summary needs its own pass over the document. Per",
        "  example the naive loop reads about 4 document lengths, we read about 2 (+ 1/n for the shared ones): on",
        "  compute-bound hardware (this CPU) the speed-up lies between the body ratio and the LM-head ratio of",
        "  the work table (the head dominates this small-hidden, large-vocabulary shape; the body dominates",
        "  at realistic model sizes, so expect about the body ratio there). Larger ratios come from batching",
        "  where batch-1 passes leave the hardware idle (GPU); none was available for this run.",
        "- Timings on a machine shared with other jobs are noisy; the work table above is exact.",
        "",
    ]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines))


if __name__ == "__main__":
    main()
