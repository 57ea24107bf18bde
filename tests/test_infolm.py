"""InfoLM against naive oracles (one forward per masked copy / one full causal forward, full softmax,
explicit sums), plus bad-input behaviour (issue 9): clear errors, empty texts, long texts,
identity, invariance, no mutation.

The oracles share nothing with the library: they call the ``transformers`` model directly, build
the masked copies by hand, compute idf by hand and write each measure's formula out.
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

# ----------------------------------------------------------------------------------------------
# oracles


def _load(path, causal=False):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    auto = AutoModelForCausalLM if causal else AutoModelForMaskedLM
    return auto.from_pretrained(str(path)).eval(), AutoTokenizer.from_pretrained(str(path))


def _idf_by_hand(tokenizer, references, causal=False):
    docs = {tuple(tokenizer(r, add_special_tokens=False)["input_ids"]) for r in references}
    n = len(docs)
    df = {}
    for doc in docs:
        for t in set(doc):
            df[t] = df.get(t, 0) + 1
    return lambda t: math.log((n + 1) / (df.get(t, 0) + 1))


@torch.no_grad()
def naive_masked(model, tokenizer, text, temperature, idf=None, max_length=128):
    ids = tokenizer(text, truncation=True, max_length=max_length)["input_ids"]
    special = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id}
    positions = [j for j in range(1, len(ids) - 1) if ids[j] not in special]
    if not positions:  # documented empty-text rule: [CLS] [MASK] [SEP]
        ids, positions = [tokenizer.cls_token_id, tokenizer.mask_token_id, tokenizer.sep_token_id], [1]
    total = torch.zeros(model.config.vocab_size, dtype=torch.float64)
    weight_sum = 0.0
    for j in positions:
        masked = list(ids)
        masked[j] = tokenizer.mask_token_id
        logits = model(input_ids=torch.tensor([masked])).logits[0, j]  # full [seq, vocab] forward
        w = 1.0 if idf is None else idf(ids[j])
        total += w * torch.softmax(logits.double() / temperature, -1)
        weight_sum += w
    if weight_sum == 0:  # documented fallback: all-zero idf weights -> uniform
        return naive_masked(model, tokenizer, text, temperature, None, max_length)
    return total / weight_sum


@torch.no_grad()
def naive_causal(model, tokenizer, text, temperature, idf=None):
    bos = tokenizer.bos_token_id
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if not ids:  # documented empty-text rule: the first-token distribution after BOS
        return torch.softmax(model(input_ids=torch.tensor([[bos]])).logits[0, 0].double() / temperature, -1)
    logits = model(input_ids=torch.tensor([[bos, *ids]])).logits[0, : len(ids)]  # row i predicts ids[i]
    probs = torch.softmax(logits.double() / temperature, -1)
    weights = torch.tensor([1.0 if idf is None else idf(t) for t in ids], dtype=torch.float64)
    if weights.sum() == 0:
        weights = torch.ones_like(weights)
    return (weights[:, None] * probs).sum(0) / weights.sum()


def js_by_hand(p, q):
    m = (p + q) / 2
    return float(0.5 * (p * (p / m).log()).sum() + 0.5 * (q * (q / m).log()).sum())


def fisher_rao_by_hand(p, q):
    return float(2 * torch.arccos(torch.clamp((p * q).sqrt().sum(), max=1.0)))


# ----------------------------------------------------------------------------------------------
# oracle tests


PREDS = ["the cat sat on the mat", "hello world", "a quick brown fox"]
REFS = [["a cat sat on a mat", "dogs bark"], ["hello there world"], ["the fox is quick", "a brown fox", "zebra"]]


@pytest.mark.parametrize("idf", [False, True])
def test_js_and_multiref_match_naive_masked_oracle(tiny_bert_dir, idf):
    model, tokenizer = _load(tiny_bert_dir)
    temperature = 0.1
    table = _idf_by_hand(tokenizer, [r for group in REFS for r in group]) if idf else None
    result = infolm(PREDS, REFS, model=tiny_bert_dir, information_measure="js_divergence",
                    temperature=temperature, idf=idf, progress=False)
    for i, (pred, group) in enumerate(zip(PREDS, REFS)):
        q = naive_masked(model, tokenizer, pred, temperature, table)
        per_ref = [js_by_hand(naive_masked(model, tokenizer, r, temperature, table), q) for r in group]
        assert result.scores[i] == pytest.approx(min(per_ref), abs=1e-6)
        assert result.best_reference[i] == per_ref.index(min(per_ref))
    assert result.mean == pytest.approx(sum(result.scores) / 3, abs=1e-12)


@pytest.mark.parametrize("architecture", ["gpt2", "llama"])
def test_causal_variant_matches_naive_oracle(architecture, tiny_gpt2_dir, tiny_llama_dir):
    path = tiny_gpt2_dir if architecture == "gpt2" else tiny_llama_dir
    model, tokenizer = _load(path, causal=True)
    preds = ["The cat sat on the mat.", "Hello world", ""]
    refs = ["A cat was on a mat.", "Hello there, world!", "Something"]
    temperature = 0.05
    table = _idf_by_hand(tokenizer, refs)
    for measure, fn in [("js_divergence", js_by_hand), ("fisher_rao_distance", fisher_rao_by_hand)]:
        result = infolm(preds, refs, model=path, information_measure=measure, temperature=temperature,
                        idf=True, progress=False)
        want = [fn(naive_causal(model, tokenizer, r, temperature, table),
                   naive_causal(model, tokenizer, p, temperature, table)) for p, r in zip(preds, refs)]
        assert result.scores == pytest.approx(want, abs=1e-6)
        assert "kind:causal" in result.signature


def test_empty_and_whitespace_texts_follow_the_documented_rule(tiny_bert_dir):
    model, tokenizer = _load(tiny_bert_dir)
    preds = ["", "   \n\t", "", "a cat sat"]
    refs = ["", "", "a cat sat", ""]
    result = infolm(preds, refs, model=tiny_bert_dir, information_measure="fisher_rao_distance",
                    temperature=0.05, idf=False, progress=False)
    empty = naive_masked(model, tokenizer, "", 0.05)
    cat = naive_masked(model, tokenizer, "a cat sat", 0.05)
    assert result.scores[:2] == [0.0, 0.0]  # two empty texts: same distribution, distance 0
    assert result.scores[2] == pytest.approx(fisher_rao_by_hand(cat, empty), abs=1e-6)
    assert result.scores[3] == pytest.approx(fisher_rao_by_hand(empty, cat), abs=1e-6)
    assert result.scores[2] > 0.1


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
    assert all(math.isfinite(s) and s >= -1e-12 for s in result.scores)
    assert result.scores[2] == 0.0 and result.scores[3] == 0.0
    assert result.scores[0] > 0 and result.scores[1] > 0 and result.scores[4] > 0


def test_long_input_truncated_with_one_warning(tiny_bert_dir):
    model, tokenizer = _load(tiny_bert_dir)
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
    assert result.scores[0] == pytest.approx(want, abs=1e-6)
    assert result.scores[1] == 0.0  # same first 126 tokens after truncation
    # a smaller max_length is honoured (and recorded)
    with pytest.warns(UserWarning, match=r"1 of 2 distinct texts are longer than max_length=4"):
        short = infolm(["one two three four"], ["one two"], model=tiny_bert_dir, max_length=4, idf=False,
                       information_measure="js_divergence", temperature=0.1, progress=False)
    assert "maxlen:4" in short.signature
    want = js_by_hand(naive_masked(model, tokenizer, "one two", 0.1, max_length=4),
                      naive_masked(model, tokenizer, "one two three four", 0.1, max_length=4))
    assert short.scores[0] == pytest.approx(want, abs=1e-6)


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
        assert variant.scores == pytest.approx(base.scores, abs=1e-5)
    reordered = infolm(preds[::-1], refs[::-1], **options)
    assert reordered.scores[::-1] == pytest.approx(base.scores, abs=1e-5)
    doubled = infolm(preds + preds, refs + refs, **options)  # idf over distinct references: unchanged
    assert doubled.scores == pytest.approx(base.scores * 2, abs=1e-5)
    assert base.scores[0] == base.scores[3]


# ----------------------------------------------------------------------------------------------
# errors, tested by message


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(predictions=None, references=["a"]), r"`predictions` is None"),
        (dict(predictions=["a", "b"], references=["a"]), r"has 1 items but there are 2 predictions"),
        (dict(predictions=["a", 3], references=["a", "b"]), r"`predictions\[1\]` is int"),
        (dict(predictions=[], references=[]), r"`predictions` is empty"),
        (dict(predictions=["a"], references=[[]]), r"empty list; give at least one reference"),
        (dict(predictions=["a"], references=[[["a"]]]), r"nested too deeply"),
        (dict(predictions="a", references=["a"]), r"single string"),
        (dict(information_measure="cosine"), r"Unknown information_measure='cosine'; choose one of"),
        (dict(information_measure="alpha_divergence"), r"needs `alpha`; pass e.g. alpha=0.5"),
        (dict(information_measure="alpha_divergence", alpha=1.0), r"undefined for alpha=1"),
        (dict(information_measure="beta_divergence", beta=-1), r"undefined for beta=-1"),
        (dict(information_measure="ab_divergence", alpha=1.0, beta=-1.0), r"alpha\+beta must all be non-zero"),
        (dict(information_measure="renyi_divergence", alpha=0.0), r"defined for alpha > 0"),
        (dict(information_measure="renyi_divergence", alpha="2"), r"`alpha` must be a real number"),
        (dict(temperature=0), r"`temperature`=0 must be finite and > 0"),
        (dict(temperature=float("nan")), r"must be finite and > 0"),
        (dict(idf="yes"), r"`idf` must be True, False or a"),
        (dict(idf={"a": 1.0}), r"`idf` keys must be token ids"),
        (dict(max_length=100000), r"max_length=100000 exceeds what"),
        (dict(max_length=2), r"pass max_length >= 3"),
        (dict(model_kind="seq2seq"), r"Unknown model_kind='seq2seq'"),
        (dict(token_budget=0), r"`token_budget` must be a positive int"),
    ],
)
def test_bad_input_errors_name_the_problem(tiny_bert_dir, kwargs, match):
    call = dict(predictions=["a cat"], references=["a dog"], model=tiny_bert_dir, progress=False)
    call.update(kwargs)
    with pytest.raises(ValueError, match=match):
        infolm(call.pop("predictions"), call.pop("references"), **call)


def test_unloadable_model_error_names_the_fix(tmp_path):
    with pytest.raises(OSError, match=r"smollm2-135m|local director"):
        infolm(["a"], ["b"], model=str(tmp_path / "no-such-model"), progress=False)


def test_result_carries_signature_and_direction(tiny_bert_dir):
    result = infolm(["a cat"], ["a dog"], model=tiny_bert_dir, information_measure="ab_divergence",
                    alpha=0.5, beta=1.0, progress=False)
    for field in ("infolm|", "model:", "rev:", "dtype:float32", "measure:ab_divergence", "alpha:0.5",
                  "beta:1", "T:0.25", "idf:refs", "maxlen:128", "kind:masked", "version:"):
        assert field in result.signature
    assert result.lower_is_better and "lower = more similar" in result.note
    as_dict = result.to_dict()
    assert as_dict["infolm"] == result.mean and as_dict["scores"] == result.scores
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
    assert all(math.isfinite(s) and s >= -1e-12 for s in result.scores)
    assert result.scores[-1] == 0.0


def test_infolm_multi_equals_separate_calls(tiny_bert_dir):
    from nlgmetrics.infolm import infolm_multi

    preds, refs = ["the cat sat", "a dog"], [["a cat sat", "x"], ["the dogs"]]
    specs = ["js_divergence", ("ab_divergence", 0.5, 1.0), ("renyi_divergence", 2.0, None)]
    multi = infolm_multi(preds, refs, specs, model=tiny_bert_dir, temperature=0.1, progress=False)
    for spec, result in zip(specs, multi):
        name, alpha, beta = (spec, None, None) if isinstance(spec, str) else spec
        single = infolm(preds, refs, model=tiny_bert_dir, information_measure=name, alpha=alpha, beta=beta,
                        temperature=0.1, progress=False)
        assert result.scores == pytest.approx(single.scores, abs=1e-9)
        assert result.signature == single.signature
    with pytest.raises(ValueError, match=r"Pass `alpha` inside `measures`"):
        infolm_multi(preds, refs, ["kl_divergence"], alpha=1.0, model=tiny_bert_dir)


def test_model_kind_mismatch_and_headless_model_errors(tiny_gpt2_dir, tmp_path):
    from transformers import BertConfig, BertModel

    from nlgmetrics.testing import load_test_tokenizer

    with pytest.raises(ValueError, match=r"is a causal LM .* needs a masked LM"):
        infolm(["a"], ["b"], model=tiny_gpt2_dir, model_kind="masked", progress=False)
    config = BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    BertModel(config).save_pretrained(tmp_path)
    load_test_tokenizer("bert").save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"has no LM head"):
        infolm(["a"], ["b"], model=tmp_path, progress=False)
