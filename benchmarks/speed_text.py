"""Speed of ROUGE, BLEU, chrF and TER side by side with rouge-score and sacrebleu, with identical numbers.

Data (../shared/data, see its README; public origins below):

- WebNLG 2020 English: every primary submission (16 systems x 1,779 items, ``submissions_en.jsonl``)
  against all references of each item (1-5, ``test_en.jsonl``). Origin: github.com/WebNLG/challenge-2020.
- REALSumm: 25 systems x 100 CNN/DM documents (``realsumm.jsonl``), one reference each, sentences on
  separate lines. Origin: github.com/neulab/REALSumm.

Each row scores every system the way a user would: one call per system (rouge-score: one
``score_multi`` per output; sacrebleu: one ``corpus_bleu`` per system, one ``sentence_bleu`` per
output; chrF / chrF++: one ``CHRF.corpus_score`` and one ``sentence_score`` per output, against
one ``chrf`` call giving both; TER likewise), anchor and ours timed back to back in the same process on the same inputs. Our caches
start empty in each row, so the first system pays for tokenizing the references and the others
reuse them (that reuse is part of the design); the "caches cleared before every system" BLEU
rows show the cost without any reuse. Times are
process CPU seconds (``time.process_time``), which a busy shared machine distorts less than wall
time; every number is compared (``max_abs_diff`` over all per-example P/R/F, or all BLEU scores).

Run: ``python benchmarks/speed_text.py [--data-dir DIR] [--limit N] [--sections rouge,bleu,chrf,ter]`` (writes
benchmarks/results/speed_text.md). ``run(data_dir, limit=None)`` returns the rows for
benchmarks/speed.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
RESULTS = Path(__file__).resolve().parent / "results" / "speed_text.md"


def default_data_dir() -> Path:
    return Path(os.environ.get("NLGMETRICS_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_webnlg(data_dir: Path, limit: int | None) -> dict[str, tuple[list[str], list[list[str]]]]:
    """{system: (predictions, references)} over the first ``limit`` test items (all if None)."""
    refs = {row["id"]: row["references"] for row in _jsonl(data_dir / "webnlg2020" / "test_en.jsonl")}
    ids = sorted(refs)[:limit] if limit else sorted(refs)
    outputs: dict[str, dict] = defaultdict(dict)
    for row in _jsonl(data_dir / "webnlg2020" / "submissions_en.jsonl"):
        outputs[row["system"]][row["id"]] = row["prediction"]
    return {system: ([by_id[i] for i in ids], [refs[i] for i in ids]) for system, by_id in sorted(outputs.items())}


def load_realsumm(data_dir: Path, limit: int | None) -> dict[str, tuple[list[str], list[list[str]]]]:
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


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.process_time()
    value = fn()
    return value, time.process_time() - start


#: Timed rounds per row (``--repeats``): sub-second rows vary by tens of percent from one call to
#: the next, and a process's first call of anything pays its warm-up.
REPEATS = 5


def _compare(anchor: Callable[[], Any], ours: Callable[[], Any], reset: Callable[[], Any] | None = None,
             ) -> tuple[Any, Any, list[float], list[float]]:
    """``(anchor's value, ours, anchor's seconds per round, ours')``: one untimed warm-up call of
    each side first (the process's first-call costs: imports, allocator, caches of the libraries
    themselves), then :data:`REPEATS` rounds, anchor first in even rounds and ours first in odd
    ones, so a drift in the machine's load hits both alike. ``reset`` runs before every call, so
    a row meant to start cold (our caches cleared) starts cold in every round."""
    sides = {"anchor": anchor, "ours": ours}
    for fn in sides.values():
        if reset is not None:
            reset()
        fn()
    values: dict[str, Any] = {}
    rounds: dict[str, list[float]] = {side: [] for side in sides}
    for round_ in range(REPEATS):
        for side in (("anchor", "ours") if round_ % 2 == 0 else ("ours", "anchor")):
            if reset is not None:
                reset()
            values[side], seconds = _timed(sides[side])
            rounds[side].append(seconds)
    return values["anchor"], values["ours"], rounds["anchor"], rounds["ours"]


def _rouge_rows(name: str, systems: dict, use_stemmer: bool) -> dict:
    from rouge_score import rouge_scorer

    from nlgmetrics.rouge import clear_cache, rouge_family

    def anchor():
        scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=use_stemmer)
        return {s: [scorer.score_multi(r, p) for p, r in zip(preds, refs)] for s, (preds, refs) in systems.items()}

    def ours():
        return {
            s: rouge_family(preds, refs, rouge_types=ROUGE_TYPES, use_stemmer=use_stemmer, multi_ref="best",
                            n_bootstrap=0)
            for s, (preds, refs) in systems.items()
        }

    # start cold: the first system pays for tokenizing the references
    expected, got, anchor_s, ours_s = _compare(anchor, ours, reset=clear_cache)
    diff = 0.0
    for system, scores in expected.items():
        for rouge_type in ROUGE_TYPES:
            for suffix, k in (("_precision", 0), ("_recall", 1), ("", 2)):
                column = got[system].scores[rouge_type + suffix]
                diff = max(diff, max(abs(e[rouge_type][k] - g) for e, g in zip(scores, column)))
    n = sum(len(p) for p, _ in systems.values())
    stem = "stemmer" if use_stemmer else "no stemmer"
    return _row(f"ROUGE-1/2/L/Lsum ({stem}), {name}, {n} outputs", "rouge-score 0.1.2 score_multi", ours_s, anchor_s, diff)


def _streams(refs: list[list[str]]) -> list[list[str | None]]:
    width = max(len(r) for r in refs)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


def _bleu_corpus_rows(name: str, systems: dict, cold: bool) -> dict:
    import sacrebleu

    from nlgmetrics.bleu import clear_caches, corpus_bleu

    def anchor():
        return {s: sacrebleu.corpus_bleu(preds, _streams(refs)).score for s, (preds, refs) in systems.items()}

    def ours():
        scores = {}
        for s, (preds, refs) in systems.items():
            if cold:
                clear_caches()
            scores[s] = corpus_bleu(preds, _streams(refs)).score
        return scores

    expected, got, anchor_s, ours_s = _compare(anchor, ours, reset=clear_caches)
    diff = max(abs(expected[s] - got[s]) for s in expected)
    cache = "caches cleared before every system" if cold else "reference cache shared by the systems"
    return _row(
        f"corpus BLEU, {name}, {len(systems)} systems ({cache})", "sacrebleu corpus_bleu", ours_s, anchor_s, diff
    )


def _bleu_sentence_rows(name: str, systems: dict) -> dict:
    import sacrebleu

    from nlgmetrics.bleu import bleu, clear_caches

    def anchor():
        return {s: [sacrebleu.sentence_bleu(p, r).score for p, r in zip(preds, refs)] for s, (preds, refs) in systems.items()}

    def ours():
        return {s: bleu(preds, refs).scores["sentence_bleu"] for s, (preds, refs) in systems.items()}

    expected, got, anchor_s, ours_s = _compare(anchor, ours, reset=clear_caches)
    diff = max(abs(a - b) for s in expected for a, b in zip(expected[s], got[s]))
    n = sum(len(p) for p, _ in systems.values())
    return _row(f"sentence BLEU, {name}, {n} outputs", "sacrebleu sentence_bleu", ours_s, anchor_s, diff)


def _chrf_rows(name: str, systems: dict, word_order: int) -> dict:
    """chrF (word_order=0) or chrF++ (2): sacrebleu ``CHRF.corpus_score`` and ``sentence_score``
    per system against ours (one call per system: corpus chrF and every sentence chrF)."""
    from sacrebleu.metrics import CHRF

    from nlgmetrics.chrf import chrf, clear_caches

    def anchor():
        metric = CHRF(word_order=word_order)
        return {s: (metric.corpus_score(preds, _streams(refs)).score,
                    [metric.sentence_score(p, r).score for p, r in zip(preds, refs)])
                for s, (preds, refs) in systems.items()}

    def ours():
        out = {}
        for s, (preds, refs) in systems.items():
            result = chrf(preds, refs, word_order=word_order)
            out[s] = (result.main_score, result.scores["sentence_chrf"])
        return out

    expected, got, anchor_s, ours_s = _compare(anchor, ours, reset=clear_caches)
    diff = max(max(abs(expected[s][0] - got[s][0]), *(abs(a - b) for a, b in zip(expected[s][1], got[s][1])))
               for s in expected)
    n = sum(len(p) for p, _ in systems.values())
    variant = "chrF++" if word_order == 2 else "chrF"
    return _row(f"corpus + sentence {variant}, {name}, {len(systems)} systems, {n} outputs",
                f"sacrebleu CHRF(word_order={word_order}) corpus_score + sentence_score", ours_s, anchor_s, diff)


def _ter_rows(name: str, systems: dict) -> dict:
    """TER: sacrebleu ``TER.corpus_score`` and ``sentence_score`` per system against one ``ter``
    call per system (corpus TER and every sentence TER)."""
    from sacrebleu.metrics import TER

    from nlgmetrics.ter import ter

    def anchor():
        metric = TER()
        return {s: (metric.corpus_score(preds, _streams(refs)).score,
                    [metric.sentence_score(p, r).score for p, r in zip(preds, refs)])
                for s, (preds, refs) in systems.items()}

    def ours():
        out = {}
        for s, (preds, refs) in systems.items():
            result = ter(preds, refs)
            out[s] = (result.main_score, result.scores["sentence_ter"])
        return out

    expected, got, anchor_s, ours_s = _compare(anchor, ours)
    diff = max(max(abs(expected[s][0] - got[s][0]), *(abs(a - b) for a, b in zip(expected[s][1], got[s][1])))
               for s in expected)
    n = sum(len(p) for p, _ in systems.values())
    return _row(f"corpus + sentence TER, {name}, {len(systems)} systems, {n} outputs",
                "sacrebleu TER() corpus_score + sentence_score", ours_s, anchor_s, diff)


def _row(metric: str, anchor: str, ours_s: list[float], anchor_s: list[float], diff: float) -> dict:
    """One table row from each side's seconds per round: medians, their ratio, and the spread."""
    ours, theirs = statistics.median(ours_s), statistics.median(anchor_s)
    return {
        "metric": metric,
        "anchor": anchor,
        "ours_s": round(ours, 3),
        "anchor_s": round(theirs, 3),
        "ratio": round(theirs / ours, 2) if ours > 0 else float("inf"),
        "ours_range": (round(min(ours_s), 3), round(max(ours_s), 3)),
        "anchor_range": (round(min(anchor_s), 3), round(max(anchor_s), 3)),
        "max_abs_diff": diff,
    }


#: The sections of :func:`run` (``main`` runs all but ``ter`` unless ``--sections`` says otherwise).
SECTIONS = ("rouge", "bleu", "chrf", "ter")


def run(data_dir: str | Path | None = None, limit: int | None = None,
        sections: tuple[str, ...] = ("rouge", "bleu")) -> list[dict]:
    """Time ours against the anchors; one row per (metric, dataset, setting).

    ``limit``: first N WebNLG test items and first N REALSumm documents (None: everything).
    ``sections``: any of :data:`SECTIONS` (the default, ROUGE and BLEU, keeps the rows that
    benchmarks/speed.py reads).
    """
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise ValueError(f"Unknown sections {sorted(unknown)}; choose from {list(SECTIONS)}.")
    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    webnlg = load_webnlg(data_dir, limit)
    realsumm = load_realsumm(data_dir, limit)
    rows = []
    if "rouge" in sections:
        for use_stemmer in (False, True):
            rows.append(_rouge_rows("WebNLG 2020", webnlg, use_stemmer))
            rows.append(_rouge_rows("REALSumm", realsumm, use_stemmer))
    if "bleu" in sections:
        for cold in (True, False):
            rows.append(_bleu_corpus_rows("WebNLG 2020", webnlg, cold))
            rows.append(_bleu_corpus_rows("REALSumm", realsumm, cold))
        rows.append(_bleu_sentence_rows("WebNLG 2020", webnlg))
        rows.append(_bleu_sentence_rows("REALSumm", realsumm))
    if "chrf" in sections:
        for word_order in (0, 2):
            rows.append(_chrf_rows("WebNLG 2020", webnlg, word_order))
            rows.append(_chrf_rows("REALSumm", realsumm, word_order))
    if "ter" in sections:
        rows.append(_ter_rows("WebNLG 2020", webnlg))
        rows.append(_ter_rows("REALSumm", realsumm))
    return rows


def _versions() -> str:
    from importlib.metadata import version

    names = ["nlgmetrics", "rouge-score", "sacrebleu", "nltk", "numpy"]
    return ", ".join(f"{n} {version(n)}" for n in names) + f", Python {platform.python_version()}"


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}; load average at start {load:.1f}"


def to_markdown(rows: list[dict], command: str, machine: str, versions: str) -> str:
    lines = [
        "# Text metrics speed: ROUGE, BLEU, chrF and TER vs rouge-score and sacrebleu",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {machine}",
        "",
        f"Versions: {versions}",
        "",
        "Times are process CPU seconds, anchor and ours in one process on the same inputs: one untimed",
        f"warm-up call of each side, then {REPEATS} interleaved rounds; the medians are shown, with each",
        "side's fastest and slowest round. ratio = anchor / ours (medians); max_abs_diff = largest",
        "difference over every per-example precision/recall/F (ROUGE) or every BLEU / chrF / TER score",
        "(0-100 scale).",
        "",
        "| metric | anchor | ours (s) | anchor (s) | ratio | ours min-max (s) | anchor min-max (s) | max abs diff |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['metric']} | {row['anchor']} | {row['ours_s']:.3f} | {row['anchor_s']:.3f} | "
            f"{row['ratio']:.2f}x | {row['ours_range'][0]:.3f}-{row['ours_range'][1]:.3f} | "
            f"{row['anchor_range'][0]:.3f}-{row['anchor_range'][1]:.3f} | {row['max_abs_diff']:.1e} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    global REPEATS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="folder with webnlg2020/ and realsumm/ (../shared/data)")
    parser.add_argument("--limit", type=int, default=None, help="first N WebNLG items / REALSumm documents")
    parser.add_argument("--output", default=str(RESULTS))
    # TER is opt-in: sacrebleu's TER takes ~0.1 s per WebNLG output (hours on the whole data set;
    # use it with --limit, e.g. --sections ter --limit 8).
    parser.add_argument("--sections", default="rouge,bleu,chrf",
                        help=f"comma-separated, any of {','.join(SECTIONS)} (default: rouge,bleu,chrf)")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="timed rounds per row, after one warm-up call")
    args = parser.parse_args(argv)
    REPEATS = args.repeats
    rows = run(args.data_dir, args.limit, tuple(part.strip() for part in args.sections.split(",") if part.strip()))
    command = "python benchmarks/speed_text.py" + " ".join([""] + (argv if argv is not None else sys.argv[1:]))
    text = to_markdown(rows, command, _machine(), _versions())
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
