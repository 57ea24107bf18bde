"""The ``nlgmetrics`` command line: ``score`` texts with any metrics, ``meta-eval`` against humans.

Examples::

    # ROUGE and BLEU of predictions against references (plain text, one example per line)
    nlgmetrics score -p preds.txt -r refs.txt -m rouge_family bleu --json scores.json

    # two reference files (two references per example), CSV with signatures
    nlgmetrics score -p preds.txt -r refs1.txt -r refs2.txt -m bleu --csv scores.csv

    # reference-free metrics of summaries against documents, from a saved `datasets` dataset,
    # each LM metric with its own model
    nlgmetrics score --data my_dataset/ --prediction-column summary --source-column document \\
        -m shannon_score fflm --model shannon_score=gpt2 --model fflm=smollm2-135m

    # options of one metric: --option METRIC.NAME=VALUE
    nlgmetrics score -p p.jsonl --prediction-column text -r r.jsonl --reference-column refs \\
        -m infolm --model infolm=/models/bert --option infolm.information_measure=fisher_rao

    # several processes / GPUs / nodes: the LM work is split, the main process writes the files
    accelerate launch --num_processes 4 -m nlgmetrics.cli score -s docs.txt -p sums.txt -m fflm \
        --model fflm=smollm2-135m --json fflm.json

    nlgmetrics meta-eval --help        # correlation with human judgments (REALSumm, WebNLG 2020)
    nlgmetrics metrics                  # every metric with its options

>>> build_parser().parse_args(["score", "-p", "p.txt", "-r", "r.txt", "-m", "bleu"]).metrics
['bleu']
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlgmetrics import __version__
from nlgmetrics.registry import MetricSpec, ScoreReport, get_spec, metric_names


def _metrics_help() -> str:
    lines = ["metrics and their options (--option METRIC.NAME=VALUE):"]
    for name in metric_names():
        spec = get_spec(name)
        needs = "predictions + references" if spec.second_input == "references" else "predictions (summaries) + sources"
        model = f"; --model {name}=ID|DIR (default {spec.default_model})" if spec.uses_model else ""
        lines.append(f"  {name}: {spec.title}. Needs {needs}; main score {spec.main_score}{model}")
        for option in spec.options:
            shown = [str(c) for c in option.choices or () if c is not None]
            choices = f" choices: {', '.join(shown)};" if shown else ""
            default = ",".join(map(str, option.default)) if isinstance(option.default, (list, tuple)) else option.default
            lines.append(f"      {option.name} ({option.kind}, default {default}):{choices} {option.help}")
    return "\n".join(lines)


def _add_input_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "inputs",
        "Each input is a .txt file (one example per line), a .jsonl file (strings, or objects: name "
        "the column), a .json/.csv/.parquet file read with `datasets`, or a directory saved with "
        "Dataset.save_to_disk. --data sets one file/dataset for all three; the --*-column options "
        "pick the columns.",
    )
    group.add_argument("-p", "--predictions", help="candidate texts / summaries")
    group.add_argument(
        "-r", "--references", action="append",
        help="references; repeat for several references per example (one file each), or use a "
        "column holding lists of strings",
    )
    group.add_argument("-s", "--sources", help="source documents (for shannon_score, blanc, fflm)")
    group.add_argument("--data", help="one dataset/file holding every column")
    group.add_argument("--prediction-column", help="column of the predictions (JSONL / datasets)")
    group.add_argument("--reference-column", help="column of the references (string or list of strings)")
    group.add_argument("--source-column", help="column of the source documents")
    group.add_argument("--split", help="split of a saved DatasetDict (or of a --data json/csv file)")
    group.add_argument(
        "--unescape-newlines", action="store_true",
        help=r"turn the two characters \n into line breaks (sentence breaks for ROUGE-Lsum in .txt files)",
    )
    group.add_argument("--limit", type=int, help="score only the first N examples")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation tools and tests)."""
    parser = argparse.ArgumentParser(
        prog="nlgmetrics",
        description="Evaluation metrics for text generation: InfoLM, Shannon score, BLANC, FFLM, "
        "the ROUGE family and BLEU, on one fast LM engine.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run `nlgmetrics score --help` for scoring options and `nlgmetrics metrics` for the "
        "options of every metric. Offline: set HF_HUB_OFFLINE=1 and pass local model directories "
        "or the alias smollm2-135m.",
    )
    parser.add_argument("--version", action="version", version=f"nlgmetrics {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    score = sub.add_parser(
        "score",
        help="score predictions against references or sources with any metrics",
        description="Score predictions with any subset of metrics; print a table of aggregate "
        "scores and write per-example scores with signatures to JSON and/or CSV.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_metrics_help(),
    )
    _add_input_arguments(score)
    chosen = score.add_argument_group("metrics")
    chosen.add_argument(
        "-m", "--metrics", nargs="+", default=["rouge_family", "bleu"], metavar="METRIC",
        help=f"metrics to run (default: rouge_family bleu); any of: {', '.join(metric_names())}",
    )
    chosen.add_argument(
        "--model", action="append", default=[], metavar="METRIC=MODEL",
        help="model of an LM metric: Hub id, local directory, or smollm2-135m (repeatable); "
        "MODEL alone applies to every LM metric",
    )
    chosen.add_argument(
        "--option", action="append", default=[], metavar="METRIC.NAME=VALUE",
        help="an option of one metric (repeatable), e.g. bleu.tokenize=intl, infolm.temperature=0.25",
    )
    chosen.add_argument("--device", help="torch device for LM metrics (default: cuda if available, else cpu)")
    out = score.add_argument_group("output")
    out.add_argument("--json", dest="json_path", help="write aggregates, per-example scores and signatures here")
    out.add_argument(
        "--csv", dest="csv_path",
        help="write a long table here: example (index or 'mean'), metric, score, value, signature",
    )
    out.add_argument("--no-progress", action="store_true", help="no progress bars")
    out.add_argument("--quiet", action="store_true", help="do not print the table")

    sub.add_parser("metrics", help="list the metrics and their options")

    meta = sub.add_parser(
        "meta-eval",
        help="correlate metrics with human judgments (REALSumm, WebNLG 2020); "
        "arguments after meta-eval go to the benchmark runner",
        add_help=False,
    )
    meta.add_argument("meta_args", nargs=argparse.REMAINDER)

    demo = sub.add_parser("demo", help="serve the Gradio demo of one metric")
    demo.add_argument("metric", choices=metric_names())
    demo.add_argument("--model", help="model pre-filled in the demo (LM metrics)")
    demo.add_argument("--port", type=int, help="server port (default: Gradio's 7860 or the next free one)")
    demo.add_argument("--host", help="server address (default 127.0.0.1; 0.0.0.0 to serve the network)")
    return parser


# --------------------------------------------------------------------------------------------
# score


def _parse_assignments(values: Sequence[str], what: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise ValueError(f"{what} {value!r}: expected KEY=VALUE.")
        pairs.append((key.strip(), rest))
    return pairs


def collect_options(
    metrics: Sequence[str], models: Sequence[str], options: Sequence[str], device: str | None
) -> dict[str, dict[str, Any]]:
    """Turn --model / --option / --device into keyword options per metric (checked against specs).

    >>> collect_options(["bleu", "infolm"], ["infolm=/m"], ["bleu.lowercase=true"], None)
    {'bleu': {'lowercase': True}, 'infolm': {'model': '/m'}}
    """
    specs = {name: get_spec(name) for name in metrics}
    per_metric: dict[str, dict[str, Any]] = {name: {} for name in metrics}
    lm_metrics = [name for name, spec in specs.items() if spec.uses_model]
    for model in models:
        metric, sep, value = model.partition("=")
        if sep and metric in specs:
            if not specs[metric].uses_model:
                raise ValueError(f"--model {model}: {metric} uses no language model.")
            per_metric[metric]["model"] = value
        elif sep and metric in metric_names():
            raise ValueError(f"--model {model}: {metric} is not among --metrics {list(metrics)}.")
        else:
            if not lm_metrics:
                raise ValueError(f"--model {model}: none of {list(metrics)} uses a language model.")
            for name in lm_metrics:  # a bare MODEL applies to every LM metric
                per_metric[name].setdefault("model", model)
    for key, value in _parse_assignments(options, "--option"):
        metric, dot, name = key.partition(".")
        if not dot:
            raise ValueError(f"--option {key}={value}: write METRIC.NAME=VALUE, e.g. bleu.tokenize=13a.")
        if metric not in specs:
            raise ValueError(f"--option {key}: metric {metric!r} is not among --metrics {list(metrics)}.")
        per_metric[metric][name] = specs[metric].option(name).parse(value)
    if device is not None:
        for name in lm_metrics:
            per_metric[name]["device"] = device
    return {name: opts for name, opts in per_metric.items() if opts}


def _load_inputs(args: argparse.Namespace, specs: list[MetricSpec]) -> tuple[list[str], list[Any] | None, list[str] | None]:
    from nlgmetrics.io import read_column, zip_references

    def read(path: str | None, column: str | None, what: str) -> list[Any] | None:
        path = path or args.data
        if path is None:
            return None
        items = read_column(path, column, split=args.split, unescape=args.unescape_newlines)
        return items[: args.limit] if args.limit is not None else items

    predictions = read(args.predictions, args.prediction_column, "predictions")
    if predictions is None:
        raise ValueError("No predictions: pass -p/--predictions FILE or --data DATASET --prediction-column NAME.")
    for index, item in enumerate(predictions):
        if not isinstance(item, str):
            raise ValueError(f"predictions[{index}] is a list; each prediction must be one string.")
    references = None
    if any(spec.second_input == "references" for spec in specs):
        if args.references:
            columns = [read(path, args.reference_column, "references") for path in args.references]
            references = zip_references([c for c in columns if c is not None])
        elif args.data is not None:
            references = read(None, args.reference_column, "references")
        if references is None:
            needing = [s.name for s in specs if s.second_input == "references"]
            raise ValueError(f"{needing} need references: pass -r/--references FILE (repeatable).")
    sources = None
    if any(spec.second_input == "sources" for spec in specs):
        sources = read(args.sources, args.source_column, "sources")
        if sources is None:
            needing = [s.name for s in specs if s.second_input == "sources"]
            raise ValueError(f"{needing} need source documents: pass -s/--sources FILE.")
    for name, items in (("references", references), ("sources", sources)):
        if items is not None and len(items) != len(predictions):
            raise ValueError(
                f"{len(predictions)} predictions but {len(items)} {name}; inputs need one line/row per example."
            )
    return predictions, references, sources  # type: ignore[return-value]


def format_table(reports: Sequence[ScoreReport]) -> str:
    """Aggregate scores as an aligned text table (metric, score, value), then the signatures."""
    rows = [("metric", "score", "value")]
    for report in reports:
        for key, value in report.aggregate.items():
            rows.append((report.metric, key, f"{value:.6g}" if math.isfinite(value) else str(value)))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    lines.append("")
    lines.extend(f"{report.metric} signature: {report.signature}" for report in reports)
    return "\n".join(lines)


def write_json(path: str | Path, reports: Sequence[ScoreReport], n: int) -> None:
    payload = {"version": __version__, "num_examples": n, "metrics": {r.metric: r.as_dict() for r in reports}}
    Path(path).write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n", encoding="utf-8")


def write_csv(path: str | Path, reports: Sequence[ScoreReport]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["example", "metric", "score", "value", "signature"])
        for report in reports:
            for key, value in report.aggregate.items():
                writer.writerow(["mean", report.metric, key, repr(value), report.signature])
            for key, values in report.per_example.items():
                for index, value in enumerate(values):
                    writer.writerow([index, report.metric, key, repr(value), report.signature])


def run_score(args: argparse.Namespace) -> int:
    names = list(dict.fromkeys(args.metrics))  # keep order, drop repeats
    specs = [get_spec(name) for name in names]
    options = collect_options(names, args.model, args.option, args.device)
    predictions, references, sources = _load_inputs(args, specs)
    from tqdm.auto import tqdm

    progress = not args.no_progress
    reports = []
    bar = tqdm(specs, desc="metrics", unit="metric", disable=not progress or len(specs) < 2, file=sys.stderr)
    for spec in bar:
        bar.set_postfix_str(spec.name)
        others = references if spec.second_input == "references" else sources
        reports.append(spec.run(predictions, others, progress=progress, **options.get(spec.name, {})))
    if any(spec.uses_model for spec in specs):
        from nlgmetrics.engine.distributed import is_main_process

        # Under `accelerate launch` / torchrun every process computes its share and receives all
        # results; only the main process prints and writes the files.
        if not is_main_process():
            return 0
    if not args.quiet:
        print(format_table(reports))
    if args.json_path:
        write_json(args.json_path, reports, len(predictions))
    if args.csv_path:
        write_csv(args.csv_path, reports)
    return 0


def run_meta_eval(argv: Sequence[str]) -> int:
    """Hand the arguments to the benchmark runner (correlations with human judgments)."""
    try:
        from nlgmetrics.meta.runner import main as meta_main
    except ImportError as error:
        raise ValueError(
            f"The meta-evaluation runner is not available ({error}); install nlgmetrics from a "
            f"source checkout or run `python benchmarks/meta_eval.py`."
        ) from None
    result = meta_main(list(argv))
    return int(result or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``nlgmetrics`` console script. Returns the exit status."""
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:  # `nlgmetrics metrics | head`: the reader left; not an error
        sys.stdout = open(os.devnull, "w")
        return 0


def _main(argv: list[str]) -> int:
    # meta-eval forwards everything (including --help) to the benchmark runner.
    if argv and argv[0] == "meta-eval":
        try:
            return run_meta_eval(argv[1:])
        except ValueError as error:
            print(f"nlgmetrics meta-eval: error: {error}", file=sys.stderr)
            return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "metrics":
            print(_metrics_help())
            return 0
        if args.command == "score":
            return run_score(args)
        if args.command == "demo":
            from nlgmetrics.demo import launch_demo

            launch_demo(args.metric, model=args.model, server_port=args.port, server_name=args.host)
            return 0
    except ValueError as error:
        # Input problems are the user's to fix: one clear line, no traceback.
        print(f"nlgmetrics {args.command}: error: {error}", file=sys.stderr)
        return 2
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
