"""The architecture matrix: every LM metric on tiny random models of the families transformers ships.

Each model is a 2-layer, 32-wide random model of one architecture family, with the fixtures' real
tokenizers (SmolLM2's BPE for causal LMs, BERT's WordPiece for masked LMs), a 128-position
context for causal LMs and sliding windows of 16 tokens wherever the family has them (Mistral,
Qwen2, Phi-3, Gemma-2/3, OLMo-3, ModernBERT's local attention). The texts are longer than the
windows and the document is longer than a causal model's context, and one document is scored
with several summaries, so the engine's prefix cache, its length-sorted batches and the
truncation to the context all run on every architecture.

The oracle is a naive forward pass: each engine query run alone, batch 1, no cache, no padding,
the full logits sliced in the test (``naive_iter_causal`` / ``naive_iter_masked`` below replace
the engine's ``iter_causal`` / ``iter_masked`` for the whole metric). Every metric's scores must
equal the naive ones within float32 rounding of other batch shapes, and must not depend on the
batch size, the token budget or the prefix cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.integration

WINDOW = 16
CONTEXT = 128
_CAUSAL_BASE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                    max_position_embeddings=CONTEXT)
_MASKED_BASE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                    max_position_embeddings=512)

#: name -> (model_type, config keyword arguments) of every causal family in the matrix.
CAUSAL: dict[str, tuple[str, dict[str, Any]]] = {
    "gpt2": ("gpt2", dict(n_embd=32, n_layer=2, n_head=2, n_positions=CONTEXT)),
    "gpt_neox": ("gpt_neox", _CAUSAL_BASE),
    "opt": ("opt", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64,
                        word_embed_proj_dim=32, max_position_embeddings=CONTEXT)),
    "llama_tied": ("llama", dict(_CAUSAL_BASE, num_key_value_heads=2, tie_word_embeddings=True)),
    "llama_untied": ("llama", dict(_CAUSAL_BASE, num_key_value_heads=2, tie_word_embeddings=False)),
    "mistral": ("mistral", dict(_CAUSAL_BASE, num_key_value_heads=2, sliding_window=None)),
    "mistral_sliding": ("mistral", dict(_CAUSAL_BASE, num_key_value_heads=2, sliding_window=WINDOW)),
    "qwen2": ("qwen2", dict(_CAUSAL_BASE, num_key_value_heads=2, use_sliding_window=False)),
    "qwen2_sliding": ("qwen2", dict(_CAUSAL_BASE, num_key_value_heads=2, use_sliding_window=True,
                                    sliding_window=WINDOW, max_window_layers=1)),
    "qwen3": ("qwen3", dict(_CAUSAL_BASE, num_key_value_heads=2, head_dim=8)),
    "qwen3_sliding": ("qwen3", dict(_CAUSAL_BASE, num_key_value_heads=2, head_dim=8, use_sliding_window=True,
                                    sliding_window=WINDOW, max_window_layers=1)),
    "phi3_sliding": ("phi3", dict(_CAUSAL_BASE, num_key_value_heads=2, sliding_window=WINDOW)),
    "gemma": ("gemma", dict(_CAUSAL_BASE, num_key_value_heads=2, head_dim=8)),
    "gemma2": ("gemma2", dict(_CAUSAL_BASE, num_key_value_heads=2, head_dim=8, sliding_window=WINDOW)),
    "gemma3": ("gemma3_text", dict(_CAUSAL_BASE, num_key_value_heads=2, head_dim=8, sliding_window=WINDOW,
                                   layer_types=["sliding_attention", "full_attention"])),
    "falcon_rope": ("falcon", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                   new_decoder_architecture=True, num_kv_heads=2, max_position_embeddings=CONTEXT)),
    "falcon_alibi": ("falcon", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, alibi=True,
                                    multi_query=False, max_position_embeddings=CONTEXT)),
    "bloom": ("bloom", dict(hidden_size=32, n_layer=2, n_head=4)),  # ALiBi, no context limit
    "gptj": ("gptj", dict(n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=CONTEXT)),
    "mpt": ("mpt", dict(d_model=32, n_layers=2, n_heads=4, max_seq_len=CONTEXT)),  # ALiBi, context in max_seq_len
    "olmo": ("olmo", _CAUSAL_BASE),
    "olmo2": ("olmo2", _CAUSAL_BASE),
    "olmo3": ("olmo3", dict(_CAUSAL_BASE, sliding_window=WINDOW, layer_types=["sliding_attention", "full_attention"])),
    "smollm3": ("smollm3", dict(_CAUSAL_BASE, num_key_value_heads=2, no_rope_layers=[1, 0])),  # a RoPE-free layer
    "starcoder2_sliding": ("starcoder2", dict(_CAUSAL_BASE, num_key_value_heads=2, sliding_window=WINDOW)),
    "gpt_bigcode": ("gpt_bigcode", dict(n_embd=32, n_layer=2, n_head=4, n_positions=CONTEXT)),
    "stablelm": ("stablelm", dict(_CAUSAL_BASE, num_key_value_heads=2)),
}

#: name -> (model_type, config keyword arguments) of every masked family in the matrix.
MASKED: dict[str, tuple[str, dict[str, Any]]] = {
    "bert": ("bert", _MASKED_BASE),
    "roberta": ("roberta", dict(_MASKED_BASE, max_position_embeddings=514)),
    "distilbert": ("distilbert", dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=512)),
    "albert": ("albert", dict(_MASKED_BASE, embedding_size=16)),
    "electra": ("electra", dict(_MASKED_BASE, embedding_size=16)),
    "deberta_v2": ("deberta-v2", _MASKED_BASE),
    "xlm_roberta": ("xlm-roberta", dict(_MASKED_BASE, max_position_embeddings=514)),
    "camembert": ("camembert", dict(_MASKED_BASE, max_position_embeddings=514)),
    "modernbert": ("modernbert", dict(_MASKED_BASE, local_attention=WINDOW)),
}

DOCUMENT = " ".join(
    f"In the year {1990 + i}, the team of the village played {i + 2} games, and the coach said that the "
    f"season was {'good' if i % 2 else 'hard'} for the players and the town. It {'rained' if i % 2 else 'snowed'}."
    for i in range(5)
)  # ~190 SmolLM2 tokens: beyond the causal models' 128 positions; long and short sentences, so
#    that packed rows behind a summary's cache hold several sentences each
SUMMARIES = [
    "The village team played many games and the coach talked about the seasons for the players.",
    "A coach said seasons were good or hard.",
    "In the nineties the team of the village played games every year, and the town followed them all.",
]
REFERENCES = [
    "The coach of the village team reviewed each season, some good and some hard, for the whole town.",
    "Seasons were hard or good, the coach said.",
    "The team of the village played games each year in the nineties while the town watched.",
]

# float32 scores of other batch shapes, padding and caches differ from batch 1 by rounding only;
# the Shannon score, a ratio of differences of log-likelihood sums, amplifies that rounding to
# ~2e-5 relative on random weights. A wrong mask or position moves log-probs by O(1).
RTOL, ATOL = 1e-4, 1e-4


def _build(name: str, out: Path) -> Path:
    """Save a random model of family ``name`` with its fixture tokenizer under ``out``."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM

    from nlgmetrics.testing import load_test_tokenizer

    masked = name in MASKED
    model_type, shape = (MASKED if masked else CAUSAL)[name]
    tokenizer = load_test_tokenizer("bert" if masked else "llama")
    special = dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                   pad_token_id=tokenizer.pad_token_id)
    if masked:
        special.update(cls_token_id=tokenizer.cls_token_id, sep_token_id=tokenizer.sep_token_id)
    config = AutoConfig.for_model(model_type, vocab_size=len(tokenizer), **special, **shape)
    torch.manual_seed(0)
    auto = AutoModelForMaskedLM if masked else AutoModelForCausalLM
    model = auto.from_config(config).eval()
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory) -> Callable[[str], Path]:
    """``get(name)``: the saved random model of family ``name`` (built once per module)."""
    built: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in built:
            built[name] = _build(name, tmp_path_factory.mktemp(name))
        return built[name]

    return get


def _resolved(value: Any) -> Any:
    from nlgmetrics.engine.transfer import DeferredHost

    return value.get() if isinstance(value, DeferredHost) else value


def naive_iter_causal(lm: Any, queries: Sequence[Any], reduce: Callable, **_options: Any) -> Iterator[tuple[int, Any]]:
    """Each query alone: one batch-1 forward of ``prefix + target[:-1]``, no cache, no mask, the
    logits that predict the target sliced from the full output."""
    for index, query in enumerate(queries):
        if not query.target_ids:
            vocab = lm.model.get_output_embeddings().weight.shape[0]
            yield index, _resolved(reduce(torch.zeros((0, vocab)), query))
            continue
        ids = torch.tensor([query.prefix_ids + query.target_ids[:-1]])
        with torch.inference_mode():
            logits = lm.model(input_ids=ids, use_cache=False).logits[0].float()
        first = len(query.prefix_ids) - 1
        yield index, _resolved(reduce(logits[first : first + len(query.target_ids)], query))


def naive_iter_masked(lm: Any, queries: Sequence[Any], reduce: Callable, **_options: Any) -> Iterator[tuple[int, Any]]:
    """Each query alone: the mask token at its positions, one batch-1 forward, the rows sliced."""
    for index, query in enumerate(queries):
        ids = torch.tensor([query.input_ids])
        ids[0, list(query.mask_positions)] = lm.tokenizer.mask_token_id
        with torch.inference_mode():
            logits = lm.model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0].float()
        yield index, _resolved(reduce(logits[list(query.mask_positions)], query))


@pytest.fixture()
def naive_engine(monkeypatch) -> Callable[[], None]:
    """Call it to route every metric's engine calls through the naive forward passes."""
    import nlgmetrics.engine
    import nlgmetrics.infolm.distributions as infolm_distributions

    def switch() -> None:
        for module in (nlgmetrics.engine, infolm_distributions):
            monkeypatch.setattr(module, "iter_causal", naive_iter_causal)
            monkeypatch.setattr(module, "iter_masked", naive_iter_masked)

    return switch


def _scores(result: Any) -> dict[str, np.ndarray]:
    return {name: np.asarray(values, dtype=np.float64) for name, values in result.scores.items()}


def _assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray], what: str) -> None:
    assert got.keys() == want.keys()
    for name in want:
        assert np.isfinite(got[name]).all(), (what, name, got[name])
        np.testing.assert_allclose(got[name], want[name], rtol=RTOL, atol=ATOL, err_msg=f"{what}: {name}")


# The engine options that must not change a number, with a budget small enough to split the work.
VARIANTS = {"one row per batch, small token budget": dict(batch_size=1, token_budget=64)}


def _causal_metrics() -> dict[str, Callable[..., Any]]:
    from nlgmetrics.fflm import fflm
    from nlgmetrics.infolm import infolm
    from nlgmetrics.shannon import shannon_score

    documents = [DOCUMENT] * len(SUMMARIES)
    return {
        "shannon": lambda lm, **o: shannon_score(SUMMARIES, documents, model=lm, progress=False, **o),
        "fflm": lambda lm, **o: fflm(SUMMARIES, documents, model=lm, progress=False, **o),
        "infolm": lambda lm, **o: infolm(SUMMARIES, REFERENCES, model=lm, progress=False, **o),
    }


def _masked_metrics() -> dict[str, Callable[..., Any]]:
    from nlgmetrics.blanc import blanc
    from nlgmetrics.infolm import infolm

    documents = [DOCUMENT] * len(SUMMARIES)
    return {
        "blanc": lambda lm, **o: blanc(SUMMARIES, documents, model=lm, progress=False, **o),
        "infolm": lambda lm, **o: infolm(SUMMARIES, REFERENCES, model=lm, progress=False, **o),
    }


@pytest.mark.parametrize("name", sorted(CAUSAL))
def test_causal_architecture(name, model_dirs, naive_engine, segments_per_packed_row):
    """Shannon, FFLM and InfoLM on a causal family: the naive forward's scores, whatever the
    batch size, token budget or prefix cache; the context read from the family's config. Where
    the config allows packed rows behind a prefix cache, rows of several targets were run."""
    from nlgmetrics.engine import load_lm
    from nlgmetrics.engine.packing import packing_allowed

    lm = load_lm(str(model_dirs(name)), "causal", device="cpu")
    if CAUSAL[name][0] == "bloom":  # ALiBi without a declared context: only the tokenizer may limit it
        assert lm.max_length > CONTEXT
    else:
        assert lm.max_length == CONTEXT
    metrics = _causal_metrics()
    engine = {metric: _scores(call(lm)) for metric, call in metrics.items()}
    assert (max(segments_per_packed_row, default=0) >= 2) == packing_allowed(lm.model, lm.max_length)
    variants = dict(VARIANTS, **{"no prefix cache": dict(prefix_cache=False)})
    for metric, call in metrics.items():
        for variant, options in variants.items():
            if metric == "infolm" and "prefix_cache" in options:
                continue  # InfoLM has no prefix to share
            _assert_same(_scores(call(lm, **options)), engine[metric], f"{name} {metric} {variant}")
    naive_engine()
    for metric, call in metrics.items():
        _assert_same(engine[metric], _scores(call(lm)), f"{name} {metric} vs the naive forward")


@pytest.mark.parametrize("name", sorted(MASKED))
def test_masked_architecture(name, model_dirs, naive_engine):
    """BLANC and InfoLM on a masked family: the naive forward's scores, whatever the batch size
    or token budget."""
    from nlgmetrics.engine import load_lm

    lm = load_lm(str(model_dirs(name)), "masked", device="cpu")
    metrics = _masked_metrics()
    engine = {metric: _scores(call(lm)) for metric, call in metrics.items()}
    for metric, call in metrics.items():
        for variant, options in VARIANTS.items():
            _assert_same(_scores(call(lm, **options)), engine[metric], f"{name} {metric} {variant}")
    naive_engine()
    for metric, call in metrics.items():
        _assert_same(engine[metric], _scores(call(lm)), f"{name} {metric} vs the naive forward")


def test_the_matrix_covers_the_families_asked_for():
    """At least the families of the engine's compatibility list, sliding windows, ALiBi and a
    RoPE-free layer among them."""
    families = {model_type for model_type, _ in [*CAUSAL.values(), *MASKED.values()]}
    assert families >= {
        "gpt2", "gpt_neox", "opt", "llama", "mistral", "qwen2", "qwen3", "phi3", "gemma", "gemma2", "gemma3_text",
        "falcon", "bloom", "gptj", "mpt", "olmo", "olmo2", "olmo3", "smollm3", "bert", "roberta", "distilbert",
        "albert", "electra", "deberta-v2", "xlm-roberta", "camembert", "modernbert",
    }
    assert CAUSAL["falcon_alibi"][1]["alibi"] and CAUSAL["smollm3"][1]["no_rope_layers"] == [1, 0]


def test_every_family_allowed_packed_rows_is_checked_with_them():
    """Each family the engine packs rows for has a matrix entry whose config allows it (so
    ``test_causal_architecture`` compares its packed rows with the naive forward), and the
    windowed and ALiBi entries do not."""
    from transformers import AutoConfig, AutoModelForCausalLM

    from nlgmetrics.engine.packing import PACKABLE_MODEL_TYPES, packing_allowed

    allowed = set()
    for name, (model_type, shape) in CAUSAL.items():
        config = AutoConfig.for_model(model_type, vocab_size=64, pad_token_id=0, bos_token_id=1, eos_token_id=2, **shape)
        if packing_allowed(AutoModelForCausalLM.from_config(config), CONTEXT):
            allowed.add(name)
    assert {CAUSAL[name][0] for name in allowed} == PACKABLE_MODEL_TYPES
    refused = {"bloom", "falcon_alibi", "mpt", "gemma2", "gemma3", "olmo3", "mistral_sliding", "qwen2_sliding",
               "qwen3_sliding", "phi3_sliding", "starcoder2_sliding"}
    assert not allowed & refused
