"""ROUGE: parity with rouge-score, hand-computed cases, LCS oracle, bad input, numeric limits
(beta, rouge_w_weight, ROUGE-N order), the result contract, the evaluate module and its card's
headline (the card and module examples run in tests/contract/test_text_metrics.py).

Expected numbers come from PyPI rouge-score, from a naive DP oracle, from exact rational
arithmetic, or from hand computation (the worked examples of Lin 2004) - never from the code
under test.
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
import sys
import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlgmetrics.rouge import rouge_family, tokenize
from nlgmetrics.core.signature import parse_signature
from nlgmetrics.rouge.lcs import lcs_length, lcs_positions, match_masks
from tests.support.evaluate_support import (
    FIRST_SHAPES,
    compute_in_two_batches,
    mixed_shapes_first,
    reference_lists,
    sacrebleu_streams,
)
from tests.support.markdown_examples import REPO_ROOT

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")

CORE = ("rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum")
# (column suffix, index in rouge-score's Score tuple)
MEASURES = (("_precision", 0), ("_recall", 1), ("", 2))
SUFFIXES = ("_precision", "_recall", "")

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
    ours = rouge_family(preds, refs, rouge_types=CORE, use_stemmer=use_stemmer, multi_ref="best", n_bootstrap=0)
    worst = 0.0
    for name in CORE:
        for suffix, k in MEASURES:
            for exp, got in zip(expected, ours.scores[name + suffix]):
                worst = max(worst, abs(exp[name][k] - got))
    assert worst <= 1e-9


def test_parity_with_rouge_score_single_reference_strings():
    preds, refs = varied_corpus(seed=11, size=60)
    single = [r[0] for r in refs]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    ours = rouge_family(preds, single, n_bootstrap=0).scores
    for i, (p, r) in enumerate(zip(preds, single)):
        exp = scorer.score(r, p)
        for name in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
            for suffix, k in MEASURES:
                assert abs(exp[name][k] - ours[name + suffix][i]) <= 1e-9, (name, suffix, p, r)


def test_parity_on_realsumm_sample(shared_data_dir):
    import json

    path = shared_data_dir / "realsumm" / "realsumm.jsonl"
    rows = [json.loads(line) for line in path.open()][::25]
    preds = [r["prediction"] for r in rows]
    refs = [r["reference"] for r in rows]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=True)
    ours = rouge_family(preds, refs, use_stemmer=True, n_bootstrap=0).scores
    for i, (p, r) in enumerate(zip(preds, refs)):
        exp = scorer.score(r, p)
        for name in exp:
            assert abs(exp[name].fmeasure - ours[name][i]) <= 1e-9


def test_tokenizer_matches_rouge_score():
    from rouge_score import tokenize as rs_tokenize
    from nltk.stem import porter

    preds, refs = varied_corpus(seed=3, size=40)
    stemmer = porter.PorterStemmer()
    for text in preds + [r for rr in refs for r in rr]:
        assert list(tokenize(text)) == rs_tokenize.tokenize(text, None)
        assert list(tokenize(text, stem=True)) == rs_tokenize.tokenize(text, stemmer)


def test_rouge_score_names_take_rouge_scores_layout_or_refuse_it():
    """``tokenize``, ``Score`` and ``fmeasure`` carry rouge-score's names. ``tokenize(text, None)``
    is rouge-score's call too; its stemmer *object* would silently mean Porter here: refused."""
    from nltk.stem import porter, snowball
    from rouge_score import scoring as rs_scoring
    from rouge_score import tokenize as rs_tokenize

    from nlgmetrics.rouge import Score
    from nlgmetrics.rouge.scoring import fmeasure

    text = "Generously organised runners ran"
    assert list(tokenize(text, None)) == rs_tokenize.tokenize(text, None)
    for stemmer in (porter.PorterStemmer(), snowball.SnowballStemmer("english")):
        with pytest.raises(ValueError, match=r"rouge-score's tokenize\(text, stemmer\) takes a stemmer object"):
            tokenize(text, stemmer)
    # the two stemmers really differ on this text: Porter in their place would be a wrong number
    assert rs_tokenize.tokenize(text, porter.PorterStemmer()) != rs_tokenize.tokenize(text, snowball.SnowballStemmer("english"))
    with pytest.raises(ValueError, match=r"stem='snowball' names no stemmer.*'rouge155'\.$"):
        tokenize(text, stem="snowball")
    assert Score._fields == rs_scoring.Score._fields
    rng = random.Random(5)
    for _ in range(200):
        precision, recall = rng.choice([0.0, rng.random()]), rng.choice([0.0, rng.random()])
        assert fmeasure(precision, recall) == rs_scoring.fmeasure(precision, recall)


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
    out = rouge_family([pred], [ref], rouge_types=[rouge_type], n_bootstrap=0, **kw).scores
    return out[f"{rouge_type}_precision"][0], out[f"{rouge_type}_recall"][0], out[rouge_type][0]


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
    out = rouge_family([pred], [ref], rouge_types=ALL_TYPES, multi_ref="average", n_bootstrap=10)
    aggregate = out.aggregate()
    for name in ALL_TYPES:
        for suffix in SUFFIXES:
            value = out.scores[name + suffix][0]
            assert value == 0.0 and not math.isnan(value)
            assert aggregate[name + suffix] == 0.0


def test_identity_is_one():
    texts = ["the cat sat on the mat", "A longer text.\nWith two lines, and punctuation!", "x y"]
    out = rouge_family(texts, texts, rouge_types=ALL_TYPES, rouge_w_normalization="paper", n_bootstrap=0).scores
    for name in ALL_TYPES:
        assert out[name] == pytest.approx([1.0] * 3, abs=1e-12), name
    # ROUGE-1.5.5's ROUGE-W recall of a perfect 6-word match is 6**(1 - 1.2) (documented quirk)
    w = rouge_family(texts[:1], texts[:1], rouge_types=["rougeW"], n_bootstrap=0).scores
    assert w["rougeW_recall"][0] == pytest.approx(6 ** (1 - 1.2)) and w["rougeW_precision"][0] == pytest.approx(1.0)


def test_inputs_not_mutated_and_order_invariant():
    preds, refs = varied_corpus(seed=5, size=20)
    preds_copy, refs_copy = copy.deepcopy(preds), copy.deepcopy(refs)
    forward = rouge_family(preds, refs, rouge_types=ALL_TYPES, n_bootstrap=0).scores
    assert preds == preds_copy and refs == refs_copy
    order = list(range(len(preds)))[::-1]
    backward = rouge_family([preds[i] for i in order], [refs[i] for i in order], rouge_types=ALL_TYPES,
                            n_bootstrap=0).scores
    for name in ALL_TYPES:
        assert [backward[name][order.index(i)] for i in range(len(preds))] == forward[name]


def test_aggregate_is_mean_with_interval_and_signature():
    preds, refs = varied_corpus(seed=9, size=30)
    out = rouge_family(preds, refs, rouge_types=["rouge1"], n_bootstrap=200, confidence=0.9, seed=3)
    values = out.scores["rouge1"]
    aggregate = out.aggregate()
    assert aggregate["rouge1"] == pytest.approx(sum(values) / len(values))
    for suffix in SUFFIXES:
        column = out.scores["rouge1" + suffix]
        assert aggregate["rouge1" + suffix] == pytest.approx(sum(column) / len(column))
        assert aggregate[f"rouge1{suffix}_low"] <= aggregate["rouge1" + suffix] <= aggregate[f"rouge1{suffix}_high"]
        assert aggregate[f"rouge1{suffix}_low"] < aggregate[f"rouge1{suffix}_high"]  # 30 varied examples
    again = rouge_family(preds, refs, rouge_types=["rouge1"], n_bootstrap=200, confidence=0.9, seed=3)
    assert again.aggregate() == aggregate
    assert "stemmer:no" in out.signature and "rouge_types:rouge1|" in out.signature
    assert "confidence:0.9|" in out.signature and "seed:3|" in out.signature and "n_bootstrap:200|" in out.signature
    assert "stemmer:porter" in rouge_family(["a"], ["a"], rouge_types=["rouge1"], use_stemmer=True).signature


def test_n_bootstrap_zero_gives_means_without_interval():
    preds, refs = varied_corpus(seed=9, size=30)
    plain = rouge_family(preds, refs, rouge_types=["rouge2", "rougeL"], n_bootstrap=0)
    full = rouge_family(preds, refs, rouge_types=["rouge2", "rougeL"])
    assert plain.scores == full.scores
    assert set(plain.aggregate()) == {name + suffix for name in ("rouge2", "rougeL") for suffix in SUFFIXES}
    assert all(full.aggregate()[key] == value for key, value in plain.aggregate().items())
    assert {key for key in full.aggregate() if key.endswith(("_low", "_high"))}
    fields = parse_signature(plain.signature)
    assert fields["n_bootstrap"] == "0" and "confidence" not in fields and "seed" not in fields


def test_result_contract_columns_main_and_signature_keys():
    from nlgmetrics.apps.evaluate_adapter import evaluate_output
    from nlgmetrics.rouge import RougeResult

    preds, refs = varied_corpus(seed=13, size=10)
    out = rouge_family(preds, refs, rouge_types=["rougeSU4", "rouge1", "rougeW"], n_bootstrap=50)
    assert isinstance(out, RougeResult) and out.metric == "rouge_family"
    assert out.main == "rougeSU4" and out.main_score == pytest.approx(sum(out.scores["rougeSU4"]) / len(preds))
    assert out.higher_is_better is True
    assert list(out.scores) == [t + s for t in ("rougeSU4", "rouge1", "rougeW") for s in ("", "_precision", "_recall")]
    for name, values in out.scores.items():
        column = out.column(name)
        assert column.higher_is_better and (column.minimum, column.maximum) == (0.0, 1.0)
        assert all(0.0 <= v <= 1.0 for v in values)
        assert column.description.startswith(name.split("_")[0])
    with pytest.raises(KeyError, match="has no column 'rouge1_fmeasure'"):
        out.column("rouge1_fmeasure")
    payload = evaluate_output(out)
    assert list(payload)[0] == "rougeSU4" and payload["rougeSU4"] == out.main_score and payload == out.aggregate()
    assert json.loads(json.dumps(out.to_dict()))["main"] == "rougeSU4"
    fields = parse_signature(out.signature)
    assert fields["metric"] == "rouge_family"
    assert set(fields) == {"metric", "aggregation", "beta", "confidence", "multi_ref", "n_bootstrap", "nrefs",
                           "rouge_types", "rouge_w_normalization", "rouge_w_weight", "seed", "stemmer",
                           "stopwords", "tokenize", "version"}
    assert fields["rouge_types"] == "rougeSU4,rouge1,rougeW" and fields["rouge_w_weight"] == "1.2"
    assert "rouge_w_weight" not in parse_signature(rouge_family(["a"], ["a"], rouge_types=["rouge1"]).signature)


def test_aggregation_rouge155_replaces_means_and_needs_resamples():
    from nlgmetrics.rouge.rouge155 import rouge155_average

    preds, refs = varied_corpus(seed=14, size=20)
    out = rouge_family(preds, refs, rouge_types=["rouge1"], multi_ref="average", aggregation="rouge155")
    printed = rouge155_average(out.scores["rouge1_recall"], out.scores["rouge1_precision"])
    aggregate = out.aggregate()
    assert (aggregate["rouge1"], aggregate["rouge1_low"], aggregate["rouge1_high"]) == tuple(printed["fmeasure"].values())
    assert aggregate["rouge1_recall"] == printed["recall"]["mean"]
    assert "seed" not in parse_signature(out.signature) and "aggregation:rouge155" in out.signature
    with pytest.raises(ValueError, match=r"aggregation='rouge155' needs n_bootstrap >= 1"):
        rouge_family(preds, refs, aggregation="rouge155", n_bootstrap=0)


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
        (dict(predictions=["a"], references=["a"], rouge_types=["rouge101"]), r"ROUGE-N accepts n from 1 to 100"),
        (dict(predictions=["a"], references=["a"], multi_ref="max"), r"Unknown multi_ref='max'"),
        (dict(predictions=["a"], references=["a"], beta=0), r"beta=0 must be a finite positive number"),
        (dict(predictions=["a"], references=["a"], beta=math.inf), r"beta=inf must be a finite positive number"),
        (dict(predictions=["a"], references=["a"], beta=math.nan), r"beta=nan must be a finite positive number"),
        (dict(predictions=["a"], references=["a"], rouge_w_weight=0.5), r"rouge_w_weight=0.5 must be"),
        (dict(predictions=["a"], references=["a"], rouge_w_weight=math.inf), r"rouge_w_weight=inf must be a finite"),
        (dict(predictions=["a"], references=["a"], n_bootstrap=-1), r"n_bootstrap=-1 must be a non-negative integer"),
        (dict(predictions=["a"], references=["a"], n_bootstrap=2.5), r"n_bootstrap=2.5 must be a non-negative integer"),
        (dict(predictions=["a"], references=["a"], confidence="high"), r"confidence='high' must be a number"),
        (dict(predictions=["a"], references=["a"], confidence=1.0), r"strictly between 0 and 1"),
        (dict(predictions=["a"], references=["a"], n_bootstrap=0, confidence=1.0), r"strictly between 0 and 1"),
        (dict(predictions=["a"], references=["a"], aggregation="rouge155", confidence=0), r"strictly between"),
        (dict(predictions=["a"], references=["a"], use_stemmer="snowball"), r"Unknown use_stemmer='snowball'"),
        (dict(predictions=["a"], references=["a"], use_stemmer=1), r"Unknown use_stemmer=1"),
        (dict(predictions=["a"], references=["a"], use_stemmer="no"), r"Unknown use_stemmer='no'"),
        (dict(predictions=["a"], references=["a"], aggregation="median"), r"Unknown aggregation='median'"),
    ],
)
def test_bad_input_errors_name_the_problem(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rouge_family(**kwargs)


@pytest.mark.parametrize("value", ["no", "False", 1, None])
def test_progress_is_a_switch_not_any_truthy_value(value, capsys):
    """progress="no" once drew the bar (bool("no") is True); it is checked like every switch."""
    with pytest.raises(ValueError, match=r"^`progress` must be True or False, got .*\.$"):
        rouge_family(["a b"], ["a b"], rouge_types=["rouge1"], n_bootstrap=0, progress=value)
    assert capsys.readouterr().err == ""  # refused before any bar is drawn
    quiet = rouge_family(["a b"], ["a b"], rouge_types=["rouge1"], n_bootstrap=0, progress=np.bool_(False))
    assert quiet.scores["rouge1"] == [1.0] and capsys.readouterr().err == ""


@pytest.mark.parametrize("option, pattern", [
    ("seed", r"`seed` must be an integer between 0 and 2\*\*64 - 1 or None, got an integer of about 5001 digits"),
    ("n_bootstrap", r"n_bootstrap=an integer of about 5001 digits must be a non-negative integer .*at most 1,000,000"),
    ("beta", r"beta=an integer of about 5001 digits must be a finite positive number"),
    ("rouge_w_weight", r"rouge_w_weight=an integer of about 5001 digits must be a finite number >= 1"),
    ("confidence", r"confidence=an integer of about 5001 digits must be a number strictly between 0 and 1"),
])
def test_an_integer_too_long_to_print_gets_the_options_message(option, pattern):
    """repr() of an integer of more than 4300 digits raises inside an f-string; the message shows
    its size instead (shown_value), and the ranges are bounded so that no such value is accepted."""
    with pytest.raises(ValueError, match=pattern):
        rouge_family(["a b"], ["a b"], rouge_types=["rouge1"], **{option: 10**5000})


def test_the_seed_range_is_every_metrics():
    """Seeds up to 2**64 - 1 (inclusive, the LM metrics' range too) are taken and recorded; 2**64 is refused."""
    largest = rouge_family(["a b", "a"], ["a b", "b"], rouge_types=["rouge1"], n_bootstrap=50, seed=2**64 - 1)
    assert "seed:18446744073709551615" in largest.signature and largest.aggregate()["rouge1"] == 0.5
    with pytest.raises(ValueError, match=r"`seed` must be an integer between 0 and 2\*\*64 - 1 or None, got 18446744073709551616"):
        rouge_family(["a b"], ["a b"], rouge_types=["rouge1"], n_bootstrap=50, seed=2**64)


def test_old_switches_are_gone():
    # No compatibility shim: the old `aggregate=False` is a TypeError, options are keyword-only.
    with pytest.raises(TypeError):
        rouge_family(["a"], ["a"], aggregate=False)
    with pytest.raises(TypeError):
        rouge_family(["a"], ["a"], ["rouge1"])


def test_numpy_bool_stemmer_switch_is_the_plain_switch():
    # A switch read from a numpy config array: np.bool_(True) selects Porter, np.bool_(False) none.
    import numpy as np

    preds, refs = ["the cats were running"], ["a cat runs"]
    for flag in (True, False):
        ours = rouge_family(preds, refs, rouge_types=["rouge1"], use_stemmer=np.bool_(flag), n_bootstrap=0)
        plain = rouge_family(preds, refs, rouge_types=["rouge1"], use_stemmer=flag, n_bootstrap=0)
        assert ours == plain
    stemmed = rouge_family(preds, refs, rouge_types=["rouge1"], use_stemmer=np.bool_(True), n_bootstrap=0)
    assert stemmed.scores["rouge1_recall"][0] > plain.scores["rouge1_recall"][0]


# --------------------------------------------------------------------------- numeric limits

_VOCAB = ["a", "b", "c", "d", "cat", "mat", "the"]
_texts = st.lists(st.sampled_from(_VOCAB), min_size=0, max_size=12).map(" ".join)
_lined_texts = st.lists(_texts, min_size=1, max_size=3).map("\n".join)
_positive_finite = st.floats(min_value=5e-324, max_value=sys.float_info.max, allow_nan=False, allow_infinity=False)


def _exact_fbeta(precision: float, recall: float, beta: float) -> float:
    """F-beta in exact rational arithmetic from the float P, R and beta (no overflow possible)."""
    p, r, b2 = Fraction(precision), Fraction(recall), Fraction(beta) ** 2
    if p == 0 or r == 0:
        return 0.0
    return float((1 + b2) * p * r / (r + b2 * p))


@settings(max_examples=150, deadline=None)
@given(beta=_positive_finite, pred=_lined_texts, refs=st.lists(_lined_texts, min_size=1, max_size=3),
       multi_ref=st.sampled_from(["best", "average"]))
def test_any_finite_beta_gives_the_exact_f_beta(beta, pred, refs, multi_ref):
    out = rouge_family([pred], [refs], rouge_types=["rouge1", "rougeL", "rougeSU4", "rougeW"], beta=beta,
                       multi_ref=multi_ref, n_bootstrap=0).scores
    for name in ("rouge1", "rougeL", "rougeSU4", "rougeW"):
        p, r, f = out[f"{name}_precision"][0], out[f"{name}_recall"][0], out[name][0]
        # between P and R (beta=1 keeps rouge-score's exact expression, which may round an ulp out)
        assert math.isfinite(f) and 0.0 <= f <= 1.0 and min(p, r) - 1e-15 <= f <= max(p, r) + 1e-15, (name, p, r, f)
        if beta != 1.0:
            assert min(p, r) <= f <= max(p, r), (name, p, r, f, beta)
        if multi_ref == "average" or len(refs) == 1:  # "best" may pick a reference by F itself
            assert f == pytest.approx(_exact_fbeta(p, r, beta), rel=1e-12, abs=1e-300), (name, p, r, beta)


def test_beta_whose_square_overflows_gives_the_recall_not_nan():
    # beta**2 overflows for beta > sqrt(max float) ~ 1.34e154: F-beta's limit is the recall.
    for beta in (1.35e154, 1e200, sys.float_info.max):
        p, r, f = _one("a b c d", "a b x", "rouge1", beta=beta)
        assert (p, r, f) == (0.5, 2 / 3, 2 / 3)
    # and the limit the other way (beta**2 underflows to 0) is the precision
    assert _one("a b c d", "a b x", "rouge1", beta=1e-200) == (0.5, 2 / 3, 0.5)
    preds, refs = varied_corpus(seed=15, size=20)
    printed = rouge_family(preds, refs, rouge_types=["rouge1"], beta=1e200, multi_ref="average",
                           aggregation="rouge155").aggregate()
    assert all(math.isfinite(v) for v in printed.values())
    assert printed["rouge1"] == printed["rouge1_recall"]


def _weight_bound(n_tokens: int, normalization: str, pooled: int = 1) -> float:
    """The documented finite range of rouge_w_weight, derived here independently: every ROUGE-W
    number of an n-token text is at most n**w, ROUGE-1.5.5's reference normaliser n**(w*w), and
    multi_ref="average" sums them over the references; keep them below max float / e."""
    if n_tokens <= 1:
        return 1e300
    ratio = (math.log(sys.float_info.max) - 1 - math.log(pooled)) / math.log(n_tokens)
    return math.sqrt(ratio) if normalization == "rouge155" else ratio


_w_cases = dict(pred=_lined_texts, refs=st.lists(_lined_texts, min_size=1, max_size=3),
                normalization=st.sampled_from(["rouge155", "paper"]), multi_ref=st.sampled_from(["best", "average"]))


def _longest(pred, refs):
    return max(len(tokenize(text)) for text in [pred, *refs])


@settings(max_examples=80, deadline=None)
@given(fraction=st.floats(0, 1), **_w_cases)
def test_rouge_w_weight_within_the_bound_is_finite(fraction, pred, refs, normalization, multi_ref):
    pooled = len(refs) if multi_ref == "average" else 1
    weight = 1 + fraction * (min(_weight_bound(_longest(pred, refs), normalization, pooled), 60.0) - 1)
    out = rouge_family([pred], [refs], rouge_types=["rougeW"], rouge_w_weight=weight, multi_ref=multi_ref,
                       rouge_w_normalization=normalization, n_bootstrap=0).scores
    assert all(0.0 <= out[f"rougeW{s}"][0] <= 1.0 for s in SUFFIXES), (weight, out)


@settings(max_examples=80, deadline=None)
@given(weight=st.floats(1, 1e300), **_w_cases)
def test_any_rouge_w_weight_is_a_number_or_a_clear_error(weight, pred, refs, normalization, multi_ref):
    try:
        out = rouge_family([pred], [refs], rouge_types=["rougeW"], rouge_w_weight=weight, multi_ref=multi_ref,
                           rouge_w_normalization=normalization, n_bootstrap=0).scores
    except ValueError as error:
        assert re.search(r"example 0: rouge_w_weight=\S+ is too large for a text of \d+ tokens", str(error))
        pooled = len(refs) if multi_ref == "average" else 1
        assert weight > _weight_bound(_longest(pred, refs), normalization, pooled)
        return
    assert all(0.0 <= out[f"rougeW{s}"][0] <= 1.0 for s in SUFFIXES), (weight, out)


def test_rouge_w_weight_overflow_names_the_bound():
    text = "a b c d e f g h i j"  # 10 tokens: rouge155 finite up to sqrt(708.78 / ln 10) = 17.54
    with pytest.raises(ValueError, match=r"example 1: rouge_w_weight=50 is too large for a text of 10 tokens.*<= 17\.54"):
        rouge_family(["a", text], ["a", text], rouge_types=["rouge1", "rougeW"], rouge_w_weight=50)
    with pytest.raises(ValueError, match=r"rouge_w_normalization='paper'.*<= 307\.8"):
        rouge_family([text], [text], rouge_types=["rougeW"], rouge_w_weight=400, rouge_w_normalization="paper")
    assert rouge_family([text], [text], rouge_types=["rougeW"], rouge_w_weight=17.5, n_bootstrap=0).scores["rougeW_precision"] == [1.0]
    # five references pooled (multi_ref="average"): 5 * 10**(17.541**2) overflows, one does not
    with pytest.raises(ValueError, match=r"10 tokens with 5 references pooled \(multi_ref='average'\).*<= 17\.52"):
        rouge_family([text], [[text] * 5], rouge_types=["rougeW"], rouge_w_weight=17.541, multi_ref="average")
    best = rouge_family([text], [[text] * 5], rouge_types=["rougeW"], rouge_w_weight=17.541, n_bootstrap=0)
    assert best.scores["rougeW_precision"] == [1.0]
    # one-word texts stay finite for any weight (1**w == 1)
    one = rouge_family(["word"], ["word"], rouge_types=["rougeW"], rouge_w_weight=1e300, n_bootstrap=0).scores
    assert (one["rougeW"], one["rougeW_recall"]) == ([1.0], [1.0])


@pytest.mark.parametrize("name", ["rouge999999999999999999999999999", "rouge" + "9" * 5000, "rouge101"])
def test_absurd_rouge_n_is_a_quick_clear_error(name):
    start = time.process_time()
    with pytest.raises(ValueError, match=r"ROUGE-N accepts n from 1 to 100 \(published ROUGE uses n <= 4\)"):
        rouge_family(["a b c"] * 50, ["a b c"] * 50, rouge_types=["rouge1", name])
    assert time.process_time() - start < 2.0


@pytest.mark.parametrize("name", ["rougeS" + "9" * 5000, "rougeSU" + "9" * 5000, "rougeS1000001",
                                  "rougeSU99999999999999999999"])
def test_absurd_rouge_s_gap_is_a_quick_clear_error_naming_the_valid_forms(name):
    """The same refusal as ROUGE-N's (never Python's integer-conversion limit message)."""
    start = time.process_time()
    with pytest.raises(ValueError) as caught:
        rouge_family(["a b c"] * 50, ["a b c"] * 50, rouge_types=["rouge1", name])
    message = str(caught.value)
    assert "gap from 0 to 1000000" in message and "rougeS* / rougeSU* for any gap" in message, message
    assert "limit" not in message and len(message) < 400, message
    assert time.process_time() - start < 2.0


@pytest.mark.parametrize("name, same_as", [("rougeS1000000", "rougeS*"), ("rougeSU0001000000", "rougeSU*"),
                                           ("rougeS0004", "rougeS4"), ("rougeS" + "0" * 5000, "rougeS0")])
def test_every_gap_up_to_the_bound_is_accepted(name, same_as):
    """Leading zeros do not count as digits; a gap beyond the texts' length counts every pair."""
    pred, ref = "the gunman police killed x y", "police killed the gunman y x"
    got = rouge_family([pred], [ref], rouge_types=[name], n_bootstrap=0).scores[name]
    assert got == rouge_family([pred], [ref], rouge_types=[same_as], n_bootstrap=0).scores[same_as]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 100), pred=_texts, ref=_texts)
def test_every_accepted_rouge_n_matches_rouge_score(n, pred, ref):
    if n <= 9:
        expected = rouge_scorer.RougeScorer([f"rouge{n}"]).score(ref, pred)[f"rouge{n}"]
    else:  # RougeScorer's type names stop at rouge9; its own n-gram functions take any n
        from rouge_score import tokenize as rs_tokenize

        grams = [rouge_scorer._create_ngrams(rs_tokenize.tokenize(t, None), n) for t in (ref, pred)]
        expected = rouge_scorer._score_ngrams(*grams)
    got = rouge_family([pred], [ref], rouge_types=[f"rouge{n}"], n_bootstrap=0).scores
    assert abs(got[f"rouge{n}_precision"][0] - expected.precision) <= 1e-9
    assert abs(got[f"rouge{n}_recall"][0] - expected.recall) <= 1e-9
    assert abs(got[f"rouge{n}"][0] - expected.fmeasure) <= 1e-9


def test_rouge_100_on_a_long_text_is_quick():
    text = " ".join(f"w{i}" for i in range(3000))
    start = time.process_time()
    out = rouge_family([text, "short text"], [text, "short text"], rouge_types=["rouge100"], n_bootstrap=0)
    assert out.scores["rouge100"] == [1.0, 0.0]  # a 2-token text has no 100-grams
    assert time.process_time() - start < 10.0


# --------------------------------------------------------------------------- evaluate module


def _rouge_score_best(preds, refs, types):
    scorer = rouge_scorer.RougeScorer(list(types))
    return [scorer.score_multi(r, p) for p, r in zip(preds, reference_lists(refs))]


def test_evaluate_module_loads_offline_and_batches(metrics_dir, monkeypatch):
    evaluate = pytest.importorskip("evaluate")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    module = evaluate.load(str(metrics_dir / "rouge_family"))
    preds = ["the cat sat on the mat", "hello world", ""]
    refs = [["a cat sat on the mat", "the cat lay"], ["hello there world"], ["something"]]
    out = compute_in_two_batches(module, preds, refs, 2, rouge_types=["rouge1", "rougeLsum"], return_details=True)
    expected = [s["rouge1"].fmeasure for s in _rouge_score_best(preds, refs, ["rouge1", "rougeLsum"])]
    each = compute_in_two_batches(module, preds, refs, 2, rouge_types=["rouge1", "rougeLsum"], use_aggregator=False)
    assert each["rouge1"] == pytest.approx(expected, abs=1e-12)
    assert out["rouge1"] == pytest.approx(sum(expected) / len(expected), abs=1e-12)
    assert list(out)[0] == "rouge1" and isinstance(out["rouge1"], float)
    assert out["rouge1_low"] <= out["rouge1"] <= out["rouge1_high"]
    single = module.compute(predictions=["a b"], references=["a b"], use_aggregator=False, return_signature=True)
    assert single["rouge1"] == [1.0] and single["signature"].startswith("rouge_family|")


MIXED_PREDICTIONS = ["the cat sat on the mat", "police kill the gunman", "a dog barks"]
MIXED_REFERENCES = [["a cat sat on the mat", "the cat lay on a mat"], "police killed the gunman",
                    ["the dog barked", "a dog is barking loudly"]]


@pytest.mark.parametrize("first", FIRST_SHAPES)
def test_evaluate_mixed_string_and_list_references_give_the_library_numbers(metrics_dir, first):
    evaluate = pytest.importorskip("evaluate")
    preds, refs = mixed_shapes_first(MIXED_PREDICTIONS, MIXED_REFERENCES, first)
    types = ["rouge1", "rouge2", "rougeL"]
    expected = _rouge_score_best(preds, refs, types)
    library = rouge_family(preds, refs, rouge_types=types)
    module = evaluate.load(str(metrics_dir / "rouge_family"))
    options = {"rouge_types": types, "use_aggregator": False, "return_details": True, "return_signature": True}
    for out in (
        module.compute(predictions=preds, references=refs, **options),
        # the first batch decides evaluate's feature format: one of single strings, then lists
        compute_in_two_batches(module, preds, refs, 1, **options),
    ):
        for name in types:
            for suffix, k in MEASURES:
                assert out[name + suffix] == pytest.approx([e[name][k] for e in expected], abs=1e-12)
        assert out["signature"] == library.signature and "nrefs:var" in out["signature"]
    for out in (module.compute(predictions=preds, references=refs, rouge_types=types, return_details=True),
                compute_in_two_batches(module, preds, refs, 1, rouge_types=types, return_details=True)):
        assert out == library.aggregate()
    assert round(library.main_score, 4) == round(sum(e["rouge1"].fmeasure for e in expected) / 3, 4)


@pytest.mark.parametrize("first", FIRST_SHAPES)
def test_evaluate_combine_of_rouge_and_bleu_gives_the_library_numbers(metrics_dir, first):
    evaluate = pytest.importorskip("evaluate")
    sacrebleu = pytest.importorskip("sacrebleu")
    from nlgmetrics.bleu import bleu

    preds, refs = mixed_shapes_first(MIXED_PREDICTIONS, MIXED_REFERENCES, first)
    combined = evaluate.combine([evaluate.load(str(metrics_dir / "rouge_family")), evaluate.load(str(metrics_dir / "bleu"))])
    out = combined.compute(predictions=preds, references=refs, return_details=True)
    rouge = rouge_family(preds, refs)
    corpus = bleu(preds, refs)
    for key, value in rouge.aggregate().items():
        assert out[key] == value, key
    assert out["score"] == corpus.bleu and out["sentence_bleu"] == corpus.aggregate()["sentence_bleu"]
    each = combined.compute(predictions=preds, references=refs, use_aggregator=False, return_signature=True)
    # combine prefixes with evaluate's names of the counterparts (rouge, sacrebleu)
    assert each["rouge_signature"] == rouge.signature and each["sacrebleu_signature"] == corpus.signature
    # and those are the reference implementations' numbers
    best = _rouge_score_best(preds, refs, ["rouge1"])
    assert each["rouge1"] == pytest.approx([s["rouge1"].fmeasure for s in best], abs=1e-12)
    lists = reference_lists(refs)
    assert abs(out["score"] - sacrebleu.corpus_bleu(preds, sacrebleu_streams(lists)).score) <= 1e-9
    sentences = [sacrebleu.sentence_bleu(p, r).score for p, r in zip(preds, lists)]
    assert each["score"] == pytest.approx(sentences, abs=1e-9)


def test_duplicates_batches_and_cache_do_not_change_scores():
    from nlgmetrics.rouge import clear_cache

    preds, refs = varied_corpus(seed=12, size=15)

    def scores(p, r):
        return rouge_family(p, r, rouge_types=ALL_TYPES, n_bootstrap=0).scores

    clear_cache()
    cold = scores(preds, refs)
    warm = scores(preds, refs)
    doubled = scores(preds + preds, refs + refs)
    halves = [scores(preds[:7], refs[:7]), scores(preds[7:], refs[7:])]
    for name in ALL_TYPES:
        for suffix in SUFFIXES:
            column = name + suffix
            assert cold[column] == warm[column]
            assert doubled[column] == cold[column] * 2
            assert halves[0][column] + halves[1][column] == cold[column]


def test_long_texts_are_handled():
    long_ref = " ".join(f"w{i % 500}" for i in range(12000))
    long_pred = " ".join(f"w{i % 500}" if i % 5 else "other" for i in range(11000))
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum", "rougeS4"]
    out = rouge_family([long_pred], [long_ref], rouge_types=types, n_bootstrap=0)
    for name in types:
        assert 0.0 < out.scores[name][0] <= 1.0, name
    # the bit-parallel LCS agrees with rouge-score on a long pair
    expected = rouge_scorer.RougeScorer(["rougeL"]).score(long_ref[:6000], long_pred[:6000])["rougeL"]
    got = rouge_family([long_pred[:6000]], [long_ref[:6000]], rouge_types=["rougeL"], n_bootstrap=0).scores
    assert abs(got["rougeL"][0] - expected.fmeasure) <= 1e-9


# --------------------------------------------------------------------------- model card


def test_card_headline_is_the_rouge_score_package_number():
    # The card's 0.7917 (mean ROUGE-1 F, one example with a single string reference) is what
    # rouge-score computes; evaluate's feature casting once turned that string into characters.
    card = (REPO_ROOT / "metrics" / "rouge_family" / "README.md").read_text(encoding="utf-8")
    preds = ["the cat sat on the mat", "police kill the gunman"]
    refs = [["a cat sat on the mat", "the cat lay on a mat"], "police killed the gunman"]
    mean = sum(s["rouge1"].fmeasure for s in _rouge_score_best(preds, refs, ["rouge1"])) / 2
    assert f"{mean:.4f}" == "0.7917" and "0.7917" in card and "0.4167" not in card
