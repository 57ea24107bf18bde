"""``nlgmetrics compare``: is system A better than system B? Paired significance tests for any metric.

Examples::

    # BLEU of three systems against two reference files; paired bootstrap and approximate
    # randomization against the first system (sacrebleu's --paired-bs / --paired-ar numbers)
    nlgmetrics compare -r refs1.txt -r refs2.txt base.txt new.txt newer.txt -m bleu

    # ROUGE-L (mean per example) against an explicit baseline, files written
    nlgmetrics compare -r refs.txt a.txt b.txt -m rouge_family --option rouge_types=rougeL \\
        --baseline b --json cmp.json --csv cmp.csv --plot cmp.png

    # a reference-free LM metric: each system is scored once, then resampled; with a store the
    # documents' work is done once for every system and a rerun reads it back
    nlgmetrics compare -s docs.txt sys1.txt sys2.txt -m shannon_score --model smollm2-135m --paired-ar \\
        --cache-dir ~/.cache/nlgmetrics-store

System names are the files' names without their suffix (``--names`` overrides them).

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers(dest="command")
>>> parser = add_compare_parser(sub)
>>> args = parser.parse_args(["-r", "refs.txt", "a.txt", "b.txt", "--paired-ar"])
>>> args.metric, args.systems, chosen_tests(args)
('bleu', ['a.txt', 'b.txt'], ('ar',))
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlgmetrics.apps.io import (add_shared_arguments, check_output_paths, positive_int, read_column,
                                seed_or_none, split_option, write_json, zip_references)
from nlgmetrics.core.protocol import MetricSpec
from nlgmetrics.registry import DEFAULT_COMPARE_METRIC, get_protocol, metric_names
from nlgmetrics.compare.api import DEFAULT_N_BOOTSTRAP, DEFAULT_N_PERMUTATIONS, DEFAULT_SEED


def add_compare_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``compare`` command to the subparsers ``sub`` of the ``nlgmetrics`` parser."""
    parser = sub.add_parser(
        "compare",
        help="is system A better than B? paired bootstrap and approximate randomization for any metric",
        description="Score two or more systems with one metric, then test each system's difference to a "
        "baseline: paired bootstrap resampling (--paired-bs) and paired approximate randomization "
        "(--paired-ar), both by default, with sacrebleu's draws, intervals and p-values. Corpus-level "
        "metrics (BLEU) resample sufficient statistics; others the per-example scores (each system "
        "is scored once).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Null hypothesis: the system and the baseline come from the same process; p is the "
        "probability of an absolute difference at least as large by chance. p < 0.05 is marked *. "
        "Significance says the two differ, not which is better: read the delta.")
    parser.add_argument("systems", nargs="+", metavar="SYSTEM_FILE",
                        help="one file per system, one output per line (any input `score -p` reads)")
    inputs = parser.add_argument_group("inputs")
    inputs.add_argument("--names", nargs="+", metavar="NAME", help="system names (default: the file names)")
    metric = parser.add_argument_group("metric")
    metric.add_argument("-m", "--metric", default=DEFAULT_COMPARE_METRIC, choices=metric_names(),
                        help=f"the metric (default: {DEFAULT_COMPARE_METRIC})")
    metric.add_argument("--column", help="per-example column to compare (default: the metric's main score)")
    metric.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="an option of the metric (repeatable), e.g. tokenize=intl (METRIC.NAME=VALUE works too)")
    metric.add_argument("--model", help="model of an LM metric: Hub id, local directory or smollm2-135m")
    tests = parser.add_argument_group("tests")
    tests.add_argument("--baseline", help="the system compared with (a name or a file given; default: the first)")
    tests.add_argument("--paired-bs", action="store_true", help="paired bootstrap resampling (default: both tests)")
    tests.add_argument("--paired-ar", action="store_true", help="paired approximate randomization (default: both)")
    tests.add_argument("--n-bootstrap", type=positive_int, default=DEFAULT_N_BOOTSTRAP,
                       help="bootstrap resamples, for the intervals and --paired-bs (default: %(default)s)")
    tests.add_argument("--n-permutations", type=positive_int, default=DEFAULT_N_PERMUTATIONS,
                       help="approximate randomization trials (default: %(default)s)")
    tests.add_argument("--seed", type=seed_or_none, default=DEFAULT_SEED,
                       help="random seed, or none (default: %(default)s, sacrebleu's)")
    tests.add_argument("--strict-ties", action="store_true",
                       help="sacrebleu's p-value count: trials tying the observed difference are not counted "
                       "(identical systems then get p = 1/(N+1) instead of 1)")
    out = parser.add_argument_group("output")
    out.add_argument("--json", dest="json_path", help="write the comparison here (JSON)")
    out.add_argument("--csv", dest="csv_path", help="write one row per system here (CSV)")
    out.add_argument("--plot", dest="plot_path", help="draw the scores with their 95%% intervals here (PNG; matplotlib)")
    add_shared_arguments(inputs, metric, out)
    return parser


def chosen_tests(args: argparse.Namespace) -> tuple[str, ...]:
    """``--paired-bs`` / ``--paired-ar``; neither means both."""
    chosen = tuple(name for name, flag in (("bs", args.paired_bs), ("ar", args.paired_ar)) if flag)
    return chosen or ("bs", "ar")


def metric_options(protocol: MetricSpec, args: argparse.Namespace) -> dict[str, Any]:
    """``--option``, ``--model``, ``--device``, ``--cache-dir`` as the metric's keyword options (parsed
    by its protocol); ``--option cache_dir=DIR`` wins over ``--cache-dir``, as in ``nlgmetrics score``.

    >>> ns = argparse.Namespace(option=["tokenize=intl", "bleu.lowercase=true"], model=None, device=None,
    ...                         cache_dir=None)
    >>> metric_options(get_protocol("bleu"), ns)
    {'tokenize': 'intl', 'lowercase': True}
    """
    options: dict[str, Any] = {}
    for item in args.option:
        metric, name, value = split_option(item, protocol.name)
        if metric != protocol.name:
            raise ValueError(f"--option {item}: this comparison's metric is {protocol.name}, not {metric}.")
        options[name] = protocol.option(name).parse(value)
    flags = (("--model", "model", args.model), ("--device", "device", args.device),
             ("--cache-dir", "cache_dir", args.cache_dir))
    for flag, name, value in flags:
        if value is not None:
            if not protocol.uses_model:
                raise ValueError(f"{flag} {value}: {protocol.name} uses no language model.")
            # an --option cache_dir=DIR wins over --cache-dir; --model and --device over --option
            options[name] = options.get(name, value) if name == "cache_dir" else value
    return options


def _system_names(args: argparse.Namespace) -> list[str]:
    if len(args.systems) < 2:
        raise ValueError(f"compare needs at least two system files, got {len(args.systems)}; "
                         f"for one system's score use `nlgmetrics score`.")
    if args.names is not None:
        if len(args.names) != len(args.systems):
            raise ValueError(f"--names gives {len(args.names)} names for {len(args.systems)} system files.")
        names = list(args.names)
    else:
        stems = [Path(path).stem for path in args.systems]
        names = stems if len(set(stems)) == len(stems) else list(args.systems)  # same stem: the paths
    if len(set(names)) != len(names):
        raise ValueError(f"system names {names} repeat; give each system its own name with --names.")
    return names


def _baseline(args: argparse.Namespace, names: Sequence[str]) -> str:
    if args.baseline is None:
        return names[0]
    if args.baseline in names:
        return args.baseline
    if args.baseline in args.systems:
        return names[args.systems.index(args.baseline)]
    raise ValueError(f"--baseline {args.baseline!r} is none of the systems {list(names)} (names or files).")


def _read_inputs(args: argparse.Namespace, protocol: MetricSpec, names: Sequence[str]) -> tuple[dict[str, list[str]], list[Any]]:
    def read(path: str, column: str | None, several: bool = True) -> list[Any]:
        return read_column(path, column, unescape=args.unescape_newlines, several=several)

    systems = {name: read(path, args.prediction_column, several=False)
               for name, path in zip(names, args.systems)}
    if protocol.second_input == "references":
        if not args.references:
            raise ValueError(f"{protocol.name} needs references: pass -r/--references FILE (repeatable).")
        others = zip_references([read(path, args.reference_column) for path in args.references])
    else:
        if not args.sources:
            raise ValueError(f"{protocol.name} needs source documents: pass -s/--sources FILE.")
        others = read(args.sources, args.source_column)
    lengths = {name: len(items) for name, items in systems.items()}
    if len(set(lengths.values())) > 1 or len(others) != len(systems[names[0]]):
        raise ValueError(f"every file needs one line per example: systems {lengths}, "
                         f"{protocol.second_input} {len(others)}.")
    return systems, others


def run_compare(args: argparse.Namespace) -> int:
    """Run ``nlgmetrics compare`` (errors the user can fix raise ValueError / OSError)."""
    protocol = get_protocol(args.metric)
    check_output_paths({"--json": args.json_path, "--csv": args.csv_path, "--plot": args.plot_path})
    names = _system_names(args)
    baseline = _baseline(args, names)
    options = metric_options(protocol, args)
    systems, others = _read_inputs(args, protocol, names)

    from nlgmetrics.compare import compare_systems, format_table, plot, write_csv

    result = compare_systems(
        systems, others, metric=protocol.name, baseline=baseline, column=args.column, tests=chosen_tests(args),
        n_bootstrap=args.n_bootstrap, n_permutations=args.n_permutations, seed=args.seed,
        count_ties=not args.strict_ties, metric_options=options, progress=not args.no_progress)
    if protocol.uses_model:
        from nlgmetrics.engine.distributed import is_main_process

        if not is_main_process():  # under `accelerate launch`: the main process reports
            return 0
    if not args.quiet:
        print(format_table(result))
    if args.json_path:
        write_json(args.json_path, result.to_dict())
    if args.csv_path:
        write_csv(args.csv_path, result)
    if args.plot_path:
        plot(result, args.plot_path)
    return 0

