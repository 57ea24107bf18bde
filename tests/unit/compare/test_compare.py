"""Paired significance tests (``nlgmetrics.compare``, ``nlgmetrics compare``).

- parity with sacrebleu's ``PairedTest`` (paired bootstrap and approximate randomization, same
  seed and counts) for BLEU on WebNLG 2020 systems, bit for bit; for chrF (p-values and scores
  equal, bootstrap means/intervals to float32 precision: sacrebleu computes chrF from float32
  sums in float32, nlgmetrics.chrf in float64);
- a naive oracle (explicit loops over sacrebleu's documented draws) for a per-example metric (ROUGE);
- edge cases: identical systems, lengths, one system, unknown baseline, bad options;
- the corpus-statistics extension point;
- the command line (files in tmp_path).
"""

from __future__ import annotations

import collections
import csv
import dataclasses
import json
import math

import numpy as np
import pytest

from nlgmetrics.apps.cli import main as cli_main
from nlgmetrics.bleu import bleu, bleu_from_statistics, bleu_statistics
from nlgmetrics.compare import compare_systems
from nlgmetrics.core.protocol import MetricProtocol, Resampling
from nlgmetrics.registry import get_protocol, metric_names
from nlgmetrics.stats.significance import bootstrap_interval, p_value
from nlgmetrics.rouge import rouge_family

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU  # noqa: E402
from sacrebleu.significance import PairedTest  # noqa: E402

# ---------------------------------------------------------------------------------------------
# WebNLG 2020 systems (full English test set: 1,779 items, 1-5 references each)

#: Systems with close corpus BLEU (40.3-40.7), so that the p-values are not all at their minimum.
WEBNLG_SYSTEMS = ("RALI", "Baseline-FORGE2020", "DANGNT-SGU")


@pytest.fixture(scope="module")
def webnlg(shared_data_dir):
    folder = shared_data_dir / "webnlg2020"
    if not (folder / "test_en.jsonl").is_file() or not (folder / "submissions_en.jsonl").is_file():
        pytest.skip(f"WebNLG 2020 test set / submissions not found in {folder}")
    test = [json.loads(line) for line in (folder / "test_en.jsonl").read_text(encoding="utf-8").splitlines()]
    outputs: dict[str, dict[int, str]] = collections.defaultdict(dict)
    for line in (folder / "submissions_en.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        outputs[row["system"]][row["id"]] = row["prediction"]
    ids = [item["id"] for item in test]
    references = [item["references"] for item in test]
    systems = {name: [outputs[name][i] for i in ids] for name in WEBNLG_SYSTEMS}
    return systems, references


def _streams(references):
    """Per-example reference lists -> sacrebleu's reference streams (None: no reference there)."""
    width = max(map(len, references))
    return [[refs[j] if j < len(refs) else None for refs in references] for j in range(width)]


def _sacrebleu_paired(systems, references, metric, test_type, n_samples):
    signatures, table = PairedTest(list(systems.items()), {"m": metric}, _streams(references),
                                   test_type=test_type, n_samples=n_samples)()
    (name,) = [key for key in table if key != "System"]
    return signatures[name].format(), dict(zip(table["System"], table[name]))


N_BS, N_AR = 1000, 2000


@pytest.fixture(scope="module")
def bleu_parity(webnlg):
    systems, references = webnlg
    ours = compare_systems(systems, references, metric="bleu", n_bootstrap=N_BS, n_permutations=N_AR,
                           count_ties=False)
    bs = _sacrebleu_paired(systems, references, BLEU(), "bs", N_BS)
    ar = _sacrebleu_paired(systems, references, BLEU(), "ar", N_AR)
    return ours, bs, ar


@pytest.mark.slow
def test_bleu_paired_bootstrap_equals_sacrebleu_bit_for_bit(bleu_parity):
    ours, (signature, theirs), _ = bleu_parity
    assert "bs:1000" in signature and "seed:12345" in signature
    p_values = []
    for name, reference in theirs.items():
        row = ours[name]
        assert row.score == reference.score
        assert row.bootstrap_mean == reference.mean  # the baseline's own interval too
        assert row.ci_half_width == reference.ci
        assert row.p_bootstrap == reference.p_value  # None for the baseline in both
        p_values.append(reference.p_value)
    assert any(p is not None and p > 0.05 for p in p_values), "the test should include a non-significant pair"


@pytest.mark.slow
def test_bleu_approximate_randomization_equals_sacrebleu(bleu_parity):
    ours, _, (signature, theirs) = bleu_parity
    assert f"ar:{N_AR}" in signature
    for name, reference in theirs.items():
        assert ours[name].score == reference.score
        assert ours[name].p_randomization == reference.p_value
    assert len({reference.p_value for reference in theirs.values()}) == len(theirs)  # informative p-values


@pytest.mark.slow
def test_counting_ties_changes_nothing_on_real_systems(bleu_parity, webnlg):
    """Ties with the observed difference happen only in degenerate cases: on real systems the
    default count equals sacrebleu's strict one."""
    ours_strict, _, _ = bleu_parity
    systems, references = webnlg
    ours = compare_systems(systems, references, metric="bleu", n_bootstrap=N_BS, n_permutations=N_AR)
    for row, strict in zip(ours, ours_strict):
        assert (row.p_bootstrap, row.p_randomization) == (strict.p_bootstrap, strict.p_randomization)
    assert ours.signature.split("|")[-5:] == ["bs:1000", f"ar:{N_AR}", "paired_seed:12345", "ties:count",
                                              "version:0.1.0"]


@pytest.mark.slow
def test_bleu_statistics_equal_sacrebleus_and_reproduce_bleu(webnlg):
    systems, references = webnlg
    hypotheses = systems["RALI"]
    ours = bleu_statistics(hypotheses, references)
    theirs = np.array(BLEU()._extract_corpus_statistics(hypotheses, _streams(references)))
    np.testing.assert_array_equal(ours, theirs)
    result = bleu(hypotheses, references)
    assert bleu_from_statistics(ours.sum(axis=0)) == result.main_score
    assert list(ours[:, 0]) == list(result.sentence_sys_len) and list(ours[:, 1]) == list(result.sentence_ref_len)


def _resampled(name: str) -> bool:
    return name in metric_names() and get_protocol(name).resampling is not None


@pytest.mark.slow
@pytest.mark.skipif(not _resampled("chrf"), reason="nlgmetrics.chrf (chrf_statistics) not available")
def test_chrf_paired_tests_equal_sacrebleu(webnlg):
    from sacrebleu.metrics import CHRF

    systems, references = webnlg
    systems = {name: outputs[:400] for name, outputs in list(systems.items())[:3]}
    references = references[:400]
    ours = compare_systems(systems, references, metric="chrf", n_bootstrap=N_BS, n_permutations=1000,
                           count_ties=False)
    assert ours.corpus_level
    _, bs = _sacrebleu_paired(systems, references, CHRF(), "bs", N_BS)
    _, ar = _sacrebleu_paired(systems, references, CHRF(), "ar", 1000)
    for name in systems:
        assert ours[name].score == pytest.approx(bs[name].score, abs=1e-9)
        assert ours[name].p_bootstrap == bs[name].p_value
        assert ours[name].p_randomization == ar[name].p_value
        # sacrebleu's bootstrap chrF is float32 arithmetic (float32 sums); ours float64
        assert ours[name].bootstrap_mean == pytest.approx(float(bs[name].mean), abs=1e-4)
        assert ours[name].ci_half_width == pytest.approx(float(bs[name].ci), abs=1e-4)


@pytest.mark.slow
@pytest.mark.skipif(not _resampled("ter"), reason="nlgmetrics.ter (ter_statistics) not available")
def test_ter_paired_tests_equal_sacrebleu(webnlg):
    from sacrebleu.metrics import TER

    systems, references = webnlg
    # TER's shift search is slow (sacrebleu's too): 60 short examples, two systems
    keep = [i for i, refs in enumerate(references) if max(len(r.split()) for r in refs) <= 14][:60]
    systems = {name: [outputs[i] for i in keep] for name, outputs in list(systems.items())[:2]}
    references = [references[i] for i in keep]
    ours = compare_systems(systems, references, metric="ter", n_bootstrap=N_BS, n_permutations=1000,
                           count_ties=False)
    assert ours.corpus_level and not ours.higher_is_better
    _, bs = _sacrebleu_paired(systems, references, TER(), "bs", N_BS)
    _, ar = _sacrebleu_paired(systems, references, TER(), "ar", 1000)
    for name in systems:
        assert ours[name].score == pytest.approx(bs[name].score, abs=1e-9)
        assert ours[name].p_bootstrap == bs[name].p_value
        assert ours[name].p_randomization == ar[name].p_value
        assert ours[name].bootstrap_mean == pytest.approx(float(bs[name].mean), abs=1e-4)
        assert ours[name].ci_half_width == pytest.approx(float(bs[name].ci), abs=1e-4)


# ---------------------------------------------------------------------------------------------
# small synthetic data

REFERENCES = [
    "the cat sat on the mat", "a dog barks at the moon", "it rains in spring and autumn",
    "birds fly south in winter", "the market opens at nine", "she reads a book every night",
    "trains leave from platform two", "the river floods every year", "he paints the old fence",
    "we walk to school together", "the soup is too salty today", "my phone battery died again",
]
SYSTEM_A = [
    "the cat sat on a mat", "a dog barks", "it rains in spring", "birds fly in winter",
    "the market opens at ten", "she reads books at night", "trains leave from platform three",
    "the river floods", "he paints the fence", "we walk together", "the soup is salty", "my battery died",
]
SYSTEM_B = [
    "the cat sat on the mat", "a dog barks at the moon", "it rains in autumn", "birds fly south",
    "the market opens at nine", "she reads a book", "the trains leave from platform two",
    "a river floods every year", "he paints an old fence", "we go to school together",
    "the soup is too salty", "my phone battery died",
]
SYSTEM_C = [text.split(" ", 1)[-1] for text in SYSTEM_B]


def _naive_rouge_oracle(baseline, system, n_bootstrap, n_trials, seed):
    """The paired tests written out with loops, from sacrebleu's documented draws and formulas."""
    n = len(baseline)
    indices = np.random.default_rng(seed).choice(n, size=(n_bootstrap, n), replace=True)
    bs_base = [sum(baseline[i] for i in row) / n for row in indices]
    bs_sys = [sum(system[i] for i in row) / n for row in indices]
    ordered = sorted(bs_sys)
    low, high = ordered[n_bootstrap // 40], ordered[n_bootstrap - n_bootstrap // 40 - 1]
    observed = abs(sum(system) / n - sum(baseline) / n)
    diffs = [abs(s - b) for s, b in zip(bs_sys, bs_base)]
    mean_diff = sum(diffs) / len(diffs)
    p_bs = (sum(d - mean_diff >= observed for d in diffs) + 1) / (n_bootstrap + 1)
    masks = np.random.default_rng(seed).integers(2, size=(n_trials, n), dtype=bool)
    count = 0
    for mask in masks:
        a = sum(baseline[i] if keep else system[i] for i, keep in enumerate(mask)) / n
        b = sum(system[i] if keep else baseline[i] for i, keep in enumerate(mask)) / n
        count += abs(a - b) >= observed
    p_ar = (count + 1) / (n_trials + 1)
    return sum(bs_sys) / n_bootstrap, low, high, p_bs, p_ar


def test_per_example_metric_matches_a_naive_oracle():
    systems = {"a": SYSTEM_A, "b": SYSTEM_B, "c": SYSTEM_C}
    result = compare_systems(systems, REFERENCES, metric="rouge_family", n_bootstrap=400, n_permutations=600,
                             seed=7, metric_options={"rouge_types": ["rougeL"], "n_bootstrap": 10})
    assert result.column == "rougeL" and not result.corpus_level and result.baseline == "a"
    scores = {name: rouge_family(texts, REFERENCES, rouge_types=["rougeL"], n_bootstrap=10).scores["rougeL"]
              for name, texts in systems.items()}
    for name in ("b", "c"):
        mean, low, high, p_bs, p_ar = _naive_rouge_oracle(scores["a"], scores[name], 400, 600, 7)
        row = result[name]
        assert row.score == pytest.approx(sum(scores[name]) / len(REFERENCES), abs=1e-15)
        assert row.delta == pytest.approx(row.score - result["a"].score, abs=1e-15)
        assert (row.bootstrap_mean, row.ci_low, row.ci_high) == pytest.approx((mean, low, high), abs=1e-12)
        assert row.p_bootstrap == p_bs and row.p_randomization == p_ar
    assert 0.001 < result["b"].p_randomization < 0.2  # a real, not a degenerate, p-value
    assert result.signature.endswith("|bs:400|ar:600|paired_seed:7|ties:count|version:0.1.0")


def test_another_column_is_compared_when_asked():
    result = compare_systems({"a": SYSTEM_A, "b": SYSTEM_B}, REFERENCES, metric="bleu", column="sentence_bleu",
                             n_bootstrap=100, n_permutations=100)
    sentence = bleu(SYSTEM_B, REFERENCES).scores["sentence_bleu"]
    assert not result.corpus_level and result["b"].score == pytest.approx(sum(sentence) / len(sentence), abs=1e-12)
    assert "|column:sentence_bleu|" in result.signature


def test_bleu_on_small_data_equals_sacrebleu_including_ties():
    """Three systems on 12 examples: sacrebleu's numbers, both tests, with its strict tie count."""
    systems = {"a": SYSTEM_A, "b": SYSTEM_B, "c": SYSTEM_C}
    references = [[r] for r in REFERENCES]
    ours = compare_systems(systems, references, metric="bleu", n_bootstrap=200, n_permutations=500,
                           count_ties=False)
    _, bs = _sacrebleu_paired(systems, references, BLEU(), "bs", 200)
    _, ar = _sacrebleu_paired(systems, references, BLEU(), "ar", 500)
    for name in systems:
        assert (ours[name].score, ours[name].bootstrap_mean, ours[name].ci_half_width, ours[name].p_bootstrap) == \
            (bs[name].score, bs[name].mean, bs[name].ci, bs[name].p_value)
        assert ours[name].p_randomization == ar[name].p_value


# ---------------------------------------------------------------------------------------------
# edge cases


@pytest.mark.parametrize("metric", ["bleu", "rouge_family"])
def test_identical_systems_have_p_equal_to_one(metric):
    result = compare_systems({"a": SYSTEM_A, "same": list(SYSTEM_A)}, REFERENCES, metric=metric,
                             n_bootstrap=100, n_permutations=100)
    row = result["same"]
    assert row.delta == 0.0 and row.p_bootstrap == 1.0 and row.p_randomization == 1.0
    assert (row.bootstrap_mean, row.ci_low, row.ci_high) == (result["a"].bootstrap_mean, result["a"].ci_low,
                                                             result["a"].ci_high)


def test_identical_systems_with_sacrebleus_strict_count_equal_sacrebleu():
    """sacrebleu's count gives identical systems the smallest p-value, 1/(N+1): kept as an option."""
    systems = {"a": SYSTEM_A, "same": list(SYSTEM_A)}
    references = [[r] for r in REFERENCES]
    ours = compare_systems(systems, references, metric="bleu", n_bootstrap=100, n_permutations=100,
                           count_ties=False)
    _, bs = _sacrebleu_paired(systems, references, BLEU(), "bs", 100)
    _, ar = _sacrebleu_paired(systems, references, BLEU(), "ar", 100)
    assert ours["same"].p_bootstrap == bs["same"].p_value == 1 / 101
    assert ours["same"].p_randomization == ar["same"].p_value == 1 / 101


def test_p_value_and_interval_by_hand():
    assert p_value(np.array([0.1, 0.5, 0.5, 0.9]), 0.5) == 4 / 5  # 0.5, 0.5, 0.9 count, +1
    assert p_value(np.array([0.1, 0.5, 0.5, 0.9]), 0.5, count_ties=False) == 2 / 5
    scores = np.arange(1000.0)[::-1]  # sorted first: positions 25 and 974
    assert bootstrap_interval(scores) == (499.5, 25.0, 974.0)


def test_systems_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match=r"different numbers of outputs .*'b': 11"):
        compare_systems({"a": SYSTEM_A, "b": SYSTEM_B[:-1]}, REFERENCES, metric="bleu")
    with pytest.raises(ValueError, match="`references_or_sources` is 11 items but every system has 12"):
        compare_systems({"a": SYSTEM_A, "b": SYSTEM_B}, REFERENCES[:-1], metric="bleu")


def test_one_system_is_refused():
    with pytest.raises(ValueError, match="needs at least two"):
        compare_systems({"a": SYSTEM_A}, REFERENCES, metric="bleu")
    with pytest.raises(TypeError, match="mapping from system name"):
        compare_systems([SYSTEM_A, SYSTEM_B], REFERENCES, metric="bleu")


def test_unknown_baseline_metric_column_and_options_are_refused():
    systems = {"a": SYSTEM_A, "b": SYSTEM_B}
    with pytest.raises(ValueError, match=r"baseline 'x' is not one of the systems \['a', 'b'\]"):
        compare_systems(systems, REFERENCES, metric="bleu", baseline="x")
    with pytest.raises(ValueError, match="Unknown metric 'blue'"):
        compare_systems(systems, REFERENCES, metric="blue")
    with pytest.raises(ValueError, match="no per-example column 'rouge9'"):
        compare_systems(systems, REFERENCES, metric="rouge_family", column="rouge9")
    with pytest.raises(ValueError, match="Unknown tests='cv'"):
        compare_systems(systems, REFERENCES, metric="bleu", tests=["bs", "cv"])
    with pytest.raises(ValueError, match="`n_bootstrap` must be a positive integer"):
        compare_systems(systems, REFERENCES, metric="bleu", n_bootstrap=0)
    with pytest.raises(ValueError, match="`seed` must be a non-negative integer or None"):
        compare_systems(systems, REFERENCES, metric="bleu", seed=-1)
    with pytest.raises(ValueError, match="does not take option"):
        compare_systems(systems, REFERENCES, metric="bleu", metric_options={"tokenise": "intl"})
    with pytest.raises(ValueError, match=r"`systems\['b'\]\[0\]` is int"):
        compare_systems({"a": SYSTEM_A, "b": [1] * 12}, REFERENCES, metric="bleu")


def test_inputs_are_not_modified_and_options_reach_the_metric():
    systems = {"a": list(SYSTEM_A), "b": list(SYSTEM_B)}
    options = {"tokenize": "char"}
    before = json.dumps([systems, options])
    result = compare_systems(systems, REFERENCES, metric="bleu", metric_options=options, tests="bs",
                             n_bootstrap=50)
    assert json.dumps([systems, options]) == before
    assert result["b"].score == bleu(SYSTEM_B, REFERENCES, tokenize="char").main_score
    assert "tokenize:char" in result.signature and "|ar:none|" in result.signature
    assert result["b"].p_randomization is None and result.tests == ("bs",)


def test_the_metric_runs_once_per_system(monkeypatch):
    calls = []
    original = MetricProtocol.run

    def counting(self, predictions, others, **options):
        calls.append(self.name)
        return original(self, predictions, others, **options)

    monkeypatch.setattr(MetricProtocol, "run", counting)
    compare_systems({"a": SYSTEM_A, "b": SYSTEM_B, "c": SYSTEM_C}, REFERENCES, metric="rouge_family",
                    n_bootstrap=300, n_permutations=300)
    assert calls == ["rouge_family"] * 3
    calls.clear()
    # a corpus-level metric: the metric on the baseline, the statistics on every system
    compare_systems({"a": SYSTEM_A, "b": SYSTEM_B, "c": SYSTEM_C}, REFERENCES, metric="bleu",
                    n_bootstrap=30, n_permutations=30)
    assert calls == ["bleu"]


def test_an_lm_metric_is_compared_through_its_per_example_scores(tiny_gpt2_dir):
    from nlgmetrics.shannon import shannon_score

    documents = ["Jack drove to the bazaar. He bought milk and honey.", "The sun rose. Birds sang loudly.",
                 "Rain fell all day. The streets were wet.", "She opened the door. A cat walked in."]
    systems = {"short": ["Jack bought milk.", "Birds sang.", "It rained.", "A cat came in."],
               "long": ["Jack bought milk and honey.", "The sun rose and birds sang.", "Rain made streets wet.",
                        "She opened the door to a cat."]}
    result = compare_systems(systems, documents, metric="shannon_score", n_bootstrap=100, n_permutations=100,
                             metric_options={"model": str(tiny_gpt2_dir)})
    direct = shannon_score(systems["long"], documents, model=str(tiny_gpt2_dir))
    assert result["long"].score == pytest.approx(direct.mean()["shannon_score"], abs=1e-12)
    assert result.metric_signature.startswith("shannon_score|model:")


# ---------------------------------------------------------------------------------------------
# the protocol's resampling: how a corpus-level metric is resampled

CALLS: list[str] = []


def recording_statistics(predictions, references, **options):
    CALLS.append("statistics")
    return bleu_statistics(predictions, references, **options)


def recording_from_statistics(summed, **options):
    CALLS.append("from_statistics")
    return bleu_from_statistics(summed, **options)


def wrong_from_statistics(summed, **options):
    return bleu_from_statistics(summed, **options) + 1.0


def _bleu_resampled_by(statistics: str, from_statistics: str) -> MetricProtocol:
    """BLEU's protocol with another declared resampling (a protocol compare takes directly)."""
    return dataclasses.replace(get_protocol("bleu"), resampling=Resampling(statistics, from_statistics))


def test_the_declared_resampling_is_what_resamples_a_corpus_metric():
    protocol = _bleu_resampled_by(f"{__name__}:recording_statistics", f"{__name__}:recording_from_statistics")
    CALLS.clear()
    result = compare_systems({"a": SYSTEM_A, "b": SYSTEM_B}, REFERENCES, metric=protocol, n_bootstrap=30,
                             n_permutations=20)
    assert result.metric == "bleu"
    assert result.corpus_level
    assert CALLS.count("statistics") == 2
    assert CALLS.count("from_statistics") == 2 + 2 * 30 + 2 * 20  # scores, resamples, trials


def test_a_resampling_that_does_not_reproduce_the_metric_is_a_bug():
    protocol = _bleu_resampled_by(f"{__name__}:recording_statistics", f"{__name__}:wrong_from_statistics")
    with pytest.raises(RuntimeError, match="this is a bug"):
        compare_systems({"a": SYSTEM_A, "b": SYSTEM_B}, REFERENCES, metric=protocol, n_bootstrap=5)


def test_a_corpus_metric_without_statistics_is_a_clear_error():
    protocol = dataclasses.replace(get_protocol("bleu"), resampling=None)
    with pytest.raises(ValueError, match="corpus-level and its protocol declares no resampling"):
        compare_systems({"a": SYSTEM_A, "b": SYSTEM_B}, REFERENCES, metric=protocol, n_bootstrap=5)


def test_every_corpus_level_metric_declares_its_resampling():
    """A metric whose main score is not a per-example column (a corpus score) declares how
    compare resamples it, with functions that exist; the others declare none."""
    with pytest.raises(ValueError, match="import path"):
        Resampling("a:b", "no_colon").score([1.0])
    for name in metric_names():
        protocol = get_protocol(name)
        corpus_level = protocol.main is not None and protocol.main not in protocol.columns
        assert (protocol.resampling is not None) == corpus_level, name
        if corpus_level:
            rows = protocol.resampling.statistics(["a b c d"], [["a b c d"]])
            assert rows.shape[0] == 1 and math.isfinite(protocol.resampling.score(rows.sum(axis=0))), name


# ---------------------------------------------------------------------------------------------
# the command line


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path):
    return {
        "refs": _write(tmp_path / "refs.txt", REFERENCES),
        "a": _write(tmp_path / "sys_a.txt", SYSTEM_A),
        "b": _write(tmp_path / "sys_b.txt", SYSTEM_B),
        "c": _write(tmp_path / "sys_c.txt", SYSTEM_C),
        "short": _write(tmp_path / "short.txt", SYSTEM_A[:-1]),
        "dir": tmp_path,
    }


def test_cli_table_json_csv_and_plot(files, capsys):
    out = files["dir"]
    code = cli_main(["compare", "-r", files["refs"], files["a"], files["b"], files["c"], "-m", "bleu",
                     "--baseline", "sys_b", "--n-bootstrap", "200", "--n-permutations", "300", "--no-progress",
                     "--json", str(out / "c.json"), "--csv", str(out / "c.csv"), "--plot", str(out / "c.png")])
    printed = capsys.readouterr().out
    assert code == 0
    expected = compare_systems({"sys_a": SYSTEM_A, "sys_b": SYSTEM_B, "sys_c": SYSTEM_C}, REFERENCES,
                               metric="bleu", baseline="sys_b", n_bootstrap=200, n_permutations=300)
    saved = json.loads((out / "c.json").read_text())
    assert saved == json.loads(json.dumps(expected.to_dict()))
    lines = printed.splitlines()
    assert lines[0].split()[:2] == ["system", "bleu"]
    row_a = next(line for line in lines if line.startswith("sys_a "))
    a = expected["sys_a"]
    assert f"{a.score:.1f}" in row_a and f"{a.delta:+.1f}" in row_a and f"{a.p_bootstrap:.4f}" in row_a
    assert any(line.startswith("sys_b (baseline)") for line in lines)
    assert f"signature: {expected.signature}" in printed
    with open(out / "c.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["system"] for r in rows] == ["sys_a", "sys_b", "sys_c"]
    assert float(rows[2]["p_randomization"]) == expected["sys_c"].p_randomization
    assert rows[1]["p_bootstrap"] == "" and rows[1]["is_baseline"] == "True"
    assert (out / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_one_test_options_and_strict_ties(files, capsys):
    out = files["dir"]
    code = cli_main(["compare", "-r", files["refs"], files["a"], files["a"], "--names", "one", "two",
                     "--paired-bs", "--strict-ties", "--n-bootstrap", "99", "--option", "tokenize=char",
                     "--quiet", "--json", str(out / "t.json")])
    assert code == 0 and capsys.readouterr().out == ""
    saved = json.loads((out / "t.json").read_text())
    assert saved["tests"] == ["bs"] and saved["n_permutations"] is None
    assert saved["systems"][1]["p_bootstrap"] == 1 / 100 and saved["systems"][1]["p_randomization"] is None
    assert "tokenize:char" in saved["signature"] and "ties:strict" in saved["signature"]


def test_cli_rouge_per_example(files, capsys):
    code = cli_main(["compare", "-r", files["refs"], files["a"], files["b"], "-m", "rouge_family",
                     "--option", "rouge_family.rouge_types=rougeL", "--n-bootstrap", "100",
                     "--n-permutations", "100", "--no-progress"])
    printed = capsys.readouterr().out
    expected = compare_systems({"sys_a": SYSTEM_A, "sys_b": SYSTEM_B}, REFERENCES, metric="rouge_family",
                               metric_options={"rouge_types": ["rougeL"]}, n_bootstrap=100, n_permutations=100)
    assert code == 0
    assert f"{expected['sys_b'].score:.4f}" in printed and f"{expected['sys_b'].p_randomization:.4f}" in printed


@pytest.mark.parametrize(("extra", "message"), [
    (["{a}"], "at least two system files"),
    (["{a}", "{short}"], "one line per example"),
    (["{a}", "{b}", "--baseline", "nope"], "--baseline 'nope' is none of the systems"),
    (["{a}", "{b}", "--option", "tokenise=intl"], "bleu has no option 'tokenise'"),
    (["{a}", "{b}", "--option", "rouge_family.use_stemmer=true"], "metric is bleu, not rouge_family"),
    (["{a}", "{b}", "--model", "gpt2"], "bleu uses no language model"),
    (["{a}", "{b}", "--json", "{dir}/missing/x.json"], "does not exist"),
])
def test_cli_errors_are_one_line(files, capsys, extra, message):
    argv = ["compare", "-r", files["refs"], *[item.format(**files) for item in extra], "--no-progress"]
    assert cli_main(argv) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1 and error.startswith("nlgmetrics compare: error:")


def test_cli_needs_references_or_sources(files, capsys):
    assert cli_main(["compare", files["a"], files["b"], "--no-progress"]) == 2
    assert "bleu needs references" in capsys.readouterr().err
    assert cli_main(["compare", files["a"], files["b"], "-m", "shannon_score", "--no-progress"]) == 2
    assert "needs source documents" in capsys.readouterr().err


def test_cli_defaults_are_the_librarys():
    import inspect

    from nlgmetrics.apps.cli import build_parser

    args = build_parser().parse_args(["compare", "-r", "r.txt", "a.txt", "b.txt"])
    defaults = inspect.signature(compare_systems).parameters
    assert (args.n_bootstrap, args.n_permutations, args.seed) == (
        defaults["n_bootstrap"].default, defaults["n_permutations"].default, defaults["seed"].default)
    assert math.isclose(args.n_bootstrap, 1000) and args.seed == 12345  # sacrebleu's


def test_cli_cache_dir_stores_an_lm_metrics_work_and_a_rerun_reads_it(tiny_gpt2_dir, tmp_path, monkeypatch):
    """``compare --cache-dir DIR`` reaches the LM metric as ``cache_dir``: the first run fills the
    store (its sqlite file, read directly), a rerun calls the model not once (a forward hook counts)
    and prints the same comparison; the numbers equal a run without a store."""
    import sqlite3
    from contextlib import closing

    from nlgmetrics.engine.loading import load_lm
    from nlgmetrics.engine.store import STORE_FILE

    monkeypatch.delenv("NLGMETRICS_CACHE_DIR", raising=False)
    documents = _write(tmp_path / "docs.txt", ["Jack drove to the bazaar. He bought milk.", "The sun rose. Birds sang."])
    short = _write(tmp_path / "short.txt", ["Jack bought milk.", "Birds sang."])
    long = _write(tmp_path / "long.txt", ["Jack drove and bought milk.", "The sun rose and birds sang."])
    store = tmp_path / "store"

    def compare(name, *extra):
        argv = ["compare", "-s", documents, short, long, "-m", "fflm", "--model", str(tiny_gpt2_dir),
                "--n-bootstrap", "20", "--n-permutations", "20", "--no-progress", "--quiet",
                "--json", str(tmp_path / f"{name}.json"), *extra]
        assert cli_main(argv) == 0
        return json.loads((tmp_path / f"{name}.json").read_text())

    model = load_lm(str(tiny_gpt2_dir)).model  # the object every run below uses (loaded once)
    calls = []
    hook = getattr(model, "base_model", model).register_forward_pre_hook(lambda *_: calls.append(1))
    try:
        plain = compare("plain")
        assert calls, "the counter sees the model's passes"
        first = compare("first", "--cache-dir", str(store))
        with closing(sqlite3.connect(store / STORE_FILE)) as db:
            assert db.execute("SELECT COUNT(*) FROM entries").fetchone()[0] > 0
        calls.clear()
        again = compare("again", "--cache-dir", str(store))
    finally:
        hook.remove()
    assert calls == [] and again == first
    for system_plain, system_stored in zip(plain["systems"], first["systems"]):
        assert system_stored["score"] == pytest.approx(system_plain["score"], abs=1e-5)


def test_cli_cache_dir_of_a_metric_without_a_model_is_refused(files, capsys):
    assert cli_main(["compare", "-r", files["refs"], files["a"], files["b"], "--cache-dir", str(files["dir"])]) == 2
    error = capsys.readouterr().err
    assert "--cache-dir" in error and "bleu uses no language model" in error and error.count("\n") == 1
