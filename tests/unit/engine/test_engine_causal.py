"""Causal scoring against a naive oracle: one forward per target token, over the same model."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
import torch

from nlgmetrics.engine import CausalQuery, causal_target_scores, iter_causal, load_lm

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "A fox jumped.",
    "Dogs sleep all day, foxes do not.",
    "Nothing to see here",
    "The committee approved the budget after a long debate on Tuesday evening.",
]


def naive_logprobs(model: torch.nn.Module, query: CausalQuery) -> tuple[np.ndarray, np.ndarray]:
    """log p(target_i | prefix + target_<i) by one full forward per token, no padding, no cache."""
    logprobs, argmax = [], []
    with torch.no_grad():
        for i, token in enumerate(query.target_ids):
            ids = torch.tensor([query.prefix_ids + query.target_ids[:i]])
            logits = model(input_ids=ids, use_cache=False).logits[0, -1].double()
            logprobs.append(torch.log_softmax(logits, -1)[token].item())
            argmax.append(int(logits.argmax()))
    return np.array(logprobs), np.array(argmax)


def make_queries(tokenizer) -> list[CausalQuery]:
    bos = tokenizer.bos_token_id
    ids = [tuple(tokenizer(s)["input_ids"]) for s in SENTENCES]
    doc = ids[0] + ids[4]
    return [
        CausalQuery((bos,), ids[0]),             # plain scoring from BOS
        CausalQuery((bos,) + doc, ids[1]),       # three summaries sharing a document prefix
        CausalQuery((bos,) + doc, ids[2]),
        CausalQuery((bos,) + doc, ids[3]),
        CausalQuery((bos,) + ids[1], ids[2]),    # a prefix used once
        CausalQuery((bos,), ids[3][:1]),         # one-token target
        CausalQuery((bos,) + doc, ids[1]),       # duplicate
    ]


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def causal_lm(request, tiny_gpt2_dir, tiny_llama_dir):
    path = {"gpt2": tiny_gpt2_dir, "llama": tiny_llama_dir}[request.param]
    return load_lm(path, device="cpu")


@pytest.fixture(scope="module")
def oracle(causal_lm):
    queries = make_queries(causal_lm.tokenizer)
    return queries, [naive_logprobs(causal_lm.model, q) for q in queries]


@pytest.mark.parametrize("prefix_cache", [True, False])
def test_logprobs_equal_naive_loop(causal_lm, oracle, prefix_cache):
    queries, expected = oracle
    got = causal_target_scores(causal_lm, queries, prefix_cache=prefix_cache, progress=False)
    for (want_lp, want_arg), scores in zip(expected, got):
        assert scores.logprobs.dtype == np.float64 and scores.argmax.dtype == np.int64
        assert np.max(np.abs(scores.logprobs - want_lp)) <= 1e-5
        np.testing.assert_array_equal(scores.argmax, want_arg)


@pytest.mark.parametrize(
    "options",
    [
        dict(batch_size=1),
        dict(token_budget=16),
        dict(token_budget=40, batch_size=2),
        dict(token_budget=100_000),
        dict(prefix_cache=False, batch_size=3),
        dict(prefix_cache=True, token_budget=30),
    ],
)
def test_invariant_to_batching_order_duplicates(causal_lm, oracle, options):
    queries, expected = oracle
    rng = random.Random(7)
    order = list(range(len(queries))) * 2  # every query twice
    rng.shuffle(order)
    shuffled = [queries[i] for i in order]
    got = causal_target_scores(causal_lm, shuffled, progress=False, **options)
    for i, scores in zip(order, got):
        assert np.max(np.abs(scores.logprobs - expected[i][0])) <= 1e-5


def test_distinct_work_runs_once_and_head_sees_target_rows_only(causal_lm):
    queries = make_queries(causal_lm.tokenizer)
    rows = []
    head = causal_lm.model.get_output_embeddings()
    handle = head.register_forward_hook(lambda m, args, out: rows.append(args[0].shape[:-1].numel()))
    seen = []
    try:
        results = dict(iter_causal(causal_lm, queries, lambda lg, q: seen.append(q) or lg.shape, progress=False))
    finally:
        handle.remove()
    distinct = set(queries)
    assert len(seen) == len(distinct)  # the duplicate query was not recomputed
    assert sum(rows) == sum(len(q.target_ids) for q in distinct)  # no logits for prefix positions
    assert sorted(results) == list(range(len(queries)))
    assert all(results[i] == (len(q.target_ids), head.weight.shape[0]) for i, q in enumerate(queries))


def test_fallback_full_logits_path_agrees(causal_lm, oracle):
    queries, expected = oracle
    plain = dataclasses.replace(causal_lm, gather_head=False)
    got = causal_target_scores(plain, queries, progress=False)
    for (want, _), scores in zip(expected, got):
        assert np.max(np.abs(scores.logprobs - want)) <= 1e-5


@pytest.mark.parametrize("prefix_cache", [False, True])
def test_only_passes_with_a_cache_send_a_padding_mask(causal_lm, oracle, prefix_cache):
    """A plain right-padded pass goes without a padding mask (causal attention keeps the pads out of
    every real token's view), a pass that builds or reads a cached prefix carries its 2-D mask, and
    the scores equal the per-query oracle either way."""
    queries, expected = oracle
    base = causal_lm.model.base_model
    seen: list[tuple[bool, bool]] = []  # (mask sent, cache built or read)
    handle = base.register_forward_pre_hook(
        lambda _m, _a, kwargs: seen.append((kwargs.get("attention_mask") is not None, bool(kwargs.get("use_cache")))),
        with_kwargs=True)
    try:
        got = causal_target_scores(causal_lm, queries, prefix_cache=prefix_cache, progress=False)
    finally:
        handle.remove()
    assert seen and all(masked == cached for masked, cached in seen), seen
    assert any(not cached for _, cached in seen) or prefix_cache, seen
    assert any(cached for _, cached in seen) == prefix_cache, seen
    for (want, _), scores in zip(expected, got):
        assert np.max(np.abs(scores.logprobs - want)) <= 1e-5


def test_empty_target_gets_empty_logits(causal_lm):
    bos = causal_lm.tokenizer.bos_token_id
    [(index, shape)] = list(iter_causal(causal_lm, [CausalQuery((bos,), ())], lambda lg, q: lg.shape, progress=False))
    assert index == 0 and shape[0] == 0


def test_bfloat16_reduce_receives_float32(tiny_llama_dir):
    lm = load_lm(tiny_llama_dir, device="cpu", dtype="bfloat16")
    assert lm.dtype == torch.bfloat16 and next(lm.model.parameters()).dtype == torch.bfloat16
    q = make_queries(lm.tokenizer)[0]
    [dtype] = [d for _, d in iter_causal(lm, [q], lambda lg, _: lg.dtype, progress=False)]
    assert dtype == torch.float32


def test_errors(causal_lm, tiny_bert_dir):
    bos = causal_lm.tokenizer.bos_token_id
    with pytest.raises(ValueError, match="empty prefix"):
        iter_causal(causal_lm, [CausalQuery((), (1, 2))], lambda lg, q: 0)
    too_long = CausalQuery((bos,) * causal_lm.max_length, (5, 6))
    with pytest.raises(ValueError, match="more than"):
        iter_causal(causal_lm, [too_long], lambda lg, q: 0)
    masked = load_lm(tiny_bert_dir, device="cpu")
    with pytest.raises(ValueError, match="needs a causal LM"):
        iter_causal(masked, [CausalQuery((1,), (2,))], lambda lg, q: 0)


CPU_ALLOCATION_FAILURE = ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
                          "you tried to allocate 8589934592 bytes. Error code 12 (Cannot allocate memory)")


@pytest.mark.parametrize("failure", [lambda: torch.OutOfMemoryError("CUDA out of memory (simulated)"),
                                     lambda: RuntimeError(CPU_ALLOCATION_FAILURE)], ids=["cuda", "cpu"])
def test_out_of_memory_backoff_gives_same_results(failure, causal_lm, oracle):
    """A batch of more than 2 rows 'runs out of memory' (on a GPU, or torch's CPU allocator failing
    with its own RuntimeError): the engine halves it and still agrees."""
    queries, expected = oracle
    # Four equal-length plain queries (distinct 2-token prefixes): one batch of 4 rows under any
    # padding bound, so a batch of more than 2 rows is sure to be tried.
    bos = causal_lm.tokenizer.bos_token_id
    target = tuple(causal_lm.tokenizer(SENTENCES[1])["input_ids"])
    same = [CausalQuery((bos, 10 + k), target) for k in range(4)]
    queries = queries + same
    expected = expected + [naive_logprobs(causal_lm.model, q) for q in same]
    seen_sizes = []

    def fake_oom(module, args, kwargs):
        ids = kwargs.get("input_ids")
        rows = (ids if ids is not None else args[0]).shape[0]
        seen_sizes.append(rows)
        if rows > 2:
            raise failure()

    base = causal_lm.model.base_model
    handle = base.register_forward_pre_hook(fake_oom, with_kwargs=True)
    try:
        got = causal_target_scores(causal_lm, queries, token_budget=10_000, progress=False)
    finally:
        handle.remove()
    assert max(seen_sizes) > 2  # the big batch was tried, then split
    for (want, _), scores in zip(expected, got):
        assert np.max(np.abs(scores.logprobs - want)) <= 1e-5


def test_progress_bar_switch(causal_lm, capsys):
    queries = make_queries(causal_lm.tokenizer)
    causal_target_scores(causal_lm, queries, progress=False)
    assert "scoring-test" not in capsys.readouterr().err
    causal_target_scores(causal_lm, queries, progress=True, desc="scoring-test")
    assert "scoring-test" in capsys.readouterr().err


def skewed_queries(tokenizer) -> list[CausalQuery]:
    """One long target among short ones, plain and behind a shared prefix (the Shannon score's shape)."""
    bos = tokenizer.bos_token_id
    ids = [tuple(tokenizer(s)["input_ids"]) for s in SENTENCES]
    long = ids[4] * 3
    doc = (bos,) + ids[0] + ids[2]
    plain = [CausalQuery((bos,), long)] + [CausalQuery((bos,), ids[k][: 3 + k]) for k in range(4)]
    cached = [CausalQuery(doc, long)] + [CausalQuery(doc, ids[k][: 2 + k]) for k in range(4)]
    return plain + cached


@pytest.fixture(scope="module")
def skewed_oracle(causal_lm):
    queries = skewed_queries(causal_lm.tokenizer)
    return queries, [naive_logprobs(causal_lm.model, q) for q in queries]


@pytest.mark.parametrize("prefix_cache", [True, False])
def test_padding_bounded_against_real_tokens(causal_lm, skewed_oracle, prefix_cache, monkeypatch):
    """Every body pass of two or more rows holds at most (1 + PADDING_SLACK) x its real tokens
    (counted from outside the engine), and the numbers equal the naive loop."""
    import functools

    import nlgmetrics.engine.causal as causal
    from benchmarks.counting import count_work
    from nlgmetrics.engine.planning import PADDING_SLACK, plan_batches

    queries, expected = skewed_oracle
    # The workload needs the bound: planned by the token budget alone, it pads far more.
    with monkeypatch.context() as patch:
        patch.setattr(causal, "plan_batches", functools.partial(plan_batches, padding_slack=float("inf")))
        with count_work(causal_lm) as unbounded:
            causal_target_scores(causal_lm, queries, prefix_cache=prefix_cache, progress=False)
    assert unbounded.positions > 1.5 * unbounded.real
    with count_work(causal_lm) as counts:
        got = causal_target_scores(causal_lm, queries, prefix_cache=prefix_cache, progress=False)
    needed = sum(len(q.prefix_ids) + len(q.target_ids) - 1 for q in queries)
    if prefix_cache:  # the shared prefix (but its last token) is read once, not once per target
        needed -= (len(queries) // 2 - 1) * (len(queries[-1].prefix_ids) - 1)
    assert counts.real == needed and counts.forwards == len(counts.passes)
    assert counts.positions == sum(p.rows * p.width for p in counts.passes)
    assert counts.positions <= (1 + PADDING_SLACK) * counts.real
    assert counts.real == unbounded.real  # the same work, less padding
    for p in counts.passes:
        if p.rows > 1:
            assert p.rows * p.width <= (1 + PADDING_SLACK) * p.real
    for (want, argmax), scores in zip(expected, got):
        assert np.max(np.abs(scores.logprobs - want)) <= 1e-5
        np.testing.assert_array_equal(scores.argmax, argmax)


def test_replicated_cache_fallback_agrees(causal_lm, oracle, monkeypatch):
    """The deep-copy path (caches other than plain DynamicLayer lists) gives the same numbers, and
    neither path changes the prefix cache between batches (several batches per shared prefix)."""
    import nlgmetrics.engine.causal as causal

    queries, expected = oracle
    fast = causal_target_scores(causal_lm, queries, batch_size=1, progress=False)
    monkeypatch.setattr(causal, "_DynamicLayer", None)
    slow = causal_target_scores(causal_lm, queries, batch_size=1, progress=False)
    for (want, _), a, b in zip(expected, fast, slow):
        assert np.max(np.abs(a.logprobs - want)) <= 1e-5
        np.testing.assert_array_equal(a.logprobs, b.logprobs)


@pytest.mark.parametrize("prefix_cache", [False, True])
def test_attention_pairs_counted_are_the_causal_pairs_of_real_tokens(causal_lm, prefix_cache):
    """The benchmark's attention work: a query read alone is L = prefix + target - 1 real tokens,
    L(L+1)/2 causal (query, key) pairs; a cached prefix of c tokens shared by k targets is read
    once, so its c(c+1)/2 pairs count once instead of k times. Padding never counts."""
    from benchmarks.counting import count_work

    lm = causal_lm
    queries = skewed_queries(lm.tokenizer)
    distinct = list(dict.fromkeys(queries))
    expected = sum(L * (L + 1) // 2 for L in (len(q.prefix_ids) + len(q.target_ids) - 1 for q in distinct))
    if prefix_cache:
        groups: dict = {}
        for q in distinct:
            groups.setdefault(q.prefix_ids, []).append(q)
        for prefix, members in groups.items():
            if len(members) >= 2 and len(prefix) >= 2:
                c = len(prefix) - 1
                expected -= (len(members) - 1) * c * (c + 1) // 2
    with count_work(lm) as counts:
        causal_target_scores(lm, queries, prefix_cache=prefix_cache, progress=False)
    assert counts.positions > counts.real  # padding was there, and is not in the pairs
    assert counts.attention_pairs == expected


@pytest.mark.parametrize("prefix_cache", [True, False])
def test_sliding_window_behind_a_shared_prefix_equals_the_naive_loop(tiny_llama_dir, prefix_cache):
    """A Mistral with a 16-token window, one 40-token prefix shared by three targets longer than
    the window (one document, three summaries): the cached pass gets its masks from the model's
    own sliding-window cache and equals the naive loop (it crashed on mismatched mask sizes)."""
    from transformers import MistralConfig, MistralForCausalLM

    tokenizer = load_lm(str(tiny_llama_dir), device="cpu").tokenizer
    torch.manual_seed(0)
    config = MistralConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           num_key_value_heads=2, intermediate_size=64, max_position_embeddings=256,
                           sliding_window=16)
    model = MistralForCausalLM(config).eval()
    lm = load_lm(model, "causal", model_tokenizer=tokenizer)
    prefix = tuple(range(100, 140))
    queries = [CausalQuery(prefix, tuple(range(200 + 7 * k, 230 + 10 * k))) for k in range(3)]
    got = causal_target_scores(lm, queries, prefix_cache=prefix_cache, progress=False)
    for query, scores in zip(queries, got):
        want, argmax = naive_logprobs(model, query)
        assert np.max(np.abs(scores.logprobs - want)) <= 1e-5
        np.testing.assert_array_equal(scores.argmax, argmax)


def test_gathered_head_on_a_model_that_skips_its_base_models_forward():
    """OPT's head reads ``model.decoder`` directly, so a hook on its base model (OPTModel) never
    fires: the logits come back whole and must be gathered after the head, never read as if they
    were the gathered rows (which gave NaN, -inf or another example's numbers)."""
    import torch
    from transformers import OPTConfig, OPTForCausalLM

    from nlgmetrics.engine.heads import logits_at

    torch.manual_seed(0)
    config = OPTConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, ffn_dim=32,
                       word_embed_proj_dim=16, max_position_embeddings=32)
    model = OPTForCausalLM(config).eval()
    ids = torch.tensor([[5, 6, 7, 8, 9], [10, 11, 12, 13, 14]])
    rows, cols = torch.tensor([0, 1, 1]), torch.tensor([4, 0, 3])
    with torch.inference_mode():
        want = model(input_ids=ids).logits[rows, cols].float()
        got = logits_at(model, True, {"input_ids": ids}, rows, cols)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_packed_rows_equal_the_naive_loop(tiny_llama_dir, attention, segments_per_packed_row):
    """Several targets in one row behind a cached prefix, with transformers' mask in the form of
    each attention implementation (boolean for SDPA, additive float for eager): every target's
    numbers are the naive loop's, and rows did hold several targets."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, attn_implementation=attention)
    lm = load_lm(model, "causal", model_tokenizer=AutoTokenizer.from_pretrained(tiny_llama_dir))
    bos = lm.tokenizer.bos_token_id
    ids = [tuple(lm.tokenizer(s)["input_ids"]) for s in SENTENCES]
    doc = (bos,) + ids[0] + ids[2]
    # One long target and short ones that fit side by side in a row of its width.
    queries = [CausalQuery(doc, ids[4]), CausalQuery(doc, ids[1]), CausalQuery(doc, ids[3]),
               CausalQuery(doc, ids[2][:3]), CausalQuery(doc, ids[0][:2]), CausalQuery((bos,), ids[3])]
    got = causal_target_scores(lm, queries, progress=False)
    assert max(segments_per_packed_row) >= 2, segments_per_packed_row
    for query, scores in zip(queries, got):
        want, argmax = naive_logprobs(lm.model, query)
        assert np.max(np.abs(scores.logprobs - want)) <= 1e-5
        np.testing.assert_array_equal(scores.argmax, argmax)


@pytest.mark.parametrize("setting, allowed", [
    ({}, True),
    ({"sliding_window": 16}, False),             # a window shorter than the context
    ({"sliding_window": 4096}, True),            # a window the context never reaches
    ({"attention_chunk_size": 8}, False),
    ({"alibi": True}, False),
    ({"is_causal": False}, False),
    ({"model_type": "bloom"}, False),            # a family not checked with packed rows
])
def test_packed_rows_are_allowed_from_the_config(tiny_llama_dir, setting, allowed):
    from transformers import AutoModelForCausalLM

    from nlgmetrics.engine.packing import packing_allowed

    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir)
    for key, value in setting.items():
        setattr(model.config, key, value)
    assert packing_allowed(model, max_length=2048) is allowed
