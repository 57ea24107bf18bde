"""Speed of ROUGE, BLEU, chrF and TER side by side with rouge-score and sacrebleu, with identical numbers.

Data (../shared/data, see its README; public origins below):

- WebNLG 2020 English: every primary submission (16 systems x 1,779 items, ``submissions_en.jsonl``)
  against all references of each item (1-5, ``test_en.jsonl``). Origin: github.com/WebNLG/challenge-2020.
- REALSumm: 25 systems x 100 CNN/DM documents (``realsumm.jsonl``), one reference each, sentences on
  separate lines. Origin: github.com/neulab/REALSumm.

Each row scores every system the way a user would (one call per system; the rows are built in
rouge.py, bleu.py, chrf.py and ter.py), anchor and ours timed back to back in the same process on
the same inputs (:func:`benchmarks.harness.compare`: one untimed warm-up call of each side, then
interleaved rounds, process CPU seconds). Our caches start empty in each row, so the first system
pays for tokenizing the references and the others reuse them (that reuse is part of the design);
the "caches cleared before every system" BLEU rows show the cost without any reuse. Every number
is compared (``max_abs_diff`` over all per-example P/R/F, or all BLEU / chrF / TER scores).

Run: ``python -m benchmarks.speed.text [--data-dir DIR] [--limit N] [--sections rouge,bleu,chrf,ter]``
(writes benchmarks/results/speed_text/speed_text.md). ``run(data_dir, limit=None)`` returns the rows
for ``python -m benchmarks.speed``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from benchmarks import harness

#: {system: (outputs, references of each output)}
Systems = dict[str, tuple[list[str], list[list[str]]]]
RESULTS = harness.result_path("speed_text")
#: The sections of :func:`run` (``main`` runs all but ``ter`` unless ``--sections`` says otherwise).
SECTIONS = ("rouge", "bleu", "chrf", "ter")


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_webnlg(data_dir: Path, limit: int | None) -> Systems:
    """{system: (predictions, references)} over the first ``limit`` test items (all if None)."""
    refs = {row["id"]: row["references"] for row in _jsonl(data_dir / "webnlg2020" / "test_en.jsonl")}
    ids = sorted(refs)[:limit] if limit else sorted(refs)
    outputs: dict[str, dict] = defaultdict(dict)
    for row in _jsonl(data_dir / "webnlg2020" / "submissions_en.jsonl"):
        outputs[row["system"]][row["id"]] = row["prediction"]
    return {system: ([by_id[i] for i in ids], [refs[i] for i in ids]) for system, by_id in sorted(outputs.items())}


def load_realsumm(data_dir: Path, limit: int | None) -> Systems:
    """{system: (summaries, [[reference]])} over the first ``limit`` documents (all if None)."""
    rows = _jsonl(data_dir / "realsumm" / "realsumm.jsonl")
    docs = sorted({row["doc_id"] for row in rows})[:limit] if limit else None
    systems: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for row in rows:
        if docs is None or row["doc_id"] in docs:
            systems[f"{row['system_type']}/{row['system']}"].append((row["doc_id"], row["prediction"], row["reference"]))
    out = {}
    for system, items in sorted(systems.items()):
        items.sort()
        out[system] = ([p for _, p, _ in items], [[r] for _, _, r in items])
    return out


def streams(refs: list[list[str]]) -> list[list[str | None]]:
    """Per-output reference lists as sacrebleu's reference streams (``None`` where an output has fewer).

    >>> streams([["a", "b"], ["c"]])
    [['a', 'c'], ['b', None]]
    """
    width = max(len(r) for r in refs)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


def corpus_and_sentence_diff(expected: dict, got: dict) -> float:
    """Largest difference over every system's (corpus score, sentence scores).

    >>> corpus_and_sentence_diff({"s": (50.0, [1.0, 2.0])}, {"s": (50.0, [1.0, 2.5])})
    0.5
    """
    return max(max(abs(expected[s][0] - got[s][0]), *(abs(a - b) for a, b in zip(expected[s][1], got[s][1])))
               for s in expected)


def corpus_and_sentence_row(label: str, anchor_label: str, systems: Systems, make_anchor, ours_call,
                            sentence_column: str, reset=None, repeats: int = harness.REPEATS) -> dict:
    """One row timing a fresh sacrebleu metric's (``make_anchor()``) ``corpus_score`` plus one
    ``sentence_score`` per output against ``ours_call(preds, refs)`` (one call per system giving both)."""

    def anchor():
        anchor_metric = make_anchor()
        return {s: (anchor_metric.corpus_score(preds, streams(refs)).score,
                    [anchor_metric.sentence_score(p, r).score for p, r in zip(preds, refs)])
                for s, (preds, refs) in systems.items()}

    def ours():
        results = {s: ours_call(preds, refs) for s, (preds, refs) in systems.items()}
        return {s: (result.main_score, result.scores[sentence_column]) for s, result in results.items()}

    sides = harness.compare(anchor, ours, reset=reset, repeats=repeats)
    diff = corpus_and_sentence_diff(sides.anchor.value, sides.ours.value)
    n = sum(len(p) for p, _ in systems.values())
    return row(f"{label}, {len(systems)} systems, {n} outputs", anchor_label, sides, diff)


def row(metric: str, anchor: str, sides: harness.Sides, diff: float) -> dict:
    """One table row from both sides' timed rounds: medians, their ratio, and the spread."""
    ours, theirs = sides.ours.spread, sides.anchor.spread
    return {
        "metric": metric,
        "anchor": anchor,
        "ours_s": round(ours.median, 3),
        "anchor_s": round(theirs.median, 3),
        "ratio": round(theirs.median / ours.median, 2) if ours.median > 0 else float("inf"),
        "ours_range": (round(ours.low, 3), round(ours.high, 3)),
        "anchor_range": (round(theirs.low, 3), round(theirs.high, 3)),
        "max_abs_diff": diff,
    }


def run(data_dir: str | Path | None = None, limit: int | None = None,
        sections: tuple[str, ...] = ("rouge", "bleu"), repeats: int = harness.REPEATS) -> list[dict]:
    """Time ours against the anchors; one row per (metric, dataset, setting).

    ``limit``: first N WebNLG test items and first N REALSumm documents (None: everything).
    ``sections``: any of :data:`SECTIONS` (the default, ROUGE and BLEU, keeps the rows that
    ``python -m benchmarks.speed`` reads). ``repeats``: timed rounds per row after one warm-up call.
    """
    from benchmarks.speed import bleu, chrf, rouge, ter

    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise ValueError(f"Unknown sections {sorted(unknown)}; choose from {list(SECTIONS)}.")
    data_dir = Path(data_dir) if data_dir is not None else harness.data_dir()
    datasets = (("WebNLG 2020", load_webnlg(data_dir, limit)), ("REALSumm", load_realsumm(data_dir, limit)))
    rows = []
    if "rouge" in sections:
        for use_stemmer in (False, True):
            rows += [rouge.rouge_row(name, systems, use_stemmer, repeats) for name, systems in datasets]
    if "bleu" in sections:
        for cold in (True, False):
            rows += [bleu.corpus_row(name, systems, cold, repeats) for name, systems in datasets]
        rows += [bleu.sentence_row(name, systems, repeats) for name, systems in datasets]
    if "chrf" in sections:
        for word_order in (0, 2):
            rows += [chrf.chrf_row(name, systems, word_order, repeats) for name, systems in datasets]
    if "ter" in sections:
        rows += [ter.ter_row(name, systems, repeats) for name, systems in datasets]
    return rows


def to_markdown(rows: list[dict], command: str, repeats: int = harness.REPEATS, load: float | None = None) -> list[str]:
    """The report: title, command, machine, versions, the load average at the start (``load``), one
    line per row."""
    lines = harness.report_head(
        "Text metrics speed: ROUGE, BLEU, chrF and TER vs rouge-score and sacrebleu",
        "Times are process CPU seconds, anchor and ours in one process on the same inputs: one untimed\n"
        f"warm-up call of each side, then {repeats} interleaved rounds; the medians are shown, with each\n"
        "side's fastest and slowest round. ratio = anchor / ours (medians); max_abs_diff = largest\n"
        "difference over every per-example precision/recall/F (ROUGE) or every BLEU / chrF / TER score\n"
        "(0-100 scale).", command, packages=("rouge-score", "sacrebleu", "nltk", "numpy"))
    lines += [
        f"- load average at start: {harness.load_average() if load is None else load:.1f}",
        "",
        "| metric | anchor | ours (s) | anchor (s) | ratio | ours min-max (s) | anchor min-max (s) | max abs diff |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['metric']} | {r['anchor']} | {r['ours_s']:.3f} | {r['anchor_s']:.3f} | "
            f"{r['ratio']:.2f}x | {r['ours_range'][0]:.3f}-{r['ours_range'][1]:.3f} | "
            f"{r['anchor_range'][0]:.3f}-{r['anchor_range'][1]:.3f} | {r['max_abs_diff']:.1e} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__, out=RESULTS, out_flag="--output")
    parser.add_argument("--data-dir", default=None, help="folder with webnlg2020/ and realsumm/ (../shared/data)")
    parser.add_argument("--limit", type=int, default=None, help="first N WebNLG items / REALSumm documents")
    # TER is opt-in: sacrebleu's TER takes ~0.1 s per WebNLG output (hours on the whole data set;
    # use it with --limit, e.g. --sections ter --limit 8).
    parser.add_argument("--sections", default="rouge,bleu,chrf",
                        help=f"comma-separated, any of {','.join(SECTIONS)} (default: rouge,bleu,chrf)")
    parser.add_argument("--repeats", type=int, default=harness.REPEATS, help="timed rounds per row, after one warm-up call")
    args = parser.parse_args(argv)
    started = harness.load_average()
    rows = run(args.data_dir, args.limit, tuple(part.strip() for part in args.sections.split(",") if part.strip()),
               args.repeats)
    command = harness.command_line("benchmarks.speed.text", argv)
    lines = to_markdown(rows, command, args.repeats, started)
    harness.write_report(args.output, lines, {"command": command, "rows": rows})
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
