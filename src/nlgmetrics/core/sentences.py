"""Offline sentence splitting shared by the document-level metrics (Shannon score, BLANC).

The reference implementation (PyPI ``blanc``) splits with NLTK's punkt model, whose data must be
downloaded. We default to ``pysbd`` (rule-based, Golden-Rules tested, no downloads), and accept any
callable ``str -> list[str]`` so users can plug in punkt (``nltk.sent_tokenize``) to reproduce
blanc's splits exactly.

>>> split_sentences("Dr. Smith went home. He slept!")
['Dr. Smith went home.', 'He slept!']
>>> split_sentences("   ")
[]
"""

from __future__ import annotations

import functools
from collections.abc import Callable

SentenceSplitter = Callable[[str], list[str]]


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
    """Return (callable, name for the signature). ``None``/"pysbd" -> default; "punkt" -> nltk."""
    if splitter is None or splitter == "pysbd":
        return split_sentences, "pysbd"
    if splitter == "punkt":
        from nltk.tokenize import sent_tokenize

        # Fail here, before any model work, and say what to do: nltk's own LookupError comes at
        # the first document (after the model has loaded) and only mentions its downloader.
        try:
            sent_tokenize("A test. Another one.")
        except LookupError:
            raise ValueError(
                "splitter='punkt' needs NLTK's punkt sentence model, which is not installed here; "
                "with a network run `python -m nltk.downloader punkt_tab`, or use "
                "splitter='pysbd' (the default, works offline)."
            ) from None
        return sent_tokenize, "punkt"
    if callable(splitter):
        return splitter, getattr(splitter, "__name__", "custom")
    raise ValueError(
        f"Unknown sentence splitter {splitter!r}; use 'pysbd' (default, offline), 'punkt' "
        f"(needs nltk's punkt data) or a callable str -> list[str]."
    )
