"""Parity of nlgmetrics.shannon with the reference implementation, PyPI ``blanc`` 0.3.4 ``Shannon.go``
(and, at the end, with the paper's definition computed by a naive oracle).

Both sides get the same tiny GPT-2 weights, the same tokenizer and the same sentence splitter.
blanc's per-token log-likelihoods and hits are recorded from inside ``Shannon.go`` (a spy on
``Shannon.measure``), so every token is compared, not only the sums.

Known, documented differences (asserted below, so they cannot drift silently):
- blanc predicts the first token of each sentence from the start token alone (position 0 of the
  prompt's logits) and takes that token's argmax over the flattened logits of all prompt
  positions; we condition it on the whole prompt (the paper's definition). Every other token must
  match to 1e-4; blanc's first-token help/full values must equal *our* no-prompt value.
- sentences too long for the ``full`` pass: blanc slides a stale KV cache; we match the tokens
  that fit and only check the others are finite.

blanc's own code runs unchanged except that its ``softmax`` is computed in float64 (its model and
logits stay float32): its float32 softmax kernel moves log p of rare tokens by up to ~1e-4 in a way
that depends on the CPU's vector instructions, which would make the reference number itself differ
between machines (see ``_Float64Softmax`` in tests/support/oracles/shannon_reference.py).

The harness (``BlancShannonHarness``, in tests/support/oracles/shannon_reference.py so that it imports without
pytest) is also used by benchmarks/speed/shannon.py, on CPU or CUDA, in float32 or bfloat16.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from nlgmetrics.core.sentences import split_sentences
from tests.support.oracles.shannon_reference import BlancShannonHarness
from tests.support.shannon_texts import DOC_A, DOC_B, SUMM_A1, SUMM_A2, SUMM_B
from tests.support.shannon_texts import column as _col
from tests.support.shannon_texts import score as _score

TOL = 1e-4

# ----------------------------------------------------------------------------------------------
# Fixtures: texts and a model that predicts some tokens right.

SHORT_DOC = "Jack drove his minivan to the bazaar. He bought milk and honey for his large family."
MULTI_DOC = (
    "The city council met on Monday to discuss the new park. Residents asked for more trees, "
    "a playground and a quiet area for reading. The mayor said the plan would cost two million "
    "dollars. Some members of the council wanted to spend the money on roads instead. After a "
    "long debate, the council voted to build the park, and work will start in the spring."
)
LONG_DOC = " ".join(
    f"In the year {1990 + i}, the team of the village played {i + 2} games, and the coach said "
    f"that the season was {'good' if i % 2 else 'hard'} for the players and the town."
    for i in range(14)
)
# One sentence with no full stop: longer than half the tiny model's context (256 positions), so
# the ``full`` pass overflows, and longer than 256 - 1 - len(summary) so blanc truncates it.
RUN_ON_DOC = "The story begins here. " + " ".join(
    f"the river and the town of the valley of the north {i}," for i in range(28)
) + " and it ends."

SUMMARIES = {
    "short": "Jack bought milk and honey.",
    "multi": "The council voted to build a park that costs two million dollars.",
    "long": "The village team played many games, some good and some hard.",
    "run_on": "A river and a town in the north.",
}
CASES = [
    (SHORT_DOC, SUMMARIES["short"]),
    (SHORT_DOC, SUMMARIES["multi"]),        # unrelated summary
    (MULTI_DOC, SUMMARIES["multi"]),
    (LONG_DOC, SUMMARIES["long"]),
]

# Tokens whose output rows we inflate in the predictor model (common in the texts above).
_PREDICTED_WORDS = [" the", " and", " of", ",", ".", " a"]


@pytest.fixture(scope="session")
def predictor_gpt2_dir(tiny_gpt2_dir, tmp_path_factory) -> Path:
    """Tiny GPT-2 whose (untied) LM head strongly favours six frequent tokens.

    Random weights almost never predict the right token among 49k, so BLANC-Shannon's cells
    S01/S10 would be 0 and compare nothing. Inflating six output rows makes the argmax one of these
    six frequent tokens, chosen by the context: some predictions are right, and the summary in the
    prompt flips some of them both ways.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2Config, GPT2LMHeadModel

    source = AutoModelForCausalLM.from_pretrained(str(tiny_gpt2_dir))
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_gpt2_dir))
    config = GPT2Config.from_pretrained(str(tiny_gpt2_dir))
    config.tie_word_embeddings = False
    model = GPT2LMHeadModel(config)
    state = source.state_dict()
    state["lm_head.weight"] = state["transformer.wte.weight"].clone()
    model.load_state_dict(state, strict=False)
    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        model.lm_head.weight.copy_(state["transformer.wte.weight"])
        for word in _PREDICTED_WORDS:
            (token_id,) = tokenizer(word, add_special_tokens=False)["input_ids"]
            model.lm_head.weight[token_id] = torch.randn(config.n_embd, generator=generator)
    out = tmp_path_factory.mktemp("predictor-gpt2")
    model.eval().save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out


# ----------------------------------------------------------------------------------------------
# Comparison helpers.


def _ours(model_dir, docs, summs, **kwargs):
    """Our scores of (document, summary) pairs: shannon_score takes the summaries first."""
    from nlgmetrics.shannon import shannon_score

    return shannon_score(summs, docs, model=str(model_dir), progress=False,
                         explain=True, **kwargs)


def _split_by_sentence(values, lengths):
    out, start = [], 0
    for n in lengths:
        out.append(np.asarray(values[start:start + n]))
        start += n
    return out


def _compare_pair(ours, i, blanc_output, calls, *, base_first_exact=True, fit=None):
    """Token-by-token comparison of example ``i`` of ``ours`` with one blanc ``go`` call.

    Returns the S table of blanc restricted to non-first tokens and ours likewise, plus the
    first-token differences of the help pass (to assert the documented quirk).
    """
    ll_base, ll_help, ll_full, s_blanc, n_doc, n_summ = blanc_output
    detail = ours.token_scores[i]
    assert ours.num_doc_tokens[i] == n_doc
    assert ours.num_summary_tokens[i] == n_summ
    assert len(calls) == 3 * len(detail.sentence_lengths)
    # Harness sanity: the recorded calls add up to blanc's own totals and S table.
    assert math.isclose(sum(sum(c[2]) for c in calls[0::3]), ll_base, abs_tol=1e-9)
    assert math.isclose(sum(sum(c[2]) for c in calls[1::3]), ll_help, abs_tol=1e-9)
    assert math.isclose(sum(sum(c[2]) for c in calls[2::3]), ll_full, abs_tol=1e-9)
    recorded_s = [[0, 0], [0, 0]]
    for base_call, help_call in zip(calls[0::3], calls[1::3]):
        for b, h in zip(base_call[3], help_call[3]):
            recorded_s[b][h] += 1
    assert recorded_s == s_blanc

    lengths = detail.sentence_lengths
    ours_tokens = _split_by_sentence(detail.token_ids, lengths)
    ours_lp = {k: _split_by_sentence(getattr(detail, f"{k}_logprobs"), lengths)
               for k in ("base", "help", "full")}
    ours_ok = {k: _split_by_sentence(getattr(detail, f"{k}_correct"), lengths)
               for k in ("base", "help")}
    s_ours_rest, s_blanc_rest = [[0, 0], [0, 0]], [[0, 0], [0, 0]]
    first_token_gaps = []
    for j, n in enumerate(lengths):
        base_call, help_call, full_call = calls[3 * j: 3 * j + 3]
        assert list(ours_tokens[j]) == base_call[0]            # same (truncated) sentence ids
        blanc_lp = {"base": np.array(base_call[2]), "help": np.array(help_call[2]),
                    "full": np.array(full_call[2])}
        upto = n if fit is None else min(n, fit(j))
        for k in ("base", "help", "full"):
            start = 0 if (k == "base" and base_first_exact) else 1
            stop = upto if k == "full" else n
            np.testing.assert_allclose(ours_lp[k][j][start:stop], blanc_lp[k][start:stop],
                                       atol=TOL, rtol=0, err_msg=f"{k} sentence {j}")
            assert np.all(np.isfinite(ours_lp[k][j]))
        # The documented quirk: blanc's first help/full token ignores the prompt, so it equals
        # our no-help (start token only) value when there is no upstream context.
        if base_first_exact:
            for k in ("help", "full"):
                assert abs(blanc_lp[k][0] - ours_lp["base"][j][0]) <= TOL
            first_token_gaps.append(abs(ours_lp["help"][j][0] - blanc_lp["help"][0]))
        b_ok, h_ok = np.array(base_call[3]), np.array(help_call[3])
        first = 0 if base_first_exact else 1
        np.testing.assert_array_equal(ours_ok["base"][j][first:], b_ok[first:])
        np.testing.assert_array_equal(ours_ok["help"][j][1:], h_ok[1:])
        for b, h in zip(b_ok[1:], h_ok[1:]):
            s_blanc_rest[b][h] += 1
        for b, h in zip(ours_ok["base"][j][1:], ours_ok["help"][j][1:]):
            s_ours_rest[int(b)][int(h)] += 1
    if base_first_exact and fit is None:
        # Document totals: ll_base equal; ll_help / ll_full equal once the first token of each
        # sentence (the documented difference) is taken out of both sides.
        assert abs(ours.scores["ll_base"][i] - ll_base) <= TOL
        for k, theirs_total in (("help", ll_help), ("full", ll_full)):
            ours_rest = ours.scores[f"ll_{k}"][i] - sum(lp[0] for lp in ours_lp[k])
            theirs_rest = theirs_total - sum(c[2][0] for c in calls[{"help": 1, "full": 2}[k]::3])
            assert abs(ours_rest - theirs_rest) <= TOL, k
    return s_ours_rest, s_blanc_rest, first_token_gaps


# ----------------------------------------------------------------------------------------------
# Tests.


@pytest.fixture(scope="module")
def blanc_tiny(tiny_gpt2_dir):
    return BlancShannonHarness(tiny_gpt2_dir, softmax_float64=True)


def test_parity_with_blanc_tiny_random_gpt2(tiny_gpt2_dir, blanc_tiny):
    docs, summs = zip(*CASES)
    ours = _ours(tiny_gpt2_dir, list(docs), list(summs))
    gaps = []
    for i, (doc, summ) in enumerate(CASES):
        output, calls = blanc_tiny.go(doc, summ)
        _, _, g = _compare_pair(ours, i, output, calls)
        gaps += g
    assert ours.num_sentences[3] == 14 and ours.num_doc_tokens[3] > 300
    # Our first help token really uses the prompt (the quirk is real, not a no-op).
    assert max(gaps) > 1e-3


def test_parity_blanc_shannon_cells_with_predicting_model(predictor_gpt2_dir):
    harness = BlancShannonHarness(predictor_gpt2_dir, softmax_float64=True)
    cases = CASES + [(MULTI_DOC, SUMMARIES["long"]), (LONG_DOC, SUMMARIES["multi"])]
    docs, summs = zip(*cases)
    ours = _ours(predictor_gpt2_dir, list(docs), list(summs))
    total_ours, total_blanc = np.zeros((2, 2), int), np.zeros((2, 2), int)
    for i, (doc, summ) in enumerate(cases):
        output, calls = harness.go(doc, summ)
        s_ours, s_blanc, _ = _compare_pair(ours, i, output, calls)
        assert s_ours == s_blanc
        total_ours += np.array(s_ours)
        total_blanc += np.array(s_blanc)
        # Our S counts all tokens; it differs from the non-first-token table only by the firsts.
        assert np.array(ours.s[i]).sum() == output[4]
    # The cells compared are not degenerate: the test could fail on any of them.
    assert total_blanc[0][1] > 0 and total_blanc[1][0] > 0 and total_blanc[1][1] > 0
    assert np.any(np.array(ours.scores["blanc_shannon"]) != 0.0)


def test_parity_long_sentence_truncation_and_overflow(tiny_gpt2_dir, blanc_tiny):
    """A sentence longer than the context budget: same truncation, same tokens where they fit."""
    ours = _ours(tiny_gpt2_dir, [RUN_ON_DOC], [SUMMARIES["run_on"]])
    output, calls = blanc_tiny.go(RUN_ON_DOC, SUMMARIES["run_on"])
    max_length = 256
    lengths = ours.token_scores[0].sentence_lengths
    assert lengths[1] == max_length - 1 - ours.num_summary_tokens[0]   # truncated like blanc

    def fit(j):  # full pass: tokens scored with the whole prompt <start> + sentence
        return max_length - (1 + lengths[j]) + 1

    assert fit(1) < lengths[1]   # this case really overflows
    _compare_pair(ours, 0, output, calls, fit=fit)
    assert math.isfinite(ours.scores["shannon_score"][0])


def test_parity_with_upstream_context(tiny_gpt2_dir):
    """num_upstream=1 (blanc's slice equals ours for k=1); base first tokens also see a prompt."""
    harness = BlancShannonHarness(tiny_gpt2_dir, num_upstream=1, softmax_float64=True)
    ours = _ours(tiny_gpt2_dir, [MULTI_DOC], [SUMMARIES["multi"]], num_upstream=1)
    output, calls = harness.go(MULTI_DOC, SUMMARIES["multi"])
    _compare_pair(ours, 0, output, calls, base_first_exact=False)
    assert "|num_upstream:1|" in ours.signature


def test_upstream_two_uses_available_sentences_unlike_blanc(tiny_gpt2_dir):
    """num_upstream=2: blanc's sents[i-2:i] is empty for sentence 1; ours uses sentence 0."""
    harness = BlancShannonHarness(tiny_gpt2_dir, num_upstream=2, softmax_float64=True)
    _, calls = harness.go(MULTI_DOC, SUMMARIES["multi"])
    first_sentence = calls[0][0]
    assert calls[3][1] == []                        # blanc: no context for sentence 1
    ours = _ours(tiny_gpt2_dir, [MULTI_DOC], [SUMMARIES["multi"]], num_upstream=2)
    ours_1 = _ours(tiny_gpt2_dir, [MULTI_DOC], [SUMMARIES["multi"]], num_upstream=0)
    lengths = ours.token_scores[0].sentence_lengths
    assert lengths[0] == len(first_sentence)
    sentence_1 = slice(lengths[0], lengths[0] + lengths[1])
    # Sentence 1 is scored with sentence 0 as context: its base values change.
    assert not np.allclose(ours.token_scores[0].base_logprobs[sentence_1],
                           ours_1.token_scores[0].base_logprobs[sentence_1])


# ----------------------------------------------------------------------------------------------
# The paper's definition against a naive oracle.


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
    result = _score(tiny_gpt2_dir, summs, docs)
    for i, (doc, summ) in enumerate(zip(docs, summs)):
        totals, s = _oracle(tiny_gpt2_dir, doc, summ)
        assert abs(_col(result, "ll_base")[i] - totals["base"]) < 1e-4
        assert abs(_col(result, "ll_help")[i] - totals["help"]) < 1e-4
        assert abs(_col(result, "ll_full")[i] - totals["full"]) < 1e-4
        assert result.s[i] == s
        expected = (totals["help"] - totals["base"]) / (totals["full"] - totals["base"])
        assert abs(_col(result, "shannon_score")[i] - expected) < 1e-5
        assert abs(_col(result, "information_difference")[i] - (totals["help"] - totals["base"])) < 1e-4
        assert result.num_sentences[i] == len(split_sentences(doc))
