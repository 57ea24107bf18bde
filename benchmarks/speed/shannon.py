"""Speed of nlgmetrics' Shannon score vs the reference implementation (PyPI blanc 0.3.4 ``Shannon.go``).

REALSumm-shaped work (several system summaries per CNN/DM document), the same random GPT-2-shaped
weights on both sides (the cost of a forward pass does not depend on the weights' values), the same
sentence splitter, in one process, one after the other, on the same device in the same dtype
(ours: ``shannon_score``'s own ``device``/``dtype`` through ``load_lm``; blanc: its ``device``
option, with its model cast to ``dtype`` -- blanc's code is unchanged, so its softmax runs in that
dtype). Both sides get the same torch threads. Model building and loading are outside the timings.
One untimed warm-up call per side comes first (ours: the first pair; blanc: the first sentence of
the first document with its summary); on CUDA every timer read follows ``torch.cuda.synchronize()``
and each side's peak GPU memory is recorded (it includes the weights of both models, resident
together; ``gpu_mem_resident_mib`` says how much that is).

The numbers are compared token by token (every token but the first of each sentence, which blanc
predicts without the prompt -- see metrics/shannon_score). In float32 the differences are the
parity check (tests/parity/test_shannon_parity.py asserts them to 1e-4; here they are reported and
``fp32_within_1e-4`` says whether they hold); in bfloat16 both sides round differently (blanc:
softmax of bf16 logits one token at a time; ours: float32 log-softmax of batched bf16 logits), so
the differences are reported only.

Usage::

    python -m benchmarks.speed.shannon --doc-ids 44 --summaries 25 --threads 1   # writes results/speed_shannon/
    python -m benchmarks.speed.shannon --device cuda --size base --dtype bfloat16 --out /tmp/shannon.md

or from Python: ``rows = run(n_docs=1, summaries_per_doc=2, size="tiny")``.

CUDA defaults (``device="cuda"``; share: ~60 s per dtype for both sides on an H200, model build
and load included): 1 document x 3 summaries, REALSumm doc_id 44 (``CUDA_DOC_IDS``: the shortest
documents, 44 first), blanc's timed work capped at ``blanc_budget_s=40`` s (pairs not started
within the cap are left out of both sides' timings, and the rows say so), ours re-timed 3 times
(median), plus one extra row: ours alone on all 25 summaries of the same document (no ratio).
How they were sized:

* work: blanc makes one model call per document token per pass, 3 passes per pair, batch 1, KV
  cache. doc_id 44 is the shortest REALSumm document (227 words; the mean is 740): 288 document
  tokens with the SmolLM2 BPE of the random models, so 3 pairs are 3 x 3 x 288 = 2,592 calls.
* latency: gpt2 "base" (12 layers, 768 wide, 124M params) for one token with a cache is launch
  bound on an H200: ~200 kernels + the harness's cache conversion + blanc's softmax, ``.item()``
  and two tokenizer decodes per token: ~3-6 ms per call in either dtype (on this 2-core CPU the
  tiny 2-layer model already takes ~6-7 ms per call, nearly all Python) => ~8-16 s for blanc;
  ours (a few batched teacher-forced passes) well under a second per call, the 25-summary row
  (3 repeats) a few seconds.
* fixed costs: random gpt2-base init + save 7 s measured on this shared 2-core CPU (written once
  per machine under $TMPDIR/nlgmetrics-speed-models or $NLGMETRICS_SPEED_MODELS and reused by the
  second dtype), two loads + copies to the GPU ~3-5 s (load_lm 2.5 s here), warm-ups ~1 s.
* total ~20-30 s per dtype; the 40 s cap on blanc bounds it at ~50 s even if a call costs 3x the
  estimate. The CPU defaults (3 documents x 5 summaries, no cap, no extra row) are unchanged.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
from typing import Any

import numpy as np

from benchmarks import harness
from benchmarks.harness import timed
from benchmarks.random_models import cached_random_model
from benchmarks.realsumm_slices import realsumm_by_document, realsumm_pairs

DEFAULT_DATA = harness.realsumm_file()
RESULTS = harness.result_path("speed_shannon")

# The shortest REALSumm documents (by words), shortest first: the CUDA default picks from here.
CUDA_DOC_IDS = (44, 8, 62)
CUDA_DEFAULTS = {"n_docs": 1, "summaries_per_doc": 3, "blanc_budget_s": 40.0, "ours_repeats": 3,
                 "ours_all_summaries": True}
CPU_DEFAULTS = {"n_docs": 3, "summaries_per_doc": 5, "blanc_budget_s": None, "ours_repeats": 1,
                "ours_all_summaries": False}
TOL = 1e-4   # the parity tests' tolerance (tests/parity/test_shannon_parity.py)


def _blanc_harness():
    """The parity harness of tests/parity/test_shannon_parity.py (blanc on our weights), from
    tests/support/oracles/shannon_reference.py, which imports without pytest."""
    from tests.support.oracles.shannon_reference import BlancShannonHarness

    return BlancShannonHarness


def _max_diffs(detail, calls, max_length: int) -> dict[str, float]:
    """Largest per-token |ours - blanc| per pass (first token of each sentence excluded for
    help/full; in the full pass, tokens beyond the context excluded: blanc slides a stale cache
    there), and whether the non-first-token S cells agree."""
    diffs = {"base": 0.0, "help": 0.0, "full": 0.0, "overflow_tokens": 0}
    s_same = True
    start = 0
    for j, n in enumerate(detail.sentence_lengths):
        base_call, help_call, full_call = calls[3 * j: 3 * j + 3]
        span = slice(start, start + n)
        fit = max_length - n          # full pass: <start> + sentence + sentence[:i] fits for i < fit
        diffs["overflow_tokens"] += max(0, n - fit)
        for name, call, first in (("base", base_call, 0), ("help", help_call, 1), ("full", full_call, 1)):
            stop = min(n, fit) if name == "full" else n
            ours = getattr(detail, f"{name}_logprobs")[span][first:stop]
            theirs = np.array(call[2][first:stop])
            diffs[name] = max(diffs[name], float(np.max(np.abs(ours - theirs), initial=0.0)))
        s_same &= bool(np.array_equal(detail.base_correct[span], np.array(base_call[3], bool)))
        s_same &= bool(np.array_equal(detail.help_correct[span][1:], np.array(help_call[3][1:], bool)))
        start += n
    return {**diffs, "s_same": s_same}


class _Clock:
    """One side's timer (benchmarks/device_clock.py) that also keeps its peak GPU memory (absolute,
    weights included) over all of its timed calls."""

    def __init__(self, device: str):
        self.device = device
        self.peak_bytes: int | None = None

    def __call__(self, fn, *args, **kwargs) -> tuple[Any, float]:
        timing = timed(fn, self.device, *args, **kwargs)
        if timing.peak_bytes is not None:
            self.peak_bytes = max(self.peak_bytes or 0, timing.peak_bytes)
        return timing.result, timing.seconds

    @property
    def peak_mib(self) -> float | None:
        return None if self.peak_bytes is None else round(self.peak_bytes / 2**20, 1)


def run(
    n_docs: int | None = None,
    summaries_per_doc: int | None = None,
    size: str = "small",
    threads: int = 1,
    data_path: str | os.PathLike = DEFAULT_DATA,
    model_dir: str | os.PathLike | None = None,
    doc_ids: list[int] | None = None,
    interleave: int = 5,
    device: str = "cpu",
    dtype: str = "float32",
    blanc_budget_s: float | None = None,
    ours_repeats: int | None = None,
    ours_all_summaries: bool | None = None,
) -> list[dict]:
    """Time both implementations on the same pairs; one row per side plus a comparison row (and,
    with ``ours_all_summaries``, a last row: ours alone on all 25 summaries of the same documents).

    ``None`` knobs take the device's defaults (``CPU_DEFAULTS`` / ``CUDA_DEFAULTS``; on CUDA without
    ``doc_ids`` the documents are the first ``n_docs`` of ``CUDA_DOC_IDS``). ``blanc_budget_s``
    caps blanc's timed seconds: a pair is not started once blanc's time plus its last pair's time
    would pass the cap, and ours is then re-timed on exactly the pairs blanc did. CPU timings are
    interleaved (see below) so that load changes on a shared machine hit both sides.
    """
    import torch

    from nlgmetrics.engine import load_lm
    from nlgmetrics.engine.loading import resolve_dtype
    from nlgmetrics.core.sentences import split_sentences
    from nlgmetrics.shannon import shannon_score

    cuda = str(device).startswith("cuda")
    defaults = CUDA_DEFAULTS if cuda else CPU_DEFAULTS
    n_docs = defaults["n_docs"] if n_docs is None else n_docs
    summaries_per_doc = defaults["summaries_per_doc"] if summaries_per_doc is None else summaries_per_doc
    blanc_budget_s = defaults["blanc_budget_s"] if blanc_budget_s is None else blanc_budget_s
    ours_repeats = defaults["ours_repeats"] if ours_repeats is None else ours_repeats
    ours_all_summaries = defaults["ours_all_summaries"] if ours_all_summaries is None else ours_all_summaries
    if cuda and not doc_ids and n_docs <= len(CUDA_DOC_IDS):
        doc_ids = list(CUDA_DOC_IDS[:n_docs])
    torch_dtype = resolve_dtype(dtype)
    dtype = str(torch_dtype).removeprefix("torch.")

    if threads:
        torch.set_num_threads(threads)
    by_doc = realsumm_by_document(data_path)
    selected = list(doc_ids) if doc_ids else sorted(by_doc)[:n_docs]
    docs, summs = realsumm_pairs(data_path, n_docs, summaries_per_doc, selected)
    if model_dir is None:
        model_dir, _ = cached_random_model("gpt2", size)
    # Load outside the timing, and hand the loaded model to shannon_score (no reload, same weights).
    lm = load_lm(str(model_dir), "causal", device=device, dtype=torch_dtype)
    max_length = lm.max_length
    harness = _blanc_harness()(model_dir, device=device, dtype=torch_dtype)
    config = lm.model.config
    shape = {"n_layer": config.n_layer, "n_embd": config.n_embd, "n_head": config.n_head,
             "n_positions": config.n_positions, "vocab": config.vocab_size,
             "params_M": round(sum(p.numel() for p in lm.model.parameters()) / 1e6, 1)}

    def ours_call(doc_docs, doc_summs, explain=False):
        # shannon_score takes the summaries first, the documents second.
        return shannon_score(doc_summs, doc_docs, model=lm, progress=False, explain=explain)

    ours_clock, blanc_clock = _Clock(str(device)), _Clock(str(device))
    # Untimed warm-ups (CUDA context, cuBLAS handles, allocator, first-call paths): ours on the
    # first pair; blanc on the first sentence of the first document with its summary.
    ours_call(docs[:1], summs[:1])
    harness.go(split_sentences(docs[0])[0], summs[0])
    resident_mib = round(torch.cuda.memory_allocated(device) / 2**20, 1) if cuda else None

    # Interleaved timing: the machine is shared and its load drifts over minutes, so blanc's pairs
    # are timed one by one and ours (on the whole document's pairs) is re-timed after every
    # `interleave` blanc pairs; ours counts with its median per document.
    blanc_s, ours_s, ours_all = 0.0, 0.0, []
    timed_pairs, skipped_pairs, num_doc_tokens, ll_base, diffs = 0, 0, [], [], []
    last_pair_s = 0.0
    for document in dict.fromkeys(docs):
        members = [i for i, d in enumerate(docs) if d == document]
        doc_docs, doc_summs = [docs[i] for i in members], [summs[i] for i in members]
        ours_times: list[float] = []
        for _ in range(max(1, ours_repeats)):
            ours_times.append(ours_clock(ours_call, doc_docs, doc_summs)[1])
        # Untimed: the per-token numbers compared with blanc's (explain=True), not the timed call's work.
        ours = ours_call(doc_docs, doc_summs, explain=True)
        done = 0
        for k, (doc, summ) in enumerate(zip(doc_docs, doc_summs)):
            if blanc_budget_s is not None and timed_pairs > 0 and blanc_s + last_pair_s > blanc_budget_s:
                break
            (output, calls), last_pair_s = blanc_clock(harness.go, doc, summ)
            blanc_s += last_pair_s
            done += 1
            timed_pairs += 1
            diffs.append(_max_diffs(ours.token_scores[k], calls, max_length))
            assert ours.num_doc_tokens[k] == output[4] and ours.num_summary_tokens[k] == output[5]
            ll_base.append(abs(ours.scores["ll_base"][k] - output[0]))
            num_doc_tokens.append(ours.num_doc_tokens[k])
            if (k + 1) % interleave == 0:
                ours_times.append(ours_clock(ours_call, doc_docs, doc_summs)[1])
        if done < len(doc_docs):
            # blanc stopped at the cap: ours is re-timed on exactly the pairs blanc did.
            skipped_pairs += len(doc_docs) - done
            ours_times = [] if done == 0 else [
                ours_clock(ours_call, doc_docs[:done], doc_summs[:done])[1]
                for _ in range(max(1, ours_repeats))
            ]
        if ours_times:
            ours_s += float(np.median(ours_times))
            ours_all += ours_times

    pairs = timed_pairs
    tokens = int(sum(num_doc_tokens))
    common = {
        "device": str(device), "dtype": dtype,
        "gpu": torch.cuda.get_device_name(torch.device(device)) if cuda else None,
        "documents": len(set(docs)), "doc_ids": selected,
        "pairs": pairs, "doc_tokens_scored": tokens,
        "model": f"random gpt2-{size}", "model_shape": shape, "threads": threads,
    }
    if skipped_pairs:
        common["pairs_left_out_at_blanc_budget"] = skipped_pairs
    fp32 = torch_dtype == torch.float32
    worst = {
        "max_abs_diff_ll_base_total": max(ll_base),
        "max_abs_diff_token_base": max(d["base"] for d in diffs),
        "max_abs_diff_token_help_nonfirst": max(d["help"] for d in diffs),
        "max_abs_diff_token_full_nonfirst": max(d["full"] for d in diffs),
    }
    token_worst = max(v for k, v in worst.items() if k.startswith("max_abs_diff_token"))
    rows = [
        {**common, "implementation": "blanc 0.3.4 Shannon.go", "seconds": round(blanc_s, 2),
         "pairs_per_s": round(pairs / blanc_s, 3),
         "blanc_budget_s": blanc_budget_s,
         "peak_gpu_mem_mib": blanc_clock.peak_mib, "gpu_mem_resident_mib": resident_mib},
        {**common, "implementation": "nlgmetrics shannon_score", "seconds": round(ours_s, 3),
         "pairs_per_s": round(pairs / ours_s, 3),
         "ours_timings_s": [round(t, 3) for t in ours_all],
         "peak_gpu_mem_mib": ours_clock.peak_mib, "gpu_mem_resident_mib": resident_mib},
        {**common, "implementation": "ratio", "speedup": round(blanc_s / ours_s, 1),
         **worst,
         "numbers_check": ("float32: parity tolerance 1e-4 per token" if fp32
                           else f"{dtype}: report only (the sides round differently)"),
         "fp32_within_1e-4": (token_worst <= TOL) if fp32 else None,
         "s_cells_equal_nonfirst": all(d["s_same"] for d in diffs),
         "full_pass_overflow_tokens_excluded": sum(d["overflow_tokens"] for d in diffs)},
    ]
    if ours_all_summaries:
        rows.append(_ours_all_summaries_row(by_doc, selected, ours_call, _Clock(str(device)), common,
                                            max(1, ours_repeats)))
    del harness   # blanc's model (ours stays in load_lm's cache, as any caller's would)
    if cuda:
        gc.collect()   # the harness holds itself through its recording closure
        torch.cuda.empty_cache()
    return rows


def _ours_all_summaries_row(by_doc, selected, ours_call, clock, common, repeats) -> dict:
    """Ours alone on every summary (REALSumm: 25) of the selected documents, one call per document:
    the amortised case the library is built for (blanc is not run on these: no ratio)."""
    seconds, pairs, tokens = 0.0, 0, 0
    for doc_id in selected:
        rows = by_doc[doc_id]
        doc_docs, doc_summs = [r["document"] for r in rows], [r["prediction"] for r in rows]
        times, result = [], None
        for _ in range(repeats):
            result, t = clock(ours_call, doc_docs, doc_summs)
            times.append(t)
        seconds += float(np.median(times))
        pairs += len(rows)
        tokens += int(sum(result.num_doc_tokens))
    shared = {k: v for k, v in common.items() if k not in ("pairs", "doc_tokens_scored",
                                                               "pairs_left_out_at_blanc_budget")}
    return {**shared, "implementation": "nlgmetrics shannon_score, ALL summaries of the document(s) (ours only, no ratio)",
            "pairs": pairs, "doc_tokens_scored": tokens, "seconds": round(seconds, 3),
            "pairs_per_s": round(pairs / seconds, 3), "repeats": repeats,
            "peak_gpu_mem_mib": clock.peak_mib}


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2e}"


def report(rows: list[dict], command: str, threads: int, summaries_per_doc: int | None) -> str:
    """The markdown report of one run (what ``main`` writes)."""
    blanc, ours, ratio = rows[0], rows[1], rows[2]
    cuda = blanc["device"].startswith("cuda")
    per_doc = summaries_per_doc if summaries_per_doc is not None else "the default number of"
    mem = lambda row: f" {row['peak_gpu_mem_mib']} |" if cuda else ""  # noqa: E731
    lines = harness.report_head("Shannon score: nlgmetrics vs blanc 0.3.4 (`Shannon.go`)",
                                f"Torch threads: {threads} (the machine may be shared with other jobs).",
                                command.strip(), packages=("blanc", "numpy"))
    lines += [
        f"- device: {blanc['device']}" + (f" ({blanc['gpu']})" if cuda else "") + f", dtype: {blanc['dtype']} (both sides)",
        f"- data: REALSumm doc_id {','.join(map(str, blanc['doc_ids']))} x {per_doc} system summaries "
        f"({blanc['pairs']} pairs timed, {blanc['doc_tokens_scored']} document tokens scored per pass"
        + (f"; {blanc['pairs_left_out_at_blanc_budget']} pair(s) left out of both sides at blanc's "
           f"{blanc['blanc_budget_s']} s cap" if blanc.get("pairs_left_out_at_blanc_budget") else "")
        + ")",
        f"- model: random GPT-2-shaped weights (`build_random_model('gpt2', size=...)`: "
        f"{json.dumps(blanc['model_shape'])}), the same weights for both; model loading not timed",
        "",
        "| implementation | pairs | seconds | pairs/s |" + (" peak GPU memory (MiB) |" if cuda else ""),
        "|---|---:|---:|---:|" + ("---:|" if cuda else ""),
        f"| {blanc['implementation']} | {blanc['pairs']} | {blanc['seconds']} | {blanc['pairs_per_s']} |" + mem(blanc),
        f"| {ours['implementation']} | {ours['pairs']} | {ours['seconds']} | {ours['pairs_per_s']} |" + mem(ours),
    ]
    if len(rows) > 3:
        extra = rows[3]
        lines.append(f"| *{extra['implementation']}* | {extra['pairs']} | {extra['seconds']} | "
                     f"{extra['pairs_per_s']} |" + mem(extra))
    lines += [
        "",
        "One untimed warm-up call per side first"
        + ("; `torch.cuda.synchronize()` before every timer read; peak memory includes both models' "
           f"weights, resident together ({blanc['gpu_mem_resident_mib']} MiB)" if cuda else "")
        + ". Timing is interleaved (for a shared machine whose load drifts): blanc's pairs are timed "
        "one by one, and ours (all pairs of a document in one call) is re-timed after every 5 blanc "
        "pairs; ours counts with its median per document "
        f"(all its timings, s: {ours['ours_timings_s']}).",
        "",
        f"**Speed-up: {ratio['speedup']}x** (on the {blanc['pairs']} pairs both sides ran"
        + ("; the all-summaries row is ours alone, no ratio)." if len(rows) > 3 else ")."),
        "",
        "Same numbers, compared per token. Excluded: the first token of each sentence in the help "
        "and full passes (blanc predicts it without the prompt; we follow the paper -- a "
        f"documented difference, see metrics/shannon_score/README.md). {ratio['numbers_check']}:",
        "",
        f"- max |diff| ll_base total: {_fmt(ratio['max_abs_diff_ll_base_total'])}",
        f"- max |diff| per token: base {_fmt(ratio['max_abs_diff_token_base'])}, "
        f"help {_fmt(ratio['max_abs_diff_token_help_nonfirst'])}, "
        f"full {_fmt(ratio['max_abs_diff_token_full_nonfirst'])}"
        + (f" (within 1e-4: {ratio['fp32_within_1e-4']})" if ratio["fp32_within_1e-4"] is not None else ""),
        f"- S cells (argmax hits) equal on those tokens: {ratio['s_cells_equal_nonfirst']}",
        f"- full-pass tokens beyond the context (excluded above): {ratio['full_pass_overflow_tokens_excluded']}",
        "",
        "Where the speed comes from: one teacher-forced pass per (prompt, sentence) instead of one "
        "model call per token; base and full passes run once per document (shared by its "
        "summaries); the `<start> + summary` prefix is computed once per summary "
        "and its KV cache reused for every sentence; batches planned under a bound on padded vs real "
        "positions; the LM head only on scored positions.",
        "",
        "```json",
        json.dumps(rows, indent=1),
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__, out=RESULTS)
    parser.add_argument("--docs", type=int, default=None,
                        help="documents (default: 1; on CUDA the run() default, 1)")
    parser.add_argument("--summaries", type=int, default=None,
                        help="summaries per document (REALSumm: 25; default 25 on CPU, 3 on CUDA)")
    parser.add_argument("--doc-ids", type=int, nargs="*", default=None,
                        help="REALSumm doc_id values to use instead of the first --docs documents "
                        f"(CUDA default: the first --docs of {list(CUDA_DOC_IDS)})")
    parser.add_argument("--size", default="small", choices=["tiny", "small", "base"])
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads for both sides (on a loaded shared machine, more threads "
                        "than free cores slow both down by an order of magnitude)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (both sides)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                        help="both sides' model dtype (bfloat16: differences reported, not checked)")
    parser.add_argument("--blanc-budget-s", type=float, default=None,
                        help="cap on blanc's timed seconds (default: none on CPU, 40 on CUDA)")
    parser.add_argument("--ours-repeats", type=int, default=None,
                        help="timed calls of ours per document, median kept (default: 1 on CPU, 3 on CUDA)")
    parser.add_argument("--all-summaries", action=argparse.BooleanOptionalAction, default=None,
                        help="extra row: ours alone on all summaries of the document(s) (default: on CUDA only)")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    args = parser.parse_args(argv)
    cuda = args.device.startswith("cuda")
    docs = args.docs if args.docs is not None or cuda else 1
    summaries = args.summaries if args.summaries is not None or cuda else 25
    rows = run(docs, summaries, args.size, args.threads, args.data, doc_ids=args.doc_ids,
               device=args.device, dtype=args.dtype, blanc_budget_s=args.blanc_budget_s,
               ours_repeats=args.ours_repeats, ours_all_summaries=args.all_summaries)
    command = harness.command_line("benchmarks.speed.shannon", argv)
    per_doc = summaries if summaries is not None else CUDA_DEFAULTS["summaries_per_doc"]
    text = report(rows, command, args.threads, per_doc)
    harness.write_report(args.out, text)  # the rows are in the report's json block
    print(text)


if __name__ == "__main__":
    main()
