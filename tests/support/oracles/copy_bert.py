"""A BERT built to copy tokens from its context, for BLANC tests (random weights make BLANC degenerate).

One attention layer with uniform attention and an identity value path, tied embeddings, identity
head: at a masked position it predicts (roughly) the most frequent token of the input, so a
summary that repeats a word helps unmask it and a summary full of other words hurts. Small random
noise on every weight (positions included) makes the predictions depend on positions and order,
so an off-by-one in the inputs would show. Used through the ``copy_bert_dir`` fixture (conftest).

>>> import tempfile
>>> from pathlib import Path
>>> (build_copy_bert(Path(tempfile.mkdtemp())) / "config.json").exists()
True
"""

from __future__ import annotations

from pathlib import Path

import torch


def build_copy_bert(out_dir: Path, hidden: int = 64, scale: float = 30.0, noise: float = 0.02,
                    seed: int = 0) -> Path:
    """A 1-layer BertForMaskedLM (512 positions) that copies frequent context tokens (module docstring)."""
    from transformers import BertConfig, BertForMaskedLM

    from nlgmetrics.testing import load_test_tokenizer

    tokenizer = load_test_tokenizer("bert")
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=1,
                        num_attention_heads=1, intermediate_size=16, max_position_embeddings=512,
                        hidden_act="linear")
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = BertForMaskedLM(config)

    def noisy(shape, std=noise):
        return torch.randn(shape, generator=generator) * std

    weights = {}
    for name, tensor in model.state_dict().items():
        if name.endswith("LayerNorm.weight"):
            weights[name] = torch.ones_like(tensor)
        elif name.endswith("LayerNorm.bias"):
            weights[name] = torch.zeros_like(tensor)
        else:
            weights[name] = noisy(tensor.shape)
    embeddings = torch.randn(len(tokenizer), hidden, generator=generator)
    for token in (tokenizer.mask_token, tokenizer.pad_token):
        embeddings[tokenizer.convert_tokens_to_ids(token)] = 0.0
    embeddings[tokenizer.convert_tokens_to_ids(".")] *= 0.1  # the filler barely counts
    eye = torch.eye(hidden)
    weights["bert.embeddings.word_embeddings.weight"] = embeddings
    weights["cls.predictions.decoder.weight"] = embeddings
    weights["bert.encoder.layer.0.attention.self.value.weight"] = eye * scale + noisy((hidden, hidden))
    weights["bert.encoder.layer.0.attention.output.dense.weight"] = eye + noisy((hidden, hidden))
    weights["cls.predictions.transform.dense.weight"] = eye + noisy((hidden, hidden))
    model.load_state_dict(weights, strict=False)
    model.tie_weights()
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))
    return out_dir
