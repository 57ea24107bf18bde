"""Meta-evaluation statistics against scipy, naive loops and hand computations; the clear errors
of their arguments (counts, seeds, sample sizes, numpy scalars); the meta package's import graph;
the score cache's file keys."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from nlgmetrics.stats import (
    bootstrap_ci,
    correlate,
    paired_bootstrap,
    pivot,
    system_level,
    text_level,
    williams_from_scores,
    williams_test,
)

SCIPY = {
    "pearson": lambda x, y: stats.pearsonr(x, y)[0],
    "spearman": lambda x, y: stats.spearmanr(x, y)[0],
    "kendall": lambda x, y: stats.kendalltau(x, y)[0],
}


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_correlate_matches_scipy(method):
    rng = np.random.default_rng(3)
    x, y = rng.random(25), rng.random(25)
    y[3] = y[7]  # a tie, so Kendall tau-b's tie correction matters
    assert correlate(x, y, method) == pytest.approx(SCIPY[method](x, y), abs=1e-12)


def test_kendall_hand_computed():
    # pairs of (1,2,3,4) vs (1,3,2,4): 5 concordant, 1 discordant -> (5-1)/6
    assert correlate([1, 2, 3, 4], [1, 3, 2, 4], "kendall") == pytest.approx(4 / 6)
    # Pearson by hand: x=(1,2,3), y=(1,2,4): cov sum = 3, ss_x = 2, ss_y = 14/3
    assert correlate([1, 2, 3], [1, 2, 4], "pearson") == pytest.approx(3 / math.sqrt(2 * 14 / 3))


def test_undefined_correlations_are_nan_and_counted():
    assert math.isnan(correlate([1, 1, 1], [1, 2, 3]))
    assert math.isnan(correlate([1, 2], [1, 2]))  # two points: always +-1, not informative
    metric = np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0], [3.0, 2.0, 1.0]])
    human = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 4.0]])
    result = text_level(metric, human, "pearson")
    assert result.n_used == 2 and result.n_skipped == 1
    expected = (1.0 + stats.pearsonr([3, 2, 1], [1, 2, 4])[0]) / 2
    assert result.value == pytest.approx(expected)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_text_and_system_level_match_naive_loops(method):
    rng = np.random.default_rng(5)
    human = rng.random((12, 8))
    metric = human + rng.normal(0, 0.3, size=human.shape)
    metric[2, 4] = np.nan  # a missing output: dropped from that document and that system's mean
    naive_docs = []
    for i in range(12):
        keep = ~np.isnan(metric[i])
        naive_docs.append(SCIPY[method](metric[i, keep], human[i, keep]))
    assert text_level(metric, human, method).value == pytest.approx(np.mean(naive_docs), abs=1e-12)
    m_means = [np.mean(metric[~np.isnan(metric[:, j]), j]) for j in range(8)]
    h_means = [np.mean(human[~np.isnan(human[:, j]), j]) for j in range(8)]
    assert system_level(metric, human, method).value == pytest.approx(SCIPY[method](m_means, h_means), abs=1e-12)


def test_pivot_and_duplicate_keys():
    matrix, docs, systems = pivot([1, 2, 3], [0, 0, 1], ["a", "b", "b"])
    assert docs == [0, 1] and systems == ["a", "b"]
    assert np.isnan(matrix[1, 0]) and matrix[1, 1] == 3
    with pytest.raises(ValueError, match="unique"):
        pivot([1, 2], [0, 0], ["a", "a"])
    with pytest.raises(ValueError, match="matrices"):
        text_level(np.zeros((2, 3)), np.zeros((3, 2)))


def test_bootstrap_matches_naive_resampling():
    rng = np.random.default_rng(11)
    human = rng.random((15, 6))
    metric = human + rng.normal(0, 0.4, size=human.shape)
    n_res, seed = 300, 7
    idx = np.random.default_rng(seed).integers(0, 15, size=(n_res, 15))
    naive_text, naive_sys = [], []
    for row in idx:
        naive_text.append(np.mean([stats.kendalltau(metric[i], human[i])[0] for i in row]))
        naive_sys.append(stats.kendalltau(metric[row].mean(0), human[row].mean(0))[0])
    for level, naive in (("text", naive_text), ("system", naive_sys)):
        ci = bootstrap_ci(metric, human, level=level, method="kendall", n_resamples=n_res, seed=seed)
        assert ci.low == pytest.approx(np.quantile(naive, 0.025))
        assert ci.high == pytest.approx(np.quantile(naive, 0.975))
    point = bootstrap_ci(metric, human, level="system", method="kendall", n_resamples=10).value
    assert point == pytest.approx(system_level(metric, human, "kendall").value)


def test_paired_bootstrap():
    rng = np.random.default_rng(2)
    human = rng.random((25, 7))
    good = human + 0.05 * rng.random(human.shape)
    noise = rng.random(human.shape)
    res = paired_bootstrap(good, noise, human, level="text", method="pearson", n_resamples=300)
    expected = text_level(good, human).value - text_level(noise, human).value
    assert res.diff == pytest.approx(expected)
    assert res.p_value < 0.01 and res.low > 0
    same = paired_bootstrap(good, good, human, n_resamples=50)
    assert same.diff == 0 and same.p_value == 0.5  # identical metrics: no evidence either way


def test_williams_hand_computation():
    # r12=.4, r13=.5, r23=.1, n=103 (the psych::r.test documentation example, Steiger 1980)
    k = 1 - 0.16 - 0.25 - 0.01 + 2 * 0.4 * 0.5 * 0.1  # 0.62
    denom = 2 * k * 102 / 100 + 0.45**2 * 0.9**3  # 1.2648 + 0.1476225
    t = -0.1 * math.sqrt(102 * 1.1) / math.sqrt(denom)
    res = williams_test(0.4, 0.5, 0.1, 103, alternative="two-sided")
    assert res.t == pytest.approx(t, abs=1e-12)
    assert res.t == pytest.approx(-0.8913, abs=1e-4)
    assert res.df == 100
    assert res.p_value == pytest.approx(2 * stats.t.sf(abs(t), 100))
    assert round(res.p_value, 2) == 0.37
    greater = williams_test(0.5, 0.4, 0.1, 103)
    assert greater.t == pytest.approx(-t) and greater.p_value == pytest.approx(res.p_value / 2)
    with pytest.raises(ValueError, match=r"`n` must be an integer > 3 .*n - 3 degrees of freedom\), got 3"):
        williams_test(0.4, 0.5, 0.1, 3)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        williams_test(1.4, 0.5, 0.1, 30)


def test_williams_from_scores_uses_the_three_correlations():
    rng = np.random.default_rng(4)
    human = rng.random(30)
    a, b = human + 0.1 * rng.random(30), human + rng.random(30)
    res = williams_from_scores(a, b, human)
    assert res.r12 == pytest.approx(stats.pearsonr(a, human)[0])
    assert res.r23 == pytest.approx(stats.pearsonr(a, b)[0])
    assert res.p_value < 0.05


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_batched_correlate_matches_scipy(method):
    from nlgmetrics.stats.coefficients import batched_correlate

    rng = np.random.default_rng(9)
    x = rng.integers(0, 5, size=(40, 9)).astype(float)  # many ties
    y = rng.random((40, 9))
    x[0] = 2.0  # constant row -> nan
    got = batched_correlate(x, y, method)
    assert np.isnan(got[0])
    expected = [SCIPY[method](x[i], y[i]) for i in range(1, 40)]
    np.testing.assert_allclose(got[1:], expected, atol=1e-12)


# ------------------------------------------------------------------------------------------------
# the statistics helpers' arguments: a clear error naming the argument and the fix, never a number
# computed from a value that is not what it looks like

STATS_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
RNG = np.random.default_rng(21)
HUMAN = RNG.random((8, 5))
METRIC = HUMAN + 0.3 * RNG.random((8, 5))
OTHER = RNG.random((8, 5))

#: Not a positive integer count: floats (integral ones too, as every integer option of the
#: library), numpy floats, bools, zero / negatives, strings, None.
bad_counts = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1e6, 1e6).map(np.float32),
    st.floats(-1e6, 1e6).map(np.float64),
    st.booleans(),
    st.booleans().map(np.bool_),
    st.integers(max_value=0),
    st.integers(max_value=0).map(np.int64),
    st.text(max_size=4),
    st.none(),
)
bad_seeds = st.one_of(
    st.integers(max_value=-1),
    st.integers(-(2**62), -1).map(np.int64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(0, 1e6).map(np.float32),
    st.booleans(),
    st.text(max_size=4),
)


@STATS_SETTINGS
@given(bad_counts, st.sampled_from(["bootstrap_ci", "paired_bootstrap", "tables", "indices"]))
def test_non_integer_resample_counts_are_refused(n_resamples, where):
    with pytest.raises(ValueError, match=r"`n_resamples` must be a positive integer \(bootstrap resamples, e\.g\. 1000\)"):
        _resample_with(where, n_resamples=n_resamples, seed=0)


@STATS_SETTINGS
@given(bad_seeds, st.sampled_from(["bootstrap_ci", "paired_bootstrap", "tables", "indices"]))
def test_negative_or_non_integer_seeds_are_refused(seed, where):
    with pytest.raises(ValueError, match=r"`seed` must be a non-negative integer or None \(the seed of numpy\.random\.default_rng"):
        _resample_with(where, n_resamples=20, seed=seed)


def _resample_with(where, *, n_resamples, seed):
    from nlgmetrics.stats.bootstrap import resample_indices
    from benchmarks.meta.tables import correlation_tables

    if where == "bootstrap_ci":
        return bootstrap_ci(METRIC, HUMAN, n_resamples=n_resamples, seed=seed)
    if where == "paired_bootstrap":
        return paired_bootstrap(METRIC, OTHER, HUMAN, n_resamples=n_resamples, seed=seed)
    if where == "indices":
        return resample_indices(8, n_resamples, seed)
    return correlation_tables(_examples(), {"m": [float(v) for v in METRIC.ravel()]}, ("h",), ("all",),
                              baseline=None, n_resamples=n_resamples, seed=seed)


def _examples():
    from benchmarks.meta.data import Example

    return [Example(f"{d}|{s}", str(d), str(s), "all", "", ("r",), "", {"h": float(HUMAN[d, s])})
            for d in range(HUMAN.shape[0]) for s in range(HUMAN.shape[1])]


@STATS_SETTINGS
@given(st.integers(1, 40), st.integers(0, 2**40), st.sampled_from(["text", "system"]))
def test_numpy_integer_counts_and_seeds_give_the_python_int_numbers(n_resamples, seed, level):
    """np.int64 / np.int32 are integers: the same resamples and numbers as Python ints, and the
    recorded count is a plain int (it goes into JSON results)."""
    plain = bootstrap_ci(METRIC, HUMAN, level=level, n_resamples=n_resamples, seed=seed)
    numpy = bootstrap_ci(METRIC, HUMAN, level=level, n_resamples=np.int32(n_resamples), seed=np.int64(seed))
    assert numpy == plain and type(numpy.n_resamples) is int
    paired = paired_bootstrap(METRIC, OTHER, HUMAN, level=level, n_resamples=np.int64(n_resamples), seed=np.uint32(seed % 2**32))
    assert paired == paired_bootstrap(METRIC, OTHER, HUMAN, level=level, n_resamples=n_resamples, seed=seed % 2**32)


def test_seed_none_draws_fresh_resamples_and_one_document_is_refused():
    from nlgmetrics.stats.bootstrap import resample_indices

    assert resample_indices(5, 3, None).shape == (3, 5)
    with pytest.raises(ValueError, match=r"the bootstrap needs at least 2 documents, got 1; score more documents"):
        bootstrap_ci(METRIC[:1], HUMAN[:1])


@STATS_SETTINGS
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True).filter(lambda c: not 0 < c < 1),
                 st.integers(1, 100), st.just("0.95"), st.booleans()))
def test_confidence_outside_the_open_unit_interval_is_refused(confidence):
    from benchmarks.meta.tables import correlation_tables

    pattern = r"confidence=.* must be a number strictly between 0 and 1 \(a fraction: 0\.95 for a 95% interval\)"
    with pytest.raises(ValueError, match=pattern):
        bootstrap_ci(METRIC, HUMAN, n_resamples=10, confidence=confidence)
    with pytest.raises(ValueError, match=pattern):
        correlation_tables(_examples(), {"m": [float(v) for v in METRIC.ravel()]}, ("h",), ("all",), None,
                           n_resamples=10, confidence=confidence)


def test_numpy_confidence_is_a_plain_float():
    ci = bootstrap_ci(METRIC, HUMAN, n_resamples=50, confidence=np.float64(0.9))
    assert ci == bootstrap_ci(METRIC, HUMAN, n_resamples=50, confidence=0.9)
    assert type(ci.confidence) is float


def _k(r12, r13, r23):
    return 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23


@st.composite
def possible_correlations(draw):
    """(r12, r13, r23) that three variables can have together (K > 0), away from the degenerate
    r23 = 1 and exactly representable as float32 values."""
    values = [float(np.float32(draw(st.floats(-0.95, 0.95)))) for _ in range(3)]
    r12, r13, r23 = values
    if _k(r12, r13, r23) <= 0.01:
        r23 = float(np.float32(r12 * r13))  # K = (1 - r12^2)(1 - r13^2) > 0 for this r23
    return r12, r13, r23


@STATS_SETTINGS
@given(possible_correlations(), st.integers(4, 10_000), st.sampled_from(["greater", "less", "two-sided"]))
def test_williams_float32_correlations_equal_their_python_floats(rs, n, alternative):
    """A float32 correlation (np.corrcoef of float32 scores) is accepted and computed in float64:
    exactly the result for the same values as Python floats, with plain floats in the result."""
    plain = williams_test(*rs, n, alternative=alternative)
    numpy = williams_test(*(np.float32(r) for r in rs), np.int64(n), alternative=alternative)
    assert numpy == plain
    assert all(type(v) is float for v in (numpy.t, numpy.p_value, numpy.r12, numpy.r13, numpy.r23))
    assert type(numpy.n) is int and type(numpy.df) is int
    assert math.isfinite(numpy.t) and 0.0 <= numpy.p_value <= 1.0


def test_williams_float32_matches_the_float64_formula():
    """The float32 inputs used to be refused with a misleading message; the value is the float64
    computation of the hand formula (not a float32 one)."""
    r12, r13, r23 = np.float32(0.4), np.float32(0.5), np.float32(0.1)
    a, b, c = float(r12), float(r13), float(r23)
    k = _k(a, b, c)
    t = (a - b) * math.sqrt(102 * (1 + c)) / math.sqrt(2 * k * 102 / 100 + ((a + b) / 2) ** 2 * (1 - c) ** 3)
    assert williams_test(r12, r13, r23, 103).t == t


@STATS_SETTINGS
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(4, 1e4).map(np.float64),
                 st.integers(max_value=3), st.booleans(), st.just("103"), st.none()))
def test_williams_sample_size_must_be_an_integer_above_three(n):
    """NaN used to give t = nan and p = nan, a fractional n a p-value for a sample that does not exist."""
    with pytest.raises(ValueError, match=r"`n` must be an integer > 3 \(the number of items both correlations were computed on"):
        williams_test(0.4, 0.5, 0.1, n)


@STATS_SETTINGS
@given(st.sampled_from(["r12", "r13", "r23"]),
       st.one_of(st.floats(allow_nan=True, allow_infinity=True).filter(lambda r: not -1 <= r <= 1),
                 st.just(float("nan")), st.just(np.float32("nan")), st.floats(1.01, 10).map(np.float32),
                 st.booleans(), st.just("0.5"), st.none()))
def test_williams_correlations_must_be_finite_numbers_in_range(name, bad):
    rs = {"r12": 0.4, "r13": 0.5, "r23": 0.1} | {name: bad}
    with pytest.raises(ValueError, match=rf"`{name}` must be a correlation: a finite number in \[-1, 1\]"):
        williams_test(rs["r12"], rs["r13"], rs["r23"], 30)


def test_williams_impossible_correlation_triple_is_refused():
    """r12 = .9, r13 = .5, r23 = -.2 cannot happen together (K < 0); the formula still gave a p-value."""
    assert _k(0.9, 0.5, -0.2) < 0
    with pytest.raises(ValueError, match=r"cannot be correlations of one set of items \(K = -0\.28 < 0"):
        williams_test(0.9, 0.5, -0.2, 50)
    williams_test(0.6, 0.6, 1.0 - 1e-9, 50)  # K ~ 0 from rounding near the degenerate case: still a test


@STATS_SETTINGS
@given(st.integers(3, 30), st.integers(0, 10**6), st.sampled_from(["pearson", "spearman", "kendall"]))
def test_float32_scores_correlate_as_their_float64_values(n, seed, method):
    rng = np.random.default_rng(seed)
    x, y = rng.random(n).astype(np.float32), rng.random(n).astype(np.float32)
    expected = correlate(x.astype(np.float64), y.astype(np.float64), method)
    got = correlate(x, y, method)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected
    assert type(got) is float


def test_runner_checks_bootstrap_and_seed_before_scoring(capsys):
    from benchmarks.meta.runner import main

    # no data at --data-dir: the seed is refused before anything is loaded
    with pytest.raises(SystemExit) as info:
        main(["--datasets", "webnlg2020", "--seed", "-1", "--data-dir", "/nonexistent"])
    assert info.value.code == 2
    assert "--seed: `seed` must be a non-negative integer" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--datasets", "webnlg2020", "--bootstrap", "0", "--data-dir", "/nonexistent"])
    assert "`n_resamples` must be a positive integer" in capsys.readouterr().err


def test_pivot_refuses_a_second_score_after_a_missing_one():
    with pytest.raises(ValueError, match="two scores for document 0 and system 'a'"):
        pivot([float("nan"), 1.0], [0, 0], ["a", "a"])


# ------------------------------------------------------------------------------------------------
# the package's import graph: no circle, no private names across modules

STATS = Path(__file__).resolve().parents[2] / "src" / "nlgmetrics" / "stats"


def _stats_imports() -> dict[str, set[tuple[str, str]]]:
    """module -> {(imported stats module, name)} for every import (module level or in a function)."""
    graph: dict[str, set[tuple[str, str]]] = {}
    for path in sorted(STATS.glob("*.py")):
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nlgmetrics.stats."):
                edges |= {(node.module.rsplit(".", 1)[1], alias.name) for alias in node.names}
            elif isinstance(node, ast.Import):
                edges |= {(a.name.rsplit(".", 1)[1], "") for a in node.names if a.name.startswith("nlgmetrics.stats.")}
        graph[path.stem] = edges
    return graph


def test_stats_modules_import_each_other_without_a_circle():
    graph = {m: {target for target, _ in edges} for m, edges in _stats_imports().items() if m != "__init__"}
    assert {"bootstrap", "correlation", "coefficients"} <= set(graph)
    assert "bootstrap" not in graph["correlation"] and "correlation" not in graph["coefficients"]
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in graph.get(module, ()):
            assert state.get(target) != "open", f"import circle: {' -> '.join([*path, module, target])}"
            if target not in state:
                visit(target, [*path, module])
        state[module] = "done"

    for module in graph:
        if module not in state:
            visit(module, [])


def test_stats_modules_import_no_private_names():
    private = sorted((m, target, name) for m, edges in _stats_imports().items() for target, name in edges
                     if name.startswith("_"))
    assert private == []


# ------------------------------------------------------------------------------------------------
# the score cache: files keyed by an options hash that committed results name


RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


_INFOLM_OLD_IDF_RESULTS = {"realsumm_lm6.json", "realsumm_lm2.json", "webnlg2020_lm10.json"}


def test_committed_results_name_the_cache_files_their_options_hash_to():
    """Each committed result records every family's cache options and cache file; the hash of those
    options is still the file's key, and the runner still builds those options from the defaults
    (or the recorded command's flags): a rerun of the recorded command reads those caches (InfoLM's
    excepted, see below)."""
    from benchmarks.meta.cache import ScoreCache, options_hash
    from benchmarks.meta.metrics import FAMILIES, INFOLM_IDF_RULE
    from benchmarks.meta.runner import _options, build_parser

    checked = 0
    for path in sorted(RESULTS.glob("*/*.json")):  # one folder per report
        record = json.loads(path.read_text(encoding="utf-8"))
        if "metric_runs" not in record:  # a speed report's rows, not a meta-evaluation
            continue
        words = record["command"].split()
        # "python benchmarks/meta_eval.py ..." (older results) or "python -m benchmarks.meta_eval ..."
        argv = words[3:] if words[1] == "-m" else words[2:]
        options = _options(build_parser().parse_args(argv))
        for run in record["metric_runs"]:
            family = FAMILIES[run["family"]]
            cache_options = dict(run["options"])
            assert Path(run["cache_file"]).name == f"{family.name}-{options_hash(cache_options)}.jsonl", run
            # infolm_idf: a digest of the dataset's references, added per dataset by run_dataset
            rebuilt = {"family": family.name, **{k: options[k] for k in family.option_names if k != "infolm_idf"}}
            recorded = {k: v for k, v in cache_options.items() if k != "infolm_idf"}
            assert rebuilt == recorded, (path.name, run["family"])
            if family.name == "infolm":
                # The subsets computed when the dataset idf table reached InfoLM as a plain mapping
                # (unseen tokens weighted by the largest idf, not log(N + 1)) have keys without the
                # rule, so a rerun recomputes them instead of reading them back as the new rule's;
                # every later result names the rule in its key.
                old_rule = not cache_options["infolm_idf"].endswith(INFOLM_IDF_RULE)
                assert old_rule == (path.name in _INFOLM_OLD_IDF_RESULTS), path.name
            cache = ScoreCache("/r", record["dataset"], family.name, cache_options)
            assert cache.path.name == Path(run["cache_file"]).name
            checked += 1
    assert checked >= 10


def test_cache_reads_files_written_before_the_new_signatures(tmp_path):
    """A cache written by the previous library (old-style signatures, a chunk cut by a kill) is
    read as it is: scores by example key, ``null`` as nan, every signature listed."""
    from benchmarks.meta.cache import ScoreCache

    cache = ScoreCache(tmp_path, "realsumm", "bleu", {"family": "bleu"})
    cache.path.parent.mkdir(parents=True)
    cache.path.write_text(
        json.dumps({"options": {"family": "bleu"}}) + "\n"
        + json.dumps({"scores": {"0|abs:a#1": {"bleu": 12.5}, "0|abs:b#2": {"bleu": None}},
                      "signature": "bleu|case:mixed|eff:yes|nrefs:1|order:4|smooth:exp|tok:13a|version:0.1.0"}) + "\n"
        + '{"scores": {"1|abs:a#3": {"bl'  # cut short
    )
    assert cache.path.name == "bleu-49922c10f5.jsonl"  # the key the committed REALSumm results name
    loaded = cache.load()
    assert loaded["0|abs:a#1"] == {"bleu": 12.5} and math.isnan(loaded["0|abs:b#2"]["bleu"])
    assert "1|abs:a#3" not in loaded
    assert cache.signatures == ["bleu|case:mixed|eff:yes|nrefs:1|order:4|smooth:exp|tok:13a|version:0.1.0"]
    cache.append({"1|abs:a#3": {"bleu": 3.0}}, signature="bleu|new")
    assert ScoreCache(tmp_path, "realsumm", "bleu", {"family": "bleu"}).load()["1|abs:a#3"] == {"bleu": 3.0}


def _append_many(root: str, writer: int, chunks: int) -> None:
    from benchmarks.meta.cache import ScoreCache

    cache = ScoreCache(root, "toy", "fflm", {"family": "fflm"})
    for c in range(chunks):
        # ~60 kB per line: far beyond one buffered write, so only the lock keeps lines whole.
        cache.append({f"{writer}|{c}|{k}": {"fflm": float(k)} for k in range(2000)}, signature=f"fflm|w{writer}")


def test_cache_appends_from_several_processes_keep_every_line_whole(tmp_path):
    """Sharded runner processes append to one cache file: every chunk of every process is read back."""
    import multiprocessing

    from benchmarks.meta.cache import ScoreCache

    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(str(tmp_path), w, 6)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
        assert w.exitcode == 0
    lines = ScoreCache(tmp_path, "toy", "fflm", {"family": "fflm"}).path.read_text().splitlines()
    assert len(lines) == 1 + 4 * 6 and json.loads(lines[0]) == {"options": {"family": "fflm"}}
    loaded = ScoreCache(tmp_path, "toy", "fflm", {"family": "fflm"}).load()
    assert len(loaded) == 4 * 6 * 2000 and loaded["3|5|1999"] == {"fflm": 1999.0}


# ------------------------------------------------------------------------------------------------
# the metric runs read MetricResult columns and orient them by the declared direction


def test_families_orient_columns_by_the_declared_direction():
    from typing import ClassVar

    from nlgmetrics.core.result import Column, MetricResult
    from benchmarks.meta.metrics import oriented, read_outputs

    class Mixed(MetricResult):
        metric: ClassVar[str] = "mixed"
        main: ClassVar[str] = "up"
        columns: ClassVar[dict[str, Column]] = {"up": Column(True, 0, 1, "higher is better"),
                                                 "down": Column(False, 0, 1, "lower is better")}

    result = Mixed(scores={"up": [0.25, 1], "down": [0.5, 0]}, signature="mixed")
    assert oriented(result, "up") == [0.25, 1.0] and oriented(result, "down") == [-0.5, -0.0]
    assert read_outputs(result, {"a": "down", "b": "up"}) == {"a": [-0.5, -0.0], "b": [0.25, 1.0]}
    with pytest.raises(KeyError):
        oriented(result, "sideways")


def test_paired_bootstrap_of_metrics_equal_up_to_rounding_is_a_tie():
    """A library metric and its reference implementation can differ by 1e-14 on some rows (float
    rounding): their correlations then differ by ~1e-16 per resample, which is no evidence either
    way: p = 0.5 as for identical metrics, not a value moved by the signs of rounding errors."""
    rng = np.random.default_rng(8)
    human = rng.random((20, 6))
    metric = 100 * (human + 0.2 * rng.random(human.shape))
    rounded = metric.copy()
    rounded[::3, ::2] += 4e-14  # the size of sacrebleu's 100.00000000000004 vs 100.0
    for level in ("text", "system"):
        res = paired_bootstrap(rounded, metric, human, level=level, method="pearson", n_resamples=200)
        assert res.p_value == 0.5 and abs(res.diff) < 1e-12


@STATS_SETTINGS
@given(st.lists(st.one_of(st.floats(-2, -1e-9), st.floats(1e-9, 2), st.just(0.0), st.floats(-1e-13, 1e-13)),
                min_size=1, max_size=50))
def test_one_sided_p_counts_signs_beyond_the_tie_tolerance(diffs):
    from nlgmetrics.stats.bootstrap import one_sided_p

    naive_below = sum(d < -1e-12 for d in diffs) / len(diffs)
    naive_ties = sum(abs(d) <= 1e-12 for d in diffs) / len(diffs)
    assert one_sided_p(np.array(diffs)) == pytest.approx(naive_below + naive_ties / 2, abs=1e-12)


def test_williams_equal_correlations_are_a_tie_even_for_identical_metrics():
    """r12 = r13 (up to rounding) is t = 0: p = 0.5 one-sided, 1 two-sided, also for two identical
    metrics (r23 = 1, where the formula is 0/0); an impossible triple is still refused."""
    for r23 in (1.0, 1 - 1e-16, 0.3):
        res = williams_test(0.6, 0.6 + 1e-15, r23, 17)
        assert (res.t, res.p_value) == (0.0, 0.5)
        assert williams_test(0.6, 0.6, r23, 17, alternative="two-sided").p_value == 1.0
    human = np.arange(10.0)
    metric = human**2
    assert williams_from_scores(metric, metric + 4e-14, human).p_value == 0.5
    with pytest.raises(ValueError, match="cannot be correlations of one set of items"):
        williams_test(0.9, 0.9, -0.9, 30)
    with pytest.raises(ValueError, match="cannot be correlations of one set of items"):
        williams_test(0.5, 0.7, 1.0, 30)  # r23 = 1 needs r12 = r13: K = -(r12 - r13)^2
    with pytest.raises(ValueError, match="perfectly correlated"):
        williams_test(0.5, 0.5 + 1e-9, 1.0, 30)  # K ~ -1e-18 (rounding's size) but not a tie


def test_undefined_correlations_carry_their_reason_in_the_shared_statistics():
    """Every level, the bootstrap interval, the paired p-value and Williams say why a number is nan."""
    from nlgmetrics.stats import correlation

    rng = np.random.default_rng(0)
    human, metric = rng.random((6, 5)), rng.random((6, 5))
    flat = np.full((6, 5), 2.0)
    # Oracle: which input is constant, where, is known by construction.
    assert correlation(metric, flat, "pooled", "kendall").reason == "human scores constant"
    assert correlation(flat, human, "text", "pearson").reason == "metric constant in every document"
    assert correlation(flat, flat, "system", "spearman").reason == (
        "metric and human scores constant across the system means")
    assert correlation(metric[:, :2], human[:, :2], "system").reason == "fewer than 3 systems"
    metric_part, human_part = metric.copy(), human.copy()
    metric_part[:3], human_part[3:] = 1.0, 2.0  # no document with both varying
    assert correlation(metric_part, human_part, "text").reason == (
        "no document has a defined correlation (metric constant: 3 documents; human scores constant: 3 documents)")
    assert correlation(metric_part, human, "text").reason is None  # documents 3-5 are defined
    for level in ("text", "pooled", "system"):
        assert correlation(metric, human, level).reason is None
    ci = bootstrap_ci(metric, flat, "text", "kendall", n_resamples=20)
    assert math.isnan(ci.low) and ci.reason == "human scores constant in every document"
    assert bootstrap_ci(metric, human, "system", n_resamples=20).reason is None
    paired = paired_bootstrap(metric, flat, human, "pooled", n_resamples=20)
    assert math.isnan(paired.p_value) and paired.reason == "metric_b's correlation is undefined: metric constant"
    assert paired_bootstrap(metric, human, human, "pooled", n_resamples=20).reason is None
    with pytest.raises(ValueError, match="Williams test undefined: metric_a constant"):
        williams_from_scores([1, 1, 1, 1], [1, 2, 3, 4], [2, 1, 4, 3])
    with pytest.raises(ValueError, match="Williams test undefined: fewer than 4 items"):
        williams_from_scores([1, 2, 3], [3, 2, 1], [2, 1, 3])


def test_interval_undefined_on_every_resample_says_so():
    from nlgmetrics.stats.bootstrap import NO_DEFINED_RESAMPLE, interval_reason

    assert interval_reason(np.array([np.nan, np.nan]), None) == NO_DEFINED_RESAMPLE
    assert interval_reason(np.array([np.nan, np.nan]), "metric constant") == "metric constant"
    assert interval_reason(np.array([np.nan, 0.3]), None) is None


# ------------------------------------------------------------------------------------------------
# the benchmark's own docstring examples (outside the package, so tests/contract/test_docstring_examples.py
# does not see them)


def _benchmark_meta_modules() -> list[str]:
    import pkgutil

    import benchmarks.meta

    return sorted(info.name for info in pkgutil.walk_packages(benchmarks.meta.__path__, prefix="benchmarks.meta."))


@pytest.mark.parametrize("name", _benchmark_meta_modules())
def test_benchmark_meta_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted or name.rsplit(".", 1)[1] in {"cache", "plots"}, name  # the examples were found
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples in {name} failed"
