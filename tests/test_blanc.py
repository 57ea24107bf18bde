"""BLANC-help / BLANC-tune: masking and truncation against blanc's own helpers, hand-computed
scores, bad input (clear errors, defined values for empty texts), invariance, no mutation.

Parity of whole scores with blanc lives in test_blanc_parity.py.
"""

from __future__ import annotations

import math
import random
import warnings

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlgmetrics.blanc import (
    MinTokenLengths,
    blanc_help,
    even_maskings,
    fit_to_window,
    improve_score,
    is_maskable,
    random_maskings,
    relative_score,
)
from nlgmetrics.blanc_tune import blanc_tune


@pytest.fixture(scope="module")
def blanc_utils():
    from blanc_reference import import_blanc

    import_blanc()
    import blanc.utils as utils

    return utils


@pytest.fixture(scope="module")
def copy_bert(copy_bert_dir):
    return str(copy_bert_dir)


# ----------------------------------------------------------------------------------------------
# math by hand


def test_scores_by_hand():
    # S = [[S00, S01], [S10, S11]]
    assert relative_score([[5, 3], [1, 1]]) == pytest.approx((3 - 1) / 10)
    assert improve_score([[5, 3], [1, 1]]) == pytest.approx(3 / 9)
    assert relative_score([[0, 0], [0, 0]]) == 0.0 and improve_score([[0, 0], [7, 0]]) == 0.0
    assert relative_score([[0, 0], [4, 0]]) == -1.0 and relative_score([[0, 2], [0, 0]]) == 1.0


def test_maskable_by_hand():
    lengths = MinTokenLengths()  # normal 4, lead 2, followup 100
    assert is_maskable("word", "", lengths) and not is_maskable("wor", "next", lengths)
    assert is_maskable("ab", "##cd", lengths) and not is_maskable("a", "##cd", lengths)
    assert not is_maskable("##" + "x" * 99, "", lengths) and is_maskable("##" + "x" * 100, "", lengths)


def test_even_maskings_by_hand():
    tokens = ["alpha", "beta", "gamma", "delta", "to", "omega"]
    lengths = MinTokenLengths()
    assert even_maskings(tokens, 2, 1, lengths) == [(0, 2), (1, 3, 5)]
    # gap 3, window of 2 offsets: {0,1}, {1,2}, {2,0} (wraps around)
    assert even_maskings(tokens, 3, 2, lengths) == [(0, 1, 3), (1, 2, 5), (0, 2, 3, 5)]
    assert even_maskings(["alpha"], 6, 1, lengths) == [(0,)]  # gap capped by the length
    assert even_maskings([], 2, 1, lengths) == []
    assert even_maskings(["a", "an", "the"], 2, 1, lengths) == []  # nothing long enough


token_lists = st.lists(
    st.sampled_from(["house", "the", "a", "re", "##use", "##ing", "walking", "[UNK]", ".", "ab"]),
    max_size=14,
)


@settings(max_examples=150, deadline=None)
@given(tokens=token_lists, gap=st.integers(1, 7), gap_mask=st.integers(1, 8),
       normal=st.integers(0, 6), lead=st.integers(0, 3), followup=st.integers(0, 4))
def test_even_maskings_equal_blanc(blanc_utils, tokens, gap, gap_mask, normal, lead, followup):
    lengths = MinTokenLengths(normal, lead, followup)
    _, answers = blanc_utils.mask_tokens_evenly(tokens, gap, lengths.as_tuple(), "[MASK]", gap_mask)
    assert even_maskings(tokens, gap, gap_mask, lengths) == [tuple(a) for a in answers]


@settings(max_examples=60, deadline=None)
@given(tokens=token_lists, p_mask=st.floats(0.05, 0.9), seed=st.integers(0, 10_000))
def test_random_maskings_equal_blanc(blanc_utils, tokens, p_mask, seed):
    lengths = MinTokenLengths()
    random.seed(seed)
    _, answers = blanc_utils.mask_tokens_randomly(tokens, lengths.as_tuple(), "[MASK]", p_mask)
    assert random_maskings(tokens, p_mask, lengths, random.Random(seed)) == [tuple(a) for a in answers]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sent_len=st.integers(0, 700), summary=st.lists(st.integers(0, 400), min_size=1, max_size=5),
       len_sep=st.integers(0, 3), allow_cut=st.integers(0, 150))
def test_fit_to_window_equals_blanc(blanc_utils, sent_len, summary, len_sep, allow_cut):
    sentence = [f"s{i}" for i in range(sent_len)]
    summary_sents = [[f"h{j}_{i}" for i in range(n)] for j, n in enumerate(summary)]
    try:
        expected = blanc_utils.truncate_sentence_and_summary(
            sentence, summary_sents, len_sep=len_sep, len_sent_allow_cut=allow_cut)
    except AssertionError:
        expected = None  # blanc gives up; we still return something that fits (checked below)
    sent, help_tokens, _ = fit_to_window(sentence, summary_sents, len_sep=len_sep,
                                         len_sent_allow_cut=allow_cut, max_tokens=512)
    assert len(sent) + len(help_tokens) + len_sep + 2 <= 512
    if expected is not None:
        assert (sent, help_tokens) == (list(expected[0]), list(expected[1]))


# ----------------------------------------------------------------------------------------------
# clear errors, tested by message


@pytest.mark.parametrize("documents, summaries, message", [
    (None, ["s"], "`documents` is None"),
    (["d"], None, "`summaries` is None"),
    ("a document", ["s"], "single string"),
    (["d", "e"], ["s"], "Mismatched lengths"),
    ([], [], "`documents` is empty"),
    (["d"], [None], r"`summaries\[0\]` is NoneType"),
    ([3], ["s"], r"`documents\[0\]` is int"),
])
def test_bad_inputs_raise_clear_errors(tiny_bert_dir, documents, summaries, message):
    for metric in (blanc_help, blanc_tune):
        with pytest.raises(ValueError, match=message):
            metric(documents, summaries, model=str(tiny_bert_dir), progress=False)


@pytest.mark.parametrize("option, message", [
    (dict(measure="relatve"), "Unknown measure='relatve'"),
    (dict(gap=0), "`gap` must be a positive integer"),
    (dict(gap_mask=-1), "`gap_mask` must be a positive integer"),
    (dict(min_token_length_normal=-2), "`min_token_length_normal` must be a non-negative"),
    (dict(token_budget=0), "`token_budget` must be a positive integer"),
    (dict(max_tokens=100_000), "`max_tokens` must be an integer between 3"),
    (dict(splitter="spacy"), "Unknown sentence splitter"),
])
def test_bad_options_raise_clear_errors(tiny_bert_dir, option, message):
    with pytest.raises(ValueError, match=message):
        blanc_help(["A document."], ["A summary."], model=str(tiny_bert_dir), progress=False, **option)


def test_bad_filler_and_tune_options(tiny_bert_dir):
    with pytest.raises(ValueError, match="`filler_token` 'notavocabtoken' is not a token"):
        blanc_help(["A document."], ["A summary."], model=str(tiny_bert_dir), progress=False,
                   filler_token="notavocabtoken")
    with pytest.raises(ValueError, match="`p_token_replace` must be a probability"):
        blanc_tune(["A document."], ["A summary."], model=str(tiny_bert_dir), progress=False,
                   p_token_replace=1.5)
    with pytest.raises(ValueError, match="`finetune_chunk_stride` must be a positive integer"):
        blanc_tune(["A document."], ["A summary."], model=str(tiny_bert_dir), progress=False,
                   finetune_chunk_stride=0)
    # bool("no") is True: a string switch would silently turn the option on.
    for switch in ("finetune_mask_evenly", "finetune_top_fully"):
        with pytest.raises(ValueError, match=f"`{switch}` must be True or False, got 'no'"):
            blanc_tune(["A document."], ["A summary."], model=str(tiny_bert_dir), progress=False,
                       **{switch: "no"})


def test_causal_model_and_missing_model_rejected(tiny_gpt2_dir):
    with pytest.raises(ValueError, match="masked"):
        blanc_help(["A document."], ["A summary."], model=str(tiny_gpt2_dir), progress=False)
    with pytest.raises(OSError, match="local directory"):
        blanc_help(["A document."], ["A summary."], model="no-such-org/no-such-bert-xyz",
                   progress=False)


# ----------------------------------------------------------------------------------------------
# empty texts: defined values, never NaN

DOC = ("Potatoes potatoes potatoes potatoes grow slowly in winter. The farmer planted tomatoes "
       "near the river. Tomatoes need sunshine and tomatoes need water.")


@pytest.mark.parametrize("metric", [blanc_help, blanc_tune])
def test_empty_summary_and_document(copy_bert, metric):
    kwargs = dict(finetune_epochs=1) if metric is blanc_tune else {}
    result = metric([DOC, DOC, "", "   \n\t", DOC], ["", "  \n ", "A summary.", "A summary.", "Tomatoes tomatoes."],
                    model=copy_bert, progress=False, **kwargs)
    for i in (0, 1):  # empty / whitespace summary: help == base -> 0.0, no S01 / S10
        assert result.scores[i] == 0.0
        assert result.counts[i][0][1] == 0 and result.counts[i][1][0] == 0
        assert sum(map(sum, result.counts[i])) > 0
    for i in (2, 3):  # empty / whitespace document: nothing to mask -> 0.0 with zero counts
        assert result.scores[i] == 0.0 and result.counts[i] == [[0, 0], [0, 0]]
    assert all(math.isfinite(s) and -1.0 <= s <= 1.0 for s in result.scores)


def test_measure_ranges(copy_bert):
    docs, sums = [DOC] * 3, ["Tomatoes tomatoes tomatoes everywhere.", "Winter winter winter.", "Farmers."]
    relative = blanc_help(docs, sums, model=copy_bert, progress=False)
    improve = blanc_help(docs, sums, model=copy_bert, measure="improve", progress=False)
    assert relative.counts == improve.counts
    assert [relative_score(c) for c in relative.counts] == relative.scores
    assert all(0.0 <= s <= 1.0 for s in improve.scores)
    assert "measure:improve" in improve.signature and "measure:relative" in relative.signature


# ----------------------------------------------------------------------------------------------
# weird and long texts


WEIRD = [
    "東京は日本の首都です。大阪は大きい都市です。", "🙂🙂 emoji only 🎉!", "مرحبا بالعالم. هذا نص عربي.",
    "e\u0301te\u0301 cafe\u0301 nai\u0308ve.", "control\x00chars\x07 here\x1b.", "?!...;;", "x",
]


def test_weird_texts_give_finite_scores(tiny_bert_dir):
    docs = WEIRD + [DOC]
    sums = list(reversed(WEIRD)) + ["東京 🙂"]
    result = blanc_help(docs, sums, model=str(tiny_bert_dir), progress=False)
    assert len(result.scores) == len(docs)
    assert all(math.isfinite(s) for s in result.scores)


def test_long_document_is_cut_with_one_warning(tiny_bert_dir):
    """10,000+ tokens in one sentence on a 128-position model: cut like blanc, one warning."""
    long_doc = " ".join(["elephant", "harbour", "river", "quantum"] * 2600)  # ~10,400 tokens
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = blanc_help([long_doc, DOC], ["elephant harbour " * 40, "short"],
                            model=str(tiny_bert_dir), progress=False)
    messages = [str(w.message) for w in caught if "exceeded the 128-token window" in str(w.message)]
    assert len(messages) == 1
    assert math.isfinite(result.scores[0]) and sum(map(sum, result.counts[0])) > 0
    assert "window:128" in result.signature


def test_long_inputs_no_false_transformers_log(tmp_path, caplog):
    """transformers logs "Token indices sequence length is longer than the specified maximum
    sequence length ... indexing errors" when a text longer than the tokenizer's model_max_length
    (512 here) is tokenized. BLANC cuts sentences to its window itself, so that log is false: it
    must not appear (for a long document sentence, BLANC-help and -tune, nor for a long summary,
    BLANC-tune's tuning data), while BLANC's own truncation warning still does, once per call."""
    import logging

    from nlgmetrics.testing import build_random_model

    # A model of its own: transformers logs this at most once per tokenizer object, and the
    # engine caches loaded models (a tokenizer used by other tests might have logged it already).
    model = str(build_random_model("bert", tmp_path / "fresh-bert", size="tiny"))
    long_sentence = " ".join(["elephant", "harbour", "river", "quantum"] * 150) + "."  # 600 tokens
    long_summary = " ".join(["harbour", "river"] * 300)  # 600 tokens, no sentence end
    transformers_logger = logging.getLogger("transformers")  # does not propagate to the root logger
    transformers_logger.addHandler(caplog.handler)
    try:
        for call in (lambda: blanc_help([long_sentence], ["elephant harbour."], model=model, progress=False),
                     lambda: blanc_tune([long_sentence], [long_summary], model=model, finetune_epochs=1,
                                        progress=False)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                call()
            cut = [w for w in caught if "exceeded the 128-token window" in str(w.message)]
            assert len(cut) == 1, [str(w.message) for w in caught]
    finally:
        transformers_logger.removeHandler(caplog.handler)
    false_alarms = [r.getMessage() for r in caplog.records if "Token indices sequence length" in r.getMessage()]
    assert not false_alarms, false_alarms
    # the check itself can fail: the same tokenizer, called plainly, does log it
    from nlgmetrics.blanc import load_masked_lm

    tokenizer = load_masked_lm(model, None, None).tokenizer
    transformers_logger.addHandler(caplog.handler)
    try:
        tokenizer.tokenize(long_sentence)
    finally:
        transformers_logger.removeHandler(caplog.handler)
    assert any("Token indices sequence length" in r.getMessage() for r in caplog.records)


# ----------------------------------------------------------------------------------------------
# invariance and no mutation


STOCKS = ("Stocks rallied strongly today. Investors bought technology shares while banks struggled. "
          "Technology companies reported record earnings, and technology investors cheered loudly.")
PAIRS_DOCS = [DOC, DOC, STOCKS, DOC, STOCKS]
PAIRS_SUMS = ["Tomatoes tomatoes tomatoes everywhere tomatoes.", "Winter winter winter winter sunshine.",
              "Technology technology stocks rallied.", "Potatoes grow slowly.",
              "Banks banks banks struggled badly banks."]


def test_help_invariant_to_batching_order_duplicates(copy_bert):
    base = blanc_help(PAIRS_DOCS, PAIRS_SUMS, model=copy_bert, progress=False)
    assert any(c[0][1] for c in base.counts) and any(c[1][0] for c in base.counts)
    for kwargs in (dict(batch_size=1), dict(token_budget=64), dict(token_budget=100_000)):
        other = blanc_help(PAIRS_DOCS, PAIRS_SUMS, model=copy_bert, progress=False, **kwargs)
        assert other.counts == base.counts and other.scores == base.scores
    order = [3, 1, 4, 0, 2]
    permuted = blanc_help([PAIRS_DOCS[i] for i in order], [PAIRS_SUMS[i] for i in order],
                          model=copy_bert, progress=False)
    assert permuted.counts == [base.counts[i] for i in order]
    doubled = blanc_help(PAIRS_DOCS * 2, PAIRS_SUMS * 2, model=copy_bert, progress=False)
    assert doubled.counts == base.counts * 2
    single = [blanc_help([d], [s], model=copy_bert, progress=False).counts[0]
              for d, s in zip(PAIRS_DOCS, PAIRS_SUMS)]
    assert single == base.counts


def test_tune_invariant_to_order_duplicates_and_leaves_model_and_rng_alone(copy_bert):
    from nlgmetrics.engine import load_lm

    lm = load_lm(copy_bert, kind="masked", device="cpu")
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    docs, sums = list(PAIRS_DOCS), list(PAIRS_SUMS)
    docs_copy, sums_copy = list(docs), list(sums)
    random.seed(123)
    torch.manual_seed(123)
    py_state, torch_state = random.getstate(), torch.get_rng_state()
    kwargs = dict(model=lm, finetune_epochs=2, learning_rate=1e-2, progress=False, seed=4)
    first = blanc_tune(docs, sums, **kwargs)
    assert random.getstate() == py_state and torch.equal(torch.get_rng_state(), torch_state)
    assert all(torch.equal(before[k], v) for k, v in lm.model.state_dict().items())
    assert not lm.model.training and not any(p.requires_grad for p in lm.model.parameters())
    assert docs == docs_copy and sums == sums_copy
    assert any(c[0][1] or c[1][0] for c in first.counts)
    order = [2, 4, 0, 3, 1]
    permuted = blanc_tune([docs[i] for i in order] + [docs[0]], [sums[i] for i in order] + [sums[0]],
                          **kwargs)
    assert permuted.counts == [first.counts[i] for i in order] + [first.counts[0]]
    assert "seed:4" in first.signature


def test_help_does_not_mutate_inputs(copy_bert):
    docs, sums = (list(PAIRS_DOCS), tuple(PAIRS_SUMS))
    docs_copy = list(docs)
    blanc_help(docs, sums, model=copy_bert, progress=False)
    assert docs == docs_copy and sums == tuple(PAIRS_SUMS)


texts = st.lists(
    st.sampled_from(list("ab cd.!?東🙂é\u0301\u05d0\x00") + ["tomatoes ", "harbour ", "Potatoes. ", "   ", "\n"]),
    max_size=25,
).map("".join)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(pairs=st.lists(st.tuples(texts, texts), min_size=1, max_size=4))
def test_help_property_finite_and_order_free(tiny_bert_dir, pairs):
    docs = [d for d, _ in pairs]
    sums = [s for _, s in pairs]
    result = blanc_help(docs, sums, model=str(tiny_bert_dir), progress=False)
    assert all(math.isfinite(s) and -1.0 <= s <= 1.0 for s in result.scores)
    reverse = blanc_help(docs[::-1], sums[::-1], model=str(tiny_bert_dir), progress=False)
    assert reverse.counts == result.counts[::-1]


# ----------------------------------------------------------------------------------------------
# the evaluate module


def test_evaluate_module_offline(metrics_dir, copy_bert):
    import evaluate

    module = evaluate.load(str(metrics_dir / "blanc"))
    docs, sums = PAIRS_DOCS[:2], PAIRS_SUMS[:2]
    out = module.compute(predictions=sums, sources=docs, model=copy_bert)
    direct = blanc_help(docs, sums, model=copy_bert, progress=False)
    assert out["blanc"] == direct.scores and out["counts"] == direct.counts
    assert out["signature"] == direct.signature and out["signature"].startswith("blanc-help|")
    assert out["mean_blanc"] == pytest.approx(sum(direct.scores) / len(direct.scores))
    tuned = module.compute(predictions=sums[:1], sources=docs[:1], model=copy_bert, variant="tune",
                           finetune_epochs=1)
    assert tuned["signature"].startswith("blanc-tune|") and len(tuned["blanc"]) == 1
    with pytest.raises(ValueError, match=r"Unknown option\(s\) \['finetune_epochs'\] for variant='help' \(they belong to variant='tune'\)"):
        module.compute(predictions=sums, sources=docs, model=copy_bert, finetune_epochs=1)
    with pytest.raises(ValueError, match="Unknown variant='shannon'"):
        module.compute(predictions=sums, sources=docs, model=copy_bert, variant="shannon")
