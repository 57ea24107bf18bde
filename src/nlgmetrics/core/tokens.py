"""The start token of the causal LM metrics (Shannon score, FFLM): one rule for both.

``start_token`` is None (the metric's default token), a token id, or a token *string*. A string is
accepted when it is a token of the vocabulary, **even when it is also the unknown token** (SmolLM2's
``<|endoftext|>`` is its UNK token and the Shannon score's default start token); a string that is
not in the vocabulary is refused, though ``convert_tokens_to_ids`` would silently map it to UNK.

Two steps: :func:`check_start_token` (the type, before any model loads), then
:func:`resolve_start_token` (the explicit token checked against the vocabulary once the tokenizer
is there, else the first of the metric's preferred defaults that the tokenizer has).

>>> class Vocab:  # a tokenizer whose unknown token is a real vocabulary token, as SmolLM2's
...     unk_token, unk_token_id = "<|endoftext|>", 0
...     def get_vocab(self): return {"<|endoftext|>": 0, "a": 1}
...     def __len__(self): return 2
>>> [resolve_start_token(Vocab(), token, ("<bos>", "<|endoftext|>"), metric="demo")
...  for token in ("<|endoftext|>", 1, None)]
[0, 1, 0]
>>> resolve_start_token(Vocab(), "<nope>", (), metric="demo")
Traceback (most recent call last):
...
nlgmetrics.core.refusals.OptionError: start_token='<nope>' is not a single token of this tokenizer; pass a token string from its vocabulary, a token id, or None for the metric's default start token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nlgmetrics.core.refusals import AFTER_LOADING, Refusal
from nlgmetrics.core.validation import check_int, shown_value

START_TOKEN_RULE = Refusal(
    ("start_token",), "a `start_token` that is not None, a non-negative token id or a token string",
    "it names the one token every sequence starts with")
START_TOKEN_VOCABULARY_RULE = Refusal(
    ("start_token",),
    "a `start_token` id at or past the end of the vocabulary, or a token string that is not in the "
    "vocabulary (one that is in it is accepted, even when it is also the unknown token)",
    "the model has no embedding for such an id, and the tokenizer would silently replace such a "
    "string by its unknown token",
    AFTER_LOADING)


def check_start_token(start_token: Any) -> int | str | None:
    """The type of ``start_token`` (None, a non-negative token id, or a token string), checked before
    any model is loaded; :func:`resolve_start_token` checks it against the vocabulary.

    >>> import numpy as np
    >>> check_start_token(np.int64(3)), check_start_token("<s>")
    (3, '<s>')
    >>> check_start_token(-1)
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: start_token=-1 must be None, a non-negative token id or a token string (e.g. '<|endoftext|>').
    """
    if start_token is None or isinstance(start_token, str):
        return start_token
    with START_TOKEN_RULE.enforced():
        return check_int("start_token", start_token, minimum=0, message=(
            f"start_token={shown_value(start_token)} must be None, a non-negative token id or a token string "
            f"(e.g. '<|endoftext|>')."))


@dataclass(frozen=True)
class TokenRole:
    """A special token named by its role: the tokenizer's ``<role>_token_id`` (None: it has none)."""

    role: str

    def __str__(self) -> str:
        return f"{self.role.upper()} token"


BOS, EOS, CLS = TokenRole("bos"), TokenRole("eos"), TokenRole("cls")

#: One entry of a metric's default start-token preference: a vocabulary token string, a special
#: token by role, an id the caller found elsewhere (e.g. in the model's config), or None (skipped).
StartCandidate = str | TokenRole | int | None


def default_start_token_id(tokenizer: Any, preference: Sequence[StartCandidate]) -> int | None:
    """The id of the first entry of ``preference`` that ``tokenizer`` has; None when it has none.

    A string counts when it is a token of ``get_vocab()`` (its id there); a :class:`TokenRole` when
    the tokenizer sets that role; an int always; None never.
    """
    vocab: dict[str, int] | None = None
    for candidate in preference:
        if isinstance(candidate, TokenRole):
            found = getattr(tokenizer, f"{candidate.role}_token_id", None)
        elif isinstance(candidate, str):
            vocab = tokenizer.get_vocab() if vocab is None else vocab
            found = vocab.get(candidate)
        else:  # an id, or None: skipped
            found = candidate
        if found is not None:
            return int(found)
    return None


def resolve_start_token(
    tokenizer: Any, start_token: int | str | None, preference: Sequence[StartCandidate], *, metric: str
) -> int:
    """The id every sequence of ``metric`` starts with: ``start_token`` as
    :func:`check_start_token` returned it, else the first entry of ``preference`` the tokenizer has
    (:func:`default_start_token_id`); a ValueError naming the fix when it has none.

    An id must be below ``len(tokenizer)``; a string must be a vocabulary token (looked up in
    ``get_vocab()``, not through ``convert_tokens_to_ids``, which maps any unknown string to UNK).
    """
    if isinstance(start_token, str):
        vocab = tokenizer.get_vocab()
        if start_token not in vocab:
            raise START_TOKEN_VOCABULARY_RULE.error(
                f"start_token={shown_value(start_token)} is not a single token of this tokenizer; pass a "
                f"token string from its vocabulary, a token id, or None for the metric's default start token."
            )
        return int(vocab[start_token])
    if start_token is not None:
        size = len(tokenizer)
        # An id past the vocabulary would fail deep in the embedding with a bare IndexError.
        if start_token >= size:
            raise START_TOKEN_VOCABULARY_RULE.error(
                f"start_token={start_token} is outside the vocabulary (size {size}); pass an id "
                f"below it, a token string, or None for the metric's default start token."
            )
        return start_token
    chosen = default_start_token_id(tokenizer, preference)
    if chosen is None:
        # An int entry is always found, so only strings and roles can be missing.
        looked_for = ", ".join(
            repr(c) if isinstance(c, str) else str(c) for c in preference if isinstance(c, (str, TokenRole))
        )
        raise ValueError(
            f"{metric} found none of its default start tokens ({looked_for}) in this tokenizer; pass "
            f"start_token=<token id or token string>."
        )
    return chosen
