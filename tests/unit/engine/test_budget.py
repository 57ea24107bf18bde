"""Token budgets and memory: the budget counts a pass's logits, and ``token_budget="auto"``.

- plans of every vocabulary up to 65,536 are exactly the plans of the token-only planner (ported
  below, as it was, as the oracle); beyond, a pass's logits stay within ``budget x 65,536`` values;
- the engine keeps a 262k-vocabulary model's passes within that bound, with the same numbers;
- "auto" sizes the budget from the free memory, every LM metric accepts it with the numbers of its
  default budget and the same signature, and a refusal names it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlgmetrics.core.refusals import OptionError
from nlgmetrics.core.validation import TOKEN_BUDGET_RULE, check_engine_options, resolve_token_budget
from nlgmetrics.engine import budget as budget_module
from nlgmetrics.engine.budget import (
    MAX_AUTO_BUDGET,
    MIN_AUTO_BUDGET,
    PassCost,
    auto_token_budget,
    budget_for,
    logits_width,
    pass_cost,
)
from nlgmetrics.engine.planning import LOGITS_VOCABULARY, PADDING_SLACK, head_row_allowance, pack_segments, plan_batches

SUMMARIES = ["Jack bought apples.", "Jill sold pears."]
DOCUMENTS = ["Jack went to the market. He bought apples and pears there.",
             "Jill went to the market. She sold pears and apples there."]


# ------------------------------------------------------------------------------------------------
# The oracle: the planners as they were when the budget counted tokens only (commit 54384e9).


def _old_plan_batches(lengths: Sequence[int], token_budget: int, batch_size: int | None, *, context: int = 0,
                      padding_slack: float = PADDING_SLACK) -> list[list[int]]:
    limit = 1.0 + padding_slack
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    width = real = 0
    for i in order:
        length = max(int(lengths[i]), 1)
        if current:
            rows, new_width = len(current) + 1, max(width, length)
            too_many = batch_size is not None and len(current) >= batch_size
            over_budget = rows * (context + new_width) > token_budget
            too_padded = rows * new_width > limit * (real + length)
            if too_many or over_budget or too_padded:
                batches.append(current)
                current, width, real = [], 0, 0
        current.append(i)
        width = max(width, length)
        real += length
    if current:
        batches.append(current)
    return batches


def _old_pack_segments(lengths: Sequence[int], token_budget: int, batch_size: int | None, *, context: int = 0,
                       padding_slack: float = PADDING_SLACK) -> list[list[list[int]]]:
    remaining = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    size = {i: max(int(lengths[i]), 1) for i in remaining}
    batches: list[list[list[int]]] = []
    while remaining:
        width = size[remaining[0]]
        max_rows = max(1, token_budget // (context + width))
        rows: list[list[int]] = []
        room: list[int] = []
        count = 0
        waiting: list[int] = []
        for position, i in enumerate(remaining):
            if batch_size is not None and count >= batch_size:
                waiting.extend(remaining[position:])
                break
            fit = next((r for r, free in enumerate(room) if free >= size[i]), None)
            if fit is not None:
                rows[fit].append(i)
                room[fit] -= size[i]
            elif len(rows) < max_rows:
                rows.append([i])
                room.append(width - size[i])
            else:
                waiting.append(i)
                continue
            count += 1
        real = sum(size[i] for row in rows for i in row)
        while len(rows) > 1 and len(rows) * width > (1 + padding_slack) * real:
            sparse = rows.pop()
            real -= sum(size[i] for i in sparse)
            waiting.extend(sparse)
        batches.append(rows)
        remaining = sorted(waiting, key=lambda i: (-size[i], i))
    return batches


@st.composite
def _workloads(draw, max_vocab: int):
    """Lengths with head rows of at most each length (as every engine caller has), a budget, a
    batch cap, a cached context, a slack and a vocabulary up to ``max_vocab``."""
    lengths = draw(st.lists(st.integers(1, 200), max_size=50))
    heads = [draw(st.integers(0, length)) for length in lengths]
    return dict(lengths=lengths, heads=heads, budget=draw(st.integers(1, 3000)),
                batch_size=draw(st.one_of(st.none(), st.integers(1, 12))), context=draw(st.integers(0, 60)),
                slack=draw(st.sampled_from([0.0, PADDING_SLACK, 1.0, float("inf")])),
                vocab=draw(st.one_of(st.sampled_from([1, 30_522, 49_152, 50_257, 65_536]), st.integers(1, max_vocab))))


@settings(max_examples=400, deadline=None)
@given(_workloads(max_vocab=LOGITS_VOCABULARY))
def test_plans_up_to_a_65536_vocabulary_are_the_token_only_plans(case):
    """GPT-2, SmolLM2, BERT and the tiny test models plan exactly as before, so their numbers (which
    in bf16 depend on the batching) do not move."""
    common = dict(context=case["context"], padding_slack=case["slack"])
    new = dict(head_rows=case["heads"], vocab_size=case["vocab"], **common)
    assert (plan_batches(case["lengths"], case["budget"], case["batch_size"], **new)
            == _old_plan_batches(case["lengths"], case["budget"], case["batch_size"], **common))
    assert (pack_segments(case["lengths"], case["budget"], case["batch_size"], **new)
            == _old_pack_segments(case["lengths"], case["budget"], case["batch_size"], **common))


@settings(max_examples=300, deadline=None)
@given(_workloads(max_vocab=2**20))
def test_every_pass_of_two_or_more_keeps_its_logits_within_the_budget(case):
    lengths, heads, budget, vocab = case["lengths"], case["heads"], case["budget"], case["vocab"]
    options = dict(context=case["context"], padding_slack=case["slack"], head_rows=heads, vocab_size=vocab)
    bound = budget * LOGITS_VOCABULARY
    batches = plan_batches(lengths, budget, case["batch_size"], **options)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(sum(heads[i] for i in b) * max(vocab, LOGITS_VOCABULARY) <= bound for b in batches if len(b) > 1)
    packed = [[i for row in rows for i in row]
              for rows in pack_segments(lengths, budget, case["batch_size"], **options)]
    assert sorted(i for b in packed for i in b) == list(range(len(lengths)))
    assert all(sum(heads[i] for i in b) * max(vocab, LOGITS_VOCABULARY) <= bound for b in packed if len(b) > 1)


def _largest_pass_logits_bytes(vocab: int, budget: int, planner) -> int:
    """The float32 logits of the largest pass of 400 sequences of 40 tokens, 39 of them scored
    (a causal query behind a one-token prefix)."""
    lengths, heads = [40] * 400, [39] * 400
    plan = planner(lengths, budget, None, head_rows=heads, vocab_size=vocab)
    flat = [[i for row in batch for i in row] if batch and isinstance(batch[0], list) else batch for batch in plan]
    return max(sum(heads[i] for i in batch) for batch in flat) * vocab * 4


@pytest.mark.parametrize("planner", [plan_batches, pack_segments])
@pytest.mark.parametrize("budget", [2048, 8192])
def test_a_262k_vocabulary_gets_the_logits_memory_of_a_65k_one(planner, budget):
    """The issue's case: at one budget, Gemma 3's 262,144 logits per row made ~5x SmolLM2's bytes."""
    at_65k = _largest_pass_logits_bytes(65_536, budget, planner)
    at_262k = _largest_pass_logits_bytes(262_144, budget, planner)
    at_49k = _largest_pass_logits_bytes(49_152, budget, planner)
    # The same bytes within one sequence's rows (a pass takes whole sequences), never above the bound.
    assert abs(at_262k - at_65k) <= 39 * 262_144 * 4 and at_262k <= budget * LOGITS_VOCABULARY * 4
    assert at_49k <= at_65k <= budget * LOGITS_VOCABULARY * 4
    assert head_row_allowance(budget, 262_144) == budget // 4


# ------------------------------------------------------------------------------------------------
# The engine: a 262k vocabulary's passes, and the numbers.


def _big_vocabulary_causal_lm(tokenizer_dir, vocab: int):
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from nlgmetrics.engine import load_lm

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=vocab, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
                         tie_word_embeddings=True)
    model = LlamaForCausalLM(config).eval()
    return load_lm(model, "causal", model_tokenizer=AutoTokenizer.from_pretrained(tokenizer_dir), device="cpu")


def _head_rows_per_pass(monkeypatch, module) -> list[int]:
    seen: list[int] = []
    real = module.logits_at

    def counting(model, gather_head, inputs, batch_index, position_index, **kwargs):
        seen.append(int(batch_index.numel()))
        return real(model, gather_head, inputs, batch_index, position_index, **kwargs)

    monkeypatch.setattr(module, "logits_at", counting)
    return seen


def test_causal_passes_of_a_262k_vocabulary_make_a_quarter_of_the_head_rows(monkeypatch, tiny_llama_dir):
    from nlgmetrics.engine import causal
    from nlgmetrics.engine.causal import CausalQuery, causal_target_scores

    lm = _big_vocabulary_causal_lm(tiny_llama_dir, 262_144)
    assert logits_width(lm.model) == 262_144
    rng = np.random.default_rng(0)
    plain = [CausalQuery((1,), tuple(int(t) for t in rng.integers(5, 500, size=int(rng.integers(6, 15)))))
             for _ in range(12)]
    shared = (1, 7, 8, 9, 10)  # a cached prefix: its targets go the packed / behind-prefix path
    behind = [CausalQuery(shared, tuple(int(t) for t in rng.integers(5, 500, size=int(rng.integers(4, 12)))))
              for _ in range(10)]
    queries = plain + behind
    reference = causal_target_scores(lm, queries, token_budget=100_000, progress=False)
    seen = _head_rows_per_pass(monkeypatch, causal)
    got = causal_target_scores(lm, queries, token_budget=64, progress=False)
    # 64 x 65,536 / 262,144 = 16 head rows a pass; every query has at most 14 targets, so none runs
    # alone by necessity. The token-only budget put up to ~60 rows into a pass.
    assert seen and max(seen) <= 16, seen
    for a, b in zip(got, reference, strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-5)


def test_masked_passes_of_a_262k_vocabulary_make_a_quarter_of_the_head_rows(monkeypatch, tiny_bert_dir):
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from nlgmetrics.engine import load_lm, masked
    from nlgmetrics.engine.masked import MaskedQuery, iter_masked

    torch.manual_seed(0)
    config = BertConfig(vocab_size=262_144, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                        num_attention_heads=2, max_position_embeddings=128)
    lm = load_lm(BertForMaskedLM(config).eval(), "masked", model_tokenizer=AutoTokenizer.from_pretrained(tiny_bert_dir),
                 device="cpu")
    ids = tuple(range(100, 130))
    queries = ([MaskedQuery(ids, tuple(range(1 + k, 29, 3))) for k in range(3)]
               + [MaskedQuery(ids[:20], tuple(range(1 + k, 19, 2))) for k in range(2)])

    def run(budget):
        return dict(iter_masked(lm, queries, lambda logits, q: logits.clone(), token_budget=budget, progress=False))

    reference = run(100_000)
    seen = _head_rows_per_pass(monkeypatch, masked)
    got = run(128)  # 32 head rows a pass: the token-only budget took 4 queries, 37 rows
    assert seen and max(seen) <= 32, seen
    for index, logits in got.items():
        torch.testing.assert_close(logits, reference[index], rtol=0, atol=1e-5)


# ------------------------------------------------------------------------------------------------
# "auto"


def test_the_cost_model_counts_the_logits_of_at_most_65536_entries(tiny_gpt2_dir):
    from nlgmetrics.engine import load_lm

    lm = load_lm(tiny_gpt2_dir, "causal")
    cost = pass_cost(lm.model, torch.float32)
    vocab = logits_width(lm.model)
    assert vocab == lm.model.config.vocab_size and cost.logits == vocab * 4
    assert pass_cost(lm.model, torch.bfloat16).logits == vocab * (2 + 4)  # the head's bf16 rows + a float32 copy
    big = _big_vocabulary_causal_lm(tiny_gpt2_dir, 262_144)
    assert pass_cost(big.model, torch.float32).logits == LOGITS_VOCABULARY * 4


def test_auto_gives_a_smaller_budget_where_less_memory_is_free(tiny_gpt2_dir):
    from nlgmetrics.engine import load_lm

    lm = load_lm(tiny_gpt2_dir, "causal")
    per_token = pass_cost(lm.model, lm.dtype).per_token
    budgets = [auto_token_budget(lm, free_bytes=free) for free in (0, 4_000 * per_token, 20_000 * per_token, 10**15)]
    assert budgets == [MIN_AUTO_BUDGET, 1024, 8192, MAX_AUTO_BUDGET]
    # The largest power of two whose pass fits half the free memory.
    assert budget_for(PassCost(1000, 0, 0), 2 * 1000 * 4096) == 4096
    assert budget_for(PassCost(1000, 0, 0), 2 * 1000 * 4096 - 1) == 2048


def _numbers(scores) -> np.ndarray:
    """A result's scores (``{column: per-example values}``) as one float array, columns sorted."""
    return np.asarray([scores[name] for name in sorted(scores)], dtype=float)


@pytest.mark.parametrize("metric", ["infolm", "blanc_help", "blanc_tune", "shannon_score", "fflm"])
def test_every_lm_metric_accepts_auto_with_its_numbers_and_signature(metric, monkeypatch, tiny_bert_dir, tiny_gpt2_dir):
    """"auto" on a small free memory plans with 512 tokens, on a large one with 65,536: the scores
    and the signature are those of the default budget (float32), and the budget is not signed."""
    from nlgmetrics.blanc import blanc_help, blanc_tune
    from nlgmetrics.engine import causal, masked
    from nlgmetrics.fflm import fflm
    from nlgmetrics.infolm import infolm
    from nlgmetrics.shannon import shannon_score

    calls = {
        "infolm": lambda **o: infolm(SUMMARIES, [[d] for d in DOCUMENTS], model=tiny_bert_dir, progress=False, **o),
        "blanc_help": lambda **o: blanc_help(SUMMARIES, DOCUMENTS, model=str(tiny_bert_dir), progress=False, **o),
        "blanc_tune": lambda **o: blanc_tune(SUMMARIES, DOCUMENTS, model=str(tiny_bert_dir), progress=False,
                                             finetune_epochs=1, seed=3, **o),
        "shannon_score": lambda **o: shannon_score(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, progress=False, **o),
        "fflm": lambda **o: fflm(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, progress=False, **o),
    }
    default = calls[metric]()
    budgets: list[int] = []
    for module in (causal, masked):
        real = module.plan_batches

        def recording(lengths, token_budget=8192, *args, _real=real, **kwargs):
            budgets.append(token_budget)
            return _real(lengths, token_budget, *args, **kwargs)

        monkeypatch.setattr(module, "plan_batches", recording)
    for free, expected in ((1, MIN_AUTO_BUDGET), (10**15, MAX_AUTO_BUDGET)):
        monkeypatch.setattr(budget_module, "free_memory", lambda device, _free=free: _free)
        budgets.clear()
        auto = calls[metric](token_budget="auto")
        assert budgets and set(budgets) == {expected}, (free, budgets)
        np.testing.assert_allclose(_numbers(auto.scores), _numbers(default.scores), rtol=0, atol=1e-5)
        assert auto.signature == default.signature


@pytest.mark.parametrize("bad", ["Auto", "max", 0, -1, 2.5, True])
def test_a_bad_budget_is_refused_naming_auto(bad):
    with pytest.raises(OptionError, match=r"positive integer, 'auto' or None") as caught:
        check_engine_options(bad, None)
    assert caught.value.refusal is TOKEN_BUDGET_RULE and "'auto'" in TOKEN_BUDGET_RULE.sentence()


def test_auto_is_kept_for_the_engine_to_size():
    assert check_engine_options("auto", None) == ("auto", None, None)
    assert resolve_token_budget("auto", 8192) == "auto" and resolve_token_budget(None, 2048) == 2048


def test_the_host_memory_reading_takes_the_cgroup_limit(tmp_path, monkeypatch):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n")
    assert budget_module._proc_mem_available(str(meminfo)) == 20_000_000 * 1024
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    (cgroup / "memory.max").write_text("max\n")
    assert budget_module._cgroup_room(str(cgroup)) is None
    (cgroup / "memory.max").write_text(f"{8 * 2**30}\n")
    (cgroup / "memory.current").write_text(f"{3 * 2**30}\n")
    assert budget_module._cgroup_room(str(cgroup)) == 5 * 2**30
    monkeypatch.setattr(budget_module, "_proc_mem_available", lambda: 20 * 2**30)
    monkeypatch.setattr(budget_module, "_cgroup_room", lambda: 5 * 2**30)
    assert budget_module.host_available_memory() == 5 * 2**30
    assert budget_module.free_memory(torch.device("cpu")) == 5 * 2**30


def test_auto_is_sized_once_per_call(monkeypatch, tiny_gpt2_dir):
    """One reading of the free memory per call (of several chunks), so every pass plans with one budget
    (the memory the call itself takes must not shrink its later passes)."""
    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    readings: list[int] = []

    def free(device):
        readings.append(1)
        return 10**15 // len(readings)  # a budget read twice would differ

    monkeypatch.setattr(budget_module, "free_memory", free)
    for metric in (shannon_score, fflm):
        readings.clear()
        metric(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, progress=False, token_budget="auto", chunk_size=1)
        assert len(readings) == 1, (metric.__name__, len(readings))
