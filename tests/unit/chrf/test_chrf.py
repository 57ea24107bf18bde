"""chrF / chrF++: parity with sacrebleu on WebNLG 2020 and REALSumm and on edge cases, hand cases,
the sufficient-statistics interface, bad input, signatures and the numbers of its card. What
chrF shares with BLEU and TER (the evaluate module on mixed reference shapes, the card and module
examples) is in tests/contract/test_text_metrics.py.

Expected numbers come from sacrebleu's ``CHRF`` (same options) or from hand computation.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict

import numpy as np
import pytest

from nlgmetrics.chrf import (
    ChrfResult,
    chrf,
    chrf_from_statistics,
    chrf_plus_plus,
    chrf_statistics,
    clear_caches,
)
from nlgmetrics.core.signature import parse_signature
from tests.support.evaluate_support import sacrebleu_streams
from tests.support.markdown_examples import REPO_ROOT

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import CHRF  # noqa: E402

# --------------------------------------------------------------------------- real text


def _by_system(examples):
    """{system: (predictions, references)} of the examples that have references."""
    systems: dict[str, tuple[list[str], list[list[str]]]] = defaultdict(lambda: ([], []))
    for e in examples:
        if e.references:
            systems[e.system][0].append(e.prediction)
            systems[e.system][1].append(list(e.references))
    return dict(systems)


@pytest.fixture(scope="module")
def real_text(shared_data_dir):
    """WebNLG 2020 human-evaluation rows (17 systems, 1-4 references each, ragged) and the first
    20 REALSumm documents x 25 systems (the loaders benchmarks/data.py re-exports)."""
    from benchmarks.meta.data import load_realsumm, load_webnlg2020

    return {"webnlg2020": _by_system(load_webnlg2020(shared_data_dir)),
            "realsumm": _by_system(load_realsumm(shared_data_dir, max_docs=20))}


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["webnlg2020", "realsumm"])
@pytest.mark.parametrize("word_order", [0, 2], ids=["chrF", "chrF++"])
def test_parity_with_sacrebleu_on_real_text(real_text, dataset, word_order):
    """Every system's corpus chrF and every sentence chrF equal sacrebleu's, bit for bit.

    sacrebleu's sentence scores are taken from the per-segment statistics that its
    ``corpus_score`` extracts (``sentence_score`` is the score of that segment's statistics; the
    public call is checked on the first system), which halves the time of this test."""
    systems = real_text[dataset]
    anchor = CHRF(word_order=word_order)
    pairs = 0
    for index, (preds, refs) in enumerate(systems.values()):
        result = chrf(preds, refs, word_order=word_order)
        stats = anchor._extract_corpus_statistics(preds, sacrebleu_streams(refs))
        assert result.main_score == anchor._aggregate_and_compute(stats).score
        sentences = [anchor._compute_score_from_stats(row).score for row in stats]
        assert result.scores["sentence_chrf"] == sentences
        if index == 0:
            assert result.main_score == anchor.corpus_score(preds, sacrebleu_streams(refs)).score
            assert sentences == [anchor.sentence_score(p, r).score for p, r in zip(preds, refs)]
        pairs += len(preds)
    assert pairs >= (3000 if dataset == "webnlg2020" else 500)
    assert any(len(r) > 1 for _, refs in systems.values() for r in refs) or dataset == "realsumm"


@pytest.mark.slow
def test_parity_options_on_real_text(real_text):
    """lowercase, whitespace, eps_smoothing, beta and other orders, on one WebNLG system."""
    preds, refs = next(iter(sorted(real_text["webnlg2020"].items())))[1]
    grid = [dict(lowercase=True), dict(whitespace=True), dict(eps_smoothing=True), dict(beta=1),
            dict(beta=3, word_order=1), dict(char_order=4, word_order=3, whitespace=True),
            dict(char_order=0, word_order=2), dict(lowercase=True, whitespace=True, eps_smoothing=True, word_order=2),
            dict(beta=0), dict(beta=0, word_order=2, eps_smoothing=True)]
    for options in grid:
        anchor = CHRF(**options)
        result = chrf(preds, refs, **options)
        assert result.main_score == anchor.corpus_score(preds, sacrebleu_streams(refs)).score, options
        assert result.scores["sentence_chrf"] == [anchor.sentence_score(p, r).score for p, r in zip(preds, refs)], options


# --------------------------------------------------------------------------- edge cases

EDGE_HYPOTHESES = ["", "   ", "!!", "...", "a", "Hello, world!", "(hi) there.", "你好世界。", "שלום עולם",
                   "café naïve", "cafe\u0301", "🙂 🙃 🙂", "tab\there\nnew line", "A a A a", "x" * 300,
                   "the cat sat on the mat .", "\u00a0nbsp\u2003em space"]
EDGE_REFERENCES = [[""], ["a"], ["!!"], ["!"], ["a", ""], ["hello world", "Hello, world!"], ["(hi) there", "hi there"],
                   ["你好，世界。"], ["שלום"], ["Café naïve"], ["café"], ["🙂"], ["tab here new line", "tab\there"],
                   ["a A a A"], ["x" * 5], ["the cat sat on the mat.", "a cat on a mat", ""], ["nbsp em space"]]
EDGE_OPTIONS = [dict(), dict(word_order=2), dict(whitespace=True), dict(whitespace=True, word_order=2),
                dict(lowercase=True), dict(eps_smoothing=True), dict(eps_smoothing=True, word_order=2),
                dict(char_order=3, word_order=1, beta=1), dict(char_order=0, word_order=2), dict(beta=0.5),
                # beta=0: precision only, as sacrebleu computes it (an int 0 and a float 0.0)
                dict(beta=0), dict(beta=0.0, word_order=2), dict(beta=0, eps_smoothing=True),
                dict(beta=0, eps_smoothing=True, word_order=2)]


@pytest.mark.parametrize("options", EDGE_OPTIONS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_edge_cases_match_sacrebleu(options):
    """Empty hypothesis / reference, whitespace-only, punctuation-only, CJK, RTL, combining marks,
    emoji, control whitespace, long repeats; several and ragged references (with an empty one)."""
    anchor = CHRF(**options)
    result = chrf(EDGE_HYPOTHESES, EDGE_REFERENCES, **options)
    want = [anchor.sentence_score(h, r).score for h, r in zip(EDGE_HYPOTHESES, EDGE_REFERENCES)]
    assert result.scores["sentence_chrf"] == want
    assert result.main_score == anchor.corpus_score(EDGE_HYPOTHESES, sacrebleu_streams(EDGE_REFERENCES)).score
    assert all(0.0 <= v <= 100.0 for v in result.scores["sentence_chrf"])


@pytest.mark.parametrize("hyp, ref", [("", ""), ("", "a"), ("a", ""), ("   ", " "), ("\n", "")])
def test_empty_texts_are_zero_not_nan(hyp, ref):
    for word_order in (0, 2):
        for eps in (False, True):
            result = chrf([hyp], [ref], word_order=word_order, eps_smoothing=eps)
            score = result.main_score
            assert score == result.scores["sentence_chrf"][0]
            assert score == CHRF(word_order=word_order, eps_smoothing=eps).sentence_score(hyp, [ref]).score
            # epsilon smoothing: every order's F is the epsilon 1e-16, so the score is ~1e-14, as in sacrebleu
            assert score == 0.0 if not eps else 0.0 < score < 1e-13


#: (hypotheses, references per example) where beta=0 meets sacrebleu's edge cases.
BETA_ZERO_CASES = [
    (["a cat"], ["a dog"]),  # some matches
    (["xyz"], ["abc"]),  # no match at all
    ([""], ["a cat"]), (["a cat"], [""]), ([""], [""]), (["   "], ["\n"]),  # empty hypothesis / reference
    (["cat"], ["a black cat sat"]),  # every hypothesis n-gram in the reference: precision 1
    (["the cat sat", "qqq", "", "a b"], [["the cat", "a cat sat"], "zzz", "x", ["", "a b c"]]),  # a corpus
]


@pytest.mark.parametrize("word_order", [0, 2], ids=["chrF", "chrF++"])
@pytest.mark.parametrize("eps_smoothing", [False, True], ids=["effective", "eps"])
@pytest.mark.parametrize("beta", [0, 0.0], ids=["int", "float"])
@pytest.mark.parametrize("hyps, refs", BETA_ZERO_CASES)
def test_beta_zero_is_precision_only_with_sacrebleus_numbers(hyps, refs, beta, eps_smoothing, word_order):
    """sacrebleu's ``CHRF(beta=0)`` (and evaluate's chrf, which passes beta to it) scores
    precision only; corpus, sentence and statistics faces give its numbers."""
    options = dict(beta=beta, eps_smoothing=eps_smoothing, word_order=word_order)
    anchor = CHRF(**options)
    lists = [[r] if isinstance(r, str) else r for r in refs]
    theirs = anchor.corpus_score(hyps, sacrebleu_streams(lists))
    result = chrf(hyps, refs, **options)
    assert result.main_score == theirs.score
    assert result.scores["sentence_chrf"] == [anchor.sentence_score(h, r).score for h, r in zip(hyps, lists)]
    assert chrf_from_statistics(chrf_statistics(hyps, refs, **options).sum(axis=0), **options) == theirs.score
    assert result.name == f"chrF0{'+' * word_order}" and parse_signature(result.signature)["beta"] == "0"


def test_beta_zero_ignores_recall():
    """A hypothesis whose every n-gram is in the reference has precision 1: chrF0 is 100 however
    much of the reference it misses (chrF2 is far lower)."""
    assert chrf(["cat"], ["a black cat sat on the mat"], beta=0).main_score == 100.0
    assert chrf(["cat"], ["a black cat sat on the mat"]).main_score < 50.0


def test_beta_zero_through_the_evaluate_module_and_the_command_line(metrics_dir, monkeypatch, tmp_path, capsys):
    evaluate = pytest.importorskip("evaluate")
    from nlgmetrics.apps.cli import main

    hyps, refs = ["the cat sat on the mat", "a dog"], ["the cat is on the mat", "a big dog barked"]
    want = CHRF(beta=0, word_order=2).corpus_score(hyps, [refs]).score
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the module loads from its folder
    out = evaluate.load(str(metrics_dir / "chrf")).compute(predictions=hyps, references=refs, beta=0, word_order=2)
    assert (out["score"], out["beta"]) == (want, 0)
    preds_file, refs_file, json_file = tmp_path / "p.txt", tmp_path / "r.txt", tmp_path / "out.json"
    preds_file.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    refs_file.write_text("\n".join(refs) + "\n", encoding="utf-8")
    status = main(["score", "-p", str(preds_file), "-r", str(refs_file), "-m", "chrf", "--option", "chrf.beta=0",
                   "--option", "chrf.word_order=2", "--json", str(json_file), "--quiet", "--no-progress"])
    assert status == 0, capsys.readouterr().err
    assert json.loads(json_file.read_text(encoding="utf-8"))["metrics"]["chrf"]["aggregate"]["chrf"] == want


def test_identity_is_100():
    texts = ["a", "!!", "the cat sat on the mat", "你好", "x y z " * 50]
    for word_order in (0, 2):
        result = chrf(texts, [[t] for t in texts], word_order=word_order)
        assert result.main_score == 100.0 and result.scores["sentence_chrf"] == [100.0] * len(texts)


# --------------------------------------------------------------------------- hand computation


def test_hand_computed_chrf():
    """'ab' vs 'abc', char_order=2: unigrams P=2/2, R=2/3; bigrams P=1/1, R=1/2.
    Averages P=1, R=7/12; F2 = 5 P R / (4 P + R) = (35/12) / (55/12) = 7/11."""
    result = chrf(["ab"], ["abc"], char_order=2)
    assert result.statistics == (2, 3, 2, 1, 2, 1)
    assert result.main_score == pytest.approx(100 * 7 / 11, abs=1e-12)


def test_hand_computed_clipping_and_missing_reference_order():
    """'aaa' vs 'a', char_order=2: unigram matches are clipped to the reference's 1 (P=1/3, R=1);
    the reference has no bigram, so the hypothesis' 2 bigrams are not counted (sacrebleu) and the
    order is not effective. F2 = 5 (1/3) / (4/3 + 1) = 5/7."""
    result = chrf(["aaa"], ["a"], char_order=2)
    assert result.statistics == (3, 1, 1, 0, 0, 0)
    assert result.main_score == pytest.approx(100 * 5 / 7, abs=1e-12)
    # eps smoothing: mean over both orders of the per-order F (order 2 undefined -> 1e-16)
    eps = chrf(["aaa"], ["a"], char_order=2, eps_smoothing=True).main_score
    assert eps == pytest.approx(100 * (5 / 7 + 1e-16) / 2, abs=1e-12)


def test_hand_computed_word_ngrams_split_punctuation():
    """chrF++ word unigrams of 'Hi, you.' are Hi , you . (one mark split off each word end)."""
    result = chrf(["Hi, you."], ["Hi you"], char_order=0, word_order=1)
    # hypothesis 4 words, reference 2, 2 matches: P=1/2, R=1; F2 = 5 (1/2) / (2 + 1) = 5/6
    assert result.statistics == (4, 2, 2)
    assert result.main_score == pytest.approx(100 * 5 / 6, abs=1e-12)


def test_best_reference_is_used_for_the_corpus_statistics():
    result = chrf(["the cat"], [["a dog", "the cat", "the cat"]])
    assert result.details() == {"best_reference": [1]} and result.main_score == 100.0
    alone = chrf(["the cat"], ["the cat"])
    assert result.statistics == alone.statistics


# --------------------------------------------------------------------------- sufficient statistics


def test_statistics_interface_sums_to_the_corpus_score():
    hyps, refs = EDGE_HYPOTHESES, EDGE_REFERENCES
    for options in EDGE_OPTIONS:
        stats = chrf_statistics(hyps, refs, **options)
        n_orders = options.get("char_order", 6) + options.get("word_order", 0)
        assert stats.shape == (len(hyps), 3 * n_orders) and stats.dtype == np.int64
        result = chrf(hyps, refs, **options)
        assert chrf_from_statistics(stats.sum(axis=0), **options) == result.main_score, options
        assert tuple(stats.sum(axis=0).tolist()) == result.statistics
        # each row alone is the sentence score
        assert [chrf_from_statistics(row, **options) for row in stats] == result.scores["sentence_chrf"]


def test_statistics_equal_sacrebleus_sufficient_statistics():
    """The layout is sacrebleu's ([hyp, ref, match] per order, characters first), so a resampling
    test can be checked against sacrebleu's own significance code."""
    for options in (dict(), dict(word_order=2, lowercase=True)):
        anchor = CHRF(**options)
        theirs = anchor._extract_corpus_statistics(EDGE_HYPOTHESES, sacrebleu_streams(EDGE_REFERENCES))
        assert chrf_statistics(EDGE_HYPOTHESES, EDGE_REFERENCES, **options).tolist() == theirs


def test_statistics_resampling_two_dimensional():
    stats = chrf_statistics(EDGE_HYPOTHESES, EDGE_REFERENCES, word_order=2)
    rng = np.random.default_rng(0)
    samples = np.stack([stats[rng.integers(0, len(stats), len(stats))].sum(axis=0) for _ in range(20)])
    got = chrf_from_statistics(samples, word_order=2)
    anchor = CHRF(word_order=2)
    want = [anchor._compute_score_from_stats(row.tolist()).score for row in samples]
    assert isinstance(got, np.ndarray) and got.tolist() == want


@pytest.mark.parametrize("bad, pattern", [
    (np.zeros(17), r"shape \(17,\); expected \(18,\) or \(n, 18\)"),
    (np.zeros((2, 3, 18)), r"shape \(2, 3, 18\)"),
    (np.full(18, -1), r"finite non-negative counts"),
    (np.full(18, np.nan), r"finite non-negative counts"),
    (np.array(["1"] * 18), r"finite non-negative counts"),
    (np.array([10**5000] * 18, dtype=object), r"finite non-negative counts"),
    ([[0] * 18, [0] * 17], r"is not a table of numbers"),
])
def test_from_statistics_rejects_bad_arrays(bad, pattern):
    with pytest.raises(ValueError, match=pattern):
        chrf_from_statistics(bad)


@pytest.mark.parametrize("option", ["char_order", "word_order", "beta", "lowercase", "whitespace", "eps_smoothing"])
def test_an_integer_too_long_to_print_gets_the_options_message(option):
    """Every option's message shows such an integer by its size (its repr() raises past 4300
    digits); the orders are bounded so that none is accepted (it would count every order)."""
    with pytest.raises(ValueError, match=rf"^({option}=an integer of about 5001 digits must be|`{option}` must be True or False, got an integer of about 5001 digits)"):
        chrf(["a b"], ["a b"], **{option: 10**5000})


def test_orders_up_to_one_hundred():
    """MAX_NGRAM_ORDER: 100 is taken (orders beyond a text's length have no n-grams), 101 refused."""
    assert chrf(["a cat"], ["a cat"], char_order=100, word_order=100).main_score == 100.0
    for option in ("char_order", "word_order"):
        with pytest.raises(ValueError, match=rf"{option}=101 must be a non-negative integer .*, at most 100\."):
            chrf(["a cat"], ["a cat"], **{option: 101})


# --------------------------------------------------------------------------- contract, input, signature


def test_result_contract_columns_main_and_aggregate():
    result = chrf(["the cat sat", "a dog"], [["the cat sat down"], ["a big dog", "dogs"]])
    assert isinstance(result, ChrfResult) and result.metric == "chrf" and result.main == "chrf"
    assert result.higher_is_better and result.column("chrf").range_text() == "[0, 100]"
    assert result.column("sentence_chrf").higher_is_better
    assert set(result.aggregate()) == {"chrf", "sentence_chrf"}
    assert result.aggregate()["sentence_chrf"] == math.fsum(result.scores["sentence_chrf"]) / 2
    assert result.aggregate()["sentence_chrf"] != result.main_score  # corpus is not the mean
    payload = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    anchor = CHRF()
    best = [max(range(len(rs)), key=lambda k: (anchor.sentence_score(h, [rs[k]]).score, -k))
            for h, rs in (("the cat sat", ["the cat sat down"]), ("a dog", ["a big dog", "dogs"]))]
    assert payload["statistics"] == list(result.statistics) and payload["details"]["best_reference"] == best == [0, 1]
    assert result.name == "chrF2" and chrf_plus_plus(["a"], ["a"]).name == "chrF2++"


def test_chrf_plus_plus_is_word_order_two():
    hyps, refs = EDGE_HYPOTHESES, EDGE_REFERENCES
    assert chrf_plus_plus(hyps, refs).to_dict() == chrf(hyps, refs, word_order=2).to_dict()
    assert chrf_plus_plus(hyps, refs, word_order=1).to_dict() == chrf(hyps, refs, word_order=1).to_dict()


def test_signature_records_every_option():
    base = chrf(["a b"], ["a c"])
    assert base.signature == ("chrf|beta:2|case:mixed|char_order:6|eps_smoothing:no|nrefs:1|whitespace:no|"
                              "word_order:0|version:0.1.0")
    changes = {"char_order": 4, "word_order": 2, "beta": 1.5, "lowercase": True, "whitespace": True,
               "eps_smoothing": True}
    expected = {"char_order": "4", "word_order": "2", "beta": "1.5", "case": "lc", "whitespace": "yes",
                "eps_smoothing": "yes"}
    for option, value in changes.items():
        parsed = parse_signature(chrf(["a b"], ["a c"], **{option: value}).signature)
        key = "case" if option == "lowercase" else option
        assert parsed[key] == expected[key], option
    assert parse_signature(chrf(["a", "b"], [["a", "b"], "c"]).signature)["nrefs"] == "var"
    assert parse_signature(chrf(["a", "b"], [["a", "b"], ["c", "d"]]).signature)["nrefs"] == "2"
    # numpy values and integral floats give the same signature as Python ints
    assert chrf(["a"], ["a"], beta=np.float64(2.0), char_order=np.int64(6)).signature == chrf(["a"], ["a"]).signature


@pytest.mark.parametrize("call, message", [
    (lambda: chrf(["a"], ["a"], word_order=True), r"word_order=True must be a non-negative integer"),
    (lambda: chrf(["a"], ["a"], beta=-1), r"beta=-1 must be a finite number >= 0"),
    (lambda: chrf(["a"], ["a"], beta=float("inf")), r"beta=inf must be a finite number >= 0"),
    (lambda: chrf(["a"], ["a"], lowercase="no"), r"`lowercase` must be True or False, got 'no'"),
    (lambda: chrf(["a"], ["a"], tokenize="13a"), r"unexpected keyword argument 'tokenize'"),
    (lambda: chrf_statistics(["a"], ["a"], beta=-0.5), r"beta=-0.5 must be a finite number >= 0"),
    (lambda: chrf_statistics(["a"], ["a"], tokenize="13a"),
     r"unexpected keyword argument 'tokenize': the options of chrF are \['char_order', 'word_order', 'beta', "),
    (lambda: chrf_from_statistics([0] * 18, word_order=-2), r"word_order=-2 must be a non-negative integer"),
])
def test_bad_input_errors_name_the_problem(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_caches_never_change_results():
    hyps, refs = EDGE_HYPOTHESES, EDGE_REFERENCES
    warm = chrf(hyps, refs, word_order=2).to_dict()
    clear_caches()
    assert chrf(hyps, refs, word_order=2).to_dict() == warm
    # the cache is keyed by every option that changes the n-grams
    for options in itertools.islice(EDGE_OPTIONS, 5):
        assert chrf(hyps, refs, **options).main_score == CHRF(**options).corpus_score(
            hyps, sacrebleu_streams(refs)).score


# --------------------------------------------------------------------------- card and benchmark


def test_card_numbers_are_sacrebleus():
    card = (REPO_ROOT / "metrics" / "chrf" / "README.md").read_text(encoding="utf-8")
    hyps = ["the cat is on the mat", "there is a dog"]
    refs = [["the cat is on the mat", "a cat is on the mat"], ["there is a big dog"]]
    for options in (dict(), dict(word_order=2), dict(lowercase=True, whitespace=True)):
        assert f"{round(CHRF(**options).corpus_score(hyps, sacrebleu_streams(refs)).score, 4)}\n" in card, options
    assert f"{CHRF().sentence_score(hyps[1], refs[1]).score!r}]" in card


def test_speed_benchmark_rows_have_identical_numbers(shared_data_dir):
    from benchmarks.speed import text as speed_text

    rows = speed_text.run(shared_data_dir, limit=3, sections=("chrf",))
    assert len(rows) == 4 and all("chrF" in row["metric"] for row in rows)
    for row in rows:
        assert row["max_abs_diff"] == 0.0, row
    with pytest.raises(ValueError, match=r"Unknown sections \['meteor'\]"):
        speed_text.run(shared_data_dir, limit=1, sections=("meteor",))
