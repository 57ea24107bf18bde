"""Property-based reliability tests of the LM metrics (InfoLM, Shannon score, BLANC-help,
BLANC-tune, FFLM) on messy input, with the tiny random models of ``tests/conftest.py`` (BERT: 128
positions; GPT-2 / Llama: 256 positions, so 10k-token texts are far beyond context). Every metric
is called through the registry (``tests.support.properties_support.run_metric``: ``get_protocol(name).run``)
and read from its ``MetricResult`` (``result.scores``; ``result.column(name)`` for the range).

For every generated batch: no exception, no NaN/inf, inputs untouched, and the per-example numbers
equal (1e-5; log-likelihood sums 1e-6 relative) those of a second call that changes only things
that must not matter: row order, duplicated rows, engine batch size and token budget, and the
prefix KV cache (causal metrics). Identity: InfoLM of a candidate against itself is exactly 0.
Long inputs: one truncation warning per call, finite numbers, never an index error.
"""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.properties_support import (
    LM_SETTINGS,
    assert_all_finite,
    assert_in_declared_range,
    assert_invariant,
    call_unmutated,
    long_text,
    messy_or_long_text,
    messy_text,
    permutation,
    reference_batches,
    run_metric,
    source_batches,
    take,
)

# integration: many generated examples, each through a model (minutes in all), and 10k-token texts
pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore::UserWarning")]  # truncation warnings are checked below


def _shuffled_with_duplicates(rows_a, rows_b, seed):
    """Permute the rows and append copies of the first two (of the permuted order)."""
    n = len(rows_a)
    order = permutation(n, seed)
    order = order + order[: min(2, n)]
    return order, [rows_a[i] for i in order], [rows_b[i] for i in order]


def _check_invariance(metric, first, second, seed, context, **options):
    """Base call vs a call with shuffled + duplicated rows and different engine settings."""
    result = call_unmutated(run_metric, metric, first, second, **options)
    base = result.scores
    assert_all_finite(base, context)
    assert_in_declared_range(result, context)
    for name, values in base.items():
        assert len(values) == len(first), name
    order, first2, second2 = _shuffled_with_duplicates(first, second, seed)
    engine = dict(batch_size=2, token_budget=48)
    if metric in ("shannon_score", "fflm"):
        engine["prefix_cache"] = False
    if metric == "infolm":
        engine["chunk_size"] = 1  # one text distribution alive at a time: memory only, same numbers
    other = run_metric(metric, first2, second2, **options, **engine).scores
    assert_invariant(take(base, order), other, f"{context}: order/duplicates/batch_size/token_budget/cache")
    return base


# ------------------------------------------------------------------------------------------------
# InfoLM (masked and causal)


@LM_SETTINGS
@given(batch=reference_batches(text=messy_or_long_text, max_rows=5), seed=st.integers(0, 10**6),
       causal=st.booleans())
def test_infolm_messy(tiny_bert_dir, tiny_gpt2_dir, batch, seed, causal) -> None:
    preds, refs = batch
    model = str(tiny_gpt2_dir if causal else tiny_bert_dir)
    base = _check_invariance("infolm", preds, refs, seed, "infolm", model=model)
    for i, (p, rs) in enumerate(zip(preds, refs)):
        assert base["infolm"][i] >= 0.0
        if p in rs:  # identity: the best reference is the candidate itself
            assert base["infolm"][i] == 0.0, (p, rs)


@LM_SETTINGS
@given(batch=reference_batches(text=messy_text, max_rows=6))
def test_infolm_split_batches_without_idf(tiny_bert_dir, batch) -> None:
    """Without idf (which depends on the call's references by definition) an example's score does
    not depend on which other rows share its call."""
    preds, refs = batch
    whole = run_metric("infolm", preds, refs, model=str(tiny_bert_dir), idf=False).scores
    half = max(1, len(preds) // 2)
    parts = [run_metric("infolm", preds[:half], refs[:half], model=str(tiny_bert_dir), idf=False).scores]
    if len(preds) > half:
        parts.append(run_metric("infolm", preds[half:], refs[half:], model=str(tiny_bert_dir), idf=False).scores)
    assert_invariant(whole, {"infolm": [v for part in parts for v in part["infolm"]]}, "infolm split")


# ------------------------------------------------------------------------------------------------
# reference-free metrics: (predictions, sources), here summaries and their documents


@LM_SETTINGS
@given(batch=source_batches(text=messy_or_long_text), seed=st.integers(0, 10**6))
def test_shannon_messy(tiny_gpt2_dir, batch, seed) -> None:
    sums, docs = batch
    base = _check_invariance("shannon_score", sums, docs, seed, "shannon", model=str(tiny_gpt2_dir))
    for i, (s, d) in enumerate(zip(sums, docs)):
        if not s.strip():  # documented: an empty summary does not help
            assert base["shannon_score"][i] == 0.0 and base["information_difference"][i] == 0.0
        assert -1.0 <= base["blanc_shannon"][i] <= 1.0


@LM_SETTINGS
@given(batch=source_batches(text=messy_or_long_text), seed=st.integers(0, 10**6))
def test_blanc_help_messy(tiny_bert_dir, batch, seed) -> None:
    sums, docs = batch
    base = _check_invariance("blanc", sums, docs, seed, "blanc", model=str(tiny_bert_dir), variant="help")
    for i, s in enumerate(sums):
        assert -1.0 <= base["blanc"][i] <= 1.0
        if not s.strip():  # documented: empty summary -> help == base -> 0
            assert base["blanc"][i] == 0.0


@LM_SETTINGS
@given(batch=source_batches(text=messy_text, max_rows=3), seed=st.integers(0, 10**6))
def test_blanc_tune_messy(tiny_bert_dir, batch, seed) -> None:
    sums, docs = batch
    base = _check_invariance("blanc", sums, docs, seed, "blanc_tune", model=str(tiny_bert_dir),
                             variant="tune", finetune_epochs=1)
    for i, s in enumerate(sums):
        assert -1.0 <= base["blanc"][i] <= 1.0
        if not s.strip():  # documented: no training data -> tuned model == original -> 0
            assert base["blanc"][i] == 0.0


@LM_SETTINGS
@given(batch=source_batches(text=messy_or_long_text), seed=st.integers(0, 10**6), llama=st.booleans())
def test_fflm_messy(tiny_gpt2_dir, tiny_llama_dir, batch, seed, llama) -> None:
    sums, docs = batch
    model = str(tiny_llama_dir if llama else tiny_gpt2_dir)
    # weights as a list: the option containers must not be mutated either (call_unmutated checks kwargs)
    _check_invariance("fflm", sums, docs, seed, "fflm", model=model, weights=[0.25, 0.25, 0.5])


@LM_SETTINGS
@given(batch=source_batches(text=messy_text, max_rows=4))
def test_reference_free_split_batches(tiny_gpt2_dir, tiny_bert_dir, batch) -> None:
    """Shannon, BLANC-help and FFLM score each row on its own: splitting the batch changes nothing."""
    sums, docs = batch
    half = max(1, len(sums) // 2)
    for metric, model in (("shannon_score", tiny_gpt2_dir), ("blanc", tiny_bert_dir), ("fflm", tiny_gpt2_dir)):
        whole = run_metric(metric, sums, docs, model=str(model)).scores
        parts = [run_metric(metric, sums[:half], docs[:half], model=str(model)).scores]
        if len(sums) > half:
            parts.append(run_metric(metric, sums[half:], docs[half:], model=str(model)).scores)
        joined = {k: [v for part in parts for v in part[k]] for k in whole}
        assert_invariant(whole, joined, f"{metric}: batch split in two calls")


# ------------------------------------------------------------------------------------------------
# long inputs: the documented strategy, one warning per call, never an index error


def _scored_with_warnings(metric, *args, **kwargs):
    """``run_metric(metric, ...).scores`` and the messages of the UserWarnings it raised."""
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        out = run_metric(metric, *args, **kwargs).scores
    return out, [str(r.message) for r in records if issubclass(r.category, UserWarning)]


LONG = long_text()  # > 10,000 tokens with a sentence end every 2,500 words
LONG_NO_PUNCT = "word " * 10_500


@pytest.mark.parametrize("causal", [False, True])
def test_infolm_long_texts_truncate_with_one_warning(tiny_bert_dir, tiny_gpt2_dir, causal) -> None:
    model = str(tiny_gpt2_dir if causal else tiny_bert_dir)
    preds = [LONG, LONG_NO_PUNCT, "short", LONG]
    refs = [[LONG_NO_PUNCT], [LONG], ["short text"], [LONG]]
    out, messages = _scored_with_warnings("infolm", preds, refs, model=model)
    assert_all_finite(out, "infolm long")
    assert out["infolm"][3] == 0.0
    truncation = [m for m in messages if "truncat" in m]
    assert len(truncation) == 1, messages


def test_blanc_help_long_texts_one_warning(tiny_bert_dir) -> None:
    docs = [LONG_NO_PUNCT, LONG_NO_PUNCT, "A short document. It has two sentences."]
    sums = ["word", LONG_NO_PUNCT, LONG_NO_PUNCT]
    out, messages = _scored_with_warnings("blanc", sums, docs, model=str(tiny_bert_dir))
    assert_all_finite(out, "blanc long")
    assert len([m for m in messages if "BLANC" in m]) == 1, messages


def test_blanc_tune_long_document_one_warning(tiny_bert_dir) -> None:
    out, messages = _scored_with_warnings(
        "blanc", ["word word", "alpha beta"], [LONG_NO_PUNCT, LONG_NO_PUNCT],
        model=str(tiny_bert_dir), variant="tune", finetune_epochs=1)
    assert_all_finite(out, "blanc_tune long")
    assert len([m for m in messages if "BLANC" in m]) == 1, messages


def test_fflm_long_texts_one_truncation_warning(tiny_llama_dir) -> None:
    docs = [LONG, LONG_NO_PUNCT, "A short document."]
    sums = ["alpha beta", LONG, LONG_NO_PUNCT]
    out, messages = _scored_with_warnings("fflm", sums, docs, model=str(tiny_llama_dir))
    assert_all_finite(out, "fflm long")
    assert len([m for m in messages if "truncat" in m]) == 1, messages


def test_shannon_long_summary_one_warning(tiny_gpt2_dir) -> None:
    docs = [LONG_NO_PUNCT, "A short document. Two sentences."]
    sums = [LONG_NO_PUNCT, LONG]
    out, messages = _scored_with_warnings("shannon_score", sums, docs, model=str(tiny_gpt2_dir))
    assert_all_finite(out, "shannon long")
    assert len([m for m in messages if "summaries are longer" in m]) == 1, messages
    assert len(messages) <= 2, messages  # at most: summaries cut, sentences cut


def test_shannon_long_document_sentences_one_warning(tiny_gpt2_dir) -> None:
    """Sentences longer than the context are cut (blanc's strategy) with one warning per call."""
    out, messages = _scored_with_warnings("shannon_score", ["word", "alpha beta"], [LONG_NO_PUNCT, LONG],
                                          model=str(tiny_gpt2_dir))
    assert_all_finite(out, "shannon long document")
    assert len(messages) == 1 and "sentence" in messages[0], messages


# ------------------------------------------------------------------------------------------------
# the registry (what the CLI, the demos and the Trainer hook call): finite per-example AND aggregate


MESSY_ROWS = ["", " \t", "!", "?!.,;", "日本語のテキストです。", "😀🎉 ok 👍🏽", "مرحبا بالعالم", "שלום עולם",
              "e\u0301\u0301 combining", "ctrl\x00\x07\x1b chars", "The cat sat on the mat. It slept.", LONG]


@pytest.mark.parametrize("name", ["rouge_family", "bleu", "infolm", "shannon_score", "blanc", "fflm"])
def test_registry_messy_rows_finite(name, tiny_bert_dir, tiny_gpt2_dir) -> None:
    from nlgmetrics.registry import get_protocol

    spec = get_protocol(name)
    options = {}
    if spec.uses_model:
        options["model"] = str(tiny_bert_dir if name in ("infolm", "blanc") else tiny_gpt2_dir)
    if name == "rouge_family":
        options["n_bootstrap"] = 50
    others = list(reversed(MESSY_ROWS))
    if spec.second_input == "references":
        others = [[o, p] if i % 2 else o for i, (o, p) in enumerate(zip(others, MESSY_ROWS))]  # ragged
    result = call_unmutated(spec.run, MESSY_ROWS, others, progress=False, **options)
    assert result.metric == name and result.scores
    for key, values in result.scores.items():
        assert len(values) == len(MESSY_ROWS), key
        assert all(math.isfinite(v) for v in values), (key, values)
    assert_in_declared_range(result, name)
    aggregate = result.aggregate()
    assert all(math.isfinite(v) for v in aggregate.values()), aggregate
    assert result.main in aggregate and result.signature
    assert isinstance(result.higher_is_better, bool)  # the headline's direction, read from the result


# ------------------------------------------------------------------------------------------------
# off-by-one hunting: inputs whose token counts sit right at the context limits
# ("cat", "dog", "house" are single tokens in both tiny vocabularies)


def _words(n: int, word: str = "cat") -> str:
    return " ".join([word] * n)


def test_lengths_at_the_context_limits(tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir) -> None:
    """BERT: 128 positions, GPT-2 / Llama: 256. Every length around those limits (with and without
    the summary/prompt eating into the context) scores finite numbers, in one call per metric."""
    near_bert = [1, 124, 125, 126, 127, 128, 129, 200]
    near_gpt = [0, 1, 126, 127, 128, 250, 252, 253, 254, 255, 256, 257, 300]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run_metric("infolm", [_words(n) for n in near_bert],
                         [[_words(n + 1), _words(max(n - 1, 0))] for n in near_bert], model=str(tiny_bert_dir)).scores
        assert_all_finite(out, "infolm bert")
        out = run_metric("infolm", [_words(n) for n in near_gpt], [[_words(n + 1)] for n in near_gpt],
                         model=str(tiny_gpt2_dir)).scores
        assert_all_finite(out, "infolm gpt2")
        pairs = [(s, d) for s in (0, 1, 128, 253, 254, 255, 256) for d in (1, 127, 128, 129, 254, 255, 256, 300)]
        out = run_metric("shannon_score", [_words(s, "dog") for s, _ in pairs], [_words(d) for _, d in pairs],
                         model=str(tiny_gpt2_dir)).scores
        assert_all_finite(out, "shannon")
        pairs = [(s, d) for s in (0, 1, 124, 125, 126, 128) for d in (1, 124, 125, 126, 127, 128, 200)]
        out = run_metric("blanc", [_words(s, "dog") for s, _ in pairs], [_words(d, "house") for _, d in pairs],
                         model=str(tiny_bert_dir)).scores
        assert_all_finite(out, "blanc")
        pairs = [(s, d) for s in (1, 248, 250, 251, 252, 253, 255, 256) for d in (0, 1, 250, 251, 252, 253, 255, 256, 300)]
        out = run_metric("fflm", [_words(s, "dog") for s, _ in pairs], [_words(d) for _, d in pairs],
                         model=str(tiny_llama_dir)).scores
        assert_all_finite(out, "fflm")


# ------------------------------------------------------------------------------------------------
# the model is an input too: never modified (weights, train/eval mode, requires_grad), and the
# caller's random number generators are left as they were


def _fingerprint(model) -> tuple:
    import hashlib

    digest = hashlib.sha256()
    for tensor in model.state_dict().values():
        digest.update(tensor.detach().cpu().numpy().tobytes())
    return digest.hexdigest(), model.training, tuple(p.requires_grad for p in model.parameters())


def test_user_model_instances_and_rngs_untouched(tiny_bert_dir, tiny_gpt2_dir) -> None:
    import random

    import torch
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    from nlgmetrics.engine import load_lm

    docs = ["The cat sat on the mat. It slept all day long in the sun."] * 2
    sums = ["cat sat on mat", "dog"]
    masked = AutoModelForMaskedLM.from_pretrained(str(tiny_bert_dir)).train()  # train mode on purpose
    causal = AutoModelForCausalLM.from_pretrained(str(tiny_gpt2_dir)).train()
    before = _fingerprint(masked), _fingerprint(causal)
    masked_lm = load_lm(masked, model_tokenizer=AutoTokenizer.from_pretrained(str(tiny_bert_dir)))
    causal_lm = load_lm(causal, model_tokenizer=AutoTokenizer.from_pretrained(str(tiny_gpt2_dir)))

    torch.manual_seed(123)
    random.seed(123)
    expected_torch, expected_python = torch.rand(3), random.random()
    torch.manual_seed(123)
    random.seed(123)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_metric("infolm", sums, docs, model=masked_lm)
        run_metric("blanc", sums, docs, model=masked_lm)
        tuned = run_metric("blanc", sums, docs, model=masked_lm, variant="tune", finetune_epochs=2).scores
        run_metric("shannon_score", sums, docs, model=causal_lm)
        run_metric("fflm", sums, docs, model=causal_lm)
    assert torch.equal(torch.rand(3), expected_torch), "a metric consumed the caller's torch RNG"
    assert random.random() == expected_python, "a metric consumed the caller's Python RNG"
    assert (_fingerprint(masked), _fingerprint(causal)) == before, "a metric modified the user's model"
    # BLANC-tune trains a copy: the same numbers from the directory (a different LoadedLM)
    assert tuned == run_metric("blanc", sums, docs, model=str(tiny_bert_dir), variant="tune", finetune_epochs=2).scores
