"""``compare_systems``: is system A better than system B, for any metric?

Each system is scored once, then the test set is resampled. A corpus-level metric (BLEU, chrF,
TER: its protocol declares :class:`~nlgmetrics.core.protocol.Resampling`) is recomputed from
resampled sufficient statistics, as sacrebleu's paired tests do (the metric itself runs on the
baseline only, for its main score, its signature and a check that the statistics reproduce its
number); any other metric runs once per system and is compared through the mean of a per-example
column (its main score unless ``column`` names another).

Draws, intervals and p-values (paired bootstrap ``"bs"``, approximate randomization ``"ar"``;
the interval always from the bootstrap) follow sacrebleu's ``significance.py``: same seed and
counts, same numbers (ties: :mod:`nlgmetrics.stats.significance`).

>>> refs = [["the cat sat on the mat"], ["a dog barks at night"], ["it rains in spring"]]
>>> result = compare_systems(
...     {"a": ["the cat sat on a mat", "a dog barks", "it rains"],
...      "b": ["the cat sat on the mat", "a dog barks at night", "it rains in spring"]},
...     refs, metric="bleu", n_bootstrap=100, n_permutations=100)
>>> round(result["a"].score, 2), result["b"].score, round(result["b"].delta, 2)
(42.24, 100.0, 57.76)
>>> result["b"].p_bootstrap, result["b"].p_randomization
(0.009900990099009901, 0.27722772277227725)

Three examples allow eight swaps: 27 of 100 trials reproduce the observed difference exactly;
counted (``count_ties=True``) they give p = 28/101, sacrebleu's strict count 1/101.
>>> result.signature
'bleu|case:mixed|effective_order:no|max_ngram_order:4|nrefs:1|smooth:exp|tokenize:13a|bs:100|ar:100|paired_seed:12345|ties:count|version:0.1.0'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlgmetrics.stats.resampling import bootstrap_indices, bootstrap_scores, swap_masks, swapped_scores
from nlgmetrics.compare.result import ComparisonResult, SystemScore
from nlgmetrics.stats.significance import bootstrap_interval, paired_bootstrap_p, randomization_p
from nlgmetrics.core.protocol import MetricSpec
from nlgmetrics.core.result import MetricResult
from nlgmetrics.core.validation import as_texts, check_bool, check_choice, check_int
from nlgmetrics.registry import get_protocol

#: ``"bs"``: paired bootstrap resampling; ``"ar"``: paired approximate randomization.
TESTS = ("bs", "ar")
DEFAULT_N_BOOTSTRAP = 1000
DEFAULT_N_PERMUTATIONS = 10000
#: sacrebleu's default seed (``SACREBLEU_SEED``).
DEFAULT_SEED = 12345


def _check_systems(systems: Any) -> dict[str, list[str]]:
    if not isinstance(systems, Mapping):
        raise TypeError(
            f"`systems` is {type(systems).__name__}; pass a mapping from system name to its outputs, "
            f"e.g. {{'baseline': [...], 'new': [...]}}."
        )
    if len(systems) < 2:
        raise ValueError(
            f"`systems` has {len(systems)} system(s); a paired comparison needs at least two "
            f"(a baseline and one or more systems to compare with it)."
        )
    checked: dict[str, list[str]] = {}
    for name, outputs in systems.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"system name {name!r} must be a non-empty string.")
        checked[name] = as_texts(f"systems[{name!r}]", outputs)
    lengths = {name: len(outputs) for name, outputs in checked.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(
            f"the systems have different numbers of outputs ({lengths}); a paired comparison needs "
            f"one output per example from every system, in the same order."
        )
    return checked


def _check_tests(tests: Any) -> tuple[str, ...]:
    chosen = (tests,) if isinstance(tests, str) else tuple(tests)
    if not chosen:
        raise ValueError(f"`tests` is empty; choose one or both of {list(TESTS)}.")
    for test in chosen:
        check_choice("tests", test, TESTS)
    return tuple(t for t in TESTS if t in chosen)


def compare_systems(
    systems: Mapping[str, Sequence[str]],
    references_or_sources: Sequence[Any],
    *,
    metric: str | MetricSpec,
    baseline: str | None = None,
    column: str | None = None,
    tests: Sequence[str] | str = TESTS,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    seed: int | None = DEFAULT_SEED,
    count_ties: bool = True,
    metric_options: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> ComparisonResult:
    """Score every system with ``metric`` and test each one's difference to the baseline.

    Args:
        systems: system name -> one output per example (every system the same examples, same order).
        references_or_sources: what the metric reads besides the outputs (its registry protocol's
            ``second_input``): per example one reference or a list of references, or the source.
        metric: a registry name (``nlgmetrics metrics`` lists them), e.g. ``"bleu"``, ``"rouge_family"``,
            or any :class:`~nlgmetrics.core.protocol.MetricSpec`.
        baseline: the system every other one is compared with (default: the first).
        column: the per-example column compared (default: the metric's main score).
        tests: ``"bs"`` (paired bootstrap), ``"ar"`` (approximate randomization) or both (default).
            The 95% interval is the bootstrap's either way.
        n_bootstrap: bootstrap resamples (sacrebleu's default 1000).
        n_permutations: approximate randomization trials (sacrebleu's default 10000).
        seed: seed of ``numpy.random.default_rng`` for both draws (sacrebleu's 12345); None draws
            fresh entropy (results then differ between runs; the signature says
            ``paired_seed:none``). 0 is the seed 0 (sacrebleu's ``PairedTest`` leaves 0 unseeded).
        count_ties: count null statistics equal to the observed difference (default; identical
            systems get p = 1); False is sacrebleu's strict count.
        metric_options: keyword options of the metric (``model`` for an LM metric, ``tokenize``...).
        progress: progress bars (the metric's own, and one over the systems).

    Returns:
        :class:`~nlgmetrics.compare.result.ComparisonResult`.

    Memory: the draws are held at once, as sacrebleu holds them: ``n_bootstrap x n`` indices
    (int64) and ``n_permutations x n`` booleans (with n examples).
    """
    outputs = _check_systems(systems)
    names = list(outputs)
    if baseline is None:
        baseline = names[0]
    elif baseline not in outputs:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {names}; pass one of these names.")
    chosen_tests = _check_tests(tests)
    n_bootstrap = check_int("n_bootstrap", n_bootstrap, minimum=1)
    n_permutations = check_int("n_permutations", n_permutations, minimum=1)
    seed = check_int("seed", seed, minimum=0, allow_none=True)
    count_ties = check_bool("count_ties", count_ties)
    if metric_options is not None and not isinstance(metric_options, Mapping):
        raise TypeError(f"`metric_options` is {type(metric_options).__name__}; pass a dict of the metric's options.")
    options = dict(metric_options or {})  # never modify the caller's dict
    if "progress" in options:
        raise ValueError("pass progress=... to compare_systems, not in metric_options.")
    protocol = metric if isinstance(metric, MetricSpec) else get_protocol(metric)
    metric = protocol.name
    n = len(outputs[names[0]])
    if isinstance(references_or_sources, str) or len(references_or_sources) != n:
        given = "a single string" if isinstance(references_or_sources, str) else f"{len(references_or_sources)} items"
        raise ValueError(
            f"`references_or_sources` is {given} but every system has {n} outputs; pass one "
            f"{protocol.second_input[:-1]} (or list of references) per example."
        )

    from tqdm.auto import tqdm

    def run(name: str) -> MetricResult:
        return protocol.run(outputs[name], references_or_sources, progress=progress, **options)

    # The baseline's result says what the metric is: its main score, the columns, the signature.
    reference = run(baseline)
    main = reference.main
    column = main if column is None else column
    entry = protocol.resampling
    corpus_level = column not in reference.scores
    if corpus_level and column != main:
        raise ValueError(f"{metric} has no per-example column {column!r}; choose one of {list(reference.scores)}.")
    if corpus_level and entry is None:
        raise ValueError(
            f"{metric}'s main score {main!r} is corpus-level and its protocol declares no resampling "
            f"statistics (MetricSpec.resampling); compare a per-example column: {list(reference.scores)}.")
    higher_is_better = reference.column(column).higher_is_better

    def score_of(summed: np.ndarray) -> float:
        return entry.score(summed, **options) if corpus_level else float(summed[0]) / n

    # A corpus-level metric: the statistics are its computation (the other systems are not run
    # twice). Any other: the metric runs once per system (an LM metric's passes are never repeated).
    stats: dict[str, np.ndarray] = {}
    scores: dict[str, float] = {}
    bar = tqdm(names, desc=f"{metric}: {'statistics' if corpus_level else 'scoring systems'}", unit="system",
               disable=not progress)
    for name in bar:
        bar.set_postfix_str(name)
        if corpus_level:
            stats[name] = entry.statistics(outputs[name], references_or_sources, **options)
            scores[name] = score_of(stats[name].sum(axis=0))
        else:
            result = reference if name == baseline else run(name)
            stats[name] = np.asarray(result.scores[column], dtype=np.float64)[:, None]
            scores[name] = result.mean()[column]
    own = reference.aggregate()[column] if corpus_level else None
    if corpus_level and not math.isclose(scores[baseline], own, rel_tol=1e-9, abs_tol=1e-9):  # must reproduce
        raise RuntimeError(f"{metric} from statistics is {scores[baseline]} but the metric says {own} for "
                           f"system {baseline!r}; this is a bug in nlgmetrics, please report it.")

    # The same resampled test sets for every system (paired), as sacrebleu draws them.
    indices = bootstrap_indices(n, n_bootstrap, seed)
    dtype = entry.bootstrap_dtype if corpus_level else "float64"
    resampled = {name: bootstrap_scores(stats[name], indices, score_of, dtype) for name in names}
    masks = swap_masks(n, n_permutations, seed) if "ar" in chosen_tests else None

    rows = []
    for name in tqdm(names, desc="paired tests", unit="system", disable=not progress):
        mean, low, high = bootstrap_interval(resampled[name])
        delta = p_bs = p_ar = None  # the baseline's own row has none
        if name != baseline:
            observed, delta = scores[baseline] - scores[name], scores[name] - scores[baseline]
            if "bs" in chosen_tests:
                p_bs = paired_bootstrap_p(resampled[name], resampled[baseline], observed,
                                          count_ties=count_ties)
            if masks is not None:
                scores_a, scores_b = swapped_scores(stats[baseline], stats[name], masks, score_of)
                p_ar = randomization_p(scores_a, scores_b, observed, count_ties=count_ties)
        rows.append(SystemScore(name, scores[name], mean, low, high, name == baseline, delta, p_bs, p_ar))
    return ComparisonResult(
        metric=metric, main=main, column=column, higher_is_better=higher_is_better, baseline=baseline,
        systems=tuple(rows), n_examples=n, n_bootstrap=n_bootstrap,
        n_permutations=n_permutations if masks is not None else None, seed=seed, count_ties=count_ties,
        tests=chosen_tests, metric_signature=reference.signature, corpus_level=corpus_level,
    )
