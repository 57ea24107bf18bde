"""Speed of BLANC-help: nlgmetrics vs the reference implementation (PyPI blanc 0.3.4), side by side.

REALSumm-shaped work (several system summaries per CNN/DM document), the same random BERT-shaped
weights on both sides (the cost of a forward pass does not depend on the weights' values), the same
sentence splitter. blanc runs with each candidate ``inference_batch_size`` and is credited with
its best time. Both must produce the same counts for every pair (random weights make the scores
themselves 0, so the counts, i.e. which and how many tokens were masked, are what is compared).

    python benchmarks/speed_blanc.py --docs 2 --summaries 4        # writes benchmarks/results/speed_blanc.md

Not a timed test: numbers depend on the machine; the markdown records the command, the machine
and the versions.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = Path(os.environ.get("NLGMETRICS_DATA", REPO.parent / "shared" / "data")) / "realsumm" / "realsumm.jsonl"
RESULTS = REPO / "benchmarks" / "results" / "speed_blanc.md"
REALSUMM_URL = "https://github.com/neulab/REALSumm"


def load_realsumm_slice(path: Path, n_docs: int, summaries_per_doc: int) -> tuple[list[str], list[str]]:
    """(documents, summaries) pairs: the first ``n_docs`` documents, ``summaries_per_doc`` systems each."""
    if not Path(path).exists():
        raise FileNotFoundError(
            f"REALSumm not found at {path}; get it from {REALSUMM_URL} (see ../shared/data/README.md) "
            f"and pass --data."
        )
    import datasets

    rows = datasets.load_dataset("json", data_files=str(path), split="train")
    per_doc: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        per_doc.setdefault(row["doc_id"], []).append(row)
    docs, sums = [], []
    for doc_id in sorted(per_doc)[:n_docs]:
        for row in per_doc[doc_id][:summaries_per_doc]:
            docs.append(row["document"])
            sums.append(row["prediction"])
    return docs, sums


def _import_reference():
    sys.path.insert(0, str(REPO / "tests"))
    from blanc_reference import import_blanc

    import_blanc()
    import blanc.blanc as reference

    from nlgmetrics.sentences import split_sentences

    reference.sent_tokenize = split_sentences  # punkt data is not available offline
    return reference


def run(
    n_docs: int = 2,
    summaries_per_doc: int = 4,
    blanc_batch_sizes: tuple[int, ...] = (1, 4, 8),
    size: str = "small",
    data: Path = DEFAULT_DATA,
    model_dir: str | None = None,
    device: str = "cpu",
) -> list[dict[str, Any]]:
    """Time BlancHelp (each batch size) and nlgmetrics.blanc.blanc_help on the same pairs.

    Returns one dict per run: ``impl``, ``batch_size``, ``seconds``, ``pairs``, ``same_counts``.
    """
    import torch

    from nlgmetrics.blanc import blanc_help
    from nlgmetrics.engine import load_lm
    from nlgmetrics.testing import build_random_model

    docs, sums = load_realsumm_slice(Path(data), n_docs, summaries_per_doc)
    if model_dir is None:
        model_dir = str(build_random_model("bert", tempfile.mkdtemp(prefix="speed-blanc-"), size=size))
    reference = _import_reference()

    load_lm(model_dir, kind="masked", device=device)  # load outside the timed region (cached)

    def time_ours() -> tuple[float, Any]:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = blanc_help(docs, sums, model=model_dir, device=device, progress=False)
        return time.perf_counter() - start, result

    # Timed before and after blanc (the machine is shared; load drifts): the slower one counts.
    ours_seconds, ours = time_ours()
    rows: list[dict[str, Any]] = [dict(impl="nlgmetrics.blanc_help (before blanc)",
                                       batch_size="token budget 8192", seconds=ours_seconds,
                                       pairs=len(docs), same_counts=True)]
    for batch_size in blanc_batch_sizes:
        scorer = reference.BlancHelp(model_name=model_dir, measure="relative-counts", device=device,
                                     inference_batch_size=batch_size, show_progress_bar=False)
        start = time.perf_counter()
        with torch.no_grad():
            expected = scorer.eval_pairs(docs, sums)
        seconds = time.perf_counter() - start
        same = [c for _, c in expected] == ours.counts and [float(s) for s, _ in expected] == ours.scores
        rows.append(dict(impl="blanc.BlancHelp", batch_size=batch_size, seconds=seconds,
                         pairs=len(docs), same_counts=same))
        del scorer
    after_seconds, again = time_ours()
    rows.append(dict(impl="nlgmetrics.blanc_help (after blanc)", batch_size="token budget 8192",
                     seconds=after_seconds, pairs=len(docs), same_counts=again.counts == ours.counts))
    masked = sum(sum(sum(r) for r in c) for c in ours.counts)
    for row in rows:
        row["masked_tokens"] = masked
    return rows


def _markdown(rows: list[dict[str, Any]], command: str) -> str:
    import torch
    import transformers

    import nlgmetrics

    try:
        from importlib.metadata import version

        blanc_version = version("blanc")
    except Exception:  # pragma: no cover
        blanc_version = "?"
    ours = max(r["seconds"] for r in rows if r["impl"].startswith("nlgmetrics"))
    best = min(r["seconds"] for r in rows if r["impl"].startswith("blanc"))
    lines = [
        "# BLANC-help speed: nlgmetrics vs blanc 0.3.4",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {platform.platform()}, {os.cpu_count()} logical CPUs visible, "
        f"torch threads {torch.get_num_threads()} (machine shared with other jobs: timings are noisy).",
        f"Versions: nlgmetrics {nlgmetrics.__version__}, blanc {blanc_version}, torch {torch.__version__}, "
        f"transformers {transformers.__version__}, Python {platform.python_version()}.",
        "",
        f"Work: {rows[0]['pairs']} REALSumm (document, system summary) pairs, "
        f"{rows[0]['masked_tokens']} masked tokens; random BERT-shaped weights "
        "(nlgmetrics.testing.build_random_model('bert', size='small'): hidden 256, 4 layers, "
        "BERT uncased vocabulary), fp32, same splitter on both sides.",
        "",
        "| implementation | batch size | seconds | same counts & scores |",
        "|---|---|---|---|",
    ]
    for row in rows:
        lines.append(f"| {row['impl']} | {row['batch_size']} | {row['seconds']:.2f} | "
                     f"{'yes' if row['same_counts'] else 'NO'} |")
    lines += ["", f"**Speed-up vs blanc's best batch size: {best / ours:.1f}x** "
                  f"(blanc best {best:.2f} s; nlgmetrics {ours:.2f} s, the slower of its two runs).", "",
              "Where the time goes: both sides run the same encoder over the same tokens (blanc "
              "with no padding at batch size 1); nlgmetrics applies the LM head (hidden x 30,522 "
              "vocabulary) only at the masked positions (~1 token in 5 of an input: summary tokens "
              "are never masked) instead of at every position, packs length-sorted batches by a "
              "token budget, and runs identical inputs once. With this 4-layer, hidden-256 shape "
              "the head is ~70% of blanc's FLOPs; with bert-base (12 layers, hidden 768) it is only "
              "~22%, so on CPU the expected gain there is ~1.2-1.5x (FLOP estimate, not measured).",
              ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=2)
    parser.add_argument("--summaries", type=int, default=4)
    parser.add_argument("--blanc-batch-sizes", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--size", default="small", choices=["tiny", "small", "base"])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    rows = run(args.docs, args.summaries, tuple(args.blanc_batch_sizes), args.size, args.data,
               device=args.device)
    command = "python benchmarks/speed_blanc.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = _markdown(rows, command.strip())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
