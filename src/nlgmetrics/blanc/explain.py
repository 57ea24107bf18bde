"""Token-level explanation of BLANC (``blanc(..., explain=True)``, both variants).

Every masked document token lands in one cell of ``S[base correct][help correct]``
(:mod:`nlgmetrics.blanc.counts`), so both measures decompose exactly over the masked tokens:

- ``relative`` = sum_t (h_t - b_t) / N: +1/N for a token the summary (BLANC-help) or the
  summary-tuned model (BLANC-tune) turns from a wrong guess into a right one (S01), -1/N for the
  reverse (S10), 0 for S00 and S11 (N masked tokens);
- ``improve`` = sum_t [t in S01] / (S00 + S01 + S11).

A token masked in several copies (a repeated sentence) appears once per copy. Spans point into the
user's document: BLANC reads it after Unicode NFKD, mapped back character by character.

>>> explained_values([(0, 1), (1, 0), (1, 1), (0, 1)], "relative")
[0.25, -0.25, 0.0, 0.25]
>>> explained_values([(0, 1), (1, 0), (1, 1), (0, 1)], "improve")
[0.3333333333333333, 0.0, 0.0, 0.3333333333333333]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nlgmetrics.blanc.common import clean_text, tokenize_text
from nlgmetrics.core.explanations import (
    TokenBreakdown,
    TokenSpan,
    locate_pieces,
    map_span,
    normalization_map,
    token_offsets,
)

#: One masked token of one example: (sentence index, position in the sentence, base right, help right).
Outcome = tuple[int, int, int, int]


def masked_outcomes(sentence: int, positions: Sequence[int], truth: Sequence[str], base: Sequence[int],
                    helped: Sequence[int], tokenizer: Any) -> list[Outcome]:
    """The cell of each masked token of one masked copy (the comparison of
    :func:`nlgmetrics.blanc.common.tally`: predicted token string == true token string)."""
    to_token = tokenizer.convert_ids_to_tokens
    return [(sentence, p, int(b == t), int(h == t))
            for p, t, b, h in zip(positions, truth, to_token(list(base)), to_token(list(helped)))]


def explained_values(cells: Sequence[tuple[int, int]], measure: str) -> list[float]:
    """Each masked token's contribution to ``measure`` ('relative' or 'improve')."""
    if measure == "relative":
        return [(h - b) / len(cells) for b, h in cells] if cells else []
    denominator = sum(1 for b, h in cells if not (b == 1 and h == 0))
    return [1.0 / denominator if (b, h) == (0, 1) else 0.0 for b, h in cells]


def sentence_token_spans(tokenizer: Any, split: Callable[[str], Any], document: str) -> list[list[tuple[int, int]]]:
    """Per sentence of the document as BLANC reads it, the span in ``document`` of each WordPiece."""
    if not document:
        return []
    normalized, where = normalization_map(document, clean_text)
    sentences = list(split(normalized))
    return [[map_span(where, start + a, start + b)
             for a, b in token_offsets(tokenizer, sentence, tokenize_text(tokenizer, sentence), by="tokens")]
            for sentence, start in zip(sentences, locate_pieces(normalized, sentences))]


def blanc_breakdown(tokenizer: Any, split: Callable[[str], Any], summary: str, document: str,
                    outcomes: Sequence[Outcome], variant: str, measure: str, score: float,
                    signature: str) -> TokenBreakdown:
    """The breakdown of one example's BLANC score (see the module docstring)."""
    spans_by_sentence = sentence_token_spans(tokenizer, split, document)
    ordered = sorted(outcomes, key=lambda o: (o[0], o[1]))
    spans = tuple(TokenSpan("document", *spans_by_sentence[s][p]) for s, p, _, _ in ordered)
    cells = [(b, h) for _, _, b, h in ordered]
    helper = "the summary in front of the sentence" if variant == "help" else "the model tuned on the summary"
    formula = ("+1/N if right only with help (S01), -1/N if right only without (S10), else 0"
               if measure == "relative" else "1/(S00 + S01 + S11) if right only with help (S01), else 0")
    return TokenBreakdown(
        metric="blanc", name="blanc", score=score, texts={"summary": summary, "document": document},
        spans=spans, values=tuple(explained_values(cells, measure)), aggregation="sum",
        description=f"BLANC-{variant} ({measure}) per masked document token, help = {helper}: {formula}; "
                    f"sums to the score",
        signature=signature, columns={"cell": tuple(f"S{b}{h}" for b, h in cells)},
    )
