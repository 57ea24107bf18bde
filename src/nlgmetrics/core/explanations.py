"""Token-level explanations of LM metric scores: where in the text a score comes from.

Every LM metric (Shannon, FFLM, BLANC, InfoLM) takes ``explain=True`` and then returns, per example,
``result.explanations[i]``: a ``{column: TokenBreakdown}`` mapping. A :class:`TokenBreakdown` lists
tokens as character spans of the user's own strings (``texts``) and each token's contribution
``values``, defined so that, when ``aggregation == "sum"``, the contributions add up to the reported
score (``breakdown.total() == breakdown.score`` up to float rounding, about 1e-12 relative;
``check_total`` asserts it). When a score does not decompose over tokens (``aggregation ==
"none"``, e.g. InfoLM's Fisher-Rao distance), ``values`` is None and ``columns`` still carries the
per-token quantities (e.g. each token's weight in its bag of distributions).

Explanations never change a number: the options that ask for them are not in the signature, and
with ``explain=False`` (the default) nothing here runs.

Spans come from a fast tokenizer's offset mapping (:func:`token_offsets`), shifted by where each
piece (a sentence) sits in the user's string (:func:`locate_pieces`); a normalised text (BLANC's
NFKD) is mapped back to the user's characters with :func:`normalization_map`.

>>> texts = {"document": "Cats sleep."}
>>> b = TokenBreakdown(metric="toy", name="toy", score=0.75, texts=texts,
...                    spans=(TokenSpan("document", 0, 4), TokenSpan("document", 4, 10)),
...                    values=(0.5, 0.25), aggregation="sum", description="a toy", signature="toy")
>>> b.tokens, b.total(), b.check_total()
(['Cats', ' sleep'], 0.75, 0.75)
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: ``sum``: ``math.fsum(values)`` is the score; ``none``: the score does not decompose over tokens.
AGGREGATIONS = ("sum", "none")
#: Relative tolerance of :meth:`TokenBreakdown.check_total` (float rounding of the two orders of summation).
TOTAL_TOLERANCE = 1e-9


@dataclass(frozen=True)
class TokenSpan:
    """One token: characters ``[start, end)`` of ``texts[source]`` (``source``: which input)."""

    source: str
    start: int
    end: int


@dataclass(frozen=True)
class TokenBreakdown:
    """How one score of one example comes from its tokens (see the module docstring).

    ``values[k]`` is token ``k``'s contribution (None when ``aggregation == "none"``); ``columns``
    holds other per-token quantities aligned with ``spans`` (log-probabilities, S-cells, weights).
    ``description`` says what a value is and the formula that sums them to ``score``.
    """

    metric: str
    name: str
    score: float
    texts: Mapping[str, str]
    spans: tuple[TokenSpan, ...]
    values: tuple[float, ...] | None
    aggregation: str
    description: str
    signature: str
    columns: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {self.aggregation!r}")
        if (self.values is None) != (self.aggregation == "none"):
            raise ValueError("values must be given exactly when aggregation is 'sum'")
        object.__setattr__(self, "spans", tuple(self.spans))
        if self.values is not None:
            values = tuple(float(v) for v in self.values)
            if len(values) != len(self.spans):
                raise ValueError(f"{len(values)} values for {len(self.spans)} tokens")
            object.__setattr__(self, "values", values)
        for key, column in self.columns.items():
            if len(column) != len(self.spans):
                raise ValueError(f"column {key!r} has {len(column)} entries for {len(self.spans)} tokens")
        for span in self.spans:
            text = self.texts.get(span.source)
            if text is None or not 0 <= span.start <= span.end <= len(text):
                raise ValueError(f"span {span} does not lie in texts[{span.source!r}]")

    @property
    def tokens(self) -> list[str]:
        """Each token's text: the slice of the user's string its span covers."""
        return [self.texts[s.source][s.start : s.end] for s in self.spans]

    def total(self) -> float:
        """``math.fsum(values)``: the score rebuilt from its tokens (``aggregation == "sum"`` only)."""
        if self.values is None:
            raise ValueError(f"{self.metric} {self.name}: this score does not decompose over tokens "
                             f"({self.description})")
        return math.fsum(self.values)

    def check_total(self, tolerance: float = TOTAL_TOLERANCE) -> float:
        """:meth:`total`, after checking that it equals ``score`` within ``tolerance`` (relative)."""
        total = self.total()
        if abs(total - self.score) > tolerance * max(1.0, abs(self.score)):
            raise AssertionError(f"{self.metric} {self.name}: tokens sum to {total!r}, score is {self.score!r}")
        return total

    def to_dict(self) -> dict[str, Any]:
        """Plain lists and numbers (JSON-ready)."""
        return {
            "metric": self.metric, "name": self.name, "score": self.score, "aggregation": self.aggregation,
            "description": self.description, "signature": self.signature, "texts": dict(self.texts),
            "tokens": [{"source": s.source, "start": s.start, "end": s.end, "text": t}
                       for s, t in zip(self.spans, self.tokens)],
            "values": None if self.values is None else list(self.values),
            "columns": {k: [v.item() if hasattr(v, "item") else v for v in column]  # numpy scalars to plain
                        for k, column in self.columns.items()},
        }


def locate_pieces(text: str, pieces: Sequence[str]) -> list[int]:
    """Where each piece (a sentence, in order) starts in ``text``: searched from the end of the
    previous one. A piece that is not a substring (a splitter that rewrites text) starts at the
    search position, so later pieces are still found.

    >>> locate_pieces("A cat.  A dog. A cat.", ["A cat.", "A dog.", "A cat."])
    [0, 8, 15]
    """
    starts, cursor = [], 0
    for piece in pieces:
        found = text.find(piece, cursor)
        starts.append(cursor if found < 0 else found)
        cursor = cursor if found < 0 else found + len(piece)
    return starts


def token_offsets(tokenizer: Any, text: str, tokens: Sequence[Any], *, by: str = "ids") -> list[tuple[int, int]]:
    """Character spans in ``text`` of its first ``len(tokens)`` tokens (``tokens``: ids, or token
    strings with ``by="tokens"``), the tokenization of ``text`` without special tokens.

    A fast tokenizer's offset mapping gives them when its tokenization of ``text`` starts with
    ``tokens``; otherwise each token is decoded and searched for from the previous span's end (a
    token not found gets an empty span there). Byte-level pieces of one character share its span.
    """
    n = len(tokens)
    if n == 0:
        return []
    if getattr(tokenizer, "is_fast", False):
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        ids = list(encoded["input_ids"])
        mine = ids if by == "ids" else tokenizer.convert_ids_to_tokens(ids)
        if list(mine[:n]) == list(tokens):
            return [(int(a), int(b)) for a, b in encoded["offset_mapping"][:n]]
    ids = list(tokens) if by == "ids" else tokenizer.convert_tokens_to_ids(list(tokens))
    spans, cursor, folded = [], 0, text.casefold()
    for token_id in ids:
        piece = tokenizer.decode([token_id], clean_up_tokenization_spaces=False).strip()
        piece = piece.removeprefix("##").casefold()
        found = folded.find(piece, cursor) if piece else -1
        spans.append((cursor, cursor) if found < 0 else (found, found + len(piece)))
        cursor = spans[-1][1]
    return spans


def normalization_map(text: str, normalize: Callable[[str], str] = lambda t: unicodedata.normalize("NFKD", t)
                      ) -> tuple[str, list[int]]:
    """``(normalize(text), where)``: ``where[j]`` is the index in ``text`` of normalised character
    ``j`` (plus one entry, ``len(text)``, for the end), so a span of the normalised text maps back
    to ``text[where[start] : where[end]]``. Exact when the text normalises character by character
    (NFKD does, except for rare reorderings of combining marks: then the map falls back to the
    proportional position).

    >>> normalized, where = normalization_map("café ok")
    >>> len(normalized), where[4], where[5], where[6]   # "e" + combining accent both map to "é"
    (8, 3, 4, 5)
    """
    normalized = normalize(text)
    where: list[int] = []
    for index, char in enumerate(text):
        where.extend([index] * len(normalize(char)))
    if len(where) != len(normalized):
        scale = len(text) / max(1, len(normalized))
        where = [min(len(text), int(j * scale)) for j in range(len(normalized))]
    where.append(len(text))
    return normalized, where


def map_span(where: Sequence[int], start: int, end: int) -> tuple[int, int]:
    """A span of a normalised text mapped back through :func:`normalization_map`'s ``where``."""
    begin = where[start]
    stop = where[end - 1] + 1 if end > start else begin
    return begin, max(begin, stop)
