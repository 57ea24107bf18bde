"""Which tokens BLANC masks, and how a sentence and its help are cut to the model's window.

All of it follows PyPI ``blanc`` 0.3.4 (``blanc.utils``) exactly; tests/unit/blanc/test_blanc.py compares each
function with blanc's own on generated inputs.

- :func:`is_maskable` / :func:`maskable_flags`: only tokens long enough to be worth guessing;
- :func:`even_maskings`: blanc's even masking (every ``gap``-th token, ``gap_mask`` at a time);
- :func:`random_maskings`: blanc's random masking (BLANC-tune's tuning data, optional);
- :func:`fit_to_window`: blanc's truncation of ``[CLS] help sentence [SEP]``.

>>> even_maskings(["alpha", "beta", "the", "gamma"], 2, 1, MinTokenLengths())
[(0,), (1, 3)]
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from nlgmetrics.core.refusals import Refusal
from nlgmetrics.core.validation import check_int

WORDPIECE_CONTINUATION = "##"

#: blanc's defaults (its current ones: the paper used ``gap=6``).
DEFAULT_GAP = 2
DEFAULT_GAP_MASK = 1
DEFAULT_MIN_TOKEN_LENGTH_NORMAL = 4
DEFAULT_MIN_TOKEN_LENGTH_LEAD = 2
DEFAULT_MIN_TOKEN_LENGTH_FOLLOWUP = 100  # continuation pieces: never masked
DEFAULT_LEN_SENT_ALLOW_CUT = 100


MASKING_RULE = Refusal(
    ("gap", "gap_mask", "min_token_length_normal", "min_token_length_lead", "min_token_length_followup",
     "len_sent_allow_cut"),
    "a `gap` or `gap_mask` that is not a positive integer, or a `min_token_length_*` or "
    "`len_sent_allow_cut` that is not an integer >= 0",
    "they are a step and a count of masked tokens, and lengths in characters and tokens")


@dataclass(frozen=True)
class MinTokenLengths:
    """Shortest tokens (in characters, without ``##``) worth masking.

    ``normal``: a whole word; ``lead``: the first piece of a word split in pieces; ``followup``: a
    ``##`` continuation piece (blanc's default 100 means: never).
    """

    normal: int = DEFAULT_MIN_TOKEN_LENGTH_NORMAL
    lead: int = DEFAULT_MIN_TOKEN_LENGTH_LEAD
    followup: int = DEFAULT_MIN_TOKEN_LENGTH_FOLLOWUP


@dataclass(frozen=True)
class MaskingOptions:
    """Options that decide which tokens are masked and how long sentences are cut (blanc's names)."""

    gap: int = DEFAULT_GAP
    gap_mask: int = DEFAULT_GAP_MASK
    lengths: MinTokenLengths = field(default_factory=MinTokenLengths)
    len_sent_allow_cut: int = DEFAULT_LEN_SENT_ALLOW_CUT

    def validate(self, prefix: str = "") -> MaskingOptions:
        """Check every option; return a copy holding plain Python ints (numpy ints accepted).

        ``prefix`` names the options in errors (``"tuning."``: BLANC-tune's ``TuneSettings``).

        >>> MaskingOptions(gap=0).validate("tuning.")
        Traceback (most recent call last):
        ...
        nlgmetrics.core.refusals.OptionError: `tuning.gap` must be a positive integer, got 0.
        """
        with MASKING_RULE.enforced():
            # Under the names the signature records: a step and a count (>= 1), then lengths (>= 0).
            gap, gap_mask, *lengths = (
                check_int(f"{prefix}{name}", value, minimum=1 if name.startswith("gap") else 0)
                for name, value in self.signature_fields().items())
            cut = check_int("len_sent_allow_cut", self.len_sent_allow_cut, minimum=0)
        return MaskingOptions(gap, gap_mask, MinTokenLengths(*lengths), cut)

    def signature_fields(self, suffix: str = "") -> dict[str, int]:
        """Which tokens are masked, under blanc's option names (``suffix="_tune"``: BLANC-tune's
        tuning masking; ``len_sent_allow_cut`` apart: it cuts document sentences, which only the
        inference masking sees).

        >>> MaskingOptions().signature_fields("_tune")["min_token_length_lead_tune"]
        2
        """
        return {
            f"gap{suffix}": self.gap,
            f"gap_mask{suffix}": self.gap_mask,
            **{f"min_token_length_{name}{suffix}": value for name, value in asdict(self.lengths).items()},
        }


def is_maskable(token: str, next_token: str, lengths: MinTokenLengths) -> bool:
    """Whether ``token`` (followed by ``next_token``, '' at the end) is long enough to mask.

    >>> is_maskable("house", "", MinTokenLengths()), is_maskable("the", "", MinTokenLengths())
    (True, False)
    >>> is_maskable("re", "##use", MinTokenLengths()), is_maskable("##use", "", MinTokenLengths())
    (True, False)
    """
    if token.startswith(WORDPIECE_CONTINUATION):
        return len(token) - len(WORDPIECE_CONTINUATION) >= lengths.followup
    if next_token.startswith(WORDPIECE_CONTINUATION):
        return len(token) >= lengths.lead
    return len(token) >= lengths.normal


def maskable_flags(tokens: Sequence[str], lengths: MinTokenLengths) -> list[bool]:
    """``is_maskable`` for every token of a sentence."""
    return [is_maskable(token, next_token, lengths) for token, next_token in zip(tokens, [*tokens[1:], ""])]


def even_maskings(
    tokens: Sequence[str], gap: int, gap_mask: int, lengths: MinTokenLengths
) -> list[tuple[int, ...]]:
    """blanc's even masking: one masking per offset ``0 .. gap-1`` (gap capped at the length).

    Masking ``m`` covers the positions whose ``index % gap`` lies in the window of ``gap_mask``
    offsets starting at ``m`` (wrapping around), restricted to maskable tokens; maskings that
    would mask nothing are dropped. Every maskable token is masked in exactly one masking when
    ``gap_mask == 1``.

    >>> even_maskings(["alpha", "beta", "gamma"], 3, 2, MinTokenLengths())
    [(0, 1), (1, 2), (0, 2)]
    """
    gap = min(gap, len(tokens))
    flags = maskable_flags(tokens, lengths)
    maskings: list[tuple[int, ...]] = []
    for start in range(gap):
        end = start + gap_mask
        # blanc's window: offsets start .. end - 1, wrapping once past gap - 1 (to end % gap).
        window = set(range(start, min(end, gap))) | set(range(end % gap if end >= gap else 0))
        chosen = tuple(index for index, flag in enumerate(flags) if flag and index % gap in window)
        if chosen:
            maskings.append(chosen)
    return maskings


def random_maskings(
    tokens: Sequence[str], p_mask: float, lengths: MinTokenLengths, rng: random.Random
) -> list[tuple[int, ...]]:
    """blanc's random masking: shuffle the maskable positions with ``rng``, cut them in groups of
    ``max(int(len(tokens) * p_mask), 1)``; each group is one masking (positions sorted).

    >>> random_maskings(["alpha", "beta", "gamma"], 0.5, MinTokenLengths(), random.Random(0))
    [(0,), (2,), (1,)]
    """
    per_masking = max(int(len(tokens) * p_mask), 1)
    positions = [i for i, flag in enumerate(maskable_flags(tokens, lengths)) if flag]
    rng.shuffle(positions)
    return [
        tuple(sorted(positions[i : i + per_masking]))
        for i in range(0, len(positions), per_masking)
    ]


def _keep_leading_sentences(sentences: Sequence[Sequence[str]], room: int) -> list[str]:
    """The leading whole sentences that fit in ``room`` tokens; if not even the first one fits,
    the *last* ``room`` tokens of the first sentence (blanc's ``truncate_list_of_lists``)."""
    first = list(sentences[0])
    if len(first) > room:
        return first[len(first) - room :]
    kept: list[str] = []
    for sentence in sentences:
        if len(kept) + len(sentence) > room:
            break
        kept.extend(sentence)
    return kept


def fit_to_window(
    sentence: Sequence[str],
    summary_sentences: Sequence[Sequence[str]],
    *,
    len_sep: int,
    len_sent_allow_cut: int,
    max_length: int,
) -> tuple[list[str], list[str], bool]:
    """Cut ``[CLS] summary sep sentence [SEP]`` to ``max_length`` tokens as blanc does.

    First the sentence loses tokens from its end, but is not cut below ``len_sent_allow_cut``
    tokens; if that is not enough, the summary keeps only its leading whole sentences that fit
    (or, when even its first sentence is too long, that sentence's last tokens). Beyond blanc, a
    sentence that cannot fit even with no summary is cut to the window (blanc would fail an
    assertion; this needs a model window under ``len_sent_allow_cut`` + 2 tokens).
    Returns ``(sentence_tokens, summary_tokens, truncated)``.

    >>> fit_to_window(["a"] * 8, [["b"] * 3, ["c"] * 3], len_sep=0, len_sent_allow_cut=4, max_length=12)
    (['a', 'a', 'a', 'a'], ['b', 'b', 'b', 'c', 'c', 'c'], True)
    >>> fit_to_window(["a"] * 8, [["b"] * 3, ["c"] * 3], len_sep=0, len_sent_allow_cut=4, max_length=10)
    (['a', 'a', 'a', 'a'], ['b', 'b', 'b'], True)
    """
    sentence = list(sentence)
    summary_tokens = [token for part in summary_sentences for token in part]
    excess = 2 + len(summary_tokens) + len_sep + len(sentence) - max_length
    if excess <= 0:
        return sentence, summary_tokens, False
    cut = min(excess, len(sentence) - len_sent_allow_cut)
    # A negative cut keeps the sentence whole (slicing past its end), as in blanc.
    sentence = sentence[: len(sentence) - cut]
    if excess > cut:
        room = max_length - 2 - len_sep - len(sentence)
        if room < 0 or not summary_tokens:
            # Only reachable with tiny windows: drop the help, cut the sentence to what is left.
            sentence = sentence[: max(max_length - 2 - len_sep, 0)]
            return sentence, [], True
        summary_tokens = _keep_leading_sentences(summary_sentences, room)
    return sentence, summary_tokens, True
