"""The default start token of the causal metrics (:func:`nlgmetrics.core.tokens.resolve_start_token`).

Shannon Score: ``<|endoftext|>`` where the vocabulary has it, else the tokenizer's BOS, else the
model's EOS. FFLM: the tokenizer's BOS, else its EOS. The end-to-end model is a tiny random Llama
whose word-level tokenizer has Gemma's special-token layout (``<pad>`` 0, ``<eos>`` 1, ``<bos>`` 2)
and no ``<|endoftext|>``; its log-likelihoods are checked against a naive transformers forward.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from nlgmetrics.core.signature import parse_signature
from nlgmetrics.core.sentences import split_sentences
from nlgmetrics.core.tokens import BOS, EOS, default_start_token_id, resolve_start_token
from nlgmetrics.fflm import fflm
from nlgmetrics.fflm.planning import DEFAULT_START_TOKENS as FFLM_START_TOKENS
from nlgmetrics.shannon import shannon_score
from nlgmetrics.shannon.scoring import default_start_tokens as shannon_start_tokens

DOCUMENT = "The council met on Monday to discuss the park. Residents asked for more trees."
SUMMARY = "The council discussed the park."
PAD, EOS_ID, BOS_ID = 0, 1, 2  # Gemma's ids for <pad>, <eos>, <bos>


@pytest.fixture(scope="module")
def bos_llama_dir(tmp_path_factory) -> Path:
    """A tiny random LlamaForCausalLM whose tokenizer has ``<bos>`` (2) distinct from ``<eos>`` (1)
    and no ``<|endoftext|>``, as Gemma's."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from nlgmetrics.engine.checkpoint import PROBE_TEXT

    pre = pre_tokenizers.Whitespace()
    words = [w for text in (DOCUMENT, SUMMARY, PROBE_TEXT) for w, _ in pre.pre_tokenize_str(text)]
    vocab = {"<pad>": PAD, "<eos>": EOS_ID, "<bos>": BOS_ID, "<unk>": 3}
    for word in words:
        vocab.setdefault(word, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<bos>", eos_token="<eos>", unk_token="<unk>", pad_token="<pad>")
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(vocab), bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=PAD,
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=64, max_position_embeddings=256)
    out = tmp_path_factory.mktemp("bos-llama")
    LlamaForCausalLM(config).eval().save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out


def _naive_ll_base(model_dir: Path, start: int) -> float:
    """Shannon's ll_base by hand: each sentence's tokens after ``start`` alone, one plain forward."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(model_dir)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    total = 0.0
    for sentence in split_sentences(DOCUMENT):
        ids = tokenizer(sentence, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([[start, *ids]])).logits[0, :-1].double()
        total += logits.log_softmax(-1)[torch.arange(len(ids)), torch.tensor(ids)].sum().item()
    return total


def _shannon(model_dir: Path, **kwargs):
    return shannon_score([SUMMARY], [DOCUMENT], model=str(model_dir), progress=False, **kwargs)


# ------------------------------------------------------------------------------------------------
# End to end on a model with <bos> and no <|endoftext|>


def test_shannon_starts_a_model_without_endoftext_with_its_bos(bos_llama_dir):
    result = _shannon(bos_llama_dir)
    # The id is in the signature: BOS (2), not EOS (1) as before.
    assert parse_signature(result.signature)["start_token"] == str(BOS_ID)
    assert result.scores["ll_base"][0] == pytest.approx(_naive_ll_base(bos_llama_dir, BOS_ID), abs=1e-4)
    # The two starts give different numbers on this model, so the check above tells them apart.
    assert abs(_naive_ll_base(bos_llama_dir, BOS_ID) - _naive_ll_base(bos_llama_dir, EOS_ID)) > 1e-3


def test_an_explicit_start_token_still_wins(bos_llama_dir):
    by_string = _shannon(bos_llama_dir, start_token="<eos>")
    by_id = _shannon(bos_llama_dir, start_token=EOS_ID)
    assert parse_signature(by_string.signature)["start_token"] == str(EOS_ID)
    assert by_id.signature == by_string.signature
    assert by_string.scores["ll_base"][0] == pytest.approx(_naive_ll_base(bos_llama_dir, EOS_ID), abs=1e-4)


def test_fflm_default_start_token_is_unchanged_on_that_model(bos_llama_dir):
    # FFLM already started with the BOS; the shared rule must keep it.
    result = fflm([SUMMARY], [DOCUMENT], model=str(bos_llama_dir), progress=False)
    assert parse_signature(result.signature)["start_token"] == str(BOS_ID)


# ------------------------------------------------------------------------------------------------
# The preferences, on tokenizers of every layout


class Vocab:
    """A tokenizer stand-in: a vocabulary and the special-token ids it declares."""

    def __init__(self, tokens: list[str], bos: int | None = None, eos: int | None = None):
        self.vocab = {token: i for i, token in enumerate(tokens)}
        self.bos_token_id, self.eos_token_id = bos, eos

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)


def _shannon_default(tokenizer: Vocab, config_eos=None) -> int:
    lm = SimpleNamespace(tokenizer=tokenizer, model=SimpleNamespace(config=SimpleNamespace(eos_token_id=config_eos)))
    return resolve_start_token(tokenizer, None, shannon_start_tokens(lm), metric="Shannon Score")


# SmolLM2's layout: <|endoftext|> 0, BOS <|im_start|> 1, EOS <|im_end|> 2.
SMOLLM2_LIKE = Vocab(["<|endoftext|>", "<|im_start|>", "<|im_end|>", "a"], bos=1, eos=2)
GEMMA_LIKE = Vocab(["<pad>", "<eos>", "<bos>", "a"], bos=2, eos=1)
EOS_ONLY = Vocab(["<pad>", "</s>", "a"], eos=1)


def test_shannon_preference_order():
    # <|endoftext|> first, even where the tokenizer declares another BOS (SmolLM2: numbers unchanged).
    assert _shannon_default(SMOLLM2_LIKE, config_eos=2) == 0
    # No <|endoftext|>: the BOS, not the EOS of the config or of the tokenizer.
    assert _shannon_default(GEMMA_LIKE, config_eos=1) == 2
    # No BOS either: the config's EOS first (blanc's), the first of a list, else the tokenizer's.
    assert _shannon_default(EOS_ONLY, config_eos=[0, 1]) == 0
    assert _shannon_default(EOS_ONLY, config_eos=None) == 1


def test_fflm_preference_order_is_bos_then_eos():
    assert default_start_token_id(SMOLLM2_LIKE, FFLM_START_TOKENS) == 1  # BOS, not <|endoftext|>
    assert default_start_token_id(GEMMA_LIKE, FFLM_START_TOKENS) == 2
    assert default_start_token_id(EOS_ONLY, FFLM_START_TOKENS) == 1
    assert FFLM_START_TOKENS == (BOS, EOS)


def test_a_tokenizer_with_no_default_names_the_fix():
    bare = Vocab(["a", "b"])
    with pytest.raises(ValueError, match=r"FFLM found none of its default start tokens \(BOS token, EOS "
                                         r"token\) in this tokenizer; pass start_token="):
        resolve_start_token(bare, None, FFLM_START_TOKENS, metric="FFLM")
    with pytest.raises(ValueError, match=r"\('<\|endoftext\|>', BOS token, EOS token\)"):
        _shannon_default(bare)
    assert resolve_start_token(bare, "b", FFLM_START_TOKENS, metric="FFLM") == 1  # explicit: no default needed
