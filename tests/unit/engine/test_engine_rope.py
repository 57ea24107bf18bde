"""Rotary scalings that depend on the pass's length (longrope, dynamic NTK): each query gets the
numbers of one plain forward pass over its own ``prefix + target`` on a fresh model, however the
engine batches, packs or caches it. Oracle: that forward pass, run with transformers directly."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from types import SimpleNamespace as Config

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM, Phi3Config, Phi3ForCausalLM
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

from nlgmetrics.engine import CausalQuery, iter_causal, load_lm
from nlgmetrics.engine.causal import TARGET_LOGPROBS
from nlgmetrics.engine.rope import (
    LengthDependentRope,
    dynamic_rotary_modules,
    fresh_dynamic_rope,
    length_dependent_rope,
)
from nlgmetrics.fflm import fflm
from nlgmetrics.shannon import shannon_score
from nlgmetrics.testing import load_test_tokenizer
from tests.support.oracles.fflm_naive import naive_fflm

TOL = 1e-5
THRESHOLD = 32  # original_max_position_embeddings (longrope), max_position_embeddings (dynamic)
SHORT_FACTOR = [1.0, 1.5, 2.0, 3.0]
LONG_FACTOR = [3.0, 9.0, 27.0, 81.0]

ROPES = {
    # family, rope parameters, max_position_embeddings
    "phi3-longrope": ("phi3", {"rope_type": "longrope", "short_factor": SHORT_FACTOR, "long_factor": LONG_FACTOR}, 256),
    "llama-longrope": ("llama", {"rope_type": "longrope", "short_factor": SHORT_FACTOR, "long_factor": LONG_FACTOR,
                                 "original_max_position_embeddings": THRESHOLD}, 256),
    "llama-dynamic": ("llama", {"rope_type": "dynamic", "factor": 4.0}, THRESHOLD),
}


def build_rope_model(name: str, out_dir: Path) -> Path:
    """A tiny random causal LM with the rotary scaling ``ROPES[name]``, saved with the SmolLM2 tokenizer.
    A wide weight init makes attention depend on positions enough for a regime change to show."""
    family, rope, positions = ROPES[name]
    tokenizer = load_test_tokenizer("llama")
    shape = dict(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, intermediate_size=64, max_position_embeddings=positions,
                 initializer_range=0.3, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                 pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    torch.manual_seed(0)
    if family == "phi3":  # Phi-3 keeps original_max_position_embeddings beside the rope parameters
        config = Phi3Config(rope_parameters=dict(rope), original_max_position_embeddings=THRESHOLD, **shape)
        model = Phi3ForCausalLM(config)
    else:
        model = LlamaForCausalLM(LlamaConfig(rope_parameters=dict(rope), **shape))
    model.eval().save_pretrained(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))
    return out_dir


@pytest.fixture(scope="module", params=sorted(ROPES))
def rope_case(request, tmp_path_factory):
    """(name, model directory, LoadedLM taking up to 128 positions, pristine model for the oracle)."""
    path = build_rope_model(request.param, tmp_path_factory.mktemp(request.param))
    # A dynamic-NTK model's own context is its threshold; the engine scores past it all the same
    # (rotary positions have no table), so widen the limit to reach the long regime.
    lm = dataclasses.replace(load_lm(path, device="cpu"), max_length=128)
    pristine = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32).eval()
    return request.param, path, lm, pristine


def alone_logprobs(pristine: torch.nn.Module, query: CausalQuery) -> np.ndarray:
    """log p(target_i | prefix + target_<i) from one forward pass over ``prefix + target`` on a
    fresh copy of the model (dynamic NTK keeps state between passes), no padding, no cache."""
    model = copy.deepcopy(pristine)
    ids = torch.tensor([query.prefix_ids + query.target_ids])
    with torch.no_grad():
        logits = model(input_ids=ids, use_cache=False).logits[0].double()
    start = len(query.prefix_ids) - 1
    rows = torch.log_softmax(logits[start : start + len(query.target_ids)], -1)
    return rows[torch.arange(len(query.target_ids)), torch.tensor(query.target_ids)].numpy()


def engine_logprobs(lm, queries, **kwargs) -> list[np.ndarray]:
    out: list[np.ndarray | None] = [None] * len(queries)
    for index, (logprobs, _argmax) in iter_causal(lm, queries, TARGET_LOGPROBS, progress=False, **kwargs):
        out[index] = logprobs
    return out  # type: ignore[return-value]


def tokens(seed: int, n: int) -> tuple[int, ...]:
    return tuple(int(t) for t in np.random.default_rng(seed).integers(100, 5000, size=n))


def mixed_queries() -> list[CausalQuery]:
    """Short and long queries behind one shared prefix (cached and packed today), plain ones at
    every whole length around the threshold, and a long one beside short ones of other prefixes."""
    bos = (1,)
    doc = bos + tokens(1, 20)
    queries = [CausalQuery(doc, tokens(10 + n, n)) for n in (4, 9, 11, 12, 13, 30)]  # whole 24 .. 50
    queries += [CausalQuery(bos, tokens(20 + n, n - 1)) for n in range(THRESHOLD - 2, THRESHOLD + 4)]
    queries += [CausalQuery(bos + tokens(3, 5), tokens(4, 6)), CausalQuery(bos + tokens(3, 5), tokens(5, 50))]
    return queries


def test_mixed_call_gives_each_query_its_own_forward_pass(rope_case):
    """One call mixing short and long queries (and one query per call, batch_size=1) against the
    query's own forward pass. Before the regimes were kept apart, a short query padded or packed
    beside a long one, or a long target behind a prefix cached in a short pass, took the other
    regime's frequencies (|diff| far above float rounding here)."""
    _name, _path, lm, pristine = rope_case
    queries = mixed_queries()
    expected = [alone_logprobs(pristine, q) for q in queries]
    together = engine_logprobs(lm, queries)
    for i, (got, want) in enumerate(zip(together, expected)):
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=f"query {i} in one call")
    for i, query in enumerate(queries):
        [alone] = engine_logprobs(lm, [query], batch_size=1)
        np.testing.assert_allclose(alone, expected[i], rtol=0, atol=TOL, err_msg=f"query {i} alone")


def test_the_regime_change_is_visible_to_these_tests(rope_case):
    """The oracle itself: a long query's numbers differ between its own pass and a short-regime
    pass over its first tokens, so the test above can fail."""
    name, _path, _lm, pristine = rope_case
    query = CausalQuery((1,), tokens(7, THRESHOLD + 8))
    whole = alone_logprobs(pristine, query)
    short = alone_logprobs(pristine, CausalQuery((1,), query.target_ids[: THRESHOLD - 2]))
    assert np.max(np.abs(whole[: THRESHOLD - 2] - short)) > 100 * TOL, name


def test_dynamic_state_left_by_an_earlier_pass_does_not_leak(rope_case):
    """A model object that ran a longer pass before (a user's generate) scores as a fresh one,
    and the engine leaves the dynamic frequencies as loaded."""
    name, _path, lm, pristine = rope_case
    if "dynamic" not in name:
        pytest.skip("only dynamic NTK keeps state between passes")
    with torch.no_grad():
        lm.model(input_ids=torch.tensor([tokens(8, 90)]))  # grows the base for 90 positions
    queries = [CausalQuery((1,), tokens(9, THRESHOLD)), CausalQuery((1,), tokens(9, THRESHOLD - 1))]  # whole 33, 32
    for got, query in zip(engine_logprobs(lm, queries), queries):
        np.testing.assert_allclose(got, alone_logprobs(pristine, query), rtol=0, atol=TOL)
    rotary = lm.model.model.rotary_emb
    assert torch.equal(rotary.inv_freq, rotary.original_inv_freq)
    assert rotary.max_seq_len_cached == rotary.original_max_seq_len


@pytest.fixture(scope="module")
def phi3_longrope_dir(tmp_path_factory) -> Path:
    return build_rope_model("phi3-longrope", tmp_path_factory.mktemp("phi3-longrope"))


WORDS = ("river council bridge battery mayor rain storm road budget park tree city north south market "
         "harbour school train winter summer").split()


def words(seed: int, n: int) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(rng.choice(WORDS, size=n)).capitalize() + "."


def test_fflm_mixed_call_matches_the_authors_loop_and_each_example_alone(phi3_longrope_dir):
    """FFLM on Phi-3 longrope (original context 32): one call with short and long examples
    against the naive authors' loop (five forward passes per example, batch 1) and against each
    example scored alone."""
    documents = [words(1, 6), words(2, 30), words(3, 6), words(2, 30)]
    summaries = [words(4, 4), words(5, 5), words(6, 12), words(7, 14)]
    result = fflm(summaries, documents, model=phi3_longrope_dir, max_length=128, explain=True, progress=False)
    model = AutoModelForCausalLM.from_pretrained(str(phi3_longrope_dir), dtype=torch.float32).eval()
    tokenizer = load_lm(phi3_longrope_dir).tokenizer
    _lists, oracle = naive_fflm(model, tokenizer, documents, summaries, bos=tokenizer.bos_token_id, max_len=128)
    for i, (score, *_components) in enumerate(oracle):
        assert abs(result.scores["fflm"][i] - score) <= TOL, (i, result.scores["fflm"][i], score)
        alone = fflm([summaries[i]], [documents[i]], model=phi3_longrope_dir, max_length=128, batch_size=1,
                     progress=False)
        assert abs(alone.scores["fflm"][0] - score) <= TOL, (i, alone.scores["fflm"][0], score)


def shannon_oracle(model: torch.nn.Module, tokenizer, document: str, summary: str) -> dict[str, list[np.ndarray]]:
    """Per sentence of ``document``, the log-probabilities of its tokens in base, help and full as
    the paper and blanc define them, each its own forward pass on a fresh model: ``<start> +
    sentence`` (base), ``<start> + summary + sentence`` (help), ``<start> + sentence + sentence``
    (full: the second copy). Nothing merged, nothing cached."""
    from nlgmetrics.core.sentences import split_sentences

    start = (tokenizer.convert_tokens_to_ids("<|endoftext|>"),)
    summary_ids = tuple(tokenizer(summary.strip(), add_special_tokens=False)["input_ids"])
    passes: dict[str, list[np.ndarray]] = {"base": [], "help": [], "full": []}
    for sentence in split_sentences(document):
        ids = tuple(tokenizer(sentence.strip(), add_special_tokens=False)["input_ids"])
        passes["base"].append(alone_logprobs(model, CausalQuery(start, ids)))
        passes["help"].append(alone_logprobs(model, CausalQuery(start + summary_ids, ids)))
        passes["full"].append(alone_logprobs(model, CausalQuery(start + ids, ids)))
    return passes


def per_sentence(token_scores, name: str) -> list[np.ndarray]:
    values = getattr(token_scores, f"{name}_logprobs")
    bounds = np.cumsum([0, *token_scores.sentence_lengths])
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def test_shannon_mixed_call_matches_each_pass_alone(phi3_longrope_dir):
    """Shannon on Phi-3 longrope: sentences whose passes fall on both sides of 32 tokens, with
    the summary's prefix cached for every sentence, against each pass run alone."""
    documents = [f"{words(1, 5)} {words(2, 22)} {words(3, 8)}", words(4, 6)]
    summaries = [words(5, 10), words(6, 3)]
    result = shannon_score(summaries, documents, model=str(phi3_longrope_dir), progress=False)
    model = AutoModelForCausalLM.from_pretrained(str(phi3_longrope_dir), dtype=torch.float32).eval()
    tokenizer = load_lm(phi3_longrope_dir).tokenizer
    for i, (document, summary) in enumerate(zip(documents, summaries)):
        for name, passes in shannon_oracle(model, tokenizer, document, summary).items():
            value = float(sum(each.sum() for each in passes))
            assert abs(result.scores[f"ll_{name}"][i] - value) < 1e-4, (i, name, result.scores[f"ll_{name}"][i], value)
        alone = shannon_score([summary], [document], model=str(phi3_longrope_dir), batch_size=1, progress=False)
        for name in ("ll_base", "ll_help", "ll_full"):  # sums of float32 log-probabilities
            assert abs(alone.scores[name][0] - result.scores[name][i]) < 1e-4, (i, name)
        # a ratio of differences of those sums: rounding grows where full - base is small
        assert alone.scores["shannon_score"][0] == pytest.approx(result.scores["shannon_score"][i], rel=1e-4)


def test_shannon_base_and_full_are_the_definitions_passes_alone(rope_case):
    """Shannon reads base and full from one merged pass ``<start> + sentence + sentence`` where
    that gives base its own numbers. Sentences of 15, 16, 23, 41 and 10 tokens against threshold
    32: the merged pass is short (15), just past it (16), past it while base alone is short (23),
    and past it with base alone long too (41), where longrope may merge and dynamic NTK (whose
    frequencies follow the exact length) may not. Per token against each pass run alone; before
    base was planned on its own there, base of the 16- and 23-token sentences took the long
    regime (and of the 41-token one, under dynamic NTK, the merged length's frequencies)."""
    name, _path, lm, pristine = rope_case
    documents = [f"{words(13, 14)} {words(11, 14)} {words(2, 22)}", f"{words(15, 40)} {words(16, 9)}",
                 words(11, 14)]
    summaries = [words(5, 10), words(6, 3), ""]
    result = shannon_score(summaries, documents, model=lm, explain=True, progress=False)
    assert [scores.sentence_lengths for scores in result.token_scores] == [[15, 16, 23], [41, 10], [16]]
    for i, (document, summary) in enumerate(zip(documents, summaries)):
        oracle = shannon_oracle(pristine, lm.tokenizer, document, summary)
        for part in ("base", "help", "full"):
            for k, (got, want) in enumerate(zip(per_sentence(result.token_scores[i], part), oracle[part])):
                np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=f"{name} example {i} sentence {k} {part}")


# ------------------------------------------------------------------------------------------------
# Generated: rope types, lengths around the threshold, budgets, batch sizes, the prefix cache.


@st.composite
def query_sets(draw):
    prefixes = [(1,) + tokens(100 + k, draw(st.integers(0, 12))) for k in range(3)]
    queries = []
    for _ in range(draw(st.integers(1, 6))):
        prefix = draw(st.sampled_from(prefixes))
        whole = draw(st.one_of(st.integers(THRESHOLD - 3, THRESHOLD + 3), st.integers(2, 70)))
        target = max(whole - len(prefix), 1)
        queries.append(CausalQuery(prefix, tokens(draw(st.integers(0, 10**6)), target)))
    return queries


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(queries=query_sets(), token_budget=st.sampled_from([64, 160, 8192]),
       batch_size=st.sampled_from([None, 1, 2]), prefix_cache=st.booleans())
def test_generated_calls_match_each_query_alone(rope_case, queries, token_budget, batch_size, prefix_cache):
    _name, _path, lm, pristine = rope_case
    got = engine_logprobs(lm, queries, token_budget=token_budget, batch_size=batch_size, prefix_cache=prefix_cache)
    for i, query in enumerate(queries):
        np.testing.assert_allclose(got[i], alone_logprobs(pristine, query), rtol=0, atol=TOL, err_msg=str(i))


# ------------------------------------------------------------------------------------------------
# The config predicate: which rope types depend on length, read from every config layout.


ROPE_TYPE_PARAMETERS = {
    "linear": {"factor": 2.0},
    "dynamic": {"factor": 2.0},
    "yarn": {"factor": 4.0, "original_max_position_embeddings": THRESHOLD},
    "longrope": {"short_factor": SHORT_FACTOR, "long_factor": LONG_FACTOR,
                 "original_max_position_embeddings": THRESHOLD},
    "llama3": {"factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": THRESHOLD},
    "proportional": {},
}


@pytest.mark.parametrize("rope_type", sorted(ROPE_INIT_FUNCTIONS))
def test_predicate_agrees_with_what_transformers_computes(rope_type):
    """For every rope type this transformers knows: the cos/sin of positions 0..7 in a pass of 8
    positions, and in a pass of 64 (past every threshold) then again of 32 (at it), differ exactly
    where :func:`length_dependent_rope` says the type depends on length. A new rope type fails
    here until it is classified."""
    assert rope_type in ROPE_TYPE_PARAMETERS, f"classify the new rope type {rope_type!r}"
    config = LlamaConfig(hidden_size=32, num_attention_heads=4, num_hidden_layers=1, intermediate_size=64,
                         vocab_size=64, max_position_embeddings=THRESHOLD,
                         rope_parameters={"rope_type": rope_type, **ROPE_TYPE_PARAMETERS[rope_type]})
    rotary = LlamaRotaryEmbedding(config)
    x = torch.zeros(1, 1, 8)

    def first_eight(length: int) -> torch.Tensor:
        cos, sin = rotary(x, torch.arange(length)[None])
        return torch.cat([cos[0, :8], sin[0, :8]])

    alone = first_eight(8)
    past_every_threshold = first_eight(64)
    at_threshold_after_a_long_pass = first_eight(THRESHOLD)
    moved = not torch.equal(past_every_threshold, alone) or not torch.equal(at_threshold_after_a_long_pass, alone)
    assert (length_dependent_rope(config) is not None) == moved, rope_type
    with fresh_dynamic_rope(dynamic_rotary_modules(rotary)):
        assert torch.equal(first_eight(8), alone)


def test_predicate_reads_every_config_layout():
    longrope = {"rope_type": "longrope", "short_factor": [1.0], "long_factor": [2.0],
                "original_max_position_embeddings": 16}
    flat = length_dependent_rope(Config(rope_parameters=longrope, max_position_embeddings=64))
    assert flat == LengthDependentRope(("longrope",), 16, same_length_only=False)
    # Phi-3 keeps the original context on the config, which transformers prefers.
    phi = length_dependent_rope(Config(rope_parameters=longrope, original_max_position_embeddings=8,
                                       max_position_embeddings=64))
    assert phi.threshold == 8
    # transformers 4.x: rope_scaling, with "type" in old checkpoints.
    old = length_dependent_rope(Config(rope_parameters=None, rope_scaling={"type": "dynamic", "factor": 2.0},
                                       max_position_embeddings=64))
    assert old == LengthDependentRope(("dynamic",), 64, same_length_only=True)
    # A multimodal config's text_config.
    nested = Config(text_config=Config(rope_parameters=longrope, max_position_embeddings=64))
    assert length_dependent_rope(nested).threshold == 16
    # Per layer type: one longrope entry among static ones; longrope entries with two thresholds
    # cannot share passes past the smaller one.
    layers = {"full_attention": longrope, "sliding_attention": {"rope_type": "default"}}
    assert length_dependent_rope(Config(rope_parameters=layers, max_position_embeddings=64)).threshold == 16
    two = {"a": longrope, "b": {**longrope, "original_max_position_embeddings": 24}}
    assert length_dependent_rope(Config(rope_parameters=two, max_position_embeddings=64)) == LengthDependentRope(
        ("longrope",), 16, same_length_only=True)
    for static in ("default", "linear", "yarn", "llama3"):
        assert length_dependent_rope(Config(rope_parameters={"rope_type": static}, max_position_embeddings=64)) is None
    assert length_dependent_rope(Config()) is None
    with pytest.raises(ValueError, match="max_position_embeddings"):
        length_dependent_rope(Config(rope_parameters={"rope_type": "dynamic", "factor": 2.0}))
