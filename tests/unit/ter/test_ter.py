"""TER: parity with sacrebleu on WebNLG 2020 and REALSumm text, on random word sequences (the
shift search and the beam) and on edge cases; the normalisation against sacrebleu's tokenizer;
hand cases, the sufficient-statistics interface, bad input, signatures and the numbers of its
card. What TER shares with BLEU and chrF (the evaluate module on mixed reference shapes, the card
and module examples) is in tests/contract/test_text_metrics.py.

Expected numbers come from sacrebleu's ``TER`` (same options) or from hand computation.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import defaultdict

import numpy as np
import pytest

from nlgmetrics.core.signature import parse_signature
from nlgmetrics.ter import TerResult, shifted_edits, ter, ter_from_statistics, ter_statistics, tercom_words
from tests.support.evaluate_support import sacrebleu_streams
from tests.support.markdown_examples import REPO_ROOT

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import TER  # noqa: E402
from sacrebleu.metrics.lib_ter import translation_edit_rate  # noqa: E402
from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer  # noqa: E402

OPTION_GRID = [dict(zip(("normalized", "no_punct", "asian_support", "case_sensitive"), values))
               for values in itertools.product([False, True], repeat=4)]

# --------------------------------------------------------------------------- real text


@pytest.fixture(scope="module")
def real_text(shared_data_dir):
    """{dataset: {system: (predictions, references)}}: the WebNLG 2020 human-evaluation rows of the
    first 8 items (17 systems, 1-4 references, ragged) and the first REALSumm document x 25
    systems (long summaries). sacrebleu's TER takes ~0.1 s per WebNLG row here, so a few hundred
    rows (benchmarks/speed/ter.py compares whole data sets)."""
    from benchmarks.meta.data import load_realsumm, load_webnlg2020

    out = {}
    for name, examples in (("webnlg2020", load_webnlg2020(shared_data_dir, max_docs=8)),
                           ("realsumm", load_realsumm(shared_data_dir, max_docs=1))):
        systems: dict = defaultdict(lambda: ([], []))
        for e in examples:
            if e.references:
                systems[e.system][0].append(e.prediction)
                systems[e.system][1].append(list(e.references))
        out[name] = dict(systems)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("dataset, options, minimum", [
    ("webnlg2020", dict(), 130),
    ("webnlg2020", dict(normalized=True, case_sensitive=True), 130),
    ("realsumm", dict(), 25),
])
def test_parity_with_sacrebleu_on_real_text(real_text, dataset, options, minimum):
    """Every system's corpus TER and every sentence TER equal sacrebleu's, bit for bit (sentence
    scores from the per-segment statistics of sacrebleu's corpus extraction, which is what its
    ``sentence_score`` computes; the public calls are checked on the first WebNLG system)."""
    anchor = TER(**options)
    pairs = 0
    for index, (preds, refs) in enumerate(real_text[dataset].values()):
        # sacrebleu normalises references twice (see the departure tests): compared as such.
        twice = dict(normalize_references_twice=options.get("normalized", False))
        result = ter(preds, refs, **options, **twice)
        stats = anchor._extract_corpus_statistics(preds, sacrebleu_streams(refs))
        assert result.main_score == anchor._aggregate_and_compute(stats).score
        assert result.scores["sentence_ter"] == [anchor._compute_score_from_stats(row).score for row in stats]
        if index == 0 and dataset == "webnlg2020":
            assert ter_statistics(preds, refs, **options, **twice).tolist() == [[float(a), float(b)] for a, b in stats]
            assert result.main_score == anchor.corpus_score(preds, sacrebleu_streams(refs)).score
            assert result.scores["sentence_ter"] == [anchor.sentence_score(p, r).score for p, r in zip(preds, refs)]
        pairs += len(preds)
    assert pairs >= minimum


def test_shift_search_matches_sacrebleu_on_random_word_sequences():
    """Small vocabularies make many repeated blocks (the shift heuristics and tie-breaking);
    lengths up to 300 reference words exercise the beam (ratio > 50 widens it)."""
    rng = random.Random(7)
    vocab = "a b c d the cat sat".split()
    cases = [([rng.choice(vocab) for _ in range(rng.randint(0, 18))],
              [rng.choice(vocab) for _ in range(rng.randint(0, 18))]) for _ in range(300)]
    cases += [([rng.choice(vocab) for _ in range(rng.randint(1, 60))],
               [rng.choice(vocab) for _ in range(rng.randint(60, 300))]) for _ in range(4)]
    cases += [(["a"] * 3, ["a"] * 200), (list("abcdefghij") * 3, list("jihgfedcba") * 3)]
    for hyp, ref in cases:
        assert shifted_edits(hyp, ref) == translation_edit_rate(hyp, ref)[0], (hyp, ref)


def test_normalisation_matches_sacrebleus_tokenizer():
    rng = random.Random(3)
    pieces = list("abc ABC.,?:;!\"()'-0123456789&{}[]~`@/+\n\t") + [
        "你", "好", "。", "、", "（", "ひ", "ら", "カ", "ㇰ", "\u3200", "\uff0c", "&amp;", "&quot;", "&lt;",
        "'s ", "3.5", "-\n", "\u00e9"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 25))) for _ in range(400)]
    for options in OPTION_GRID:
        tokenizer = TercomTokenizer(**options)
        for text in texts:
            assert tercom_words(text, **options) == tokenizer(text.rstrip()).split(), (options, text)


# --------------------------------------------------------------------------- the departure from sacrebleu

NORMALISED_OPTIONS = [o for o in OPTION_GRID if o["normalized"]]
# Texts where a second pass of the normaliser changes a reference ('s before punctuation) and
# texts where it does not.
TWICE_SENSITIVE = ["it's.", "Bob's, car", "the dog's!", "it's 3.5 km-long", "Alan's (born 1930)", "what's?",
                   "plain words", "Hello, World!", "a&amp;quot;b", "你好's。"]


def test_sacrebleu_normalises_references_twice():
    """The departure itself, measured on sacrebleu: its reference words are the normaliser applied
    twice, its hypothesis words once; so identical texts score 2 edits / 3 words. If sacrebleu
    ever normalises once, this test fails and the card's departure section must go."""
    import sacrebleu.metrics.ter as sacrebleu_ter

    seen = []
    original = sacrebleu_ter.translation_edit_rate

    def spy(hyp_words, ref_words):
        seen.append((list(hyp_words), list(ref_words)))
        return original(hyp_words, ref_words)

    sacrebleu_ter.translation_edit_rate = spy
    try:
        score = TER(normalized=True, case_sensitive=True).corpus_score(["it's."], [["it's."]]).score
    finally:
        sacrebleu_ter.translation_edit_rate = original
    assert seen == [(["it's", "."], ["it", "'s", "."])] and score == 100 * (2 / 3)
    assert ter(["it's."], ["it's."], normalized=True).main_score == 0.0
    assert ter(["it's."], ["it's."], normalized=True, normalize_references_twice=True).main_score == 100 * (2 / 3)


@pytest.mark.parametrize("options", NORMALISED_OPTIONS, ids=lambda o: "-".join(k for k, v in o.items() if v))
def test_default_is_sacrebleu_on_texts_normalised_once(options):
    """The mapping, against sacrebleu's own code: normalise hypothesis and references once with
    its ``TercomTokenizer`` (the options' case and punctuation too), then score the words with
    sacrebleu's TER without normalisation (case kept: whitespace splitting only). That is our
    default, bit for bit, on the sensitive texts and as both hypotheses and references."""
    once = TercomTokenizer(**options)
    plain = TER(case_sensitive=True)
    hyps = TWICE_SENSITIVE + TWICE_SENSITIVE[::-1]
    refs = [[r] for r in TWICE_SENSITIVE] * 2
    result = ter(hyps, refs, **options)
    expected = [plain.sentence_score(once(h.rstrip()), [once(r[0].rstrip())]).score for h, r in zip(hyps, refs)]
    assert result.scores["sentence_ter"] == expected
    assert all(result.scores["sentence_ter"][i] == 0.0 for i in range(len(TWICE_SENSITIVE)))  # identity
    corpus = plain.corpus_score([once(h.rstrip()) for h in hyps], [[once(r[0].rstrip()) for r in refs]])
    assert result.main_score == corpus.score


@pytest.mark.parametrize("options", NORMALISED_OPTIONS, ids=lambda o: "-".join(k for k, v in o.items() if v))
def test_normalize_references_twice_is_sacrebleu_bit_for_bit(options):
    hyps = TWICE_SENSITIVE + TWICE_SENSITIVE[::-1]
    refs = [[r, r.upper()] for r in TWICE_SENSITIVE] * 2
    anchor = TER(**options)
    result = ter(hyps, refs, **options, normalize_references_twice=True)
    assert result.scores["sentence_ter"] == [anchor.sentence_score(h, r).score for h, r in zip(hyps, refs)]
    assert result.main_score == anchor.corpus_score(hyps, sacrebleu_streams(refs)).score
    assert parse_signature(result.signature)["ref_norm"] == "twice"
    assert "ref_norm" not in parse_signature(ter(hyps, refs, **options).signature)
    differs = ter(hyps, refs, **options).scores["sentence_ter"] != result.scores["sentence_ter"]
    assert differs  # the sensitive texts do move: the option is not a no-op


# --------------------------------------------------------------------------- edge cases

EDGE_HYPOTHESES = ["", "   ", "a b", "", "Hello, World!", "the cat &amp; the dog .", "你好 世界。", "שלום עולם",
                   "b c a d", "a a a a", "x " * 40, "The Cat sat", "it's 3.5 km-long", "\u00e9t\u00e9 !",
                   "it's.", "Bob's, car"]
EDGE_REFERENCES = [["a b"], [""], [""], [""], ["hello world", "Hello World !"], ["the dog & the cat."],
                   ["你好世界。"], ["שלום"], ["a b c d"], ["a", "a a"], ["x y " * 30], ["the cat sat", "The Cat"],
                   ["it is 3.5 km long"], ["\u00c9t\u00e9!"], ["it's."], ["Bob's, car", "bob 's car"]]


@pytest.mark.parametrize("options", OPTION_GRID, ids=lambda o: "-".join(k for k, v in o.items() if v) or "default")
def test_edge_cases_match_sacrebleu(options):
    """Empty hypothesis / reference / both, whitespace, punctuation, XML entities, CJK, RTL,
    accents, repeated words, shifts, long repeats, several and ragged references. With
    ``normalized``, sacrebleu normalises references twice (``it's.``): compared with
    ``normalize_references_twice=True``; the default is checked by the mapping tests below."""
    anchor = TER(**options)
    result = ter(EDGE_HYPOTHESES, EDGE_REFERENCES, **options, normalize_references_twice=options["normalized"])
    assert result.scores["sentence_ter"] == [anchor.sentence_score(h, r).score
                                             for h, r in zip(EDGE_HYPOTHESES, EDGE_REFERENCES)]
    corpus = anchor.corpus_score(EDGE_HYPOTHESES, sacrebleu_streams(EDGE_REFERENCES))
    assert result.main_score == corpus.score
    assert (result.num_edits, result.ref_length) == (corpus.num_edits, corpus.ref_length)


@pytest.mark.parametrize("hyp, ref, want", [("", "a b", 100.0), ("a b", "", 100.0), ("", "", 0.0), ("  ", "\t", 0.0)])
def test_empty_texts_are_finite(hyp, ref, want):
    result = ter([hyp], [ref])
    assert result.main_score == result.scores["sentence_ter"][0] == want == TER().sentence_score(hyp, [ref]).score


# --------------------------------------------------------------------------- hand computation


def test_hand_computed_ter():
    # one shift moves "a" to the front: 1 edit / 4 reference words
    assert ter(["b c a d"], ["a b c d"]).main_score == 25.0
    # "the cat sat" vs "the cat sat down": one insertion / 4
    assert ter(["the cat sat"], ["the cat sat down"]).main_score == 25.0
    # several references: fewest edits (0, against "the cat") over the mean length (2 + 4) / 2 = 3
    result = ter(["the cat"], [["the cat", "a dog ran away"]])
    assert result.details() == {"num_edits": [0], "ref_length": [3.0]} and result.main_score == 0.0
    other = ter(["a dog"], [["the cat", "a dog ran away"]])  # 2 deletions vs "a dog ran away", 2 subs vs "the cat"
    assert other.details() == {"num_edits": [2], "ref_length": [3.0]}
    assert other.main_score == pytest.approx(100 * 2 / 3, abs=1e-12)
    # more edits than reference words: above 100
    assert ter(["x y z w"], ["a"]).main_score == 400.0
    # case: lower-cased by default
    assert ter(["The Cat"], ["the cat"]).main_score == 0.0 and ter(["The Cat"], ["the cat"], case_sensitive=True).main_score == 100.0


# --------------------------------------------------------------------------- sufficient statistics


def test_statistics_interface_sums_to_the_corpus_score():
    for options in OPTION_GRID[:6]:
        stats = ter_statistics(EDGE_HYPOTHESES, EDGE_REFERENCES, **options)
        assert stats.shape == (len(EDGE_HYPOTHESES), 2) and stats.dtype == np.float64
        result = ter(EDGE_HYPOTHESES, EDGE_REFERENCES, **options)
        assert ter_from_statistics(stats.sum(axis=0), **options) == result.main_score
        assert [ter_from_statistics(row) for row in stats] == result.scores["sentence_ter"]


def test_statistics_resampling_two_dimensional():
    stats = ter_statistics(EDGE_HYPOTHESES, EDGE_REFERENCES)
    rng = np.random.default_rng(0)
    samples = np.stack([stats[rng.integers(0, len(stats), len(stats))].sum(axis=0) for _ in range(20)])
    anchor = TER()
    got = ter_from_statistics(samples)
    assert isinstance(got, np.ndarray) and got.tolist() == [anchor._compute_score_from_stats(row.tolist()).score
                                                            for row in samples]


@pytest.mark.parametrize("bad, pattern", [
    (np.zeros(3), r"shape \(3,\); expected \(2,\) or \(n, 2\)"),
    (np.array([-1.0, 2.0]), r"finite non-negative"),
    (np.array([np.inf, 2.0]), r"finite non-negative"),
    (np.array(["1", "2"]), r"finite non-negative"),
])
def test_from_statistics_rejects_bad_arrays(bad, pattern):
    with pytest.raises(ValueError, match=pattern):
        ter_from_statistics(bad)


# --------------------------------------------------------------------------- contract, input, signature


def test_result_contract():
    result = ter(["the cat sat", "a dog"], [["the cat sat down"], ["a big dog", "dogs"]])
    assert isinstance(result, TerResult) and result.metric == result.main == "ter"
    assert not result.higher_is_better and result.column("ter").range_text() == "[0, inf)"
    assert not result.column("sentence_ter").higher_is_better
    assert set(result.aggregate()) == {"ter", "num_edits", "ref_length", "sentence_ter"}
    assert result.aggregate()["sentence_ter"] == math.fsum(result.scores["sentence_ter"]) / 2
    json.dumps(result.to_dict(), allow_nan=False)


def test_signature_records_every_option():
    base = ter(["a b"], ["a c"])
    assert base.signature == "ter|asian_support:no|case:lc|no_punct:no|normalized:no|nrefs:1|version:0.1.0"
    for option, key, value in (("normalized", "normalized", "yes"), ("no_punct", "no_punct", "yes"),
                               ("asian_support", "asian_support", "yes"), ("case_sensitive", "case", "mixed")):
        assert parse_signature(ter(["a b"], ["a c"], **{option: True}).signature)[key] == value
    assert parse_signature(ter(["a", "b"], [["a", "b"], "c"]).signature)["nrefs"] == "var"
    assert ter(["a"], ["a"], normalized=np.bool_(True)).signature == ter(["a"], ["a"], normalized=True).signature


@pytest.mark.parametrize("call, message", [
    (lambda: ter(["a"], ["a"], normalized="yes"), r"`normalized` must be True or False, got 'yes'"),
    (lambda: ter(["a"], ["a"], tokenize="13a"), r"unexpected keyword argument 'tokenize'"),
    (lambda: ter(["a"], ["a"], normalize_references_twice=True),
     r"normalize_references_twice=True only acts with normalized=True"),
    (lambda: ter_from_statistics([1, 2], no_punct=1), r"`no_punct` must be True or False, got 1"),
    (lambda: ter(["a"], ["a"], case_sensitive=10**5000), r"`case_sensitive` must be True or False, got an integer of about 5001 digits"),
    (lambda: ter_from_statistics([10**5000, 2]), r"summed_stats must hold finite non-negative numbers"),
    (lambda: ter_statistics(["a"], ["a"], lowercase=True),
     r"unexpected keyword argument 'lowercase': the options of TER are \['normalized', 'no_punct', "),
])
def test_bad_input_errors_name_the_problem(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


# --------------------------------------------------------------------------- card and benchmark


def test_card_numbers_are_sacrebleus():
    card = (REPO_ROOT / "metrics" / "ter" / "README.md").read_text(encoding="utf-8")
    hyps = ["the cat is on the mat", "there is a dog"]
    refs = [["the cat is on the mat", "a cat is on the mat"], ["there is a big dog"]]
    corpus = TER().corpus_score(hyps, sacrebleu_streams(refs))
    assert f"({round(corpus.score, 4)}, {corpus.num_edits}, {corpus.ref_length})" in card
    normalized = TER(normalized=True).sentence_score("The cat, on the mat!", ["the cat is on the mat."]).score
    assert f"\n{round(normalized, 4)}\n" in card


def test_speed_benchmark_rows_have_identical_numbers():
    from benchmarks.speed.ter import ter_row

    systems = {"a": (["b c a d", "the cat"], [["a b c d"], ["the cat sat", "a cat"]]), "b": (["x"], [["y z"]])}
    row = ter_row("toy", systems)
    assert row["max_abs_diff"] == 0.0 and "3 outputs" in row["metric"] and row["ours_s"] >= 0, row


def test_kana_stays_joined_as_in_sacrebleu():
    """The card's asian_support note: sacrebleu's kana rules never match, so kana runs stay
    joined to their neighbours; ours give the same words (CJK ideographs are split)."""
    options = dict(normalized=True, asian_support=True)
    for text, words in (("abcカタカナdef", ["abcカタカナdef"]), ("ひらがな", ["ひらがな"]), ("a漢b", ["a", "漢", "b"])):
        assert tercom_words(text, **options) == TercomTokenizer(**options)(text).split() == words
