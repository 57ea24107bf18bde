"""Meta-evaluation runner: REALSumm and WebNLG 2020, every available metric, cached, tabled, plotted.

Entry point for ``python benchmarks/meta_eval.py`` and ``nlgmetrics meta-eval``: :func:`main`.

Typical commands (the results committed under ``benchmarks/results/`` name theirs)::

    # full ROUGE/BLEU meta-evaluation on both datasets (minutes on a laptop CPU)
    python benchmarks/meta_eval.py --metrics text --tag text
    # LM metrics with the offline SmolLM2 on the first 10 REALSumm documents
    nice python benchmarks/meta_eval.py --datasets realsumm --metrics text,infolm,shannon,fflm \\
        --max-docs 10 --tag lm10 --infolm-model smollm2-135m --temperatures 0.25,0.5,1,2,4

Per-example scores are cached in ``benchmarks/cache/<dataset>/<family>-<options hash>.jsonl``
(one chunk of documents per line, flushed as it is computed): rerunning, changing only the
correlation options, or resuming after an interruption recomputes nothing already scored.

>>> main(["--help"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import shlex
import sys
import time
import traceback
from collections import defaultdict
from pathlib import Path
from typing import Any

from nlgmetrics.meta.bootstrap import check_resampling
from nlgmetrics.meta.cache import ScoreCache
from nlgmetrics.meta.data import HUMAN_KEYS, LOADERS, Example
from nlgmetrics.meta.metrics import (
    FAMILIES,
    Family,
    MetricUnavailable,
    family_outputs,
    infolm_idf_key,
    resolve_families,
)

SPLITS = {"realsumm": ("abs", "ext", "all"), "webnlg2020": ("all",)}
DEFAULT_BASELINES = {"realsumm": ("rouge2", "rouge-score:rouge2"), "webnlg2020": ("bleu", "sacrebleu:bleu")}


def _log(message: str) -> None:
    # Flushed at once: long background runs are followed through their log file.
    print(message, file=sys.stderr, flush=True)


def _repo_benchmarks_dir() -> Path:
    """``<repo>/benchmarks`` for a source checkout, else ``./benchmarks``."""
    candidate = Path(__file__).resolve().parents[3] / "benchmarks"
    return candidate if candidate.is_dir() else Path.cwd() / "benchmarks"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlgmetrics meta-eval",
        description="Correlate metrics with human judgments on REALSumm (CNN/DM LitePyramid) and WebNLG 2020.",
    )
    parser.add_argument("--datasets", default="realsumm,webnlg2020", help="comma list: realsumm, webnlg2020")
    parser.add_argument("--data-dir", default=None, help="folder with realsumm/ and webnlg2020/ (default $NLGMETRICS_DATA or ../shared/data)")
    parser.add_argument(
        "--metrics",
        default="text",
        help="comma list of families (rouge, bleu, rouge-score, sacrebleu, infolm, shannon, blanc, fflm) or groups text, lm, all",
    )
    parser.add_argument("--max-docs", type=int, default=None, help="keep only the first N documents / WebNLG items (all their systems)")
    parser.add_argument("--baseline", default=None, help="metric to compare against (default rouge2 for REALSumm, bleu for WebNLG)")
    parser.add_argument("--infolm-model", default="smollm2-135m", help="masked or causal LM for InfoLM (paper: bert-base-uncased)")
    parser.add_argument("--infolm-measures", default="fisher_rao_distance,js_divergence,l1_distance",
                        help="comma list of nlgmetrics.information_measures names")
    parser.add_argument("--infolm-temperature", type=float, default=0.25, help="library default 0.25 (torchmetrics')")
    parser.add_argument("--infolm-alpha", type=float, default=None, help="alpha for alpha/AB/Renyi divergences")
    parser.add_argument("--infolm-beta", type=float, default=None, help="beta for beta/AB divergences")
    parser.add_argument("--shannon-model", default="smollm2-135m", help="causal LM (paper: gpt2)")
    parser.add_argument("--fflm-model", default="smollm2-135m", help="causal LM")
    parser.add_argument("--blanc-model", default=None, help="masked LM for BLANC (none offline: skipped unless given)")
    parser.add_argument("--webnlg-human", choices=("raw", "z"), default="raw", help="raw 0-100 means or per-rater z-scores")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (documents)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperatures", default="", help="InfoLM temperature sweep for the Fig. 4 plot, e.g. 0.25,0.5,1,2,4")
    parser.add_argument("--sweep-measure", default="fisher_rao_distance")
    parser.add_argument("--sweep-split", default="ext", help="REALSumm split for the temperature sweep (paper: ext)")
    parser.add_argument("--chunk-docs", type=int, default=2, help="documents per cached chunk for model metrics")
    parser.add_argument("--cache-dir", default=None, help="default benchmarks/cache")
    parser.add_argument("--out-dir", default=None, help="default benchmarks/results")
    parser.add_argument("--tag", default=None, help="suffix of the output files (default: metrics + max-docs)")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--progress", action="store_true", help="progress bars for model metrics")
    return parser


def _options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "infolm_model": args.infolm_model,
        "infolm_measures": [m.strip() for m in args.infolm_measures.split(",") if m.strip()],
        "infolm_temperature": args.infolm_temperature,
        "infolm_alpha": args.infolm_alpha,
        "infolm_beta": args.infolm_beta,
        "shannon_model": args.shannon_model,
        "fflm_model": args.fflm_model,
        "blanc_model": args.blanc_model,
        "progress": args.progress,
    }


def _content_key(example: Example) -> str:
    """Example key + hash of what the metric reads, so that edited data never hits a stale cache."""
    blob = json.dumps([example.prediction, list(example.references), example.source])
    return f"{example.key}#{hashlib.sha1(blob.encode('utf-8')).hexdigest()[:8]}"


def _eligible(family: Family, example: Example) -> bool:
    if family.needs == "references":
        return bool(example.references)
    return bool(example.source.strip())


def compute_family(
    family: Family,
    examples: list[Example],
    options: dict[str, Any],
    cache_root: Path,
    dataset: str,
    chunk_docs: int = 2,
    log=None,
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Scores of ``family`` for every example (nan where it does not apply), through the cache."""
    log = log or _log
    # The key is made of the runner's own option names and values (``--infolm-model`` ...), not of
    # library keyword names: renaming a library keyword does not orphan the caches, and the
    # options hash in each committed result's ``cache_file`` keeps naming its cache.
    cache_options = {"family": family.name, **{k: options[k] for k in family.option_names}}
    cache = ScoreCache(cache_root, dataset, family.name, cache_options)
    cached = cache.load()
    outputs = family_outputs(family, options)
    keys = [_content_key(e) for e in examples]
    todo = [i for i, e in enumerate(examples) if _eligible(family, e) and keys[i] not in cached]
    started = time.perf_counter()
    # Chunks follow documents: a document's outputs are scored together, so the engine reuses
    # the document's (summary-independent) work, and a finished chunk is saved at once.
    by_doc: dict[str, list[int]] = defaultdict(list)
    for i in todo:
        by_doc[examples[i].doc].append(i)
    docs = list(by_doc)
    per_chunk = max(1, chunk_docs) if family.uses_model else max(1, len(docs))
    chunks = [sum((by_doc[d] for d in docs[j : j + per_chunk]), []) for j in range(0, len(docs), per_chunk)]
    for n, chunk in enumerate(chunks, 1):
        scores, signature = family.fn([examples[i] for i in chunk], options)
        cache.append({keys[i]: {o: scores[o][k] for o in outputs} for k, i in enumerate(chunk)}, signature)
        for k, i in enumerate(chunk):
            cached[keys[i]] = {o: scores[o][k] for o in outputs}
        if family.uses_model:
            log(f"  {family.name}: chunk {n}/{len(chunks)} ({len(chunk)} outputs) {time.perf_counter() - started:.0f}s")
    elapsed = time.perf_counter() - started
    if len(cache.signatures) > 1:
        # The cache key holds the runner's options, not the library version: chunks computed by two
        # library versions (or configurations) share a file. Their signatures are all recorded in
        # the results; say so, so that a changed number is not mistaken for a changed metric.
        log(f"  {family.name}: {cache.path.name} holds scores of {len(cache.signatures)} signatures: "
            + " ; ".join(cache.signatures))
    result = {o: [cached.get(keys[i], {}).get(o, math.nan) for i in range(len(examples))] for o in outputs}
    info = {
        "family": family.name,
        "options": cache_options,
        "computed": len(todo),
        "from_cache": sum(1 for i, e in enumerate(examples) if _eligible(family, e)) - len(todo),
        "not_applicable": sum(1 for e in examples if not _eligible(family, e)),
        "seconds": round(elapsed, 1),
        "signatures": cache.signatures,
        "cache_file": str(cache.path),
    }
    return result, info


def _environment() -> dict[str, str]:
    import importlib.metadata as md

    versions = {}
    for pkg in ("nlgmetrics", "torch", "transformers", "datasets", "scipy", "numpy", "rouge-score", "sacrebleu"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = "not installed"
    return {"python": platform.python_version(), "machine": f"{platform.machine()} {os.cpu_count()} CPUs", **versions}


def run_dataset(dataset: str, args: argparse.Namespace, families: list[Family], log=None) -> dict[str, Any]:
    """Score, correlate, write tables and plots for one dataset; returns the JSON-ready record."""
    from nlgmetrics.meta.tables import correlation_tables, to_markdown

    log = log or _log
    loader = LOADERS[dataset]
    kwargs = {"human": args.webnlg_human} if dataset == "webnlg2020" else {}
    examples = loader(args.data_dir, max_docs=args.max_docs, **kwargs)
    log(f"{dataset}: {len(examples)} outputs, {len({e.doc for e in examples})} documents, {len({e.system for e in examples})} systems")
    cache_root = Path(args.cache_dir) if args.cache_dir else _repo_benchmarks_dir() / "cache"
    options = _options(args)
    if any(f.name == "infolm" for f in families):
        # idf from every distinct reference of the whole dataset (see metrics.infolm_idf_table).
        full = examples if args.max_docs is None else loader(args.data_dir, **kwargs)
        texts = sorted({r for e in full for r in e.references})
        options["infolm_idf_texts"] = texts
        options["infolm_idf"] = infolm_idf_key(dataset, texts)
    scores: dict[str, list[float]] = {}
    runs, skipped = [], {}
    for family in families:
        try:
            values, info = compute_family(family, examples, options, cache_root, dataset, args.chunk_docs, log)
        except MetricUnavailable as error:
            skipped[family.name] = str(error)
            log(f"  skip {family.name}: {error}")
            continue
        except Exception as error:  # keep the other metrics' results; say what failed
            skipped[family.name] = f"error: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            log(f"  skip {family.name}: {skipped[family.name]}")
            traceback.print_exc(limit=3)
            continue
        runs.append(info)
        log(f"  {family.name}: {info['computed']} computed, {info['from_cache']} cached, {info['seconds']}s")
        for name, vals in values.items():
            if all(math.isnan(v) for v in vals):
                skipped[name] = "no finite score"
                continue
            scores[name] = vals
    if not scores:
        raise RuntimeError(f"{dataset}: no metric produced scores ({skipped}); see the skip reasons above.")
    baseline = args.baseline or next((b for b in DEFAULT_BASELINES[dataset] if b in scores), None)
    splits = SPLITS[dataset]
    tables = correlation_tables(examples, scores, HUMAN_KEYS[dataset], splits, baseline, n_resamples=args.bootstrap, seed=args.seed)
    tag = args.tag or (args.metrics.replace(",", "+") + (f"_docs{args.max_docs}" if args.max_docs else ""))
    out_dir = Path(args.out_dir) if args.out_dir else _repo_benchmarks_dir() / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{dataset}_{tag}"
    command = "python benchmarks/meta_eval.py " + " ".join(shlex.quote(a) for a in args._argv)
    record = {
        "dataset": dataset,
        "command": command,
        "environment": _environment(),
        "max_docs": args.max_docs,
        "webnlg_human": args.webnlg_human if dataset == "webnlg2020" else None,
        "metric_runs": runs,
        "skipped": skipped,
        "tables": tables,
    }
    plots = []
    if not args.no_plots:
        plots = _plots(dataset, examples, scores, tables, args, families, options, cache_root, out_dir, stem, log)
    record["plots"] = plots
    (out_dir / f"{stem}.json").write_text(json.dumps(record, indent=1, default=_json_default), encoding="utf-8")
    md = [f"# Meta-evaluation: {dataset} ({tag})", "", f"Command: `{command}`", ""]
    md.append("Environment: " + ", ".join(f"{k} {v}" for k, v in record["environment"].items()))
    md.append("")
    for info in runs:
        sig = "; ".join(info["signatures"]) or "n/a"
        md.append(f"- `{info['family']}`: options `{json.dumps({k: v for k, v in info['options'].items() if k != 'family'})}`, signature `{sig}`")
    for name, reason in skipped.items():
        md.append(f"- skipped `{name}`: {reason}")
    md.append("")
    md.append(to_markdown(tables, f"{dataset}: correlation with human judgment"))
    for plot in plots:
        md.append(f"![{Path(plot).stem}]({Path(plot).name})")
    (out_dir / f"{stem}.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    log(f"{dataset}: wrote {out_dir / (stem + '.md')} and .json")
    return record


def _json_default(value: Any):
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def _plots(dataset, examples, scores, tables, args, families, options, cache_root, out_dir, stem, log) -> list[str]:
    from nlgmetrics.meta.correlation import pivot, system_level
    from nlgmetrics.meta.plots import plot_distributions, plot_temperature
    from nlgmetrics.meta.tables import common_rows

    written = []
    keep = common_rows(examples, scores)
    human_key = HUMAN_KEYS[dataset][0]
    shown = {name: [v[i] for i in keep] for name, v in scores.items() if ":" not in name}  # anchors duplicate
    if shown and len(keep) >= 6:
        path = plot_distributions(
            [examples[i].human[human_key] for i in keep],
            shown,
            out_dir / f"{stem}_distributions.png",
            f"{dataset}: metric scores for low vs high {human_key} (bottom/top third, {len(keep)} outputs)",
            human_key,
        )
        written.append(str(path))
    temps = [float(t) for t in args.temperatures.split(",") if t.strip()]
    if temps and any(f.name == "infolm" for f in families):
        split = args.sweep_split if dataset == "realsumm" else "all"
        rows = [e for e in examples if split == "all" or e.split == split]
        curves: dict[str, list[float]] = {m: [] for m in ("pearson", "spearman", "kendall")}
        for t in temps:
            sweep_options = {**options, "infolm_temperature": t, "infolm_measures": [args.sweep_measure]}
            try:
                values, _ = compute_family(FAMILIES["infolm"], rows, sweep_options, cache_root, dataset, args.chunk_docs, log)
            except MetricUnavailable as error:
                log(f"  temperature sweep skipped: {error}")
                return written
            v = values[f"infolm_{args.sweep_measure}"]
            ok = [i for i in range(len(rows)) if not math.isnan(v[i])]
            docs = [rows[i].doc for i in ok]
            syss = [rows[i].system for i in ok]
            m = pivot([v[i] for i in ok], docs, syss)[0]
            h = pivot([rows[i].human[human_key] for i in ok], docs, syss)[0]
            for method in curves:
                curves[method].append(system_level(m, h, method).value)
        tables["temperature_sweep"] = {"split": split, "human": human_key, "measure": args.sweep_measure, "level": "system", "temperatures": temps, "correlations": curves}
        path = plot_temperature(
            temps, curves, out_dir / f"{stem}_temperature.png",
            f"{dataset} ({split}): InfoLM {args.sweep_measure},\nsystem-level correlation vs temperature",
        )
        written.append(str(path))
    return written


def main(argv: list[str] | None = None) -> int:
    """Run the meta-evaluation; returns a process exit code (0 on success)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args._argv = argv
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    for d in datasets:
        if d not in LOADERS:
            raise SystemExit(f"Unknown dataset {d!r}; choose from {sorted(LOADERS)}.")
    families = resolve_families(args.metrics)
    try:  # checked before hours of scoring, not when the tables are built at the end
        check_resampling(args.bootstrap, args.seed)
    except ValueError as error:
        parser.error(f"--bootstrap (n_resamples) / --seed: {error}")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    for dataset in datasets:
        run_dataset(dataset, args, families)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
