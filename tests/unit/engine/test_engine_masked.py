"""Masked scoring against one plain full forward per masked copy."""

from __future__ import annotations

import copy
import dataclasses
import random

import pytest
import torch

from nlgmetrics.engine import MaskedQuery, iter_masked, load_lm

TEXTS = [
    "the cat sat on the mat.",
    "a summary of the document, short and sweet.",
    "hello",
    "the quick brown fox jumps over the lazy dog and keeps running far away.",
]


@pytest.fixture(scope="module")
def masked_lm(tiny_bert_dir):
    return load_lm(tiny_bert_dir, device="cpu")


@pytest.fixture(scope="module")
def queries(masked_lm) -> list[MaskedQuery]:
    out = []
    for text in TEXTS:
        ids = tuple(masked_lm.tokenizer(text)["input_ids"])
        for position in range(1, len(ids) - 1):  # InfoLM style: one position at a time
            out.append(MaskedQuery(ids, (position,)))
        out.append(MaskedQuery(ids, tuple(range(1, len(ids) - 1, 2))))  # BLANC style: every 2nd
    out.append(out[0])  # duplicate
    return out


def plain_forward(lm, query: MaskedQuery) -> torch.Tensor:
    """The oracle: mask the copy, run the whole model on it alone, read the masked rows."""
    ids = torch.tensor([query.input_ids])
    ids[0, list(query.mask_positions)] = lm.tokenizer.mask_token_id
    with torch.no_grad():
        return lm.model(input_ids=ids).logits[0, list(query.mask_positions)].float()


@pytest.fixture(scope="module")
def expected(masked_lm, queries):
    return [plain_forward(masked_lm, q) for q in queries]


@pytest.mark.parametrize(
    "options", [dict(), dict(batch_size=1), dict(token_budget=20), dict(token_budget=64, batch_size=3)]
)
def test_equals_plain_forward_under_any_batching_and_order(masked_lm, queries, expected, options):
    order = list(range(len(queries)))
    random.Random(len(options)).shuffle(order)
    got = dict(iter_masked(masked_lm, [queries[i] for i in order], lambda lg, q: lg.clone(), progress=False, **options))
    assert sorted(got) == list(range(len(queries)))
    for position, original in enumerate(order):
        assert got[position].dtype == torch.float32
        assert got[position].shape == expected[original].shape
        assert (got[position] - expected[original]).abs().max().item() <= 1e-5


def test_head_applied_only_at_masked_positions_and_distinct_once(masked_lm, queries):
    rows = []
    head = masked_lm.model.get_output_embeddings()
    handle = head.register_forward_hook(lambda m, args, out: rows.append(args[0].shape[:-1].numel()))
    calls = []
    try:
        list(iter_masked(masked_lm, queries, lambda lg, q: calls.append(q), progress=False))
    finally:
        handle.remove()
    distinct = set(queries)
    assert len(calls) == len(distinct) < len(queries)
    assert sum(rows) == sum(len(q.mask_positions) for q in distinct)


@pytest.mark.parametrize("options", [dict(), dict(batch_size=2)])
def test_work_counted_from_outside_is_the_distinct_queries_bidirectional_pairs(masked_lm, queries, options):
    """The benchmark counter on a masked LM: the real tokens of the distinct queries once each,
    every real token of a row attending to every real token of it, the head at masked rows only."""
    from benchmarks.counting import count_work

    distinct = list(dict.fromkeys(queries))
    with count_work(masked_lm) as counts:
        list(iter_masked(masked_lm, queries, lambda lg, q: None, progress=False, **options))
    assert counts.real == sum(len(q.input_ids) for q in distinct)
    assert counts.attention_pairs == sum(len(q.input_ids) ** 2 for q in distinct)
    assert counts.head_rows == sum(len(q.mask_positions) for q in distinct)
    assert counts.positions == sum(p.rows * p.width for p in counts.passes) > counts.real  # padding counted apart
    assert counts.forwards == len(counts.passes) >= (1 if not options else len(distinct) // 2)


def test_fallback_full_logits_path_agrees(masked_lm, queries, expected):
    plain = dataclasses.replace(masked_lm, gather_head=False)
    got = dict(iter_masked(plain, queries, lambda lg, q: lg.clone(), progress=False))
    for i, want in enumerate(expected):
        assert (got[i] - want).abs().max().item() <= 1e-5


def test_reduce_result_shared_by_duplicates(masked_lm, queries):
    out = dict(iter_masked(masked_lm, queries, lambda lg, q: lg.argmax(-1).tolist(), progress=False))
    assert out[len(queries) - 1] == out[0]


def test_errors(masked_lm, tiny_gpt2_dir):
    ids = tuple(masked_lm.tokenizer("the cat")["input_ids"])
    for bad, message in [
        (MaskedQuery(ids, ()), "masks no position"),
        (MaskedQuery(ids, (len(ids),)), "outside"),
        (MaskedQuery(ids, (1, 1)), "repeats"),
        (MaskedQuery((101,) * (masked_lm.max_length + 1), (1,)), "more than"),
    ]:
        with pytest.raises(ValueError, match=message):
            iter_masked(masked_lm, [bad], lambda lg, q: 0)
    causal = load_lm(tiny_gpt2_dir, device="cpu")
    with pytest.raises(ValueError, match="needs a masked LM"):
        iter_masked(causal, [MaskedQuery(ids, (1,))], lambda lg, q: 0)


def test_threads_sharing_a_model_do_not_mix(masked_lm, queries, expected):
    from concurrent.futures import ThreadPoolExecutor

    def score(part):
        return dict(iter_masked(masked_lm, [queries[i] for i in part], lambda lg, q: lg.clone(), progress=False, batch_size=2))

    parts = [list(range(0, len(queries), 2)), list(range(1, len(queries), 2))]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(score, parts * 2))
    for part, got in zip(parts * 2, results):
        for position, original in enumerate(part):
            assert (got[position] - expected[original]).abs().max().item() <= 1e-5


def test_bfloat16_reduce_receives_each_querys_rows_as_float32(tiny_bert_dir, queries):
    """Half-precision logits reach a reduce as float32, one query's rows each, equal to the plain
    bf16 forward's logits converted (the engine converts per query, not the whole batch)."""
    lm = load_lm(tiny_bert_dir, device="cpu", dtype="bfloat16")
    got = dict(iter_masked(lm, queries[:6], lambda logits, _q: logits.clone(), progress=False))
    for i, query in enumerate(queries[:6]):
        assert got[i].dtype == torch.float32 and got[i].shape[0] == len(query.mask_positions)
        torch.testing.assert_close(got[i], plain_forward(lm, query), atol=0.1, rtol=0.02)


# ------------------------------------------------------------------------------------------------
# Rotary scalings that depend on the pass's length (a ModernBERT with longrope or dynamic NTK).

THRESHOLD = 16
SCALED_ROPES = {
    "longrope": ({"rope_type": "longrope", "short_factor": [1.0, 1.5, 2.0, 3.0],
                  "long_factor": [3.0, 9.0, 27.0, 81.0], "original_max_position_embeddings": THRESHOLD}, 128),
    "dynamic": ({"rope_type": "dynamic", "factor": 4.0}, THRESHOLD),
}


@pytest.fixture(scope="module", params=sorted(SCALED_ROPES))
def scaled_rope_lm(request):
    """(LoadedLM taking up to 64 tokens, pristine model for the oracle): a tiny ModernBERT whose
    rotary frequencies switch regime past 16 positions."""
    from transformers import ModernBertConfig, ModernBertForMaskedLM

    from nlgmetrics.testing import load_test_tokenizer

    tokenizer = load_test_tokenizer("bert")
    rope, positions = SCALED_ROPES[request.param]
    rope = {**rope, "rope_theta": 10000.0}
    config = ModernBertConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        max_position_embeddings=positions, global_attn_every_n_layers=1, initializer_range=0.3,
        rope_parameters={"full_attention": dict(rope), "sliding_attention": dict(rope)},
        pad_token_id=tokenizer.pad_token_id, cls_token_id=tokenizer.cls_token_id, sep_token_id=tokenizer.sep_token_id,
        bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id, mask_token_id=tokenizer.mask_token_id)
    torch.manual_seed(0)
    pristine = ModernBertForMaskedLM(config).eval()
    lm = load_lm(copy.deepcopy(pristine), "masked", model_tokenizer=tokenizer, device="cpu")
    return dataclasses.replace(lm, max_length=64), pristine


def test_scaled_rope_queries_get_their_own_pass_under_any_batching(scaled_rope_lm):
    """Queries on both sides of the threshold (and at it) in one call, then one per batch, against
    each masked copy run alone on a fresh model. Padded into one batch, a short query took the
    frequencies of the batch's widest row (the long factors, or a grown dynamic base)."""
    lm, pristine = scaled_rope_lm
    rng = random.Random(0)
    queries = []
    for length in (5, 10, THRESHOLD, THRESHOLD + 1, 20, 20, 30):
        ids = (101, *(rng.randrange(1000, 20000) for _ in range(length - 2)), 102)
        queries += [MaskedQuery(ids, (1,)), MaskedQuery(ids, tuple(range(1, length - 1, 3)))]
    expected = []
    for query in queries:
        fresh = dataclasses.replace(lm, model=copy.deepcopy(pristine))  # dynamic NTK keeps state between passes
        expected.append(plain_forward(fresh, query))
    with torch.no_grad():  # a long pass first: grown dynamic frequencies must not reach the engine's
        lm.model(input_ids=torch.tensor([[101] * 50]))
    for options in (dict(), dict(batch_size=1), dict(token_budget=64)):
        got = dict(iter_masked(lm, queries, lambda lg, q: lg.clone(), progress=False, **options))
        for i, want in enumerate(expected):
            assert (got[i] - want).abs().max().item() <= 1e-5, (i, len(queries[i].input_ids), options)
