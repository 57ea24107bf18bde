"""BLEU: parity with sacrebleu across options, tokenizer fuzzing, hand cases, bad input, the
result contract and the numbers of its card. What BLEU shares with chrF and TER (the evaluate
module on mixed reference shapes, the card and module examples) is in tests/contract/test_text_metrics.py.

Expected numbers come from sacrebleu (same options) or from hand computation.
"""

from __future__ import annotations

import itertools
import json
import math
import random

import numpy as np
import pytest

from nlgmetrics.bleu import (
    BleuResult,
    BleuScorer,
    bleu,
    bleu_from_statistics,
    bleu_statistics,
    clear_caches,
    corpus_bleu,
    get_tokenizer,
    sentence_bleu,
)
from nlgmetrics.core.signature import parse_signature
from tests.support.evaluate_support import sacrebleu_streams
from tests.support.markdown_examples import REPO_ROOT

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU  # noqa: E402

_WORDS = (
    "the a cat cats sat on mat The Cat is was 3.5 1,000 2-3 state-of-the-art don't it's U.S. "
    "&amp; &quot;quoted&quot; <skipped> e.g. ... !? (paren) [x] {y} $5 50% a/b @home #tag "
    "\u4f60\u597d \u4e16\u754c \u3002 caf\u00e9 \u00fcber \u2014 \u201cq\u201d \U0001f600 -"
).split()
_EDGE = ["", "   ", ".", "a", "A a A", "end .", "1. 2. 3.", "x,y", "-\nz", "tab\there", "\u4f60\u597d\u4e16\u754c\u3002", "Ω≈ç√"]


def varied_corpus(seed: int = 0, size: int = 50):
    """Hypotheses and ragged references (1-4 per example) with punctuation, numbers, CJK."""
    rng = random.Random(seed)

    def text(lo=0, hi=16):
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))

    hyps = [text() for _ in range(size)] + _EDGE
    refs = [[text(1) for _ in range(rng.randint(1, 4))] for _ in range(size)]
    refs += [[e, text(1)] for e in _EDGE[::-1]]
    refs[3].append("")  # an empty reference counts (length 0), as in sacrebleu
    hyps.append(refs[0][0])  # one exact match
    refs.append([refs[0][0]])
    return hyps, refs


def assert_same(ours, theirs):
    assert abs(ours.score - theirs.score) <= 1e-9
    assert ours.bp == pytest.approx(theirs.bp, abs=1e-12)
    assert (ours.sys_len, ours.ref_len) == (theirs.sys_len, theirs.ref_len)
    assert ours.precisions == pytest.approx(theirs.precisions, abs=1e-9)


GRID = list(
    itertools.product(
        ["13a", "intl", "char", "none", "zh"],
        [("none", None), ("floor", None), ("floor", 0.3), ("add-k", None), ("add-k", 2), ("exp", None)],
        [False, True],  # lowercase
        [4, 6],  # max order (2 is in the hand-computed cases)
    )
)


@pytest.mark.parametrize("tokenize, smooth, lowercase, order", GRID)
def test_corpus_bleu_parity(tokenize, smooth, lowercase, order):
    hyps, refs = varied_corpus()
    method, value = smooth
    for effective in (False, True):
        theirs = BLEU(
            tokenize=tokenize, smooth_method=method, smooth_value=value, lowercase=lowercase,
            max_ngram_order=order, effective_order=effective,
        ).corpus_score(hyps, sacrebleu_streams(refs))
        options = dict(tokenize=tokenize, lowercase=lowercase, smooth_method=method, smooth_value=value,
                       max_ngram_order=order, effective_order=effective)
        ours = BleuScorer(**options).corpus(hyps, refs)
        assert_same(ours, theirs)
        assert ours.counts == theirs.counts[:order] or method == "add-k"
        # sacrebleu's face: its argument names and reference streams, the same numbers
        streams = sacrebleu_streams(refs)
        same_name = corpus_bleu(hyps, streams, smooth_method=method, smooth_value=value, lowercase=lowercase,
                                tokenize=tokenize, use_effective_order=effective, max_ngram_order=order)
        assert same_name == ours
        # the metric gives the same corpus numbers
        result = bleu(hyps, refs, **options)
        assert abs(result.main_score - theirs.score) <= 1e-9
        assert result.bp == pytest.approx(theirs.bp, abs=1e-12)
        assert (result.sys_len, result.ref_len) == (theirs.sys_len, theirs.ref_len)
        assert list(result.precisions) == pytest.approx(theirs.precisions, abs=1e-9)


@pytest.mark.parametrize("tokenize", ["13a", "intl", "char", "none", "zh"])
@pytest.mark.parametrize("smooth", [("none", None), ("floor", 0.1), ("add-k", 1), ("exp", None)])
def test_sentence_bleu_parity(tokenize, smooth):
    hyps, refs = varied_corpus(seed=1, size=25)
    method, value = smooth
    for effective in (True, False):
        metric = BLEU(tokenize=tokenize, smooth_method=method, smooth_value=value, effective_order=effective)
        ours = BleuScorer(
            tokenize=tokenize, smooth_method=method, smooth_value=value, effective_order=effective
        ).sentences(hyps, refs)
        for hyp, ref_list, mine in zip(hyps, refs, ours):
            assert_same(mine, metric.sentence_score(hyp, ref_list))
    # the metric's column: always effective order, whatever the corpus option
    metric = BLEU(tokenize=tokenize, smooth_method=method, smooth_value=value, effective_order=True)
    expected = [metric.sentence_score(hyp, ref_list).score for hyp, ref_list in zip(hyps, refs)]
    for corpus_effective in (False, True):
        column = bleu(hyps, refs, tokenize=tokenize, smooth_method=method, smooth_value=value,
                      effective_order=corpus_effective).scores["sentence_bleu"]
        assert max(abs(a - b) for a, b in zip(column, expected)) <= 1e-9


def test_sentence_bleu_matches_sacrebleu_defaults():
    hyps, refs = varied_corpus(seed=2, size=20)
    for hyp, ref_list in zip(hyps, refs):
        assert_same(sentence_bleu(hyp, ref_list), sacrebleu.sentence_bleu(hyp, ref_list))
    assert_same(corpus_bleu(hyps, sacrebleu_streams(refs)), sacrebleu.corpus_bleu(hyps, sacrebleu_streams(refs)))


# --------------------------------------------------------------------------- sacrebleu's names, sacrebleu's layout

SACREBLEU_FIELDS = ("score", "counts", "totals", "precisions", "bp", "sys_len", "ref_len")


def as_sacrebleu_reports(counts, totals, smooth_method="exp", smooth_value=None):
    """Our raw counts and totals as sacrebleu reports them: its add-k smoothing adds k to its own
    lists for orders >= 2 (in place, so they come back in the score), unless nothing matched."""
    if smooth_method != "add-k" or not any(counts):
        return list(counts), list(totals)
    k = 1 if smooth_value is None else smooth_value
    return [counts[0]] + [c + k for c in counts[1:]], [totals[0]] + [t + k for t in totals[1:]]


def assert_sacrebleu_fields(ours, theirs, smooth_method="exp", smooth_value=None):
    """Every field of sacrebleu's BLEUScore, under its name (score to 1e-9: we cap 100.00000000000004;
    counts and totals raw, sacrebleu's add-k ones through :func:`as_sacrebleu_reports`)."""
    assert abs(ours.score - theirs.score) <= 1e-9
    reported = as_sacrebleu_reports(ours.counts, ours.totals, smooth_method, smooth_value)
    assert reported == (theirs.counts, theirs.totals)
    assert (ours.sys_len, ours.ref_len) == (theirs.sys_len, theirs.ref_len)
    assert ours.precisions == pytest.approx(theirs.precisions, abs=1e-9)
    assert ours.bp == pytest.approx(theirs.bp, abs=1e-12)


def random_streams(rng: random.Random, n: int, n_streams: int) -> list[list[str | None]]:
    """``n_streams`` streams of ``n`` entries: texts, some empty references, some missing (None),
    every hypothesis keeping at least one reference."""

    def entry():
        roll = rng.random()
        if roll < 0.15:
            return None
        if roll < 0.2:
            return ""
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 12)))

    streams = [[entry() for _ in range(n)] for _ in range(n_streams)]
    for i in range(n):
        if all(stream[i] is None for stream in streams):
            streams[rng.randrange(n_streams)][i] = " ".join(rng.choice(_WORDS) for _ in range(3))
    return streams


@pytest.mark.parametrize("seed", range(40))
def test_corpus_bleu_takes_sacrebleus_streams_and_gives_its_numbers(seed):
    """Differential: random corpora with 1-3 reference streams (None and "" entries included) and
    random options, called positionally and by sacrebleu's keyword names."""
    rng = random.Random(seed)
    n = rng.randint(1, 30)
    hyps = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 14))) for _ in range(n)]
    streams = random_streams(rng, n, rng.randint(1, 3))
    smooth_method, smooth_value = rng.choice([("exp", None), ("none", None), ("floor", None), ("floor", 0.3),
                                              ("add-k", None), ("add-k", 2)])
    options = dict(smooth_method=smooth_method, smooth_value=smooth_value, lowercase=rng.random() < 0.5,
                   tokenize=rng.choice(["13a", "intl", "char", "none", "zh", None]),
                   use_effective_order=rng.random() < 0.5)
    smoothing = (smooth_method, smooth_value)
    theirs = sacrebleu.corpus_bleu(hyps, streams, **options)
    assert_sacrebleu_fields(corpus_bleu(hyps, streams, **options), theirs, *smoothing)
    positional = (smooth_method, smooth_value, False, options["lowercase"], options["tokenize"],
                  options["use_effective_order"])
    assert_sacrebleu_fields(corpus_bleu(hyps, streams, *positional), sacrebleu.corpus_bleu(hyps, streams, *positional),
                            *smoothing)
    # the per-example face reads the same references the other way round: the same number
    per_example = [[stream[i] for stream in streams if stream[i] is not None] for i in range(n)]
    scorer = BleuScorer(tokenize=options["tokenize"] or "13a", lowercase=options["lowercase"],
                        smooth_method=smooth_method, smooth_value=smooth_value,
                        effective_order=options["use_effective_order"])
    assert_sacrebleu_fields(scorer.corpus(hyps, per_example), theirs, *smoothing)


def test_two_hypotheses_two_streams_is_read_as_sacrebleu_reads_it():
    """The silently wrong number: two hypotheses and two reference streams look like two examples
    with two references each. The name promises sacrebleu's reading."""
    hyps = ["the cat sat on the mat", "a dog barked"]
    refs_a = ["a cat sat on the mat", "the dog barked"]
    refs_b = ["the cat sat on a mat", "a dog barks loudly"]
    theirs = sacrebleu.corpus_bleu(hyps, [refs_a, refs_b])
    ours = corpus_bleu(hyps, [refs_a, refs_b])
    assert_sacrebleu_fields(ours, theirs)
    assert round(ours.score, 2) == round(theirs.score, 2) == 91.83
    # read per example (hypothesis 0 against refs_a), the same lists give another number: what
    # corpus_bleu used to return, and what bleu() returns for that layout
    other_reading = sacrebleu.corpus_bleu(hyps, [list(pair) for pair in zip(refs_a, refs_b)]).score
    assert round(other_reading, 2) == 61.44
    assert bleu(hyps, [refs_a, refs_b]).main_score == pytest.approx(other_reading, abs=1e-9)


LAYOUT_HINT = r"sacrebleu's layout.*nlgmetrics\.bleu\.bleu\(predictions, references\)"


@pytest.mark.parametrize(
    "hyps, references, problem",
    [
        (["a b", "c d"], ["a b", "c d"], r"`references` is a flat list of strings"),
        (["a b"], ["a b"], r"`references` is a flat list of strings"),
        (["a b", "c d"], [["a b", "a c"], "c d"], r"`references` is a mix of strings and lists"),
        # per example, ragged: the second "stream" is one reference long
        (["a b", "c d"], [["a b", "a c"], ["c d"]], r"`references\[1\]` has 1 entries but there are 2 hypotheses"),
        # per example, one hypothesis with two references
        (["a b"], [["a b", "a c"]], r"`references\[0\]` has 2 entries but there are 1 hypotheses"),
        # per example, three hypotheses with two references each
        (["a", "b", "c"], [["a", "x"], ["b", "y"], ["c", "z"]], r"`references\[0\]` has 2 entries but there are 3"),
        (["a b"], "a b", r"`references` is a single string"),
        (["a b"], None, r"`references` is None"),
        (["a b"], [], r"`references` is empty"),
        (["a b"], {"a b": 1}, r"`references` is dict"),
        (["a b"], [{"a b"}], r"`references\[0\]` is set"),
        (["a b"], [[["a b"]]], r"`references\[0\]\[0\]` is list, not a string or None \(nested one level too deep"),
        (["a b"], [[float("nan")]], r"`references\[0\]\[0\]` is float, not a string or None"),
    ],
)
def test_corpus_bleu_refuses_the_other_layout_naming_the_expected_one(hyps, references, problem):
    with pytest.raises(ValueError, match=problem + ".*" + LAYOUT_HINT):
        corpus_bleu(hyps, references)


def test_a_hypothesis_without_any_reference_is_refused():
    # sacrebleu fails here with "argument of type 'NoneType' is not iterable"
    with pytest.raises(TypeError):
        sacrebleu.corpus_bleu(["a b", "c d"], [["a b", None], ["a c", None]])
    with pytest.raises(ValueError, match=r"Hypothesis 1 has no reference: every stream holds None at position 1"):
        corpus_bleu(["a b", "c d"], [["a b", None], ["a c", None]])


def test_corpus_bleu_options_under_sacrebleus_names():
    hyps, refs = varied_corpus(seed=11, size=20)
    streams = sacrebleu_streams(refs)
    default = corpus_bleu(hyps, streams)
    # tokenize=None is sacrebleu's default (13a); force only silences a sacrebleu warning
    assert corpus_bleu(hyps, streams, tokenize=None) == default == corpus_bleu(hyps, streams, force=True)
    assert_sacrebleu_fields(default, sacrebleu.corpus_bleu(hyps, streams, tokenize=None, force=True))
    effective = corpus_bleu(hyps, streams, use_effective_order=True)
    assert_sacrebleu_fields(effective, sacrebleu.corpus_bleu(hyps, streams, use_effective_order=True))
    # tuples are streams too
    assert corpus_bleu(tuple(hyps), tuple(tuple(s) for s in streams)) == default
    # our own option name is not sacrebleu's: a plain TypeError, as sacrebleu gives
    with pytest.raises(TypeError, match="effective_order"):
        corpus_bleu(hyps, streams, effective_order=True)


def test_sentence_bleu_takes_sacrebleus_arguments():
    hyps, refs = varied_corpus(seed=12, size=20)
    for hyp, ref_list in zip(hyps, refs):
        with_missing = [ref_list[0], None, *ref_list[1:]]  # None entries are dropped, as in sacrebleu
        assert_sacrebleu_fields(sentence_bleu(hyp, with_missing), sacrebleu.sentence_bleu(hyp, with_missing))
        positional = ("floor", 0.3, True, "char", False)
        assert_sacrebleu_fields(sentence_bleu(hyp, ref_list, *positional),
                                sacrebleu.sentence_bleu(hyp, ref_list, *positional))
        keywords = dict(smooth_method="add-k", tokenize=None, use_effective_order=False)
        assert_sacrebleu_fields(sentence_bleu(hyp, ref_list, **keywords),
                                sacrebleu.sentence_bleu(hyp, ref_list, **keywords), "add-k")
    # one string can only be one reference (sacrebleu refuses it; we read it so)
    assert sentence_bleu("a cat sat", "the cat sat") == sentence_bleu("a cat sat", ["the cat sat"])


def test_score_objects_carry_sacrebleus_field_names():
    theirs = sacrebleu.corpus_bleu(["a b c d e"], [["a b c d f"]])
    ours = corpus_bleu(["a b c d e"], [["a b c d f"]])
    for name in SACREBLEU_FIELDS + ("ratio",):
        assert type(getattr(ours, name)) is type(getattr(theirs, name)) or name == "ratio", name
    assert ours.ratio == theirs.ratio


def test_tokenizers_match_sacrebleu_on_fuzzed_text():
    from sacrebleu.metrics.bleu import _get_tokenizer

    rng = random.Random(3)
    alphabet = "aZ9 .,-'\"&;<>()[]{}$%@/\\:!?\n\t\u00a0\u2000\u2001\u3000\u4e00\u9fa5\uff01\u2014\u00e9\u0301\U0001f600"
    lines = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    lines += ["&quot;a&quot; &amp; &lt;b&gt; <skipped> x-\ny", "3.5,000-4 end.", "U.S.A., e.g.,"]
    for name in ["13a", "intl", "char", "none", "zh"]:
        theirs, ours = _get_tokenizer(name)(), get_tokenizer(name)
        for line in lines:
            assert ours(line.rstrip()) == theirs(line.rstrip()).split(), (name, line)


def test_caches_never_change_results():
    hyps, refs = varied_corpus(seed=4, size=20)
    clear_caches()
    cold = corpus_bleu(hyps, sacrebleu_streams(refs))
    warm = corpus_bleu(hyps, sacrebleu_streams(refs))
    scorer = BleuScorer()
    assert cold == warm == scorer.corpus(hyps, refs)
    clear_caches()
    cold_result = bleu(hyps, refs)
    assert cold_result == bleu(hyps, refs) == scorer.score(hyps, refs)


# --------------------------------------------------------------------------- hand-computed


def test_hand_modified_unigram_precision_papineni():
    # Papineni et al. 2002: "the the the the the the the" vs "the cat is on the mat": p1 = 2/7
    out = corpus_bleu(["the the the the the the the"], [["the cat is on the mat"]], max_ngram_order=1, smooth_method="none")
    assert out.precisions == pytest.approx([100 * 2 / 7])
    assert out.bp == 1.0 and out.score == pytest.approx(100 * 2 / 7)


def test_hand_brevity_penalty_and_closest_reference():
    # hyp 2 tokens, refs of 6 and 3 tokens -> closest is 3; p1 = p2 = 1; BP = exp(1 - 3/2)
    out = corpus_bleu(["the cat"], [["the cat is on the mat"], ["the cat sat"]], max_ngram_order=2)
    assert out.ref_len == 3 and out.bp == pytest.approx(math.exp(1 - 3 / 2))
    assert out.score == pytest.approx(100 * math.exp(1 - 3 / 2))
    # equal distance (2 vs 4 around 3): the shorter reference wins
    assert corpus_bleu(["a b c"], [["a b c d"], ["a b"]]).ref_len == 2


def test_hand_exp_smoothing():
    # 3 tokens: 1-grams 2/3, 2-grams 1/2, 3-grams 0/1 -> exp smoothing 100/(2*1);
    # no 4-grams -> the effective order is 3
    out = sentence_bleu("a b x", ["a b c"], smooth_method="exp", use_effective_order=True)
    p = [100 * 2 / 3, 50.0, 50.0]
    assert out.precisions[:3] == pytest.approx(p)
    assert out.score == pytest.approx(math.exp(sum(math.log(x) for x in p) / 3))


# --------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("hyp, ref", [("", "a b"), ("   ", "a b"), ("a b", ""), ("", ""), ("\n", " ")])
def test_empty_and_whitespace_are_zero_not_nan(hyp, ref):
    for result in (corpus_bleu([hyp], [[ref]]), sentence_bleu(hyp, [ref])):
        assert result.score == 0.0 and not math.isnan(result.bp)
        assert all(not math.isnan(p) for p in result.precisions)
    metric = bleu([hyp], [ref])
    assert metric.main_score == 0.0 and metric.scores["sentence_bleu"] == [0.0]
    assert all(math.isfinite(v) for v in metric.aggregate().values())


def test_identity_is_100():
    texts = ["the cat sat on the mat .", "Hello, world!", "one two three four five"]
    assert corpus_bleu(texts, [texts]).score == pytest.approx(100.0, abs=1e-9)
    for text in texts + ["a", "a b"]:
        assert sentence_bleu(text, [text]).score == pytest.approx(100.0, abs=1e-9)
    # exactly 100, inside the declared range (floating point gives exp(log(100)) = 100.00000000000004)
    short = texts + ["a", "a b"]
    result = bleu(short, short)
    assert result.scores["sentence_bleu"] == [100.0] * 5 and result.main_score == 100.0


def test_signature_records_options():
    sig = bleu(["a"], [["a", "b"]], tokenize="intl", lowercase=True, smooth_method="floor").signature
    assert sig == ("bleu|case:lc|effective_order:no|max_ngram_order:4|nrefs:2|smooth:floor[0.10]|tokenize:intl|"
                   "version:0.1.0")
    assert "nrefs:var" in bleu(["a", "b"], [["a"], ["b", "c"]]).signature
    sig = bleu(["a"], ["a"], smooth_method="add-k", smooth_value=2, max_ngram_order=6, effective_order=True).signature
    fields = parse_signature(sig)
    assert (fields["smooth"], fields["max_ngram_order"], fields["effective_order"]) == ("add-k[2.00]", "6", "yes")
    assert set(fields) == {"metric", "case", "effective_order", "max_ngram_order", "nrefs", "smooth", "tokenize",
                           "version"}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: corpus_bleu(None, [["a"]]), r"`hypotheses` is None"),
        (lambda: corpus_bleu(["a", None], [["a", "b"]]), r"`hypotheses\[1\]` is NoneType"),
        (lambda: corpus_bleu([], []), r"`hypotheses` is empty"),
        (lambda: corpus_bleu(["a"], [[["a"]]]), r"nested one level too deep"),
        (lambda: corpus_bleu(["a"], [[1]]), r"`references\[0\]\[0\]` is int"),
        (lambda: corpus_bleu(["a"], [["a"]], tokenize="moses"), r"Unknown tokenize='moses'"),
        # sacrebleu's old name of flores101: refused (its signature would read flores101), naming the new one
        (lambda: bleu(["a"], ["a"], tokenize="spm"), r"Unknown tokenize='spm'; choose one of \[.*'flores101', "
                                                     r"'flores200'\] \('spm' is sacrebleu's former name of 'flores101'\)"),
        (lambda: corpus_bleu(["a"], [["a"]], smooth_method="add-one"), r"Unknown smooth_method='add-one'"),
        (lambda: corpus_bleu(["a"], [["a"]], max_ngram_order=0), r"max_ngram_order=0 must be a positive integer"),
        (lambda: corpus_bleu(["a"], [["a"]], smooth_value=-1), r"smooth_value=-1 must be a non-negative"),
        (lambda: corpus_bleu(["a"], [["a"]], use_effective_order="no"), r"`use_effective_order` must be True or False, got 'no'"),
        (lambda: corpus_bleu(["a"], [["a"]], force="yes"), r"`force` must be True or False, got 'yes'"),
        (lambda: sentence_bleu(["a"], ["a"]), r"use bleu\(predictions, references\)\.scores\['sentence_bleu'\]"),
        (lambda: sentence_bleu("a", [["a"]]), r"`references\[0\]` is list, not a string"),
        (lambda: sentence_bleu("a", [None]), r"holds no reference string"),
        (lambda: sentence_bleu("a", None), r"`references` is NoneType"),
        (lambda: bleu(["a"], ["a"], effective_order="no"), r"`effective_order` must be True or False, got 'no'"),
    ],
)
def test_bad_input_errors_name_the_problem(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("entry", [-1, float("nan"), float("inf"), 10**5000], ids=["negative", "nan", "inf", "huge"])
def test_from_statistics_refuses_negative_or_non_finite_counts_as_chrf_and_ter_do(entry):
    """A negative count once scored 100.0 (all entries -1) or reached math.log ("math domain
    error"), a NaN failed in int(); now the check of chrF's and TER's statistics refuses them."""
    row = [4, 4, 4, 3, 2, 1, 4, 3, 2, 1]
    for index in (0, 2, 9):
        bad = list(row)
        bad[index] = entry
        with pytest.raises(ValueError, match=r"^summed must hold finite non-negative counts \(sums of bleu_statistics"):
            bleu_from_statistics(bad)
    with pytest.raises(ValueError, match=r"^summed must hold finite non-negative counts"):
        bleu_from_statistics([entry] * 10)


def test_from_statistics_scores_each_row_of_a_table_like_one_row():
    """A 2-D table gives one score per row (as chrF's and TER's versions do), each the 1-D score;
    a table of another width names the layout."""
    preds = ["the cat sat on the mat", "a dog", "it is raining today"]
    refs = [["the cat sat on a mat"], ["a dog"], ["it rains today"]]
    stats = bleu_statistics(preds, refs)
    table = np.stack([stats.sum(axis=0), stats[:2].sum(axis=0), stats[1]])
    assert bleu_from_statistics(table).tolist() == [bleu_from_statistics(row) for row in table.tolist()]
    assert bleu_from_statistics(stats.sum(axis=0)) == bleu(preds, refs).main_score
    with pytest.raises(ValueError, match=r"summed has shape \(3, 10\); expected \(12,\) or \(n, 12\)"):
        bleu_from_statistics(table, max_ngram_order=5)


# --------------------------------------------------------------------------- evaluate module


def test_result_contract_columns_main_and_aggregate():
    from nlgmetrics.apps.evaluate_adapter import evaluate_output

    hyps, refs = varied_corpus(seed=9, size=15)
    result = bleu(hyps, refs)
    theirs = BLEU().corpus_score(hyps, sacrebleu_streams(refs))
    assert isinstance(result, BleuResult) and result.metric == "bleu" and result.main == "bleu"
    assert list(result.scores) == ["sentence_bleu"] and len(result) == len(hyps)
    column = result.column("sentence_bleu")
    assert column.higher_is_better and (column.minimum, column.maximum) == (0.0, 100.0)
    assert all(0.0 <= v <= 100.0 for v in result.scores["sentence_bleu"])
    assert result.higher_is_better and result.column("bleu").maximum == 100.0
    aggregate = result.aggregate()
    assert list(aggregate) == ["bleu", "bp", "ratio", "precision_1", "precision_2", "precision_3", "precision_4",
                               "sys_len", "ref_len", "sentence_bleu"]
    assert abs(aggregate["bleu"] - theirs.score) <= 1e-9 and result.main_score == aggregate["bleu"]
    assert aggregate["ratio"] == pytest.approx(theirs.sys_len / theirs.ref_len)
    assert [aggregate[f"precision_{n}"] for n in range(1, 5)] == pytest.approx(theirs.precisions, abs=1e-9)
    assert (aggregate["sys_len"], aggregate["ref_len"]) == (theirs.sys_len, theirs.ref_len)
    sentences = [sacrebleu.sentence_bleu(h, r).score for h, r in zip(hyps, refs)]
    assert aggregate["sentence_bleu"] == pytest.approx(sum(sentences) / len(sentences), abs=1e-9)
    assert list(result.counts) == theirs.counts and list(result.totals) == theirs.totals
    details = result.details()
    assert sum(details["sys_len"]) == theirs.sys_len and sum(details["ref_len"]) == theirs.ref_len
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["counts"] == theirs.counts and payload["aggregate"]["bleu"] == aggregate["bleu"]
    out = evaluate_output(result)
    assert list(out)[0] == "bleu" and out == result.aggregate()
    with pytest.raises(KeyError, match="has no column 'score'"):
        result.column("score")


def test_corpus_effective_order_does_not_leak_into_sentence_scores():
    # 3-token segments have no 4-grams: corpus BLEU without effective order is 0 (sacrebleu's
    # definition), sentence BLEU (always effective order) is 100 for each exact match.
    hyps = ["a b c", "d e f"]
    plain, effective = bleu(hyps, hyps), bleu(hyps, hyps, effective_order=True)
    assert plain.main_score == sacrebleu.corpus_bleu(hyps, [hyps]).score == 0.0
    assert effective.main_score == pytest.approx(100.0)
    assert plain.scores == effective.scores == {"sentence_bleu": [100.0, 100.0]}


# --------------------------------------------------------------------------- model card


def test_card_numbers_are_sacrebleus():
    card = (REPO_ROOT / "metrics" / "bleu" / "README.md").read_text(encoding="utf-8")
    hyps = ["the cat is on the mat", "there is a dog"]
    refs = [["the cat is on the mat", "a cat is on the mat"], ["there is a big dog"]]
    corpus = sacrebleu.corpus_bleu(hyps, sacrebleu_streams(refs))
    assert f"({corpus.score:.2f}, {corpus.bp:.4f}, {corpus.sys_len}, {corpus.ref_len})" in card
    assert f"{sacrebleu.sentence_bleu(hyps[1], refs[1]).score!r}]" in card


def test_card_zh_range_cases_are_sacrebleus():
    """The card's zh edge case: its numbers are sacrebleu's (sentence BLEU, effective order)."""
    card = (REPO_ROOT / "metrics" / "bleu" / "README.md").read_text(encoding="utf-8")
    for hyp, ref, tokenize in (("it’s", "it’ll", "zh"), ("it’s", "it’ll", "13a"), ("𠀀𠀁", "𠀀𠀂", "zh")):
        want = sacrebleu.BLEU(tokenize=tokenize, effective_order=True).sentence_score(hyp, [ref]).score
        assert bleu([hyp], [ref], tokenize=tokenize).scores["sentence_bleu"] == [want]
        assert (f"\n  {round(want, 2)}\n" if want else "[0.0]") in card
    # The two ranges really are sacrebleu's misreading: U+2019 is "Chinese", U+20000 is not.
    assert sacrebleu.tokenizers.tokenizer_zh.TokenizerZh()("a’b").split() == ["a", "’", "b"]
    assert sacrebleu.tokenizers.tokenizer_zh.TokenizerZh()("𠀀𠀁").split() == ["𠀀𠀁"]


def test_speed_benchmark_rows_have_identical_numbers(shared_data_dir):
    from benchmarks.speed import text as speed_text

    rows = speed_text.run(shared_data_dir, limit=3)
    assert len(rows) == 10
    for row in rows:
        assert set(row) == {"metric", "anchor", "ours_s", "anchor_s", "ratio", "ours_range", "anchor_range",
                            "max_abs_diff"}
        assert row["ours_range"][0] <= row["ours_s"] <= row["ours_range"][1]  # medians of repeated rounds
        assert row["max_abs_diff"] <= 1e-9, row
    assert "| ratio |" in "\n".join(speed_text.to_markdown(rows, "cmd"))
