"""ROUGE: parity with rouge-score, hand-computed cases, LCS oracle, bad input, evaluate module.

Expected numbers come from PyPI rouge-score, from a naive DP oracle, or from hand computation
(the worked examples of Lin 2004) - never from the code under test.
"""

from __future__ import annotations

import copy
import math
import random

import pytest

from nlgmetrics.rouge import rouge_scores, tokenize
from nlgmetrics.rouge.lcs import lcs_length, lcs_positions, match_masks

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")

CORE = ("rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum")
MEASURES = (("precision", 0), ("recall", 1), ("fmeasure", 2))

_WORDS = (
    "the a of cat cats dog dogs running runs ran run connection connected connecting happily happy "
    "mat sat on is was 1990 2.5 3,000 state-of-the-art police killed gunman kill quickly generously "
    "organization organizations university universal"
).split()
_EDGE = [
    "",
    "   ",
    "\n\n",
    "...!!!",
    "a",
    "The THE the",
    "Hello, World! It's 3.5-4 km & more.",
    "line one\nline two\n\nline three",
    "caf\u00e9 na\u00efve \u00fcber stra\u00dfe",
    "\u0130stanbul \u212aelvin",  # lower() of these yields ASCII letters in Python
    "\u4f60\u597d \u4e16\u754c emoji \U0001f600 ok",
    "x\ty\rz\u00a0w",
    "running runners ran; connections connected",
]


def varied_corpus(seed: int = 7, size: int = 120) -> tuple[list[str], list[list[str]]]:
    """Random sentences over a small vocabulary (many overlaps) plus hand-picked edge cases."""
    rng = random.Random(seed)

    def text() -> str:
        lines = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            words = [rng.choice(_WORDS) for _ in range(rng.randint(0, 14))]
            if words and rng.random() < 0.3:
                words[0] = words[0].capitalize()
            lines.append(" ".join(words) + rng.choice(["", ".", " !", ","]))
        return "\n".join(lines)

    preds = [text() for _ in range(size)] + _EDGE + _EDGE[::-1]
    refs = [[text() for _ in range(rng.randint(1, 3))] for _ in range(size)]
    refs += [[e, text()] for e in _EDGE[::-1]] + [[e] for e in _EDGE]
    # identical pairs and shared references, as in meta-evaluation
    preds.append(refs[0][0])
    refs.append([refs[0][0]])
    return preds, refs


def naive_lcs_table(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return table


def naive_backtrack(table, a, b):
    i, j, out = len(a), len(b), []
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            out.insert(0, i - 1)
            i -= 1
            j -= 1
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return out


# --------------------------------------------------------------------------- parity


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_parity_with_rouge_score_multi_reference(use_stemmer):
    preds, refs = varied_corpus()
    scorer = rouge_scorer.RougeScorer(list(CORE), use_stemmer=use_stemmer)
    expected = [scorer.score_multi(r, p) for p, r in zip(preds, refs)]
    ours = rouge_scores(preds, refs, CORE, use_stemmer=use_stemmer, multi_ref="best", aggregate=False)
    worst = 0.0
    for name in CORE:
        for measure, k in MEASURES:
            for exp, got in zip(expected, ours["scores"][name][measure]):
                worst = max(worst, abs(exp[name][k] - got))
    assert worst <= 1e-9


def test_parity_with_rouge_score_single_reference_strings():
    preds, refs = varied_corpus(seed=11, size=60)
    single = [r[0] for r in refs]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    ours = rouge_scores(preds, single, aggregate=False)["scores"]
    for i, (p, r) in enumerate(zip(preds, single)):
        exp = scorer.score(r, p)
        for name in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
            for measure, k in MEASURES:
                assert abs(exp[name][k] - ours[name][measure][i]) <= 1e-9, (name, measure, p, r)


def test_parity_on_realsumm_sample(shared_data_dir):
    import json

    path = shared_data_dir / "realsumm" / "realsumm.jsonl"
    rows = [json.loads(line) for line in path.open()][::25]
    preds = [r["prediction"] for r in rows]
    refs = [r["reference"] for r in rows]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=True)
    ours = rouge_scores(preds, refs, use_stemmer=True, aggregate=False)["scores"]
    for i, (p, r) in enumerate(zip(preds, refs)):
        exp = scorer.score(r, p)
        for name in exp:
            assert abs(exp[name].fmeasure - ours[name]["fmeasure"][i]) <= 1e-9


def test_tokenizer_matches_rouge_score():
    from rouge_score import tokenize as rs_tokenize
    from nltk.stem import porter

    preds, refs = varied_corpus(seed=3, size=40)
    stemmer = porter.PorterStemmer()
    for text in preds + [r for rr in refs for r in rr]:
        assert list(tokenize(text)) == rs_tokenize.tokenize(text, None)
        assert list(tokenize(text, stem=True)) == rs_tokenize.tokenize(text, stemmer)


def test_bit_parallel_lcs_matches_naive_dp():
    rng = random.Random(0)
    for _ in range(400):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 12))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 12))]
        table = naive_lcs_table(a, b)
        assert lcs_length(a, match_masks(b), len(b)) == table[-1][-1]
        assert lcs_positions(a, b, match_masks(b)) == naive_backtrack(table, a, b)


# --------------------------------------------------------------------------- hand-computed


def _one(pred, ref, rouge_type, **kw):
    out = rouge_scores([pred], [ref], [rouge_type], aggregate=False, **kw)["scores"][rouge_type]
    return out["precision"][0], out["recall"][0], out["fmeasure"][0]


def test_hand_rouge_n_and_l():
    pred, ref = "the cat sat on the mat", "the cat is on the mat"
    # unigrams: the x2, cat, on, mat match -> 5 of 6 on both sides
    assert _one(pred, ref, "rouge1") == pytest.approx((5 / 6, 5 / 6, 5 / 6), abs=1e-12)
    # bigrams: "the cat", "on the", "the mat" -> 3 of 5
    assert _one(pred, ref, "rouge2") == pytest.approx((3 / 5, 3 / 5, 3 / 5), abs=1e-12)
    # LCS "the cat on the mat" = 5
    assert _one(pred, ref, "rougeL") == pytest.approx((5 / 6, 5 / 6, 5 / 6), abs=1e-12)
    # F-beta with beta=2: 5 P R / (4 P + R)
    p, r = 1.0, 2 / 6  # "the cat": 2 of 2 predicted, 2 of 6 reference unigrams
    assert _one("the cat", "the cat is on the mat", "rouge1", beta=2.0)[2] == pytest.approx(5 * p * r / (4 * p + r))


def test_hand_rouge_lsum_union_lcs_example_from_the_paper():
    # Lin 2004, section 3.2: r = w1..w5, c1 = w1 w2 w6 w7 w8, c2 = w1 w3 w8 w9 w5
    # union LCS = w1 w2 w3 w5 -> 4 hits; recall 4/5, precision 4/10
    ref = "w1 w2 w3 w4 w5"
    pred = "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5"
    p, r, f = _one(pred, ref, "rougeLsum")
    assert (p, r) == pytest.approx((4 / 10, 4 / 5), abs=1e-12)
    assert f == pytest.approx(2 * p * r / (p + r))


def test_hand_rouge_w_example_from_the_paper():
    # Lin 2004, section 3.3: X = A B C D E F G; Y1 = A B C D H I K; with f(k) = k**2,
    # WLCS(X, Y1) = 4**2 = 16 -> R = P = sqrt(16 / 7**2) = 4/7 ("paper" normalisation).
    ref, pred = "a b c d e f g", "a b c d h i k"
    assert _one(pred, ref, "rougeW", rouge_w_weight=2.0, rouge_w_normalization="paper")[:2] == pytest.approx(
        (4 / 7, 4 / 7), abs=1e-12
    )
    # Y2 = A H B K C I D: four runs of one -> WLCS 4 -> sqrt(4/49) = 2/7
    assert _one("a h b k c i d", ref, "rougeW", rouge_w_weight=2.0, rouge_w_normalization="paper")[1] == pytest.approx(
        2 / 7, abs=1e-12
    )
    # ROUGE-1.5.5 divides the recall by f(f(7)) = 7**4: sqrt(16 / 7**4) = 4/49 ...
    assert _one(pred, ref, "rougeW", rouge_w_weight=2.0)[1] == pytest.approx(4 / 49, abs=1e-12)
    # ... and weighs runs of consecutive *reference* positions: Y2's a, b, c, d are consecutive
    # in X, so it also earns 4**2 = 16 there (the Perl parity test checks this against Perl).
    assert _one("a h b k c i d", ref, "rougeW", rouge_w_weight=2.0)[1] == pytest.approx(4 / 49, abs=1e-12)


def test_hand_rouge_s_example_from_the_paper():
    # Lin 2004, section 3.4: S1 reference; 6 skip-bigrams per sentence.
    s1 = "police killed the gunman"
    assert _one("police kill the gunman", s1, "rougeS*")[1] == pytest.approx(3 / 6)
    assert _one("the gunman kill police", s1, "rougeS*")[1] == pytest.approx(1 / 6)
    assert _one("the gunman police killed", s1, "rougeS*")[1] == pytest.approx(2 / 6)
    # gap 0 = plain bigrams: "the gunman" and "police killed" are shared, out of 3
    assert _one("the gunman police killed", s1, "rougeS0")[1] == pytest.approx(2 / 3)
    # ROUGE-SU as ROUGE-1.5.5 counts it: unigrams of all but the last word (3 each) + 6 pairs;
    # shared: "the", "police" + 2 skip-bigrams -> 4 of 9
    assert _one("the gunman police killed", s1, "rougeSU*")[1] == pytest.approx(4 / 9)


def test_multi_ref_average_pools_counts():
    # ref1 shares 2 of 2 unigrams, ref2 shares 1 of 4; pooled: hits 3, ref 6, pred 2 + 2
    p, r, _ = _one("a b", ["a b", "a x y z"], "rouge1", multi_ref="average")
    assert (p, r) == pytest.approx((3 / 4, 3 / 6))
    p, r, f = _one("a b", ["a b", "a x y z"], "rouge1", multi_ref="best")
    assert (p, r, f) == (1.0, 1.0, 1.0)


def test_stopwords_and_stemming_change_tokens():
    assert tokenize("The running of the cats", stem=True, remove_stopwords=True) == ("run", "cat")


# --------------------------------------------------------------------------- edge cases


ALL_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum", "rougeW", "rougeS4", "rougeSU4", "rougeS*"]


@pytest.mark.parametrize("pred, ref", [("", "a b"), ("   ", "a b"), ("a b", ""), ("", ""), ("!!", "\n\n"), (" \t", " ")])
def test_empty_and_whitespace_score_zero(pred, ref):
    out = rouge_scores([pred], [ref], ALL_TYPES, multi_ref="average", n_bootstrap=10)
    for name in ALL_TYPES:
        for measure in ("precision", "recall", "fmeasure"):
            value = out["scores"][name][measure][0]
            assert value == 0.0 and not math.isnan(value)
            assert out["aggregate"][name][measure]["mean"] == 0.0


def test_identity_is_one():
    texts = ["the cat sat on the mat", "A longer text.\nWith two lines, and punctuation!", "x y"]
    out = rouge_scores(texts, texts, ALL_TYPES, rouge_w_normalization="paper", aggregate=False)["scores"]
    for name in ALL_TYPES:
        assert out[name]["fmeasure"] == pytest.approx([1.0] * 3, abs=1e-12), name
    # ROUGE-1.5.5's ROUGE-W recall of a perfect 6-word match is 6**(1 - 1.2) (documented quirk)
    w = rouge_scores(texts[:1], texts[:1], ["rougeW"], aggregate=False)["scores"]["rougeW"]
    assert w["recall"][0] == pytest.approx(6 ** (1 - 1.2)) and w["precision"][0] == pytest.approx(1.0)


def test_inputs_not_mutated_and_order_invariant():
    preds, refs = varied_corpus(seed=5, size=20)
    preds_copy, refs_copy = copy.deepcopy(preds), copy.deepcopy(refs)
    forward = rouge_scores(preds, refs, ALL_TYPES, aggregate=False)["scores"]
    assert preds == preds_copy and refs == refs_copy
    order = list(range(len(preds)))[::-1]
    backward = rouge_scores([preds[i] for i in order], [refs[i] for i in order], ALL_TYPES, aggregate=False)["scores"]
    for name in ALL_TYPES:
        assert [backward[name]["fmeasure"][order.index(i)] for i in range(len(preds))] == forward[name]["fmeasure"]


def test_aggregate_is_mean_with_interval_and_signature():
    preds, refs = varied_corpus(seed=9, size=30)
    out = rouge_scores(preds, refs, ["rouge1"], n_bootstrap=200, confidence=0.9, seed=3)
    values = out["scores"]["rouge1"]["fmeasure"]
    agg = out["aggregate"]["rouge1"]["fmeasure"]
    assert agg["mean"] == pytest.approx(sum(values) / len(values))
    assert agg["low"] <= agg["mean"] <= agg["high"]
    again = rouge_scores(preds, refs, ["rouge1"], n_bootstrap=200, confidence=0.9, seed=3)
    assert again["aggregate"] == out["aggregate"]
    assert "stemmer:no" in out["signature"] and "types:rouge1" in out["signature"]
    assert "stemmer:porter" in rouge_scores(["a"], ["a"], ["rouge1"], use_stemmer=True)["signature"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(predictions=None, references=["a"]), r"`predictions` is None"),
        (dict(predictions=["a", "b"], references=["a"]), r"has 1 items but there are 2 predictions"),
        (dict(predictions=["a", 3], references=["a", "b"]), r"`predictions\[1\]` is int"),
        (dict(predictions=[], references=[]), r"`predictions` is empty"),
        (dict(predictions=["a"], references=[None]), r"`references\[0\]` is NoneType"),
        (dict(predictions=["a"], references=[[["a"]]]), r"nested too deeply"),
        (dict(predictions=["a"], references=[[]]), r"empty list"),
        (dict(predictions="a", references=["a"]), r"single string"),
        (dict(predictions=["a"], references=["a"], rouge_types=["rougeX"]), r"Unknown rouge type 'rougeX'"),
        (dict(predictions=["a"], references=["a"], rouge_types=[]), r"`rouge_types` is empty"),
        (dict(predictions=["a"], references=["a"], multi_ref="max"), r"Unknown multi_ref='max'"),
        (dict(predictions=["a"], references=["a"], beta=0), r"beta=0 must be a positive number"),
        (dict(predictions=["a"], references=["a"], rouge_w_weight=0.5), r"rouge_w_weight=0.5 must be"),
        (dict(predictions=["a"], references=["a"], n_bootstrap=0), r"n_bootstrap=0 must be a positive integer"),
        (dict(predictions=["a"], references=["a"], confidence="high"), r"confidence='high' must be a number"),
        (dict(predictions=["a"], references=["a"], confidence=1.0), r"strictly between 0 and 1"),
        (dict(predictions=["a"], references=["a"], aggregation="rouge155", confidence=0), r"strictly between"),
        (dict(predictions=["a"], references=["a"], use_stemmer="snowball"), r"Unknown use_stemmer='snowball'"),
        (dict(predictions=["a"], references=["a"], use_stemmer=1), r"Unknown use_stemmer=1"),
        (dict(predictions=["a"], references=["a"], use_stemmer="no"), r"Unknown use_stemmer='no'"),
        (dict(predictions=["a"], references=["a"], aggregation="median"), r"Unknown aggregation='median'"),
    ],
)
def test_bad_input_errors_name_the_problem(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rouge_scores(**kwargs)


def test_numpy_bool_stemmer_switch_is_the_plain_switch():
    # A switch read from a numpy config array: np.bool_(True) selects Porter, np.bool_(False) none.
    import numpy as np

    preds, refs = ["the cats were running"], ["a cat runs"]
    for flag in (True, False):
        ours = rouge_scores(preds, refs, ["rouge1"], use_stemmer=np.bool_(flag), aggregate=False)
        plain = rouge_scores(preds, refs, ["rouge1"], use_stemmer=flag, aggregate=False)
        assert ours == plain
    stemmed = rouge_scores(preds, refs, ["rouge1"], use_stemmer=np.bool_(True), aggregate=False)
    assert stemmed["scores"]["rouge1"]["recall"][0] > plain["scores"]["rouge1"]["recall"][0]


# --------------------------------------------------------------------------- evaluate module


def test_evaluate_module_loads_offline_and_batches(metrics_dir, monkeypatch):
    evaluate = pytest.importorskip("evaluate")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    module = evaluate.load(str(metrics_dir / "rouge_family"))
    preds = ["the cat sat on the mat", "hello world", ""]
    refs = [["a cat sat on the mat", "the cat lay"], ["hello there world"], ["something"]]
    module.add_batch(predictions=preds[:2], references=refs[:2])
    module.add_batch(predictions=preds[2:], references=refs[2:])
    out = module.compute(use_aggregator=False, rouge_types=["rouge1", "rougeLsum"])
    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeLsum"])
    expected = [scorer.score_multi(r, p)["rouge1"].fmeasure for p, r in zip(preds, refs)]
    assert out["rouge1"] == pytest.approx(expected, abs=1e-12)
    assert out["signature"].startswith("rouge|")
    single = module.compute(predictions=["a b"], references=["a b"])
    assert single["rouge1"] == 1.0 and single["aggregate"]["rouge1"]["fmeasure"]["mean"] == 1.0


def test_duplicates_batches_and_cache_do_not_change_scores():
    from nlgmetrics.rouge import clear_cache

    preds, refs = varied_corpus(seed=12, size=15)
    clear_cache()
    cold = rouge_scores(preds, refs, ALL_TYPES, aggregate=False)["scores"]
    warm = rouge_scores(preds, refs, ALL_TYPES, aggregate=False)["scores"]
    doubled = rouge_scores(preds + preds, refs + refs, ALL_TYPES, aggregate=False)["scores"]
    halves = [rouge_scores(preds[:7], refs[:7], ALL_TYPES, aggregate=False)["scores"],
              rouge_scores(preds[7:], refs[7:], ALL_TYPES, aggregate=False)["scores"]]
    for name in ALL_TYPES:
        for measure in ("precision", "recall", "fmeasure"):
            assert cold[name][measure] == warm[name][measure]
            assert doubled[name][measure] == cold[name][measure] * 2
            assert halves[0][name][measure] + halves[1][name][measure] == cold[name][measure]


def test_long_texts_are_handled():
    long_ref = " ".join(f"w{i % 500}" for i in range(12000))
    long_pred = " ".join(f"w{i % 500}" if i % 5 else "other" for i in range(11000))
    out = rouge_scores([long_pred], [long_ref], ["rouge1", "rouge2", "rougeL", "rougeLsum", "rougeS4"], aggregate=False)
    for name, columns in out["scores"].items():
        assert 0.0 < columns["fmeasure"][0] <= 1.0, name
    # the bit-parallel LCS agrees with rouge-score on a long pair
    expected = rouge_scorer.RougeScorer(["rougeL"]).score(long_ref[:6000], long_pred[:6000])["rougeL"]
    got = rouge_scores([long_pred[:6000]], [long_ref[:6000]], ["rougeL"], aggregate=False)["scores"]["rougeL"]
    assert abs(got["fmeasure"][0] - expected.fmeasure) <= 1e-9
