"""A load-time check that a tokenizer turns ordinary text into tokens the model knows.

A tokenizer without its vocabulary (built by transformers from a config alone) maps every word to
``[UNK]`` (WordPiece) or to nothing at all (byte-level BPE); a tokenizer of another model can give
ids past the model's embedding table. Either would make every score wrong without an error, so a
short probe text is tokenized once per model and tokenizer when they are put together.

>>> from nlgmetrics.testing import load_test_tokenizer
>>> check_tokenizer(load_test_tokenizer("bert"), "tiny-bert", vocab_size=30522, fix="pass another one")
>>> check_tokenizer(load_test_tokenizer("bert"), "tiny-bert", vocab_size=1000, fix="pass another one")
Traceback (most recent call last):
...
ValueError: The tokenizer of 'tiny-bert' gives token id ... but the model's embedding table has 1000 rows...
"""

from __future__ import annotations

from typing import Any

# Words, digits and punctuation: every real vocabulary (any script) has digits and punctuation,
# so a probe where no piece is a known token means the vocabulary is missing.
PROBE_TEXT = "The 3 cats sat on 2 mats, and 1 dog ran home: 1024 steps."


def probe_ids(tokenizer: Any, text: str = PROBE_TEXT) -> list[int]:
    """The ids of ``text`` without special tokens; ``TypeError`` when ``tokenizer`` is no tokenizer."""
    try:
        encoded = tokenizer(text, add_special_tokens=False)
        ids = encoded["input_ids"]
    except Exception as error:  # noqa: BLE001 - anything that cannot encode text is not a tokenizer
        raise TypeError(
            f"tokenizer= must be a Hugging Face tokenizer (callable on a text, giving input_ids); "
            f"{type(tokenizer).__name__} failed on a plain sentence: {error!r}"
        ) from None
    return [int(i) for i in ids]


def check_tokenizer(tokenizer: Any, name: str, *, vocab_size: int | None, fix: str) -> None:
    """Raise ``ValueError`` (ending with ``fix``) when ``tokenizer`` cannot encode :data:`PROBE_TEXT`
    into known tokens, or gives ids outside the model's ``vocab_size`` embedding rows."""
    ids = probe_ids(tokenizer)
    special = {i for i in (getattr(tokenizer, "all_special_ids", None) or []) if isinstance(i, int)}
    known = [i for i in ids if i not in special]
    if not known:
        what = "no tokens at all" if not ids else f"only special tokens ({tokenizer.convert_ids_to_tokens(ids[:3])}...)"
        raise ValueError(
            f"The tokenizer of {name!r} cannot tokenize ordinary text: {PROBE_TEXT!r} gives {what}; it "
            f"has no vocabulary (it knows {len(tokenizer)} token(s)), so every text would score the same. {fix}"
        )
    if vocab_size is not None and max(ids) >= vocab_size:
        raise ValueError(
            f"The tokenizer of {name!r} gives token id {max(ids)} for ordinary text, but the model's "
            f"embedding table has {vocab_size} rows: the tokenizer belongs to another model. {fix}"
        )
