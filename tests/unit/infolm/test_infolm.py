"""InfoLM against naive oracles (one forward per masked copy / one full causal forward, full softmax,
explicit sums), plus bad-input behaviour: clear errors, empty texts, long texts, identity,
invariance, no mutation; and the numerics: extreme temperatures, alpha and beta, idf weights near
the largest float, values beyond float64 (finite results or a clear error, never NaN or inf).

The oracles share nothing with the library: they call the ``transformers`` model directly, build
the masked copies by hand, compute idf by hand and write each measure's formula out (in mpmath
for the measures next to their excluded parameter values).
"""

from __future__ import annotations

import copy
import math
import warnings

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlgmetrics.infolm import infolm
from tests.support.oracles.infolm_naive import (
    fisher_rao_by_hand,
    idf_by_hand,
    js_by_hand,
    load_reference_model,
    naive_causal,
    naive_masked,
)


def _scores(result):
    return result.scores["infolm"]


# ----------------------------------------------------------------------------------------------
# oracle tests


PREDS = ["the cat sat on the mat", "hello world", "a quick brown fox"]
REFS = [["a cat sat on a mat", "dogs bark"], ["hello there world"], ["the fox is quick", "a brown fox", "zebra"]]


@pytest.mark.parametrize("idf", [False, True])
def test_js_and_multiref_match_naive_masked_oracle(tiny_bert_dir, idf):
    model, tokenizer = load_reference_model(tiny_bert_dir)
    temperature = 0.1
    table = idf_by_hand(tokenizer, [r for group in REFS for r in group]) if idf else None
    result = infolm(PREDS, REFS, model=tiny_bert_dir, information_measure="js_divergence",
                    temperature=temperature, idf=idf, progress=False)
    for i, (pred, group) in enumerate(zip(PREDS, REFS)):
        q = naive_masked(model, tokenizer, pred, temperature, table)
        per_ref = [js_by_hand(naive_masked(model, tokenizer, r, temperature, table), q) for r in group]
        assert _scores(result)[i] == pytest.approx(min(per_ref), abs=1e-6)
        assert result.best_reference[i] == per_ref.index(min(per_ref))
    assert result.mean()["infolm"] == pytest.approx(sum(_scores(result)) / 3, abs=1e-12)


@pytest.mark.parametrize("architecture", ["gpt2", "llama"])
def test_causal_variant_matches_naive_oracle(architecture, tiny_gpt2_dir, tiny_llama_dir):
    path = tiny_gpt2_dir if architecture == "gpt2" else tiny_llama_dir
    model, tokenizer = load_reference_model(path, causal=True)
    preds = ["The cat sat on the mat.", "Hello world", ""]
    refs = ["A cat was on a mat.", "Hello there, world!", "Something"]
    temperature = 0.05
    table = idf_by_hand(tokenizer, refs)
    for measure, fn in [("js_divergence", js_by_hand), ("fisher_rao_distance", fisher_rao_by_hand)]:
        result = infolm(preds, refs, model=path, information_measure=measure, temperature=temperature,
                        idf=True, progress=False)
        want = [fn(naive_causal(model, tokenizer, r, temperature, table),
                   naive_causal(model, tokenizer, p, temperature, table)) for p, r in zip(preds, refs)]
        assert _scores(result) == pytest.approx(want, abs=1e-6)
        assert "kind:causal" in result.signature


def test_empty_and_whitespace_texts_follow_the_documented_rule(tiny_bert_dir):
    model, tokenizer = load_reference_model(tiny_bert_dir)
    preds = ["", "   \n\t", "", "a cat sat"]
    refs = ["", "", "a cat sat", ""]
    result = infolm(preds, refs, model=tiny_bert_dir, information_measure="fisher_rao_distance",
                    temperature=0.05, idf=False, progress=False)
    empty = naive_masked(model, tokenizer, "", 0.05)
    cat = naive_masked(model, tokenizer, "a cat sat", 0.05)
    assert _scores(result)[:2] == [0.0, 0.0]  # two empty texts: same distribution, distance 0
    assert _scores(result)[2] == pytest.approx(fisher_rao_by_hand(cat, empty), abs=1e-6)
    assert _scores(result)[3] == pytest.approx(fisher_rao_by_hand(empty, cat), abs=1e-6)
    assert _scores(result)[2] > 0.1


@pytest.mark.parametrize(
    "measure,alpha,beta",
    [("kl_divergence", None, None), ("alpha_divergence", 2.0, None), ("ab_divergence", -0.5, 1.5),
     ("renyi_divergence", 3.0, None), ("beta_divergence", None, 2.0), ("js_divergence", None, None),
     ("l_infinity_distance", None, None)],
)
def test_every_measure_finite_nonnegative_and_zero_on_identity(tiny_bert_dir, measure, alpha, beta):
    preds = ["", "a cat sat", "a cat sat", "Hello World", "!!!"]
    refs = ["a cat sat", "", "a cat sat", "hello world", "???"]  # uncased vocab: row 4 is identical
    result = infolm(preds, refs, model=tiny_bert_dir, information_measure=measure, alpha=alpha, beta=beta,
                    temperature=0.02, idf=True, progress=False)
    assert all(math.isfinite(s) and s >= -1e-12 for s in _scores(result))
    assert _scores(result)[2] == 0.0 and _scores(result)[3] == 0.0
    assert _scores(result)[0] > 0 and _scores(result)[1] > 0 and _scores(result)[4] > 0


def test_long_input_truncated_with_one_warning(tiny_bert_dir):
    model, tokenizer = load_reference_model(tiny_bert_dir)
    long_text = " ".join(["word", "other", "thing"] * 3400)  # > 10,000 tokens, model has 128 positions
    preds = [long_text, long_text + " more", "short one"]
    refs = ["a reference", long_text, "short two"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = infolm(preds, refs, model=tiny_bert_dir, information_measure="js_divergence", temperature=0.1,
                        idf=False, progress=False)
    messages = [str(w.message) for w in caught if "InfoLM" in str(w.message)]
    assert len(messages) == 1 and "truncated" in messages[0] and "max_length=128" in messages[0]
    want = js_by_hand(naive_masked(model, tokenizer, "a reference", 0.1),
                      naive_masked(model, tokenizer, long_text, 0.1))  # oracle truncates to 128 tokens
    assert _scores(result)[0] == pytest.approx(want, abs=1e-6)
    assert _scores(result)[1] == 0.0  # same first 126 tokens after truncation
    # a smaller max_length is honoured (and recorded)
    with pytest.warns(UserWarning, match=r"1 of 2 distinct texts are longer than max_length=4"):
        short = infolm(["one two three four"], ["one two"], model=tiny_bert_dir, max_length=4, idf=False,
                       information_measure="js_divergence", temperature=0.1, progress=False)
    assert "max_length:4" in short.signature
    want = js_by_hand(naive_masked(model, tokenizer, "one two", 0.1, max_length=4),
                      naive_masked(model, tokenizer, "one two three four", 0.1, max_length=4))
    assert _scores(short)[0] == pytest.approx(want, abs=1e-6)


def test_invariant_to_batching_chunking_order_duplicates_and_inputs_not_mutated(tiny_bert_dir):
    preds = ["the cat sat", "a dog ran off", "", "the cat sat", "birds fly south in winter"]
    refs = [["a cat sat"], ["the dog ran", "dogs run"], ["x"], ["a cat sat"], ["winter birds"]]
    preds_before, refs_before = copy.deepcopy(preds), copy.deepcopy(refs)
    options = dict(model=tiny_bert_dir, information_measure="kl_divergence", temperature=0.1, progress=False)
    base = infolm(preds, refs, **options)
    assert preds == preds_before and refs == refs_before
    variants = [
        infolm(preds, refs, token_budget=16, **options),
        infolm(preds, refs, batch_size=1, chunk_size=1, **options),
    ]
    for variant in variants:
        assert _scores(variant) == pytest.approx(_scores(base), abs=1e-5)
    reordered = infolm(preds[::-1], refs[::-1], **options)
    assert _scores(reordered)[::-1] == pytest.approx(_scores(base), abs=1e-5)
    doubled = infolm(preds + preds, refs + refs, **options)  # idf over distinct references: unchanged
    assert _scores(doubled) == pytest.approx(_scores(base) * 2, abs=1e-5)
    assert _scores(base)[0] == _scores(base)[3]


# ----------------------------------------------------------------------------------------------
# errors, tested by message (the inputs' and the shared options' errors: tests/contract/test_errors_all_metrics.py)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(information_measure="alpha_divergence"), r"needs `alpha`; pass e.g. alpha=0.5"),
        (dict(information_measure="alpha_divergence", alpha=1.0), r"undefined for alpha=1"),
        (dict(information_measure="beta_divergence", beta=-1), r"undefined for beta=-1"),
        (dict(information_measure="ab_divergence", alpha=1.0, beta=-1.0), r"alpha\+beta must all be non-zero"),
        (dict(information_measure="renyi_divergence", alpha=0.0), r"defined for alpha > 0"),
        (dict(information_measure="renyi_divergence", alpha="2"), r"`alpha` must be a real number"),
        (dict(temperature=float("nan")), r"must be finite and > 0"),
        (dict(idf={"a": 1.0}), r"`idf` keys must be token ids"),
    ],
)
def test_bad_options_name_the_problem(tiny_bert_dir, kwargs, match):
    call = dict(predictions=["a cat"], references=["a dog"], model=tiny_bert_dir, progress=False)
    call.update(kwargs)
    with pytest.raises(ValueError, match=match):
        infolm(call.pop("predictions"), call.pop("references"), **call)


def test_result_carries_signature_and_direction(tiny_bert_dir):
    result = infolm(["a cat"], ["a dog"], model=tiny_bert_dir, information_measure="ab_divergence",
                    alpha=0.5, beta=1.0, progress=False)
    for field in ("infolm|", "|model:", "|weights:", "|tokenizer:", "|revision:none|", "|dtype:float32|", "|max_length:128|",
                  "|measure:ab_divergence|", "|alpha:0.5|", "|beta:1|", "|temperature:0.25|", "|idf:refs|",
                  "|kind:masked|", "|multi_ref:min|", "|transformers:", "|tokenizers:", "|version:"):
        assert field in result.signature
    assert result.signature.startswith("infolm|model:")
    assert result.higher_is_better is False and result.main == "infolm" and result.metric == "infolm"
    column = result.column("infolm")
    assert column.higher_is_better is False and (column.minimum, column.maximum) == (0.0, math.inf)
    assert "lower = more similar" in column.description
    as_dict = result.to_dict()
    assert as_dict["aggregate"] == {"infolm": result.mean()["infolm"]} == result.aggregate()
    assert as_dict["scores"] == {"infolm": _scores(result)}
    assert as_dict["details"] == {"best_reference": [0]} and result.information_measure == "ab_divergence"
    table = infolm(["a cat"], ["a dog"], model=tiny_bert_dir, idf={1037: 2.0}, progress=False)
    assert "idf:table-" in table.signature


# ----------------------------------------------------------------------------------------------
# property-based (bounded): messy strings never give NaN/inf; identity gives 0

MESSY = st.one_of(
    st.sampled_from(["", " ", "\n\t", "a", "?!", "東京は晴れ", "😀🎉", "שלום עולם", "e\u0301\u0301", "\x00\x07",
                     "the cat sat", "The Cat Sat"]),
    st.text(max_size=30),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pairs=st.lists(st.tuples(MESSY, MESSY), min_size=1, max_size=4))
def test_messy_inputs_give_finite_scores_and_zero_on_identity(tiny_bert_dir, pairs):
    preds = [p for p, _ in pairs] + [pairs[0][0]]
    refs = [r for _, r in pairs] + [pairs[0][0]]
    result = infolm(preds, refs, model=tiny_bert_dir, information_measure="kl_divergence", temperature=0.1,
                    progress=False)
    assert all(math.isfinite(s) and s >= -1e-12 for s in _scores(result))
    assert _scores(result)[-1] == 0.0


def test_infolm_multi_equals_separate_calls(tiny_bert_dir):
    from nlgmetrics.infolm import infolm_multi

    preds, refs = ["the cat sat", "a dog"], [["a cat sat", "x"], ["the dogs"]]
    specs = ["js_divergence", ("ab_divergence", 0.5, 1.0), ("renyi_divergence", 2.0, None)]
    multi = infolm_multi(preds, refs, specs, model=tiny_bert_dir, temperature=0.1, progress=False)
    for spec, result in zip(specs, multi):
        name, alpha, beta = (spec, None, None) if isinstance(spec, str) else spec
        single = infolm(preds, refs, model=tiny_bert_dir, information_measure=name, alpha=alpha, beta=beta,
                        temperature=0.1, progress=False)
        assert _scores(result) == pytest.approx(_scores(single), abs=1e-9)
        assert result.signature == single.signature
    with pytest.raises(ValueError, match=r"Pass `alpha` inside `measures`"):
        infolm_multi(preds, refs, ["kl_divergence"], alpha=1.0, model=tiny_bert_dir)


@pytest.mark.parametrize("model_fixture", ["tiny_bert_dir", "tiny_gpt2_dir"])
def test_infolm_multi_temperature_sweep_equals_separate_calls(model_fixture, request):
    """A sweep from one pass gives, per temperature, exactly a call of its own (masked and causal)."""
    from nlgmetrics.infolm import infolm_multi

    model = request.getfixturevalue(model_fixture)
    preds = ["the cat sat on the mat", "a dog", "", "the cat sat on the mat"]
    refs = [["a cat sat", "the mat"], ["the dogs bark"], ["x y"], ["the cat sat on the mat"]]
    specs = [("fisher_rao_distance", None, None, t) for t in (0.1, 0.25, 1.0, 4.0)]
    specs += [("ab_divergence", 0.5, 1.0, 1.0), "kl_divergence"]  # a shared temperature, and the option's
    multi = infolm_multi(preds, refs, specs, model=model, temperature=0.5, idf=True, chunk_size=3, progress=False)
    for spec, result in zip(specs, multi):
        name, alpha, beta, t = (spec, None, None, 0.5) if isinstance(spec, str) else spec
        single = infolm(preds, refs, model=model, information_measure=name, alpha=alpha, beta=beta,
                        temperature=t, idf=True, chunk_size=3, progress=False)
        assert _scores(result) == _scores(single)  # same chunks, so the same batches: bit for bit
        assert result.best_reference == single.best_reference
        assert result.signature == single.signature
    sweep = [_scores(r)[0] for r in multi[:4]]
    assert len(set(sweep)) == 4  # each temperature has distributions of its own
    with pytest.raises(ValueError, match=r"give its temperature as a number > 0"):
        infolm_multi(preds, refs, [("kl_divergence", None, None, None)], model=model)
    with pytest.raises(ValueError, match=r"`temperature`=0 must be finite and > 0"):
        infolm_multi(preds, refs, [("kl_divergence", None, None, 0)], model=model)


def test_headless_model_error(tmp_path):
    """(A forced model kind the checkpoint is not: tests/contract/test_errors_all_metrics.py.)"""
    from transformers import BertConfig, BertModel

    from nlgmetrics.testing import load_test_tokenizer

    config = BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    BertModel(config).save_pretrained(tmp_path)
    load_test_tokenizer("bert").save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"has no LM head"):
        infolm(["a"], ["b"], model=tmp_path, progress=False)


# ----------------------------------------------------------------------------------------------
# the shared contract: engine options, max_length cap, revision, progress, declared ranges


def test_revision_reaches_the_loader_and_the_signature(tiny_bert_dir, monkeypatch):
    import nlgmetrics.engine.call as call  # every LM metric loads its model there

    seen = {}
    real = call.load_lm

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(call, "load_lm", spy)
    result = infolm(["a cat"], ["a dog"], model=tiny_bert_dir, revision="main", progress=False)
    assert seen["revision"] == "main"
    assert "|revision:main|" in result.signature


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(token_budget=0), r"`token_budget` must be a positive integer, 'auto' or None"),
        (dict(batch_size=1.5), r"`batch_size` must be a positive integer or None"),
        (dict(max_length=0), r"`max_length` must be a positive integer or None"),
        (dict(chunk_size=0), r"`chunk_size` must be a positive integer"),
        (dict(progress="no"), r"`progress` must be True or False"),
        (dict(information_measure="renyi_divergence", alpha=1e301), r"outside what float64 can evaluate"),
        (dict(idf={5: 1e308, 6: float("inf")}), r"weights must be finite numbers >= 0"),
    ],
)
def test_options_are_checked_before_any_model_is_loaded(kwargs, match, monkeypatch):
    import nlgmetrics.engine.call as call  # every LM metric loads its model there

    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded before the options were checked")

    monkeypatch.setattr(call, "load_lm", no_load)
    with pytest.raises(ValueError, match=match):
        infolm(["a cat"], ["a dog"], model="no-such-model", **kwargs)


def test_progress_bar_counts_the_examples_of_the_call(tiny_bert_dir, capsys):
    infolm(["a cat", "a dog", "a cat"], ["a dog", "a cat", "x"], model=tiny_bert_dir, chunk_size=2, progress=True)
    err = capsys.readouterr().err
    assert "InfoLM" in err and "3/3" in err and "example" in err


# Written out here (not read from the library): the range of each measure, for any alpha / beta.
DECLARED_RANGES = {
    "kl_divergence": (0.0, math.inf),
    "alpha_divergence": (0.0, math.inf),
    "beta_divergence": (0.0, math.inf),
    "ab_divergence": (0.0, math.inf),
    "renyi_divergence": (0.0, math.inf),
    "l1_distance": (0.0, 2.0),
    "l2_distance": (0.0, math.sqrt(2.0)),
    "l_infinity_distance": (0.0, 1.0),
    "fisher_rao_distance": (0.0, math.pi),
    "js_divergence": (0.0, math.log(2.0)),
}
PARAMETERS = {"alpha_divergence": (2.0, None), "beta_divergence": (None, 0.5), "ab_divergence": (0.5, 1.0),
              "renyi_divergence": (0.5, None)}


def test_every_measure_declares_its_range_and_lower_is_better():
    from nlgmetrics.infolm import INFORMATION_MEASURES, InfoLMResult

    assert set(DECLARED_RANGES) == set(INFORMATION_MEASURES)
    for measure, (low, high) in DECLARED_RANGES.items():
        result = InfoLMResult(scores={"infolm": [0.0]}, signature="infolm", information_measure=measure)
        column = result.column("infolm")
        assert (column.minimum, column.maximum, column.higher_is_better) == (low, high, False), measure
    assert InfoLMResult.columns["infolm"].minimum == 0.0 and InfoLMResult.columns["infolm"].maximum == math.inf
    with pytest.raises(ValueError, match=r"Unknown information_measure='cosine'"):
        InfoLMResult(scores={"infolm": [0.0]}, signature="infolm", information_measure="cosine")


@pytest.mark.parametrize("measure", sorted(DECLARED_RANGES))
@pytest.mark.parametrize("temperature", [0.01, 1.0])
def test_scores_lie_in_their_declared_range(tiny_bert_dir, measure, temperature):
    alpha, beta = PARAMETERS.get(measure, (None, None))
    preds = ["the cat sat on the mat", "", "zebra zebra", "a b c d e f"]
    refs = [["a cat was on a mat", "dogs"], "something", "", ["f e d c b a"]]
    result = infolm(preds, refs, model=tiny_bert_dir, information_measure=measure, alpha=alpha, beta=beta,
                    temperature=temperature, progress=False)
    low, high = DECLARED_RANGES[measure]
    assert all(low <= s <= high for s in _scores(result)), _scores(result)
    assert any(s > 0 for s in _scores(result))


# ----------------------------------------------------------------------------------------------
# numerics: finite results or a clear error, never NaN or inf


def test_mean_of_values_at_the_largest_float_is_finite():
    import sys

    from nlgmetrics.infolm import InfoLMResult

    huge = sys.float_info.max
    result = InfoLMResult(scores={"infolm": [huge, huge, huge]}, signature="infolm",
                          information_measure="alpha_divergence")
    assert result.mean()["infolm"] == huge and result.main_score == huge
    result = InfoLMResult(scores={"infolm": [huge, 0.0]}, signature="infolm", information_measure="alpha_divergence")
    assert result.mean()["infolm"] == pytest.approx(huge / 2, rel=1e-15)


def test_alpha_divergence_beyond_float64_is_refused_with_the_finite_range(tiny_bert_dir):
    """No clamp that looks like a measurement: a value beyond float64 is an error naming the
    setting and the range [-1, 2], finite for every input (the largest float was reported before)."""
    with pytest.raises(ValueError, match=r"alpha_divergence with alpha=50 at temperature=0.001 exceeds the float64 "
                                         r"range.*for example 0.*alpha in \[-1, 2\]"):
        infolm(["a dog", "the cat sat on the mat"], ["a dog ran", "hello world there"], model=tiny_bert_dir,
               information_measure="alpha_divergence", alpha=50.0, temperature=0.001, progress=False)


def test_alpha_divergence_keeps_the_closest_finite_reference(tiny_bert_dir):
    """The score is the smallest value over the references: a reference beyond float64 does not
    matter when another one is closer (here: the candidate itself, distance 0)."""
    result = infolm(["a dog"], [["a dog ran", "a dog"]], model=tiny_bert_dir, information_measure="alpha_divergence",
                    alpha=50.0, temperature=0.001, progress=False)
    assert _scores(result) == [0.0] and result.best_reference == [1]


@pytest.mark.parametrize("alpha", [-1.0, 2.0])
def test_alpha_divergence_at_the_ends_of_its_finite_range_stays_below_1e300(tiny_bert_dir, alpha):
    """At a temperature where every distribution is one-hot (the worst case: p / q = 1e300), the
    bound of the finite range holds: 1e300 / 2 at most (hand computation: (1e300 - 1) / 2 for one-hot
    p against one-hot q on another token, with the 1e-300 probability floor)."""
    result = infolm(["a dog", "the cat"], ["hello world", "the cat"], model=tiny_bert_dir,
                    information_measure="alpha_divergence", alpha=alpha, temperature=1e-300, idf=False, progress=False)
    assert all(0.0 <= s <= 5e299 for s in _scores(result)), _scores(result)


@pytest.mark.parametrize("weight", [1e308, 1.7976931348623157e308, 5e-324])
def test_idf_weights_at_the_float_limits_normalise_like_equal_weights(tiny_bert_dir, weight):
    """Every weight equal (huge or subnormal): the bag is the uniform one, i.e. idf=False."""
    from nlgmetrics.engine import load_lm

    preds, refs = ["the cat sat on the mat", "a dog ran"], [["a cat was on a mat"], ["the dogs ran off"]]
    tokenizer = load_lm(tiny_bert_dir).tokenizer
    ids = {t for text in preds + [r for group in refs for r in group]
           for t in tokenizer(text, add_special_tokens=False)["input_ids"]}
    options = dict(model=tiny_bert_dir, information_measure="js_divergence", temperature=0.1, progress=False)
    table = infolm(preds, refs, idf={t: weight for t in ids}, **options)
    uniform = infolm(preds, refs, idf=False, **options)
    assert _scores(table) == pytest.approx(_scores(uniform), abs=1e-12)
    assert all(s > 0.0 for s in _scores(table))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(weights=st.lists(st.floats(min_value=1e-3, max_value=1e3), min_size=6, max_size=6),
       exponent=st.integers(min_value=-300, max_value=304))
def test_idf_scores_do_not_depend_on_the_scale_of_the_weights(tiny_bert_dir, weights, exponent):
    """idf weights w and c * w give the same bags for any c that keeps them normal floats (up to 1e308)."""
    ids = [1996, 4937, 2938, 2006, 13523, 1037]  # the, cat, sat, on, mat, a (bert-base-uncased vocab)
    preds, refs = ["the cat sat on the mat"], [["a cat sat on a mat"]]
    options = dict(model=tiny_bert_dir, information_measure="fisher_rao_distance", temperature=0.1, progress=False)
    base = infolm(preds, refs, idf=dict(zip(ids, weights)), **options)
    scaled = infolm(preds, refs, idf={t: w * 10.0**exponent for t, w in zip(ids, weights)}, **options)
    assert math.isfinite(_scores(scaled)[0]) and _scores(scaled)[0] > 0
    assert _scores(scaled) == pytest.approx(_scores(base), abs=1e-9)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(temperature=st.one_of(st.sampled_from([5e-324, 1e-300, 1e-30, 1e30, 1e300, 1.7976931348623157e308]),
                             st.floats(min_value=1e-300, max_value=1e300)),
       measure=st.sampled_from(["fisher_rao_distance", "kl_divergence", "js_divergence", "renyi_divergence"]))
def test_any_finite_temperature_gives_finite_scores_in_range(tiny_bert_dir, temperature, measure):
    alpha = 2.0 if measure == "renyi_divergence" else None
    preds, refs = ["the cat sat on the mat", "", "a dog"], [["a cat was on a mat"], ["x"], ["a dog"]]
    result = infolm(preds, refs, model=tiny_bert_dir, information_measure=measure, alpha=alpha,
                    temperature=temperature, progress=False)
    low, high = DECLARED_RANGES[measure]
    assert all(math.isfinite(s) and low <= s <= high for s in _scores(result)), _scores(result)
    assert _scores(result)[2] == 0.0


def test_huge_temperature_gives_the_uniform_bag_and_tiny_the_argmax(tiny_bert_dir):
    from nlgmetrics.infolm import text_distributions

    flat = text_distributions(tiny_bert_dir, ["the cat sat"], temperature=1e300)
    assert torch.allclose(flat, torch.full_like(flat, 1.0 / flat.shape[-1]), rtol=1e-12, atol=0)
    sharp = text_distributions(tiny_bert_dir, ["the cat sat"], temperature=1e-300)
    model, tokenizer = load_reference_model(tiny_bert_dir)
    ids = tokenizer("the cat sat")["input_ids"]
    want = torch.zeros_like(sharp[0])
    with torch.no_grad():
        for j in range(1, len(ids) - 1):
            masked = list(ids)
            masked[j] = tokenizer.mask_token_id
            want[int(model(input_ids=torch.tensor([masked])).logits[0, j].argmax())] += 1.0 / (len(ids) - 2)
    assert torch.equal(sharp[0], want)


def test_nan_or_inf_logits_are_a_clear_error(tiny_bert_dir):
    model, tokenizer = load_reference_model(tiny_bert_dir)
    with torch.no_grad():
        model.get_output_embeddings().bias[7] = float("inf")
    with pytest.raises(FloatingPointError, match=r"returned NaN or \+inf logits in float32.*check the model"):
        infolm(["a cat"], ["a dog"], model=model, model_tokenizer=tokenizer, progress=False)


# Measures directly, on distributions with exact zeros, one-hot rows, near-ties: every admissible
# parameter gives a value in the declared range (inf only for the alpha divergence, whose value can
# exceed float64), identity gives 0; every other parameter is a ValueError naming the measure.

_PARAMETERIZED = ["alpha_divergence", "beta_divergence", "ab_divergence", "renyi_divergence"]
_MAGNITUDE = st.one_of(
    st.floats(min_value=-320, max_value=320).map(lambda e: 10.0**e if e < 308 else math.inf),
    st.floats(min_value=-3, max_value=3),
    st.sampled_from([1 - 1e-15, 1 + 1e-15, 1e-300, 1e300, 1e-301, 1e301, 1.7976931348623157e308, 5e-324]),
)
_PARAMETER = st.one_of(st.none(), st.tuples(st.sampled_from([-1.0, 1.0]), _MAGNITUDE).map(lambda t: t[0] * t[1]))


@st.composite
def _distribution(draw):
    vocab = 12
    kind = draw(st.sampled_from(["logits", "one_hot", "zeros"]))
    if kind == "one_hot":
        row = torch.zeros(vocab, dtype=torch.float64)
        row[draw(st.integers(0, vocab - 1))] = 1.0
        return row
    logits = torch.tensor(draw(st.lists(st.floats(-50, 50), min_size=vocab, max_size=vocab)), dtype=torch.float64)
    scale = draw(st.sampled_from([1e-3, 1.0, 30.0, 1e4]))
    row = torch.softmax(logits * scale, -1)
    if kind == "zeros":
        row[: draw(st.integers(1, vocab - 1))] = 0.0
        row = row / row.sum() if row.sum() > 0 else torch.full_like(row, 1.0 / vocab)
    return row


@settings(max_examples=400, deadline=None)
@given(measure=st.sampled_from(_PARAMETERIZED), alpha=_PARAMETER, beta=_PARAMETER, p=_distribution(),
       q=_distribution())
def test_measures_are_finite_in_range_or_reject_the_parameters(measure, alpha, beta, p, q):
    from nlgmetrics.infolm import check_measure, information_measure

    try:
        check_measure(measure, alpha, beta)
    except ValueError as error:
        assert measure in str(error) or "`alpha`" in str(error) or "`beta`" in str(error)
        return
    low, high = DECLARED_RANGES[measure]
    value = float(information_measure(measure, p, q, alpha, beta))
    assert not math.isnan(value)
    assert low <= value <= high
    assert math.isfinite(value) or measure == "alpha_divergence"
    if measure == "alpha_divergence" and -1.0 <= alpha <= 2.0:
        assert value <= 5e299  # the range that is finite for every input (derived in measures.py)
    assert float(information_measure(measure, p, p, alpha, beta)) == 0.0


@pytest.mark.parametrize(
    "measure,alpha,beta,match",
    [
        ("alpha_divergence", 1e301, None, r"alpha_divergence with alpha=1e\+301 is outside what float64 can evaluate"),
        ("alpha_divergence", 1e-310, None, r"use 1e-300 <= \|alpha\| <= 1e\+300"),
        ("renyi_divergence", 2e300, None, r"renyi_divergence with alpha=2e\+300"),
        ("beta_divergence", None, -1e305, r"beta_divergence with beta=-1e\+305"),
        ("ab_divergence", 1e300, 1e300, r"ab_divergence with alpha\+beta=2e\+300"),
        ("ab_divergence", 1e-7, -3e-7, r"max\(\|alpha\|, \|beta\|\) >= 1e-06"),
        ("alpha_divergence", float("inf"), None, r"`alpha`=inf is not finite"),
    ],
)
def test_parameters_outside_float64_are_rejected_with_the_range(measure, alpha, beta, match):
    from nlgmetrics.infolm import check_measure

    with pytest.raises(ValueError, match=match):
        check_measure(measure, alpha, beta)


def _mp_measure(measure, p, q, alpha, beta):
    """The textbook formulas in 60-digit arithmetic, on exactly normalised copies of p and q."""
    import mpmath

    mpmath.mp.dps = 60
    P, Q = [mpmath.mpf(float(x)) for x in p], [mpmath.mpf(float(x)) for x in q]
    P, Q = [x / sum(P) for x in P], [x / sum(Q) for x in Q]
    a = None if alpha is None else mpmath.mpf(alpha)
    b = None if beta is None else mpmath.mpf(beta)
    if measure == "kl_divergence":
        return sum(x * mpmath.log(x / y) for x, y in zip(P, Q))
    if measure == "alpha_divergence":
        return (sum(x**a * y ** (1 - a) for x, y in zip(P, Q)) - 1) / (a * (a - 1))
    if measure == "renyi_divergence":
        return mpmath.log(sum(x**a * y ** (1 - a) for x, y in zip(P, Q))) / (a - 1)
    if measure == "beta_divergence":
        a = mpmath.mpf(1)
    s = a + b
    return (mpmath.log(sum(x**s for x in P)) / (b * s) + mpmath.log(sum(y**s for y in Q)) / (a * s)
            - mpmath.log(sum(x**a * y**b for x, y in zip(P, Q))) / (a * b))


@pytest.mark.parametrize(
    "measure,alpha,beta",
    [
        ("alpha_divergence", 1 + 1e-12, None),  # -> KL(p || q)
        ("alpha_divergence", 1e-12, None),  # -> KL(q || p)
        ("alpha_divergence", -1e-9, None),
        ("renyi_divergence", 1 - 1e-12, None),  # -> KL(p || q)
        ("renyi_divergence", 1e-12, None),
        ("beta_divergence", None, 1e-12),  # -> KL(p || q)
        ("beta_divergence", None, -1 + 1e-9),
        ("ab_divergence", 1e-12, 1.0),
        ("ab_divergence", 0.5, -0.5 + 1e-12),  # alpha + beta -> 0
        ("ab_divergence", 1e-5, -2e-5),
        ("ab_divergence", 3.0, -7.0),
        ("alpha_divergence", 40.0, None),
        ("renyi_divergence", 1e6, None),
    ],
)
def test_measures_keep_their_digits_next_to_the_excluded_parameters(measure, alpha, beta):
    """Against 60-digit mpmath: relative error <= 1e-8 where the textbook float64 formula loses
    every digit (1 - sum, or three logarithms of size 1/(alpha beta) that cancel)."""
    from nlgmetrics.infolm import information_measure

    generator = torch.Generator().manual_seed(0)
    for _ in range(3):
        logits = torch.randn(2, 40, generator=generator, dtype=torch.float64) * 2
        p, q = torch.softmax(logits[0], -1), torch.softmax(logits[1], -1)
        want = float(_mp_measure(measure, p.tolist(), q.tolist(), alpha, beta))
        got = float(information_measure(measure, p, q, alpha, beta))
        assert got == pytest.approx(want, rel=1e-8), (got, want)
