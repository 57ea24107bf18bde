"""The ``nlgmetrics`` command line: ``score`` texts with any metrics, ``meta-eval`` against humans.

Examples::

    # ROUGE and BLEU of predictions against references (plain text, one example per line)
    nlgmetrics score -p preds.txt -r refs.txt -m rouge_family bleu --json scores.json

    # reference-free metrics of summaries against documents, from a saved `datasets` dataset,
    # each LM metric with its own model
    nlgmetrics score --data my_dataset/ --prediction-column summary --source-column document \\
        -m shannon_score fflm --model shannon_score=gpt2 --model fflm=smollm2-135m

    # options of one metric: --option METRIC.NAME=VALUE
    nlgmetrics score -p p.jsonl --prediction-column text -r r.jsonl --reference-column refs \\
        -m infolm --model infolm=/models/bert --option infolm.information_measure=fisher_rao_distance

    # several processes / GPUs / nodes: the LM work is split, the main process writes the files
    accelerate launch --num_processes 4 -m nlgmetrics.apps.cli score -s docs.txt -p sums.txt -m fflm \
        --model fflm=smollm2-135m --json fflm.json

    # keep what the LM metrics' models computed, so that a rerun recomputes only what is missing
    nlgmetrics score -s docs.txt -p sums.txt -m shannon_score --cache-dir ~/.cache/nlgmetrics-store
    nlgmetrics cache info ~/.cache/nlgmetrics-store    # what the store holds; `cache clear` empties it

    nlgmetrics metrics    # every metric with its options; `meta-eval --help`: against human judgments

>>> build_parser().parse_args(["score", "-p", "p.txt", "-r", "r.txt", "-m", "bleu"]).metrics
['bleu']
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from nlgmetrics import __version__
from nlgmetrics.apps.cache_cli import add_cache_parser, run_cache
from nlgmetrics.apps.compare_cli import add_compare_parser, run_compare
from nlgmetrics.apps.explain_html import render_explanation
from nlgmetrics.apps.io import (add_shared_arguments, check_output_paths, positive_int, read_column,
                                split_option, write_json, zip_references)
from nlgmetrics.core.protocol import MetricSpec
from nlgmetrics.registry import DEFAULT_METRICS, get_protocol, metric_names, protocols

if TYPE_CHECKING:
    from nlgmetrics.core.result import MetricResult


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2), like every other
    anticipated failure of the command line, and whose epilog may be built only when the help is
    shown (the metric options' defaults are read from the library, which imports torch)."""

    epilog_factory: Callable[[], str] | None = None

    def format_help(self) -> str:
        if self.epilog_factory is not None:
            self.epilog = self.epilog_factory()
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message} (see `{self.prog} --help`)")


class UsageError(Exception):
    """A command line argparse refused; :func:`main` prints it (one line) and returns 2."""


def _shown(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _metrics_help() -> str:
    """Every metric with its options and the library's defaults (imports the metric modules)."""
    lines = ["metrics and their options (--option METRIC.NAME=VALUE; defaults are the library's):"]
    for name in metric_names():
        protocol = get_protocol(name)
        needs = "predictions + references" if protocol.second_input == "references" else "predictions (summaries) + sources"
        model = f"; --model {name}=ID|DIR (default {protocol.default_model})" if protocol.uses_model else ""
        # The main score and its direction, as the result class declares them where they do not depend
        # on the options (ROUGE's is the first type asked for); a corpus-level one (BLEU) has no column.
        main = "" if protocol.main is None else f"; main score {protocol.main}"
        column = protocol.columns.get(protocol.main or "")
        if column is not None:
            main += f" ({'higher' if column.higher_is_better else 'lower'} is better, {column.range_text()})"
        lines.append(f"  {name}: {protocol.title}. Needs {needs}{main}{model}")
        for option in protocol.resolved_options():
            shown = [str(c) for c in option.allowed() or () if c is not None]
            choices = f" choices: {', '.join(shown)};" if shown else ""
            values = f" range {option.range.text()};" if option.range is not None else ""
            lines.append(f"      {option.name} ({option.kind}, default {_shown(option.default)}):{choices}{values} {option.help}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation tools and tests)."""
    parser = Parser(prog="nlgmetrics", formatter_class=argparse.RawDescriptionHelpFormatter,
                    description="Evaluation metrics for text generation (`nlgmetrics metrics` lists them), "
                    "the LM metrics on one fast engine.",
                    epilog="Run `nlgmetrics score --help` for scoring options and `nlgmetrics metrics` for "
                    "the options of every metric. Offline: set HF_HUB_OFFLINE=1 and pass local model "
                    "directories or the alias smollm2-135m.")
    parser.add_argument("--version", action="version", version=f"nlgmetrics {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    score = sub.add_parser("score", help="score predictions against references or sources with any metrics",
                           description="Score predictions with any subset of metrics; print a table of "
                           "headline scores and write per-example scores with signatures to JSON / CSV.",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    score.epilog_factory = _metrics_help
    inputs = score.add_argument_group("inputs", "Each input is a .txt file (one example per line), a "
                                      ".jsonl file (strings, or objects: name the column), a .json/.csv/"
                                      ".parquet file read with `datasets`, or a directory saved with "
                                      "Dataset.save_to_disk. --data sets one file/dataset for all three; the "
                                      "--*-column options pick the columns.")
    inputs.add_argument("-p", "--predictions", help="candidate texts / summaries")
    inputs.add_argument("--data", help="one dataset/file holding every column")
    inputs.add_argument("--split", help="split of a saved DatasetDict (or of a --data json/csv file)")
    inputs.add_argument("--limit", type=positive_int, metavar="N", help="score only the first N examples")
    chosen = score.add_argument_group("metrics")
    chosen.add_argument("-m", "--metrics", nargs="+", default=list(DEFAULT_METRICS), metavar="METRIC",
                        help=f"metrics to run (default: {' '.join(DEFAULT_METRICS)}); any of: "
                        f"{', '.join(metric_names())}")
    chosen.add_argument("--model", action="append", default=[], metavar="METRIC=MODEL",
                        help="model of an LM metric: Hub id, local directory, or smollm2-135m (repeatable); "
                        "MODEL alone applies to every LM metric")
    chosen.add_argument("--option", action="append", default=[], metavar="METRIC.NAME=VALUE",
                        help="an option of one metric (repeatable), e.g. bleu.tokenize=intl, "
                        "infolm.temperature=0.25")
    out = score.add_argument_group("output")
    add_shared_arguments(inputs, chosen, out)
    out.add_argument("--json", dest="json_path", help="write aggregates, per-example scores and signatures here")
    out.add_argument("--csv", dest="csv_path", help="write a long table here: example (index, or 'aggregate' "
                     "for the headline numbers), metric, score, value, signature")
    out.add_argument("--explain", dest="explain_path", metavar="FILE.html",
                     help="write the token-level explanations of one example to this self-contained HTML "
                     "page (the LM metrics then run with explain=True; no number changes)")
    out.add_argument("--explain-example", type=int, default=0, metavar="N",
                     help="the example --explain shows (0-based index, default 0)")

    sub.add_parser("metrics", help="list the metrics and their options")

    add_compare_parser(sub)
    add_cache_parser(sub)

    meta = sub.add_parser("meta-eval", add_help=False, help="correlate metrics with human judgments "
                          "(REALSumm, WebNLG 2020, your own table), in a source checkout; arguments after "
                          "meta-eval go to the benchmark runner")
    meta.add_argument("meta_args", nargs=argparse.REMAINDER)

    demo = sub.add_parser("demo", help="serve the Gradio demo of one metric")
    demo.add_argument("metric", choices=metric_names())
    demo.add_argument("--model", help="model pre-filled in the demo (LM metrics)")
    demo.add_argument("--port", type=int, help="server port (default: Gradio's 7860 or the next free one)")
    demo.add_argument("--host", help="server address (default 127.0.0.1; 0.0.0.0 to serve the network)")
    return parser


# --------------------------------------------------------------------------------------------
# score


def collect_options(metrics: Sequence[str], models: Sequence[str], options: Sequence[str], device: str | None,
                    cache_dir: str | None = None) -> dict[str, dict[str, Any]]:
    """Turn --model / --option / --device / --cache-dir into keyword options per metric (checked
    against their protocols). ``device`` and ``cache_dir`` go to every LM metric (a metric's own
    ``--option METRIC.cache_dir=DIR`` wins), as they are settings of the run, not of one metric.

    >>> collect_options(["bleu", "infolm"], ["infolm=/m"], ["bleu.lowercase=true"], None)
    {'bleu': {'lowercase': True}, 'infolm': {'model': '/m'}}
    """
    chosen = {name: get_protocol(name) for name in metrics}
    per_metric: dict[str, dict[str, Any]] = {name: {} for name in metrics}
    lm_metrics = [name for name, protocol in chosen.items() if protocol.uses_model]
    for model in models:
        metric, sep, value = model.partition("=")
        if sep and metric in chosen:
            if not chosen[metric].uses_model:
                raise ValueError(f"--model {model}: {metric} uses no language model.")
            per_metric[metric]["model"] = value
        elif sep and metric in metric_names():
            raise ValueError(f"--model {model}: {metric} is not among --metrics {list(metrics)}.")
        else:
            if not lm_metrics:
                raise ValueError(f"--model {model}: none of {list(metrics)} uses a language model.")
            for name in lm_metrics:  # a bare MODEL applies to every LM metric
                per_metric[name].setdefault("model", model)
    for item in options:
        metric, name, value = split_option(item)
        if metric not in chosen:
            raise ValueError(f"--option {item}: metric {metric!r} is not among --metrics {list(metrics)}.")
        per_metric[metric][name] = chosen[metric].option(name).parse(value)
    for name in lm_metrics:
        if device is not None:
            per_metric[name]["device"] = device
        if cache_dir is not None:
            per_metric[name].setdefault("cache_dir", cache_dir)
    return {name: opts for name, opts in per_metric.items() if opts}


def _load_inputs(args: argparse.Namespace, chosen: list[MetricSpec]) -> tuple[list[str], list[Any] | None, list[str] | None]:
    def read(path: str | None, column: str | None, several: bool = True) -> list[Any] | None:
        path = path or args.data
        return None if path is None else read_column(path, column, split=args.split,
                                                     unescape=args.unescape_newlines, several=several)

    predictions = read(args.predictions, args.prediction_column, several=False)
    if predictions is None:
        raise ValueError("No predictions: pass -p/--predictions FILE or --data DATASET --prediction-column NAME.")
    needing = {kind: [s.name for s in chosen if s.second_input == kind] for kind in ("references", "sources")}
    references = sources = None
    if needing["references"]:
        # no -r: the reference column of --data (None without --data)
        columns = [read(path, args.reference_column) for path in args.references or [None]]
        if columns[0] is None:
            raise ValueError(f"{needing['references']} need references: pass -r/--references FILE "
                             "(repeatable).")
        references = zip_references(columns)
    if needing["sources"]:
        sources = read(args.sources, args.source_column)
        if sources is None:
            raise ValueError(f"{needing['sources']} need source documents: pass -s/--sources FILE.")
    for name, items in (("references", references), ("sources", sources)):
        if items is not None and len(items) != len(predictions):
            raise ValueError(f"{len(predictions)} predictions but {len(items)} {name}; inputs need one "
                             "line/row per example.")
    # --limit after the length check: files of different lengths are an error (no --limit: [:None])
    predictions, references, sources = (None if items is None else items[: args.limit]
                                        for items in (predictions, references, sources))
    return predictions, references, sources  # type: ignore[return-value]


def format_table(results: Sequence[MetricResult]) -> str:
    """Headline numbers (``result.aggregate()``) as an aligned text table (metric, score, value),
    the main score of each metric marked with its direction, then the signatures."""
    rows = [("metric", "score", "value", "")]
    for result in results:
        direction = "higher is better" if result.higher_is_better else "lower is better"
        for key, value in result.aggregate().items():
            note = f"main, {direction}" if key == result.main else ""
            rows.append((result.metric, key, f"{value:.6g}", note))  # nan and inf print as str() does
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths[:3]))
    lines += ["", *(f"{result.metric} signature: {result.signature}" for result in results)]
    return "\n".join(lines)


def write_csv(path: str | Path, results: Sequence[MetricResult]) -> None:
    """A long table: the headline numbers (example ``aggregate``), then every per-example value."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["example", "metric", "score", "value", "signature"])
        for result in results:
            for key, value in result.aggregate().items():
                writer.writerow(["aggregate", result.metric, key, repr(value), result.signature])
            for key, values in result.scores.items():
                for index, value in enumerate(values):
                    writer.writerow([index, result.metric, key, repr(value), result.signature])


def run_score(args: argparse.Namespace) -> int:
    names = list(dict.fromkeys(args.metrics))  # keep order, drop repeats
    chosen = [get_protocol(name) for name in names]
    check_output_paths({"--json": args.json_path, "--csv": args.csv_path, "--explain": args.explain_path})
    options = collect_options(names, args.model, args.option, args.device, args.cache_dir)
    explained = _explained_protocols(args, chosen)
    for protocol in explained:
        options.setdefault(protocol.name, {})["explain"] = True
    predictions, references, sources = _load_inputs(args, chosen)
    if explained and not 0 <= args.explain_example < len(predictions):
        raise ValueError(f"--explain-example {args.explain_example} is not an example index; the input "
                         f"has {len(predictions)} examples (0 to {len(predictions) - 1}).")
    from tqdm.auto import tqdm

    progress = not args.no_progress
    results = []
    bar = tqdm(chosen, desc="metrics", unit="metric", disable=not progress or len(chosen) < 2, file=sys.stderr)
    for protocol in bar:
        bar.set_postfix_str(protocol.name)
        others = references if protocol.second_input == "references" else sources
        results.append(protocol.run(predictions, others, progress=progress, **options.get(protocol.name, {})))
    if any(protocol.uses_model for protocol in chosen):
        from nlgmetrics.engine.distributed import is_main_process

        # Under `accelerate launch` / torchrun every process computes its share and receives all
        # results; only the main process prints and writes the files.
        if not is_main_process():
            return 0
    if not args.quiet:
        print(format_table(results))
    if args.json_path:
        write_json(args.json_path, {"version": __version__, "num_examples": len(predictions),
                                    "metrics": {result.metric: result.to_dict() for result in results}})
    if args.csv_path:
        write_csv(args.csv_path, results)
    if explained:
        write_explanations(args.explain_path, results, args.explain_example)
    return 0


def _explained_protocols(args: argparse.Namespace, chosen: Sequence[MetricSpec]) -> list[MetricSpec]:
    """The chosen metrics ``--explain`` explains (those taking ``explain``); an error if none does."""
    explained = [spec for spec in chosen if args.explain_path and "explain" in spec.accepted_options()]
    if args.explain_path and not explained:
        explaining = [protocol.name for protocol in protocols() if "explain" in protocol.accepted_options()]
        raise ValueError(
            f"--explain explains the metrics that have token-level explanations ({', '.join(explaining)}); "
            f"none of {[protocol.name for protocol in chosen]} has them. Add one with -m.")
    return explained


def write_explanations(path: str | Path, results: Sequence[MetricResult], example: int) -> None:
    """One HTML page: example ``example``'s breakdowns of every result that has them."""
    sections = [render_explanation(result.explanations[example], main=result.main)
                for result in results if getattr(result, "explanations", None) is not None]
    title = f"nlgmetrics: token-level explanations of example {example}"
    Path(path).write_text(
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
        f"<body><h3>{title}</h3>{''.join(sections)}</body></html>\n", encoding="utf-8")


def source_checkout() -> Path | None:
    """The root of the nlgmetrics repository this command runs from, or None.

    The meta-evaluation runner is benchmark code (``benchmarks/meta``), which ``pip install
    nlgmetrics`` does not ship. A checkout is found where the package was installed from (an
    editable install: ``<root>/src/nlgmetrics``), else in the current directory or one above it.
    """
    here = Path.cwd().resolve()
    candidates = [Path(__file__).resolve().parents[3], here, *here.parents]
    return next((root for root in candidates if (root / "benchmarks" / "meta" / "runner.py").is_file()), None)


def run_meta_eval(argv: Sequence[str]) -> int:
    """Hand the arguments to the benchmark runner of a source checkout (:func:`source_checkout`);
    its own ``main`` reports the errors a user can fix, as ``python -m benchmarks.meta_eval`` does."""
    root = source_checkout()
    if root is None:
        raise ValueError("meta-eval runs the benchmarks of a source checkout (REALSumm, WebNLG 2020, your "
                         "own --data table), which `pip install nlgmetrics` does not ship: clone the "
                         "repository and run `python -m benchmarks.meta_eval ...` (or `nlgmetrics "
                         "meta-eval ...`) inside it. The statistics for your own scores are in the "
                         "package: nlgmetrics.stats.")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))  # the checkout's `benchmarks` package, as `python -m` would find it
    from benchmarks.meta.runner import main as meta_main

    return int(meta_main(list(argv), prog="nlgmetrics meta-eval") or 0)


#: Failures the user can fix (bad input, options, paths, a model that cannot be loaded, a missing
#: optional package): one line on stderr and exit status 2. Anything else is a bug: traceback.
ANTICIPATED = (ValueError, OSError, ImportError)


def one_line(error: BaseException) -> str:
    """The error's message on one line (library and transformers messages may span several)."""
    return " ".join(str(error).split()) or type(error).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``nlgmetrics`` console script. Returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv else None
    try:
        if command == "meta-eval":  # forwards everything (--help included) to the benchmark runner
            return run_meta_eval(argv[1:])
        args = build_parser().parse_args(argv)
        command = args.command
        if command is None:
            raise UsageError("nlgmetrics: error: name a command: score, compare, metrics, cache, meta-eval "
                             "or demo (see `nlgmetrics --help`)")
        if command == "metrics":
            print(_metrics_help())
            return 0
        if command != "demo":
            return {"score": run_score, "compare": run_compare, "cache": run_cache}[command](args)
        from nlgmetrics.apps.demo import launch_demo

        launch_demo(args.metric, model=args.model, server_port=args.port, server_name=args.host)
        return 0
    except BrokenPipeError:  # `nlgmetrics metrics | head`: the reader left; not an error
        sys.stdout = open(os.devnull, "w")
        return 0
    except UsageError as error:
        print(error, file=sys.stderr)
        return 2
    except ANTICIPATED as error:  # problems the user can fix: one clear line, no traceback
        print(f"nlgmetrics {command}: error: {one_line(error)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
