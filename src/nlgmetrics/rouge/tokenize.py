"""ROUGE tokenization: rouge-score's default tokenizer, with Porter stemming and stopwords.

Tokens are the maximal runs of ``[a-z0-9]`` in the lower-cased text. This is exactly what
``rouge_score.tokenize.tokenize`` produces (lower-case, replace every non-alphanumeric run by a
space, split, keep ``^[a-z0-9]+$`` tokens) and, for ASCII text, what ROUGE-1.5.5 produces
(it lower-cases A-Z, splits ``-``, blanks everything outside ``[A-Za-z0-9-]`` and keeps tokens
starting with ``[a-z0-9]``). Words longer than 3 characters are stemmed with NLTK's Porter
stemmer when asked (rouge-score's choice). Stopwords (ROUGE-1.5.5 ``-s``) are removed before
stemming, as the Perl script does.

>>> tokenize("The quick-brown FOX, 2 times!")
('the', 'quick', 'brown', 'fox', '2', 'times')
>>> tokenize("running dogs", stem=True)
('run', 'dog')
>>> tokenize("the cat", remove_stopwords=True)
('cat',)
>>> split_lines("first line\\n\\nsecond line\\n")
['first line', 'second line']
"""

from __future__ import annotations

import functools
import re

from nlgmetrics.rouge.stopwords import SMART_STOPWORDS

_TOKEN_RE = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=1)
def _porter():
    # rouge-score uses nltk's PorterStemmer in its default (NLTK_EXTENSIONS) mode.
    from nltk.stem import porter

    return porter.PorterStemmer()


@functools.lru_cache(maxsize=1 << 18)
def stem_word(word: str) -> str:
    """Porter stem of one lower-case token, memoised (the stemmer dominates tokenization time).

    >>> stem_word("connections")
    'connect'
    """
    return _porter().stem(word)


def tokenize(text: str, stem: bool = False, remove_stopwords: bool = False) -> tuple[str, ...]:
    """Split ``text`` into ROUGE tokens (see module docstring); returns a new tuple."""
    tokens = _TOKEN_RE.findall(text.lower())
    if remove_stopwords:
        tokens = [t for t in tokens if t not in SMART_STOPWORDS]
    if stem:
        # Only words longer than 3 characters are stemmed (rouge-score and ROUGE-1.5.5 agree).
        tokens = [stem_word(t) if len(t) > 3 else t for t in tokens]
    return tuple(tokens)


def split_lines(text: str) -> list[str]:
    """Sentences for ROUGE-Lsum: the non-empty newline-separated lines (rouge-score's rule)."""
    return [line for line in text.split("\n") if line]
