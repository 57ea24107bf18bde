"""Offline sentence splitting shared by the document-level metrics (Shannon score, BLANC).

The reference implementation (PyPI ``blanc``) splits with NLTK's punkt model, whose data must be
downloaded. We default to ``pysbd`` (rule-based, Golden-Rules tested, no downloads), and accept any
callable ``str -> list[str]`` so users can plug in punkt (``nltk.sent_tokenize``) to reproduce
blanc's splits exactly. Whatever the splitter, :func:`resolve_splitter` returns it wrapped in
a check of its output: a splitter that returns something other than strings fails with its name
and what it returned, for every metric that splits (the Shannon score, BLANC), instead of deep in
a tokenizer.

>>> split_sentences("Dr. Smith went home. He slept!")
['Dr. Smith went home.', 'He slept!']
>>> split_sentences("   ")
[]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

from nlgmetrics.core.refusals import WHILE_SCORING, Refusal
from nlgmetrics.core.validation import shown_value

SentenceSplitter = Callable[[str], list[str]]

SPLITTER_RULE = Refusal(
    ("splitter",), "a `splitter` other than 'pysbd', 'punkt' (with NLTK's punkt data installed), None "
    "or a callable", "no other sentence splitter is known (and punkt's data cannot be downloaded offline)")
SPLITTER_OUTPUT_RULE = Refusal(
    ("splitter",), "a callable `splitter` that returns anything but a list of strings for a document",
    "every sentence is tokenized as text", WHILE_SCORING)


@functools.lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into stripped, non-empty sentences (English rules, no downloads)."""
    if not text.strip():
        return []
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]


def resolve_splitter(splitter: SentenceSplitter | str | None) -> tuple[SentenceSplitter, str]:
    """Return (checked callable, name for the signature). ``None``/"pysbd" -> default; "punkt" ->
    nltk; a callable -> itself. The callable's output is checked, so every metric that splits
    refuses a splitter's non-string output the same way: with the splitter's name and what it
    returned, instead of an AttributeError or a tokenizer's generic message deep in a metric.

    >>> split, name = resolve_splitter(lambda text: text.split("."))
    >>> name, split("a. b")
    ('<lambda>', ['a', ' b'])
    >>> split, name = resolve_splitter(lambda text: [1])
    >>> split("A text.")
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: The sentence splitter '<lambda>' returned int (1) as sentence 0 of a document; a splitter must return a list of strings, one per sentence.
    """
    split: Callable[[str], Iterable[str]]
    if splitter is None or splitter == "pysbd":
        split, name = split_sentences, "pysbd"
    elif splitter == "punkt":
        from nltk.tokenize import sent_tokenize

        # Fail here, before any model work, and say what to do: nltk's own LookupError comes at
        # the first document (after the model has loaded) and only mentions its downloader.
        try:
            sent_tokenize("A test. Another one.")
        except LookupError:
            raise SPLITTER_RULE.error(
                "splitter='punkt' needs NLTK's punkt sentence model, which is not installed here; "
                "with a network run `python -m nltk.downloader punkt_tab`, or use "
                "splitter='pysbd' (the default, works offline)."
            ) from None
        split, name = sent_tokenize, "punkt"
    elif callable(splitter):
        split, name = splitter, getattr(splitter, "__name__", "custom")
    else:
        raise SPLITTER_RULE.error(f"Unknown sentence splitter {splitter!r}; use 'pysbd' (default, offline), "
                                  f"'punkt' (needs nltk's punkt data) or a callable str -> list[str].")

    def refused(value: object, where: str) -> ValueError:
        return SPLITTER_OUTPUT_RULE.error(
            f"The sentence splitter {name!r} returned {type(value).__name__} ({shown_value(value, 40)}) "
            f"{where}; a splitter must return a list of strings, one per sentence.")

    def split_checked(text: str) -> list[str]:
        pieces = split(text)
        if isinstance(pieces, str) or not isinstance(pieces, Iterable):
            raise refused(pieces, "for a document")
        sentences = list(pieces)
        for index, sentence in enumerate(sentences):
            if not isinstance(sentence, str):
                raise refused(sentence, f"as sentence {index} of a document")
        return sentences

    return split_checked, name
