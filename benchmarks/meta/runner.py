"""Meta-evaluation runner: REALSumm, WebNLG 2020 or any table of human judgments; cached, tabled, plotted.

Entry point for ``python -m benchmarks.meta_eval`` and ``nlgmetrics meta-eval``: :func:`main`.

Typical commands (the results committed under ``benchmarks/results/`` name theirs)::

    # full ROUGE/BLEU meta-evaluation on both datasets (minutes on a laptop CPU)
    python -m benchmarks.meta_eval --metrics text --tag text
    # LM metrics with the offline SmolLM2 on the first 10 REALSumm documents
    nice python -m benchmarks.meta_eval --datasets realsumm --metrics text,infolm,shannon,fflm \\
        --max-docs 10 --tag lm10 --infolm-model smollm2-135m --temperatures 0.25,0.5,1,2,4
    # scores you already have, next to ours (joined on the dataset's keys)
    python -m benchmarks.meta_eval --datasets webnlg2020 --metrics text --scores mine.csv --tag mine
    # your own human-judgment table
    python -m benchmarks.meta_eval --data judgments.jsonl --doc-key item --system-key system \\
        --human overall --prediction-key output --reference-key references --metrics text
    # one long LM run in two processes (one per core): every other document each, one shared cache
    python -m benchmarks.meta_eval --datasets realsumm --metrics fflm --shard 0/2 --tag fflm_s0 --no-plots &
    python -m benchmarks.meta_eval --datasets realsumm --metrics fflm --shard 1/2 --tag fflm_s1 --no-plots &
    # the InfoLM temperature sweep (every temperature from one model pass, each in its own cache file)
    python -m benchmarks.meta_eval --datasets realsumm --metrics text,infolm --temperatures 0.1,0.25,0.5,1,2,4
    # tables again from stored scores only (nothing computed; outputs without a score are dropped)
    python -m benchmarks.meta_eval --datasets realsumm,webnlg2020 --metrics text,infolm \\
        --cache-dir benchmarks/results/scores --from-scores --tag lm_infolm_full

Per-example scores are cached in ``benchmarks/cache/<dataset>/<family>-<options hash>.jsonl``
(one chunk of documents per line, flushed as it is computed): rerunning, changing only the
correlation options, or resuming after an interruption recomputes nothing already scored.
``--cache-dir`` may be given more than once: new scores go to the first folder, every folder is read.

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlgmetrics.stats.bootstrap import check_resampling
from benchmarks.meta.cache import ScoreCache
from benchmarks.meta.data import HUMAN_KEYS, KEY_COLUMNS, LOADERS, Example, key_text, load_table_dataset
from benchmarks.meta.metrics import (
    DEFAULT_DTYPE,
    FAMILIES,
    Family,
    MetricUnavailable,
    add_family_arguments,
    family_options,
    family_outputs,
    infolm_idf_key,
    infolm_temperature_sweep,
    resolve_families,
)

SPLITS = {"realsumm": ("abs", "ext", "all"), "webnlg2020": ("all",)}
#: The first of these with scores is the baseline (``--baseline`` overrides). REALSumm: ROUGE-2 F
#: with ROUGE-1.5.5's stemmer (REALSumm's own ROUGE), else rouge-score's configuration.
DEFAULT_BASELINES = {
    "realsumm": ("R2-F", "rouge2", "rouge-score:rouge2"),
    "webnlg2020": ("bleu", "sacrebleu:bleu"),
}
GENERIC_BASELINES = ("R2-F", "bleu")
#: Correlation levels per dataset (``--levels`` overrides): the pooled level is how the WebNLG 2020
#: organisers published theirs; REALSumm's analysis used the per-document ones.
DEFAULT_LEVELS = {"realsumm": ("text", "text_sig", "system"), "webnlg2020": ("text", "text_sig", "pooled", "system")}
GENERIC_LEVELS = ("text", "text_sig", "pooled", "system")
#: How the runner is started (recorded in every result file).
COMMAND = "python -m benchmarks.meta_eval"


def _log(message: str) -> None:
    # Flushed at once: long background runs are followed through their log file.
    print(message, file=sys.stderr, flush=True)


def _repo_benchmarks_dir() -> Path:
    """``<repo>/benchmarks``: the folder this package lives in."""
    return Path(__file__).resolve().parents[1]


#: Failures the user can fix (their files, options, paths, a missing optional package): one line
#: ``<prog>: error: <message>`` on stderr and exit status 2, from either entry point. Anything
#: else is a bug and keeps its traceback.
ANTICIPATED = (ValueError, OSError, ImportError)
#: The program name of the ``nlgmetrics meta-eval`` entry point (the default of :func:`main`).
CLI_PROG = "nlgmetrics meta-eval"


def build_parser(prog: str = CLI_PROG) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Correlate metrics with human judgments on REALSumm (CNN/DM LitePyramid) and WebNLG 2020.",
    )
    parser.add_argument("--datasets", default="realsumm,webnlg2020", help="comma list: realsumm, webnlg2020 (ignored with --data)")
    parser.add_argument("--data-dir", default=None, help="folder with realsumm/ and webnlg2020/ (default $NLGMETRICS_DATA or ../shared/data)")
    parser.add_argument(
        "--metrics",
        default="text",
        help="comma list of families (rouge, rouge155, bleu, chrf, rouge-score, sacrebleu, infolm, shannon, blanc, fflm), "
        "groups text (= rouge,rouge155,bleu,chrf), anchors, lm, all, or none (only --scores)",
    )
    data = parser.add_argument_group("your own human-judgment table (instead of --datasets)")
    data.add_argument("--data", default=None, metavar="FILE",
                      help="csv/tsv/jsonl/json/parquet, one row per (document, system) output; texts are read as written "
                      "(a number too: 0.50 stays '0.50'); a row with a missing text, id or score, or no reference, is refused")
    data.add_argument("--data-name", default=None, help="name in outputs and caches (default: the file's stem)")
    data.add_argument("--doc-key", default=None, help="column of the document / input item id")
    data.add_argument("--system-key", default=None, help="column of the system name")
    data.add_argument("--human", default=None, help="comma list of human-score columns")
    data.add_argument("--prediction-key", default=None, help="column of the system output (needed by every --metrics family)")
    data.add_argument("--reference-key", default=None, help="column of the reference (a text or a list of texts)")
    data.add_argument("--source-key", default=None, help="column of the source (reference-free metrics)")
    data.add_argument("--split-key", default=None, help="optional column whose values are splits")
    parser.add_argument("--scores", action="append", default=[], metavar="FILE",
                        help="per-example scores you already have (higher = better), one column per metric, "
                        "joined on the dataset's keys (REALSumm: doc_id,system_type,system; WebNLG: sample_id,system; "
                        "--data: the --doc-key,--system-key columns); repeatable")
    parser.add_argument("--score-columns", default=None, help="comma list: the --scores columns to read (default: all but the keys)")
    parser.add_argument("--levels", default=None,
                        help="comma list of text, text_sig, pooled, system (default: REALSumm text,text_sig,system; "
                        "WebNLG and --data all four)")
    parser.add_argument("--from-scores", action="store_true",
                        help="compute nothing: read every score from --cache-dir (outputs without a stored score are "
                        "dropped from the tables, and the tables say how many)")
    parser.add_argument("--dtype", default=DEFAULT_DTYPE, type=_dtype_name, help="weights dtype of the LM metrics (float32, bfloat16, float16)")
    parser.add_argument("--max-docs", type=int, default=None, help="keep only the first N documents / WebNLG items (all their systems)")
    parser.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                        help="keep every N-th document from the K-th (0-based), e.g. 0/2 and 1/2 in two processes; "
                        "they may share cache files; build the full tables afterwards with --from-scores")
    parser.add_argument("--baseline", default=None, help="metric to compare against (default rouge2 for REALSumm, bleu for WebNLG)")
    add_family_arguments(parser)
    parser.add_argument("--webnlg-human", choices=("raw", "z"), default="raw", help="raw 0-100 means or per-rater z-scores")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (documents)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperatures", default="", help="InfoLM temperature sweep for the Fig. 4 plot, e.g. 0.25,0.5,1,2,4")
    parser.add_argument("--sweep-measure", default="fisher_rao_distance")
    parser.add_argument("--sweep-split", default="ext", help="REALSumm split for the temperature sweep (paper: ext)")
    parser.add_argument("--chunk-docs", type=int, default=2, help="documents per cached chunk for model metrics")
    parser.add_argument("--cache-dir", action="append", default=None,
                        help="score cache folder (default benchmarks/cache); repeatable: new scores go to the first, all are read")
    parser.add_argument("--out-dir", default=None, help="default benchmarks/results/<dataset>_<tag>/")
    parser.add_argument("--tag", default=None, help="suffix of the output files (default: metrics + max-docs)")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--plot-method", default="kendall", choices=("pearson", "spearman", "kendall"),
                        help="coefficient of the per-level bar plot")
    parser.add_argument("--progress", action="store_true", help="progress bars for model metrics")
    return parser


def _options(args: argparse.Namespace) -> dict[str, Any]:
    return {**family_options(args), "progress": args.progress, "dtype": args.dtype}


def _shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with 0 <= K < N, or an argparse error naming the form.

    >>> _shard("1/2")
    (1, 2)
    """
    k, sep, n = text.partition("/")
    try:
        shard = (int(k), int(n))
    except ValueError:
        shard = None
    if not sep or shard is None or not 0 <= shard[0] < shard[1]:
        raise argparse.ArgumentTypeError(f"--shard {text!r}: give K/N with 0 <= K < N, e.g. 0/2 and 1/2")
    return shard


def shard_examples(examples: list[Example], shard: tuple[int, int] | None) -> list[Example]:
    """The examples of every N-th document from the K-th (documents in their first-seen order).

    >>> from benchmarks.meta.data import Example
    >>> rows = [Example((d, "s"), d, "s", "all", "p", ("r",), "", {}) for d in "aabcd"]
    >>> [e.doc for e in shard_examples(rows, (1, 2))], [e.doc for e in shard_examples(rows, (0, 2))]
    (['b', 'd'], ['a', 'a', 'c'])
    """
    if shard is None:
        return examples
    k, n = shard
    docs = list(dict.fromkeys(e.doc for e in examples))
    keep = set(docs[k::n])
    return [e for e in examples if e.doc in keep]


def _content_key(example: Example) -> str:
    """The example's key as stored (:func:`~benchmarks.meta.data.key_text`: ``doc|system`` as in
    every committed score file, a JSON array where an id would make that ambiguous) + a hash of
    what the metric reads, so that edited data never hits a stale cache.

    >>> _content_key(Example(("3", "abs:m"), "3", "abs:m", "abs", "p", ("r",), "", {}))
    '3|abs:m#...'
    """
    blob = json.dumps([example.prediction, list(example.references), example.source])
    return f"{key_text(example.key)}#{hashlib.sha1(blob.encode('utf-8')).hexdigest()[:8]}"


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
    read_roots: tuple[Path, ...] = (),
    cache_only: bool = False,
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Scores of ``family`` for every example (nan where it does not apply), through the cache.

    ``read_roots``: more cache folders, read but never written (stored scores); ``cache_root``
    wins where both hold a key. ``cache_only``: compute nothing; examples without a stored score
    get ``nan`` (counted as ``missing`` in the returned info).
    """
    log = log or _log
    cache_options = cache_key_options(family, options)
    cache, cached, stored_files = _open_cache(family, cache_options, cache_root, dataset, read_roots)
    outputs = family_outputs(family, options)
    keys = [_content_key(e) for e in examples]
    todo = [i for i, e in enumerate(examples) if _eligible(family, e) and keys[i] not in cached]
    missing = 0
    if cache_only:
        missing, todo = len(todo), []
        if missing:
            log(f"  {family.name}: {missing} outputs have no stored score (--from-scores): they are dropped from the tables")
    started = time.perf_counter()
    chunks = _document_chunks(examples, todo, chunk_docs if family.uses_model else None)
    for n, chunk in enumerate(chunks, 1):
        scores, signature = family.fn([examples[i] for i in chunk], options)
        cached.update(_store_chunk(cache, [keys[i] for i in chunk], scores, outputs, signature))
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
        "cache_file": str(cache.path) if cache.path.exists() or not stored_files else stored_files[0],
    }
    if cache_only:
        info["from_cache"] -= missing
        info["missing"] = missing
        info["documents_scored"] = len({examples[i].doc for i in range(len(examples)) if keys[i] in cached})
    return result, info


def _open_cache(
    family: Family, cache_options: dict[str, Any], cache_root: Path, dataset: str, read_roots: tuple[Path, ...]
) -> tuple[ScoreCache, dict[str, dict[str, float]], list[str]]:
    """The writable cache of ``family``, every score it and the read-only roots hold, and which
    stored files were read; the writable cache wins where both hold a key, and it records the
    stored files' signatures too (so that a result lists every signature behind its numbers)."""
    cache = ScoreCache(cache_root, dataset, family.name, cache_options)
    cached: dict[str, dict[str, float]] = {}
    stored_files = []
    for root in read_roots:
        stored = ScoreCache(root, dataset, family.name, cache_options)
        if stored.path.exists():
            cached.update(stored.load())
            stored_files.append(str(stored.path))
            cache.signatures.extend(sig for sig in stored.signatures if sig not in cache.signatures)
    cached.update(cache.load())
    return cache, cached, stored_files


def _store_chunk(
    cache: ScoreCache, keys: list[str], scores: dict[str, list[float]], outputs: Sequence[str], signature: str
) -> dict[str, dict[str, float]]:
    """Append one computed chunk (``scores[output][k]`` for ``keys[k]``) to ``cache``; returns the
    ``{key: {output: score}}`` record it wrote, so that callers can merge it into what they hold."""
    record = {key: {o: scores[o][k] for o in outputs} for k, key in enumerate(keys)}
    cache.append(record, signature)
    return record


def _document_chunks(examples: list[Example], todo: list[int], chunk_docs: int | None) -> list[list[int]]:
    """``todo`` (example indices) in chunks of ``chunk_docs`` documents (None: one chunk).

    Chunks follow documents: a document's outputs are scored together, so the engine reuses the
    document's (summary-independent) work, and a finished chunk is saved at once.
    """
    by_doc: dict[str, list[int]] = defaultdict(list)
    for i in todo:
        by_doc[examples[i].doc].append(i)
    docs = list(by_doc)
    per_chunk = max(1, chunk_docs) if chunk_docs is not None else max(1, len(docs))
    return [sum((by_doc[d] for d in docs[j : j + per_chunk]), []) for j in range(0, len(docs), per_chunk)]


def prefill_temperature_sweep(
    examples: list[Example],
    options: dict[str, Any],
    temperatures: list[float],
    cache_root: Path,
    dataset: str,
    chunk_docs: int = 2,
    log=None,
    read_roots: tuple[Path, ...] = (),
) -> int:
    """Compute the InfoLM scores a temperature sweep lacks, every temperature from one model pass.

    Each temperature keeps its own cache file (the one :func:`compute_family` reads with
    ``infolm_temperature`` set to it), so the sweep's scores are stored exactly as separate runs
    would store them; a chunk is computed for the temperatures that lack one of its outputs.
    Returns the number of outputs computed.
    """
    log = log or _log
    family = FAMILIES["infolm"]
    outputs = family_outputs(family, options)
    caches, have = {}, {}
    for t in dict.fromkeys(temperatures):
        t_options = cache_key_options(family, {**options, "infolm_temperature": t})
        caches[t], cached, _ = _open_cache(family, t_options, cache_root, dataset, read_roots)
        have[t] = set(cached)
    keys = [_content_key(e) for e in examples]
    todo = [i for i, e in enumerate(examples) if _eligible(family, e) and any(keys[i] not in h for h in have.values())]
    started = time.perf_counter()
    chunks = _document_chunks(examples, todo, chunk_docs)
    for n, chunk in enumerate(chunks, 1):
        wanted = [t for t in caches if any(keys[i] not in have[t] for i in chunk)]
        for t, (scores, signature) in infolm_temperature_sweep([examples[i] for i in chunk], options, wanted).items():
            have[t].update(_store_chunk(caches[t], [keys[i] for i in chunk], scores, outputs, signature))
        log(f"  infolm sweep ({len(wanted)} temperatures, one pass): chunk {n}/{len(chunks)} "
            f"({len(chunk)} outputs) {time.perf_counter() - started:.0f}s")
    return len(todo)


def cache_key_options(family: Family, options: dict[str, Any]) -> dict[str, Any]:
    """What names a family's cache file: the family and the runner options that change its numbers.

    The key is made of the runner's own option names and values (``--infolm-model`` ...), not of
    library keyword names: renaming a library keyword does not orphan the caches, and the
    options hash in each committed result's ``cache_file`` keeps naming its cache. ``dtype`` is
    added only when it is not the default float32, so that the float32 caches written before the
    option existed keep their names, and bf16 scores live in files of their own.

    >>> cache_key_options(FAMILIES["fflm"], {"fflm_model": "m", "dtype": "float32"})
    {'family': 'fflm', 'fflm_model': 'm'}
    >>> cache_key_options(FAMILIES["fflm"], {"fflm_model": "m", "dtype": "bfloat16"})
    {'family': 'fflm', 'fflm_model': 'm', 'dtype': 'bfloat16'}
    """
    key = {"family": family.name, **{k: options[k] for k in family.option_names}}
    dtype = options.get("dtype") or DEFAULT_DTYPE
    if family.uses_model and dtype != DEFAULT_DTYPE:
        key["dtype"] = dtype
    return key


def _environment() -> dict[str, str]:
    import importlib.metadata as md

    versions = {}
    for pkg in ("nlgmetrics", "torch", "transformers", "datasets", "scipy", "numpy", "rouge-score", "sacrebleu"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = "not installed"
    return {"python": platform.python_version(), "machine": f"{platform.machine()} {os.cpu_count()} CPUs", **versions}


def _split_list(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def load_examples(dataset: str, args: argparse.Namespace, max_docs: int | None) -> list[Example]:
    """The examples of a built-in dataset, or of the ``--data`` table."""
    if args.data:
        return load_table_dataset(
            args.data, doc_key=args.doc_key, system_key=args.system_key, human=_split_list(args.human),
            prediction_key=args.prediction_key, reference_key=args.reference_key, source_key=args.source_key,
            split_key=args.split_key, max_docs=max_docs,
        )
    kwargs = {"human": args.webnlg_human} if dataset == "webnlg2020" else {}
    return LOADERS[dataset](args.data_dir, max_docs=max_docs, **kwargs)


def dataset_layout(dataset: str, args: argparse.Namespace, examples: list[Example]) -> dict[str, Any]:
    """Splits, human criteria, key columns, candidate baselines and levels of one dataset."""
    if args.data:
        splits = tuple(sorted({e.split for e in examples} - {"all"})) + ("all",)
        layout = {"splits": splits, "human": tuple(_split_list(args.human)), "keys": (args.doc_key, args.system_key),
                  "baselines": GENERIC_BASELINES, "levels": GENERIC_LEVELS}
    else:
        layout = {"splits": SPLITS[dataset], "human": HUMAN_KEYS[dataset], "keys": KEY_COLUMNS[dataset],
                  "baselines": DEFAULT_BASELINES[dataset], "levels": DEFAULT_LEVELS[dataset]}
    if args.levels:
        layout["levels"] = tuple(_split_list(args.levels))
    return layout


def _cache_roots(args: argparse.Namespace) -> tuple[Path, tuple[Path, ...]]:
    roots = [Path(d) for d in (args.cache_dir or [])] or [_repo_benchmarks_dir() / "cache"]
    return roots[0], tuple(roots[1:])


def run_dataset(dataset: str, args: argparse.Namespace, families: list[Family], log=None) -> dict[str, Any]:
    """Score, correlate, write tables and plots for one dataset; returns the JSON-ready record."""
    from benchmarks.meta.tables import correlation_tables, to_markdown, undefined_warnings
    from benchmarks.meta.user_scores import read_scores_file

    log = log or _log
    started = time.perf_counter()
    all_examples = load_examples(dataset, args, args.max_docs)
    examples = shard_examples(all_examples, args.shard)
    layout = dataset_layout(dataset, args, examples)
    log(f"{dataset}: {len(examples)} outputs, {len({e.doc for e in examples})} documents, {len({e.system for e in examples})} systems")
    cache_root, read_roots = _cache_roots(args)
    options = _options(args)
    if any(f.name == "infolm" for f in families):
        # idf from every distinct reference of the whole dataset (see metrics.infolm_idf_table).
        full = all_examples if args.max_docs is None else load_examples(dataset, args, None)
        texts = sorted({r for e in full for r in e.references})
        options["infolm_idf_texts"] = texts
        options["infolm_idf"] = infolm_idf_key(dataset, texts)
    scores: dict[str, list[float]] = {}
    runs, skipped = [], {}
    for family in families:
        try:
            values, info = compute_family(family, examples, options, cache_root, dataset, args.chunk_docs, log,
                                          read_roots=read_roots, cache_only=args.from_scores)
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
                skipped[name] = "no finite score" + (" stored" if args.from_scores else "")
                continue
            scores[name] = vals
    user_files = []
    for path in args.scores:
        # Errors here are the user's file: stop with the message (it names the row and the fix).
        values, info = read_scores_file(path, dataset if not args.data else "generic", tuple(layout["keys"]), examples,
                                        _split_list(args.score_columns) or None, reserved=set(scores))
        scores.update(values)
        user_files.append(info)
        log(f"  --scores {path}: {info['columns']} for {info['n_rows']} outputs")
    if not scores:
        raise ValueError(f"{dataset}: no metric produced scores ({skipped}); see the skip reasons above.")
    baseline = args.baseline or next((b for b in layout["baselines"] if b in scores), None)
    tables = correlation_tables(examples, scores, tuple(layout["human"]), tuple(layout["splits"]), baseline,
                                n_resamples=args.bootstrap, seed=args.seed, levels=tuple(layout["levels"]))
    for line in undefined_warnings(tables):
        # The cells say "undefined: <why>" too; this line makes it impossible to miss in the log.
        log(f"warning: {dataset}: undefined for {line}")
    tag = args.tag or (args.metrics.replace(",", "+") + (f"_docs{args.max_docs}" if args.max_docs else "")
                       + (f"_shard{args.shard[0]}of{args.shard[1]}" if args.shard else ""))
    stem = f"{dataset}_{tag}"
    # the committed results keep one folder per report; an explicit --out-dir gets the files themselves
    out_dir = Path(args.out_dir) if args.out_dir else _repo_benchmarks_dir() / "results" / stem
    out_dir.mkdir(parents=True, exist_ok=True)
    command = f"{COMMAND} " + " ".join(shlex.quote(a) for a in args._argv)
    record = {
        "dataset": dataset,
        "command": command,
        "environment": _environment(),
        "max_docs": args.max_docs,
        "shard": list(args.shard) if args.shard else None,
        "webnlg_human": args.webnlg_human if dataset == "webnlg2020" else None,
        "data_file": args.data,
        "from_scores": bool(args.from_scores),
        "metric_runs": runs,
        "score_files": user_files,
        "skipped": skipped,
        "tables": tables,
    }
    plots = []
    if not args.no_plots:
        plots = _plots(dataset, examples, scores, tables, args, families, options, cache_root, out_dir, stem, log,
                       human_key=layout["human"][0], read_roots=read_roots)
    record["plots"] = plots
    record["seconds"] = round(time.perf_counter() - started, 1)
    # allow_nan=False: a bare NaN is not JSON (strict readers refuse the whole file); json_ready
    # has written every undefined number as null, beside the reason the record gives for it.
    (out_dir / f"{stem}.json").write_text(json.dumps(json_ready(record), indent=1, default=_json_default, allow_nan=False),
                                          encoding="utf-8")
    md = [f"# Meta-evaluation: {dataset} ({tag})", "", f"Command: `{command}`", ""]
    md.append("Environment: " + ", ".join(f"{k} {v}" for k, v in record["environment"].items()))
    md.append("")
    for info in runs:
        sig = "; ".join(info["signatures"]) or "n/a"
        coverage = ""
        if "missing" in info:
            coverage = (f" — **{info['from_cache']} outputs stored ({info['documents_scored']} documents), "
                        f"{info['missing']} missing**")
        md.append(f"- `{info['family']}`: options `{json.dumps({k: v for k, v in info['options'].items() if k != 'family'})}`, "
                  f"signature `{sig}`{coverage}")
    for info in user_files:
        md.append(f"- `--scores {info['file']}` (sha1 {info['sha1']}): columns {info['columns']} for {info['n_rows']} "
                  f"outputs ({info['n_examples_without_score']} outputs without a row)")
    for name, reason in skipped.items():
        md.append(f"- skipped `{name}`: {reason}")
    ran = {info["family"] for info in runs}
    md.extend(f"- {family.note}" for family in families if family.note and family.name in ran)
    md.append("")
    md.append(to_markdown(tables, f"{dataset}: correlation with human judgment"))
    for plot in plots:
        md.append(f"![{Path(plot).stem}]({Path(plot).name})")
    (out_dir / f"{stem}.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    log(f"{dataset}: wrote {out_dir / (stem + '.md')} and .json in {record['seconds']}s")
    return record


def json_ready(value: Any) -> Any:
    """A copy of ``value`` that is strict JSON: an undefined number (NaN, infinite; numpy's too) is
    ``None`` (``null``), numpy scalars and arrays are Python numbers and lists.

    >>> import numpy as np
    >>> json_ready({"value": float("nan"), "reason": "metric constant", "n": np.int64(3), "xs": np.array([1.5, np.nan])})
    {'value': None, 'reason': 'metric constant', 'n': 3, 'xs': [1.5, None]}
    """
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy scalars and arrays
        return json_ready(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _json_default(value: Any):
    # What json_ready leaves: paths and other objects, written as their text.
    return str(value)


def _plots(dataset, examples, scores, tables, args, families, options, cache_root, out_dir, stem, log,
           human_key=None, read_roots=()) -> list[str]:
    from benchmarks.meta.plots import plot_distributions, plot_level_bars
    from benchmarks.meta.tables import common_rows

    written = []
    keep = common_rows(examples, scores)
    human_key = human_key or tables["human_keys"][0]
    # Anchors (``pkg:name``) duplicate our numbers; with the ROUGE-1.5.5-stemmer rows present, rouge-score's
    # rows and the precisions are left out too: a histogram per metric costs seconds, and those add nothing.
    hidden = set()
    if "R2-F" in scores:
        hidden = {name for name in scores if name.startswith("rouge") or name.endswith("-P")}
    shown = {name: [v[i] for i in keep] for name, v in scores.items() if ":" not in name and name not in hidden}
    if shown and len(keep) >= 6:
        path = plot_distributions(
            [examples[i].human[human_key] for i in keep],
            shown,
            out_dir / f"{stem}_distributions.png",
            f"{dataset}: metric scores for low vs high {human_key} (bottom/top third, {len(keep)} outputs)",
            human_key,
        )
        written.append(str(path))
    if tables["results"]:
        split = "all" if "all" in tables["splits"] else next(iter(tables["splits"]))
        path = plot_level_bars(tables, split, human_key, args.plot_method, out_dir / f"{stem}_levels.png",
                               f"{dataset} ({split}, {human_key})")
        written.append(str(path))
    temps = [float(t) for t in args.temperatures.split(",") if t.strip()]
    if temps and any(f.name == "infolm" for f in families):
        written += _temperature_sweep(dataset, examples, tables, args, options, cache_root, out_dir, stem, log,
                                      human_key, temps, read_roots)
    return written


#: Levels of the temperature sweep: the paper's (system), and the text level, which on 11 extractive
#: systems says much more (100 per-document correlations instead of one over 11 system means).
SWEEP_LEVELS = {"system": "temperature_sweep", "text": "temperature_sweep_text"}


def _temperature_sweep(dataset, examples, tables, args, options, cache_root, out_dir, stem, log, human_key, temps,
                       read_roots) -> list[str]:
    """InfoLM's correlation against the temperature, per level in :data:`SWEEP_LEVELS`, with 95%
    bootstrap CIs: one table entry and one plot per level (scores from one model pass)."""
    from nlgmetrics.stats.bootstrap import bootstrap_ci
    from nlgmetrics.stats.correlation import correlation, pivot
    from benchmarks.meta.plots import plot_temperature

    split = args.sweep_split if dataset == "realsumm" else "all"
    rows = [e for e in examples if split == "all" or e.split == split]
    sweep_options = {**options, "infolm_measures": [args.sweep_measure]}
    try:
        if not args.from_scores:
            prefill_temperature_sweep(rows, sweep_options, temps, cache_root, dataset, args.chunk_docs, log,
                                      read_roots=read_roots)
        matrices = []
        for t in temps:
            values, _ = compute_family(FAMILIES["infolm"], rows, {**sweep_options, "infolm_temperature": t}, cache_root,
                                       dataset, args.chunk_docs, log, read_roots=read_roots, cache_only=args.from_scores)
            v = values[f"infolm_{args.sweep_measure}"]
            ok = [i for i in range(len(rows)) if not math.isnan(v[i])]
            if len({rows[i].doc for i in ok}) < 2:
                log(f"  temperature sweep skipped: T={t} has scores for fewer than 2 documents"
                    + (" stored (--from-scores)" if args.from_scores else ""))
                return []
            docs, syss = [rows[i].doc for i in ok], [rows[i].system for i in ok]
            matrices.append((pivot([v[i] for i in ok], docs, syss)[0],
                             pivot([rows[i].human[human_key] for i in ok], docs, syss)[0]))
    except MetricUnavailable as error:
        log(f"  temperature sweep skipped: {error}")
        return []
    written = []
    for level, key in SWEEP_LEVELS.items():
        curves: dict[str, list[float]] = {m: [] for m in ("pearson", "spearman", "kendall")}
        lows: dict[str, list[float]] = {m: [] for m in curves}
        highs: dict[str, list[float]] = {m: [] for m in curves}
        for m, h in matrices:
            for method in curves:
                curves[method].append(correlation(m, h, level, method).value)
                ci = bootstrap_ci(m, h, level, method, n_resamples=args.bootstrap, seed=args.seed)
                lows[method].append(ci.low)
                highs[method].append(ci.high)
        tables[key] = {"split": split, "human": human_key, "measure": args.sweep_measure, "level": level,
                       "temperatures": temps, "correlations": curves, "low": lows, "high": highs,
                       "n_docs": [m.shape[0] for m, _ in matrices], "n_systems": [m.shape[1] for m, _ in matrices]}
        suffix = "" if level == "system" else f"_{level}"
        path = plot_temperature(
            temps, curves, out_dir / f"{stem}_temperature{suffix}.png",
            f"{dataset} ({split}): InfoLM {args.sweep_measure},\n{level}-level correlation vs temperature (95% CI)",
            lows=lows, highs=highs,
        )
        written.append(str(path))
    return written


def _dtype_name(text: str) -> str:
    """``--dtype`` value as the library's name (``bf16`` -> ``bfloat16``), or an argparse error."""
    aliases = {"fp32": "float32", "float": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}
    name = aliases.get(text.strip().lower(), text.strip().lower())
    if name not in ("float32", "float16", "bfloat16"):
        raise argparse.ArgumentTypeError(f"{text!r}: choose float32 (default), bfloat16 or float16.")
    return name


def one_line(error: BaseException) -> str:
    """The error's message on one line (messages of datasets or transformers may span several)."""
    return " ".join(str(error).split()) or type(error).__name__


def main(argv: list[str] | None = None, prog: str = CLI_PROG) -> int:
    """The entry point of ``nlgmetrics meta-eval`` and ``python -m benchmarks.meta_eval`` (``prog``
    names which in messages): runs :func:`run`; returns the exit status.

    An error the user can fix (:data:`ANTICIPATED`: a bad file, row, column or option) is one line
    ``<prog>: error: <message>`` on stderr and status 2; option errors are argparse's (usage and
    ``<prog>: error: ...``, status 2 through ``SystemExit``).
    """
    return report_errors(prog, run, argv, prog)


def report_errors(prog: str, function, *args) -> int:
    """``function(*args)``'s exit status, or 2 after one line ``<prog>: error: <message>`` on
    stderr for an error in :data:`ANTICIPATED` (the error style of every benchmark entry point)."""
    try:
        return function(*args)
    except ANTICIPATED as error:
        print(f"{prog}: error: {one_line(error)}", file=sys.stderr, flush=True)
        return 2


def run(argv: list[str] | None = None, prog: str = CLI_PROG) -> int:
    """Run the meta-evaluation; returns 0. Errors propagate (:func:`main` reports them)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    args._argv = argv
    if args.data:
        missing = [flag for flag, value in (("--doc-key", args.doc_key), ("--system-key", args.system_key),
                                             ("--human", args.human)) if not value]
        if missing:
            parser.error(f"--data needs {', '.join(missing)} (the columns of the document id, system name and human scores).")
        datasets = [args.data_name or Path(args.data).stem]
    else:
        datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
        for d in datasets:
            if d not in LOADERS:
                parser.error(f"--datasets: unknown dataset {d!r}; choose from {sorted(LOADERS)}, or pass --data FILE.")
    try:
        families = resolve_families(args.metrics)
    except ValueError as error:
        parser.error(str(error))
    if args.data and families and not args.prediction_key:
        parser.error(f"--metrics {args.metrics!r} scores system outputs: pass --prediction-key "
                     f"(or --metrics none with --scores).")
    if not families and not args.scores:
        parser.error("--metrics none needs at least one --scores FILE.")
    if args.levels:
        from benchmarks.meta.tables import LEVELS

        bad = [level for level in _split_list(args.levels) if level not in LEVELS]
        if bad:
            parser.error(f"--levels {bad}: choose from {list(LEVELS)}.")
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
