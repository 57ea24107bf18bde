"""How ROUGE splits a text into words: rouge-score's default, Unicode-aware splitters, a callable.

Named tokenizers (:data:`TOKENIZER_NAMES`: ``"default"``, ``"whitespace"``, ``"unicode"``,
``"cjk"``, ``"char"``) all lower-case the text, as ROUGE is case-insensitive; a callable (``text ->
list of str``) or an object with a ``tokenize`` method gives its tokens as they are, signed
``callable.<module>.<qualified name>``. What each one does and when to use it: the ROUGE card,
metrics/rouge_family/README.md ("Tokenizers (other languages)").

:func:`warn_dropped_words` is the warning of a call in which the default tokenizer left texts
that have letters or digits without any token (they would score 0 without a word).

>>> split_words("Café, ΟΔΟΣ и ДОМ!", "unicode")
['café', 'οδος', 'и', 'дом']
>>> split_words("Café, ΟΔΟΣ и ДОМ!", "default")
['caf']
>>> split_words("我喜欢猫。I like cats", "cjk")
['我', '喜', '欢', '猫', 'i', 'like', 'cats']
>>> split_words("ง่าย", "char")
['ง่', 'า', 'ย']
>>> resolve_tokenizer(str.split).name
'callable.str.split'
"""

from __future__ import annotations

import functools
import re
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nlgmetrics.core.validation import shown_value

#: The named tokenizers of ROUGE (see the module docstring).
TOKENIZER_NAMES = ("default", "whitespace", "unicode", "cjk", "char")
#: Signature value of each named tokenizer (the default keeps its historical name).
_SIGNATURE_NAMES = {"default": "rouge_score"}

#: A token of the default tokenizer (of the lower-cased text), and the words the stemmers change.
ASCII_WORD = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=1)
def _patterns() -> dict[str, Any]:
    # `regex` (a dependency of transformers) has Unicode properties and scripts; `re` has not,
    # and its \w splits Devanagari words at their vowel signs (combining marks).
    import regex

    # Letters/digits of the Han, Hiragana, Katakana and Bopomofo scripts, with the characters
    # these scripts share (script extensions: the prolonged sound mark ー, iteration marks).
    cjk = r"[[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Bopomofo}]&&[\p{L}\p{N}]]"
    return {
        "unicode": regex.compile(r"[\p{L}\p{M}\p{N}]+"),
        "cjk": regex.compile(rf"(?V1){cjk}\p{{M}}*|[[\p{{L}}\p{{M}}\p{{N}}]--{cjk}]+"),
        "char": regex.compile(r"[\p{L}\p{M}\p{N}]\p{M}*"),
        "cjk_char": regex.compile(rf"(?V1){cjk}"),
    }


def split_words(text: str, name: str = "default") -> list[str]:
    """The tokens of ``text`` under the named tokenizer ``name`` (before stopwords and stemming)."""
    if name == "default":
        return ASCII_WORD.findall(text.lower())
    if name == "whitespace":
        return text.lower().split()
    if name not in TOKENIZER_NAMES:
        raise ValueError(f"Unknown tokenizer {name!r}; choose one of {list(TOKENIZER_NAMES)}.")
    return _patterns()[name].findall(unicodedata.normalize("NFC", text.lower()))


def default_drops_every_word(text: str) -> bool:
    """Whether ``text`` has letters or digits but no ``"default"`` token (all non-ASCII): the case
    where rouge-score's tokenizer silently scores it 0.

    >>> default_drops_every_word("你好"), default_drops_every_word("..."), default_drops_every_word("a")
    (True, False, False)
    """
    return any(char.isalnum() for char in text) and ASCII_WORD.search(text.lower()) is None


def warn_dropped_words(dropped: Mapping[str, Sequence[tuple[int, str]]], stacklevel: int = 3) -> None:
    """One warning for a whole call when the default tokenizer found no token in texts that have
    letters or digits (all in a non-ASCII script), which would otherwise score 0 silently.

    ``dropped``: ``{"predictions": [(example index, text), ...], "references": [...]}``.
    ``stacklevel``: of :func:`warnings.warn`, so that it points at the metric's caller.
    """
    counts = [f"{len(found)} {side if len(found) > 1 else side[:-1]}" for side, found in dropped.items() if found]
    if not counts:
        return
    side = "predictions" if dropped.get("predictions") else "references"
    index, sample = dropped[side][0]
    suggestions = ['tokenizer="unicode" (scripts written with spaces: Cyrillic, Greek, Arabic, Devanagari, '
                   'accented Latin...)', 'tokenizer="cjk" (Chinese, Japanese)']
    if _patterns()["cjk_char"].search(sample):  # Chinese or Japanese: suggest "cjk" first
        suggestions.reverse()
    warnings.warn(
        f"rouge_family: the default tokenizer (rouge-score's: ASCII letters and digits only) found no "
        f"token in {' and '.join(counts)} that have letters or digits, so they score 0 (first: the "
        f"{side[:-1]} of example {index}, {sample!r:.50}). Pass {suggestions[0]} or {suggestions[1]}, "
        f"or a callable tokenizer.",
        stacklevel=stacklevel,
    )


def _qualified_name(function: Any) -> str:
    """``module.qualname`` of a function, bound method or callable object (for the signature);
    a ``functools.partial`` is named after the function it wraps.

    >>> _qualified_name(functools.partial(split_words, name="cjk"))
    'partial.nlgmetrics.rouge.tokenizers.split_words'
    """
    if isinstance(function, functools.partial):
        return f"partial.{_qualified_name(function.func)}"
    module = getattr(function, "__module__", None) or type(function).__module__
    qualname = getattr(function, "__qualname__", None) or type(function).__qualname__
    return qualname if module in (None, "builtins") else f"{module}.{qualname}"


@dataclass(frozen=True)
class RougeTokenizer:
    """A resolved ``tokenizer=`` option: ``name`` for the signature, and either ``key`` or ``split``."""

    name: str
    #: the named tokenizer (one of :data:`TOKENIZER_NAMES`); None for the user's callable
    key: str | None = None
    #: the user's callable text -> tokens, its output checked (tokens used as given: no stemming or stopwords)
    split: Callable[[str], list[str]] | None = None


def _checked(function: Callable[[str], Any], shown: str) -> Callable[[str], list[str]]:
    """``function`` with its output checked: a list (any iterable) of strings, never a string."""

    def split(text: str) -> list[str]:
        tokens = function(text)
        if isinstance(tokens, (str, bytes, Mapping)) or not isinstance(tokens, Iterable):
            raise ValueError(
                f"tokenizer {shown} returned {type(tokens).__name__} ({shown_value(tokens)}) for the text "
                f"{text!r:.40}; it must return a list of tokens (strings), e.g. text.split()."
            )
        tokens = list(tokens)
        for token in tokens:
            if not isinstance(token, str):
                raise ValueError(
                    f"tokenizer {shown} returned a token of type {type(token).__name__} ({shown_value(token, 40)}) for "
                    f"the text {text!r:.40}; every token must be a str."
                )
        return tokens

    return split


def resolve_tokenizer(tokenizer: str | Callable[[str], Sequence[str]] | Any | None) -> RougeTokenizer:
    """The ``tokenizer=`` option of :func:`~nlgmetrics.rouge.rouge_family`, checked.

    A name of :data:`TOKENIZER_NAMES` (None is ``"default"``, as in evaluate's ``rouge``), a
    callable ``text -> list[str]``, or an object with a ``tokenize(text)`` method (preferred over
    calling it: a Hugging Face tokenizer is callable but its ``tokenize`` gives the tokens).

    >>> resolve_tokenizer("cjk").name, resolve_tokenizer(None).name
    ('cjk', 'rouge_score')
    """
    if tokenizer is None:
        tokenizer = "default"
    if isinstance(tokenizer, str):
        if tokenizer not in TOKENIZER_NAMES:
            raise ValueError(
                f"Unknown tokenizer={tokenizer!r}; choose one of {list(TOKENIZER_NAMES)} "
                f"(\"unicode\" for scripts written with spaces, \"cjk\" for Chinese and Japanese) "
                f"or pass a callable text -> list of tokens."
            )
        return RougeTokenizer(_SIGNATURE_NAMES.get(tokenizer, tokenizer), key=tokenizer)
    if isinstance(tokenizer, type):
        raise ValueError(
            f"tokenizer={tokenizer.__qualname__} is a class; pass an instance (e.g. {tokenizer.__qualname__}()) "
            f"or a function text -> list of tokens."
        )
    method = getattr(tokenizer, "tokenize", None)
    function = method if callable(method) else tokenizer if callable(tokenizer) else None
    if function is None:
        raise ValueError(
            f"tokenizer={shown_value(tokenizer)} ({type(tokenizer).__name__}) is neither a name of "
            f"{list(TOKENIZER_NAMES)} nor a callable text -> list of tokens (or an object with a "
            f"tokenize method, as rouge-score's RougeScorer takes)."
        )
    name = _qualified_name(function)
    return RougeTokenizer(f"callable.{name}", split=_checked(function, name))
