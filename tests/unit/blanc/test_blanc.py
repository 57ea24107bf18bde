"""BLANC-help / BLANC-tune: masking and truncation against blanc's own helpers, hand-computed
scores, bad input (clear errors, defined values for empty texts), invariance, no mutation, the
``blanc`` dispatcher and its result, the evaluate module and the model card's examples.

Parity of whole scores with blanc lives in test_blanc_parity.py.
"""

from __future__ import annotations

import math
import random
import warnings
from dataclasses import astuple

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlgmetrics.blanc import (
    BlancResult,
    TuneSettings,
    blanc,
    blanc_help,
    blanc_tune,
    improve_score,
    relative_score,
)
from nlgmetrics.blanc.masking import (
    MinTokenLengths,
    even_maskings,
    fit_to_window,
    is_maskable,
    random_maskings,
)
from nlgmetrics.core.signature import parse_signature
from tests.support.markdown_examples import markdown_doctest, run_doctest, runnable_examples, skipped_examples


@pytest.fixture(scope="module")
def blanc_utils():
    from tests.support.oracles.blanc_reference import import_blanc

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
    _, answers = blanc_utils.mask_tokens_evenly(tokens, gap, astuple(lengths), "[MASK]", gap_mask)
    assert even_maskings(tokens, gap, gap_mask, lengths) == [tuple(a) for a in answers]


@settings(max_examples=60, deadline=None)
@given(tokens=token_lists, p_mask=st.floats(0.05, 0.9), seed=st.integers(0, 10_000))
def test_random_maskings_equal_blanc(blanc_utils, tokens, p_mask, seed):
    lengths = MinTokenLengths()
    random.seed(seed)
    _, answers = blanc_utils.mask_tokens_randomly(tokens, astuple(lengths), "[MASK]", p_mask)
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
                                         len_sent_allow_cut=allow_cut, max_length=512)
    assert len(sent) + len(help_tokens) + len_sep + 2 <= 512
    if expected is not None:
        assert (sent, help_tokens) == (list(expected[0]), list(expected[1]))


# ----------------------------------------------------------------------------------------------
# clear errors, tested by message


@pytest.mark.parametrize("option, message", [
    (dict(min_token_length_normal=-2), "`min_token_length_normal` must be a non-negative"),
    (dict(splitter="spacy"), "Unknown sentence splitter"),
])
def test_bad_options_raise_clear_errors(tiny_bert_dir, option, message):
    with pytest.raises(ValueError, match=message):
        blanc_help(["A summary."], ["A document."], model=str(tiny_bert_dir), progress=False, **option)


def test_shared_options_checked_before_the_model_loads():
    # A model that does not exist: the option error must come first.
    for metric in (blanc_help, blanc_tune):
        with pytest.raises(ValueError, match="`token_budget` must be a positive integer"):
            metric(["A summary."], ["A document."], model="no-such-org/no-such-bert-xyz",
                   token_budget=0, progress=False)


def test_max_length_is_the_window_capped_at_the_model(tiny_bert_dir):
    """The shared max_length: default blanc's 512 capped at the model's 128 positions; a larger
    value is capped too (same numbers), a smaller one is the window (and cuts more)."""
    long_doc = " ".join(["elephant", "harbour", "river", "quantum"] * 30) + "."  # ~120 tokens
    args = (["elephant harbour river quantum " * 5], [long_doc])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = blanc_help(*args, model=str(tiny_bert_dir), progress=False)
        capped = blanc_help(*args, model=str(tiny_bert_dir), progress=False, max_length=100_000)
    assert parse_signature(default.signature)["max_length"] == "128"
    assert capped.signature == default.signature and capped.counts == default.counts
    with pytest.warns(UserWarning, match="exceeded the 64-token window"):
        small = blanc_help(*args, model=str(tiny_bert_dir), progress=False, max_length=64)
    assert parse_signature(small.signature)["max_length"] == "64"
    assert sum(map(sum, small.counts[0])) < sum(map(sum, default.counts[0]))


def test_model_instance_with_model_tokenizer(tiny_bert_dir):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    instance = AutoModelForMaskedLM.from_pretrained(str(tiny_bert_dir))
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    summaries, documents = ["Jack bought apples."], ["Jack bought apples. Jill sold pears."]
    from_dir = blanc_help(summaries, documents, model=str(tiny_bert_dir), device="cpu", progress=False)
    from_instance = blanc_help(summaries, documents, model=instance, model_tokenizer=tokenizer, device="cpu",
                               progress=False)
    assert from_instance.counts == from_dir.counts and sum(map(sum, from_dir.counts[0])) > 0
    with pytest.raises(ValueError, match="does not carry its tokenizer; pass model_tokenizer="):
        blanc_help(summaries, documents, model=instance, progress=False)


def test_bad_filler_and_tune_options(tiny_bert_dir):
    with pytest.raises(ValueError, match="`filler_token` 'notavocabtoken' is not a token"):
        blanc_help(["A summary."], ["A document."], model=str(tiny_bert_dir), progress=False,
                   filler_token="notavocabtoken")
    # The recipe's fields are named as the user wrote them: tuning.<field>.
    for recipe, message in ((TuneSettings(p_token_replace=1.5), "`tuning.p_token_replace` must be a probability"),
                            (TuneSettings(chunk_stride=0), "`tuning.chunk_stride` must be a positive integer"),
                            (TuneSettings(gap=0), "`tuning.gap` must be a positive integer"),
                            # bool("no") is True: a string switch would silently turn the option on.
                            (TuneSettings(mask_evenly="no"), "`tuning.mask_evenly` must be True or False, got 'no'"),
                            (TuneSettings(top_fully="no"), "`tuning.top_fully` must be True or False, got 'no'")):
        with pytest.raises(ValueError, match=message):
            blanc_tune(["A summary."], ["A document."], model=str(tiny_bert_dir), progress=False, tuning=recipe)
    # blanc's flat keyword names are not options here: the recipe is one TuneSettings.
    with pytest.raises(TypeError, match="unexpected keyword argument 'finetune_batch_size'"):
        blanc_tune(["A summary."], ["A document."], model=str(tiny_bert_dir), progress=False, finetune_batch_size=2)
    with pytest.raises(ValueError, match=r"`tuning` must be a TuneSettings .*got \{'batch_size': 2\}"):
        blanc_tune(["A summary."], ["A document."], model=str(tiny_bert_dir), progress=False,
                   tuning={"batch_size": 2})


# ----------------------------------------------------------------------------------------------
# empty texts: defined values, never NaN

DOC = ("Potatoes potatoes potatoes potatoes grow slowly in winter. The farmer planted tomatoes "
       "near the river. Tomatoes need sunshine and tomatoes need water.")


@pytest.mark.parametrize("metric", [blanc_help, blanc_tune])
def test_empty_summary_and_document(copy_bert, metric):
    kwargs = dict(finetune_epochs=1) if metric is blanc_tune else {}
    result = metric(["", "  \n ", "A summary.", "A summary.", "Tomatoes tomatoes."],
                    [DOC, DOC, "", "   \n\t", DOC], model=copy_bert, progress=False, **kwargs)
    scores = result.scores["blanc"]
    for i in (0, 1):  # empty / whitespace summary: help == base -> 0.0, no S01 / S10
        assert scores[i] == 0.0
        assert result.counts[i][0][1] == 0 and result.counts[i][1][0] == 0
        assert sum(map(sum, result.counts[i])) > 0
    for i in (2, 3):  # empty / whitespace document: nothing to mask -> 0.0 with zero counts
        assert scores[i] == 0.0 and result.counts[i] == [[0, 0], [0, 0]]
    assert all(math.isfinite(s) and -1.0 <= s <= 1.0 for s in scores)


def test_measure_ranges(copy_bert):
    docs, sums = [DOC] * 3, ["Tomatoes tomatoes tomatoes everywhere.", "Winter winter winter.", "Farmers."]
    relative = blanc_help(sums, docs, model=copy_bert, progress=False)
    improve = blanc_help(sums, docs, model=copy_bert, measure="improve", progress=False)
    assert relative.counts == improve.counts
    assert [relative_score(c) for c in relative.counts] == relative.scores["blanc"]
    assert [improve_score(c) for c in improve.counts] == improve.scores["blanc"]
    assert all(0.0 <= s <= 1.0 for s in improve.scores["blanc"])
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
    result = blanc_help(sums, docs, model=str(tiny_bert_dir), progress=False)
    assert len(result) == len(result.scores["blanc"]) == len(docs)
    assert all(math.isfinite(s) for s in result.scores["blanc"])


def test_long_document_is_cut_with_one_warning(tiny_bert_dir):
    """10,000+ tokens in one sentence on a 128-position model: cut like blanc, one warning."""
    long_doc = " ".join(["elephant", "harbour", "river", "quantum"] * 2600)  # ~10,400 tokens
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = blanc_help(["elephant harbour " * 40, "short"], [long_doc, DOC],
                            model=str(tiny_bert_dir), progress=False)
    messages = [str(w.message) for w in caught if "exceeded the 128-token window" in str(w.message)]
    assert len(messages) == 1
    assert math.isfinite(result.scores["blanc"][0]) and sum(map(sum, result.counts[0])) > 0
    assert parse_signature(result.signature)["max_length"] == "128"


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
        for call in (lambda: blanc_help(["elephant harbour."], [long_sentence], model=model, progress=False),
                     lambda: blanc_tune([long_summary], [long_sentence], model=model, finetune_epochs=1,
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
    from nlgmetrics.engine import load_lm

    tokenizer = load_lm(model, kind="masked").tokenizer
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
    base = blanc_help(PAIRS_SUMS, PAIRS_DOCS, model=copy_bert, progress=False)
    assert any(c[0][1] for c in base.counts) and any(c[1][0] for c in base.counts)
    for kwargs in (dict(batch_size=1), dict(token_budget=64), dict(token_budget=100_000)):
        other = blanc_help(PAIRS_SUMS, PAIRS_DOCS, model=copy_bert, progress=False, **kwargs)
        assert other.counts == base.counts and other.scores == base.scores
    order = [3, 1, 4, 0, 2]
    permuted = blanc_help([PAIRS_SUMS[i] for i in order], [PAIRS_DOCS[i] for i in order],
                          model=copy_bert, progress=False)
    assert permuted.counts == [base.counts[i] for i in order]
    doubled = blanc_help(PAIRS_SUMS * 2, PAIRS_DOCS * 2, model=copy_bert, progress=False)
    assert doubled.counts == base.counts * 2
    single = [blanc_help([s], [d], model=copy_bert, progress=False).counts[0]
              for d, s in zip(PAIRS_DOCS, PAIRS_SUMS)]
    assert single == base.counts


def test_help_chunks_do_not_change_the_numbers(copy_bert, monkeypatch):
    """Work runs DOCUMENTS_PER_CHUNK distinct documents at a time (whole documents per chunk);
    one document per chunk gives the same counts as one chunk for everything."""
    import nlgmetrics.blanc.help as help_module
    import nlgmetrics.engine.planning as planning

    docs, sums = PAIRS_DOCS * 2, PAIRS_SUMS[::-1] + PAIRS_SUMS
    whole = blanc_help(sums, docs, model=copy_bert, progress=False)
    planned = []
    original = planning.chunk_by_key

    def one_document_per_chunk(keys, chunk_size):
        assert chunk_size == help_module.DOCUMENTS_PER_CHUNK
        planned.append(original(keys, 1))
        return planned[-1]

    monkeypatch.setattr(planning, "chunk_by_key", one_document_per_chunk)
    chunked = blanc_help(sums, docs, model=copy_bert, progress=False)
    assert len(planned[0]) == 2  # two distinct documents, so two chunks
    assert chunked.counts == whole.counts and chunked.signature == whole.signature


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
    first = blanc_tune(sums, docs, **kwargs)
    assert random.getstate() == py_state and torch.equal(torch.get_rng_state(), torch_state)
    assert all(torch.equal(before[k], v) for k, v in lm.model.state_dict().items())
    assert not lm.model.training and not any(p.requires_grad for p in lm.model.parameters())
    assert docs == docs_copy and sums == sums_copy
    assert any(c[0][1] or c[1][0] for c in first.counts)
    order = [2, 4, 0, 3, 1]
    permuted = blanc_tune([sums[i] for i in order] + [sums[0]], [docs[i] for i in order] + [docs[0]],
                          **kwargs)
    assert permuted.counts == [first.counts[i] for i in order] + [first.counts[0]]
    assert parse_signature(first.signature)["seed"] == "4"


def test_help_does_not_mutate_inputs(copy_bert):
    docs, sums = (list(PAIRS_DOCS), tuple(PAIRS_SUMS))
    docs_copy = list(docs)
    blanc_help(sums, docs, model=copy_bert, progress=False)
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
    result = blanc_help(sums, docs, model=str(tiny_bert_dir), progress=False)
    assert all(math.isfinite(s) and -1.0 <= s <= 1.0 for s in result.scores["blanc"])
    reverse = blanc_help(sums[::-1], docs[::-1], model=str(tiny_bert_dir), progress=False)
    assert reverse.counts == result.counts[::-1]


# ----------------------------------------------------------------------------------------------
# the blanc dispatcher, its result, the progress bar


def test_import_does_not_load_torch():
    """`import nlgmetrics.blanc` stays light (the CLI's help, the registry): the engine and torch
    load when a metric runs."""
    import subprocess
    import sys

    code = "import sys, nlgmetrics.blanc; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_blanc_dispatches_to_the_variant(copy_bert):
    sums, docs = PAIRS_SUMS[:2], PAIRS_DOCS[:2]
    helped = blanc(sums, docs, model=copy_bert, progress=False, gap=3)
    assert helped == blanc_help(sums, docs, model=copy_bert, progress=False, gap=3)
    assert parse_signature(helped.signature)["variant"] == "help"
    tuned = blanc(sums, docs, variant="tune", model=copy_bert, progress=False, finetune_epochs=1)
    assert tuned == blanc_tune(sums, docs, model=copy_bert, progress=False, finetune_epochs=1)
    assert parse_signature(tuned.signature)["variant"] == "tune"
    assert helped.signature.split("|")[0] == tuned.signature.split("|")[0] == "blanc"


def test_blanc_rejects_options_of_the_other_variant():
    # Refused before any model is loaded (the model name does not exist).
    with pytest.raises(ValueError, match=r"blanc option\(s\) \['finetune_epochs', 'seed'\] apply to "
                                         r"variant='tune' only \(BLANC-tune\)"):
        blanc(["s"], ["d"], model="no-such-model", finetune_epochs=1, seed=2)
    with pytest.raises(ValueError, match=r"blanc option\(s\) \['filler_token'\] apply to variant='help' only"):
        blanc(["s"], ["d"], variant="tune", model="no-such-model", filler_token=".")
    with pytest.raises(ValueError, match=r"Unknown blanc option\(s\) \['max_tokens'\] for variant='help'; "
                                         r"valid options: .*'max_length'"):
        blanc(["s"], ["d"], model="no-such-model", max_tokens=64)
    with pytest.raises(ValueError, match=r"Unknown variant='shannon'; choose one of \['help', 'tune'\]"):
        blanc(["s"], ["d"], variant="shannon")


def test_blanc_result_layout():
    result = BlancResult(scores={"blanc": [0.2, -1.0]}, signature="blanc|version:x",
                         counts=[[[5, 3], [1, 1]], [[0, 0], [4, 0]]])
    assert (result.metric, result.main, result.higher_is_better) == ("blanc", "blanc", True)
    column = result.column("blanc")
    assert (column.minimum, column.maximum) == (-1.0, 1.0)
    assert result.aggregate() == {"blanc": pytest.approx(-0.4)} and result.main_score == pytest.approx(-0.4)
    as_dict = result.to_dict()
    assert as_dict["scores"] == {"blanc": [0.2, -1.0]} and as_dict["metric"] == "blanc"
    assert as_dict["details"] == {"counts": [[[5, 3], [1, 1]], [[0, 0], [4, 0]]]}
    assert not hasattr(result, "as_dict")
    with pytest.raises(ValueError, match="1 count tables for 2 examples"):
        BlancResult(scores={"blanc": [0.0, 0.0]}, signature="blanc", counts=[[[0, 0], [0, 0]]])
    with pytest.raises(FloatingPointError):
        BlancResult(scores={"blanc": [math.nan]}, signature="blanc", counts=[[[0, 0], [0, 0]]])


@pytest.mark.parametrize("variant", ["help", "tune"])
def test_progress_bar_counts_examples(tiny_bert_dir, capsys, variant):
    sums, docs = ["Jack bought apples.", "", "Jill sold pears."], ["Jack bought apples. Jill sold pears."] * 3
    extra = dict(finetune_epochs=1) if variant == "tune" else {}
    blanc(sums, docs, variant=variant, model=str(tiny_bert_dir), progress=True, **extra)
    err = capsys.readouterr().err
    assert f"BLANC-{variant}" in err and "3/3" in err
    blanc(sums, docs, variant=variant, model=str(tiny_bert_dir), progress=False, **extra)
    assert capsys.readouterr().err == ""


# ----------------------------------------------------------------------------------------------
# the evaluate module


def test_evaluate_module_takes_the_variant(metrics_dir, copy_bert):
    """The module's numbers equal the library's (BLANC-help: tests/contract/test_one_contract.py); the
    variant and its options pass through."""
    import evaluate

    module = evaluate.load(str(metrics_dir / "blanc"))
    docs, sums = PAIRS_DOCS[:2], PAIRS_SUMS[:2]
    each = module.compute(predictions=sums, sources=docs, model=copy_bert, progress=False, use_aggregator=False,
                          return_signature=True)
    assert parse_signature(each["signature"])["variant"] == "help"
    tuned = module.compute(predictions=sums[:1], sources=docs[:1], model=copy_bert, variant="tune",
                           finetune_epochs=1, progress=False, use_aggregator=False, return_signature=True)
    assert parse_signature(tuned["signature"])["variant"] == "tune" and len(tuned["blanc"]) == 1
    with pytest.raises(ValueError, match=r"blanc option\(s\) \['finetune_epochs'\] apply to variant='tune' only"):
        module.compute(predictions=sums, sources=docs, model=copy_bert, finetune_epochs=1)
    with pytest.raises(ValueError, match="Unknown variant='shannon'"):
        module.compute(predictions=sums, sources=docs, model=copy_bert, variant="shannon")


# ----------------------------------------------------------------------------------------------
# the model card


def test_model_card_examples_run(metrics_dir):
    """The card's ``>>>`` examples (in its ```python blocks) print what they show; those that need
    bert-base-uncased are skipped by their ``# doctest: +SKIP``, the others must run."""
    test = markdown_doctest(metrics_dir / "blanc" / "README.md")
    run = runnable_examples(test)
    assert len(run) >= 5, "the card lost its offline examples"
    assert any("bert-base-uncased" in e.source for e in skipped_examples(test))
    assert not any("bert-base-uncased" in e.source for e in run)
    results, ran = run_doctest(test)
    assert results.failed == 0 and results.attempted == ran == len(run)
