"""Tiny SentencePiece models where sacrebleu looks for its spBLEU models, for tests that run offline.

sacrebleu's ``flores101`` / ``flores200`` tokenizers load ``<SACREBLEU_DIR>/models/<file name of
the model's URL>``, downloading it on first use. No test may download (the machine may be
offline, and the real models are megabytes), so :func:`tiny_flores_models` trains two small
models from a few sentences (different vocabularies, so a mix-up of the two names shows), writes
them under the file names sacrebleu expects, and points sacrebleu's directory there for the
duration. Our tokenizer and sacrebleu's then read the same file: the comparison of their numbers
is a fair one.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Training text: several scripts, punctuation, digits (what the tests score looks like it).
_SENTENCES = [
    "the cat sat on the mat", "a dog ran far away from home", "hello world, how are you?",
    "der Hund lief weit weg.", "le chat est sur le tapis !", "猫がマットの上に座った。",
    "state-of-the-art models translate 3.5 million words", "it's 10:30 (roughly) - isn't it?",
    "Привет, как дела?", "שלום עולם", "the quick brown fox jumps over the lazy dog",
]

#: Vocabulary size of each name's model: two sizes, so the names tokenize differently.
VOCAB_SIZES = {"flores101": 80, "flores200": 100}


def train_model(vocab_size: int) -> bytes:
    """A SentencePiece model (unigram, sacrebleu's models' default normalisation) trained on
    :data:`_SENTENCES`."""
    sentencepiece = pytest.importorskip("sentencepiece")
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(_SENTENCES * 5), model_writer=model,
                                             vocab_size=vocab_size, minloglevel=2)
    return model.getvalue()


def model_path(directory: Path | str, name: str) -> Path:
    """Where sacrebleu looks for the model of ``name`` when its directory is ``directory``."""
    from sacrebleu.tokenizers import tokenizer_spm

    return Path(directory) / "models" / os.path.basename(tokenizer_spm.SPM_MODELS[name]["url"])


@contextlib.contextmanager
def sacrebleu_dir(directory: Path | str) -> Iterator[Path]:
    """sacrebleu's cache directory (where its SPM tokenizer reads and downloads models) set to
    ``directory`` while the block runs; our caches emptied on entry and exit, so no tokens of
    another model are reused."""
    from sacrebleu.tokenizers import tokenizer_spm

    from nlgmetrics.bleu import clear_caches

    clear_caches()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenizer_spm, "SACREBLEU_DIR", str(directory))
        try:
            yield Path(directory)
        finally:
            clear_caches()


@contextlib.contextmanager
def tiny_flores_models(directory: Path | str) -> Iterator[Path]:
    """Both spBLEU models, tiny, in ``directory`` (sacrebleu's directory while the block runs)."""
    for name, size in VOCAB_SIZES.items():
        path = model_path(directory, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(train_model(size))
    with sacrebleu_dir(directory) as where:
        yield where
