"""Meta-evaluation statistics against scipy, naive loops and hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from nlgmetrics.meta import (
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
    with pytest.raises(ValueError, match="n > 3"):
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
    from nlgmetrics.meta.bootstrap import batched_correlate

    rng = np.random.default_rng(9)
    x = rng.integers(0, 5, size=(40, 9)).astype(float)  # many ties
    y = rng.random((40, 9))
    x[0] = 2.0  # constant row -> nan
    got = batched_correlate(x, y, method)
    assert np.isnan(got[0])
    expected = [SCIPY[method](x[i], y[i]) for i in range(1, 40)]
    np.testing.assert_allclose(got[1:], expected, atol=1e-12)
