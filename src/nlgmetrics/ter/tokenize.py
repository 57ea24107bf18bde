"""TER's text normalisation (Tercom's ``Normalizer``, as sacrebleu's ``TercomTokenizer``).

Steps, in order: lower-case (unless ``case_sensitive``); with ``normalized``, the general and
western rules (join ``\\n-`` hyphenation, newlines to spaces, four XML entities, spaces around
ASCII punctuation and symbols, ``'s`` split off, periods and commas split off unless between
digits, a dash after a digit) and, with ``asian_support`` too, spaces around CJK characters and
punctuation; with ``no_punct``, remove ``. , ? : ; ! " ( )`` (and, with ``asian_support``, CJK and
full-width punctuation); finally collapse whitespace. The result is split on spaces into words.

>>> tercom_words("Hello, World!")
['hello,', 'world!']
>>> tercom_words("Hello, World! 3.5 &amp; it's", normalized=True)
['hello', ',', 'world', '!', '3.5', '&', 'it', "'s"]
>>> tercom_words("Hello, World!", no_punct=True, case_sensitive=True)
['Hello', 'World']
"""

from __future__ import annotations

import functools
import re

_ASIAN_PUNCT = r"([\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb])"
_FULL_WIDTH_PUNCT = r"([\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09])"


def _rules(pairs: list[tuple[str, str]]) -> list[tuple[re.Pattern, str]]:
    return [(re.compile(pattern), replacement) for pattern, replacement in pairs]


#: ``normalized``: Tercom's general and western rules (applied to " text ").
_WESTERN_BEFORE_PADDING = _rules([
    (r"\n-", ""), (r"\n", " "), (r"&quot;", '"'), (r"&amp;", "&"), (r"&lt;", "<"), (r"&gt;", ">"),
])
_WESTERN_AFTER_PADDING = _rules([
    (r"([{-~[-` -&(-+:-@/])", r" \1 "),  # ASCII punctuation and symbols (not ' , - . or digits)
    (r"'s ", r" 's "),
    (r"'s$", r" 's"),
    (r"([^0-9])([\.,])", r"\1 \2 "),
    (r"([\.,])([^0-9])", r" \1 \2"),
    (r"([0-9])(-)", r"\1 \2 "),
])
#: ``normalized`` with ``asian_support``: CJK characters and punctuation become words.
_ASIAN = _rules([
    *((rf"([{chars}])", r" \1 ") for chars in (r"\u4e00-\u9fff\u3400-\u4dbf", r"\u31c0-\u31ef\u2e80-\u2eff",
                                              r"\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f", r"\u3200-\u3f22")),
    # Tercom's kana rules as sacrebleu writes them: `^[...]` where `[^...]` was meant, so with the
    # line already padded with spaces they never match (kana stays joined); kept for parity.
    *((rf"(^|^[{kana}])([{kana}]+)(?=$|^[{kana}])", r"\1 \2 ")
      for kana in (r"\u3040-\u309f", r"\u30a0-\u30ff", r"\u31f0-\u31ff")),
    (_ASIAN_PUNCT, r" \1 "),
    (_FULL_WIDTH_PUNCT, r" \1 "),
])
_PUNCT = _rules([(r"[\.,\?:;!\"\(\)]", "")])
_ASIAN_PUNCT_REMOVAL = _rules([(_ASIAN_PUNCT, ""), (_FULL_WIDTH_PUNCT, "")])


def _apply(rules: list[tuple[re.Pattern, str]], text: str) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


@functools.lru_cache(maxsize=1 << 16)
def tercom_words(text: str, normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
                 case_sensitive: bool = False) -> list[str]:
    """The words TER aligns (sacrebleu: ``TercomTokenizer(...)(text.rstrip()).split()``).

    Cached; callers must not modify the returned list.
    """
    text = text.rstrip()
    if not text:
        return []
    if not case_sensitive:
        text = text.lower()
    if normalized:
        text = _apply(_WESTERN_AFTER_PADDING, f" {_apply(_WESTERN_BEFORE_PADDING, text)} ")
        if asian_support:
            text = _apply(_ASIAN, text)
    if no_punct:
        text = _apply(_PUNCT, text)
        if asian_support:
            text = _apply(_ASIAN_PUNCT_REMOVAL, text)
    return text.split()
