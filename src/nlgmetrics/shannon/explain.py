"""Token-level explanation of the Shannon scores (``shannon_score(..., explain=True)``).

Every score is a function of per-document-token numbers (:mod:`nlgmetrics.shannon.ratios`), so
each decomposes exactly over the document's tokens ``t``:

- ``information_difference`` = sum_t (help_t - base_t): the nats the summary saves on token t;
- ``shannon_score`` = sum_t (help_t - base_t) / (ll_full - ll_base) (all 0 when ll_full == ll_base);
- ``blanc_shannon`` = sum_t (h_t - b_t) / N: +1/N for a token the summary turns from a wrong argmax
  guess into a right one (S01), -1/N for the reverse (S10), 0 otherwise (S00, S11).

Each breakdown also carries the per-token ``ll_base``/``ll_help``/``ll_full`` and the S-cell.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> from nlgmetrics.shannon import shannon_score
>>> path = build_random_model("gpt2", tempfile.mkdtemp(), size="tiny")
>>> r = shannon_score(["Jack bought milk."], ["Jack drove. He bought milk."], model=path,
...                   progress=False, explain=True)
>>> b = r.explanations[0]["information_difference"]
>>> b.tokens[:3], abs(b.total() - r.scores["information_difference"][0]) < 1e-9
(['Jack', ' drove', '.'], True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from nlgmetrics.core.explanations import TokenBreakdown, TokenSpan, locate_pieces, token_offsets

_CELLS = ("S00", "S01", "S10", "S11")


def document_spans(tokenizer: Any, split: Callable[[str], list[str]], document: str,
                   sentences: list[tuple[int, ...]]) -> list[TokenSpan]:
    """Spans in ``document`` of the scored tokens (each sentence's first ``len(sentences[j])``
    tokens), from the same split, strip and filter as the scoring."""
    texts = [p.strip() for p in (split(document) if document.strip() else []) if p.strip()]
    texts = [t for t in texts if tokenizer(t, add_special_tokens=False)["input_ids"]]
    return [TokenSpan("document", start + a, start + b)
            for text, start, ids in zip(texts, locate_pieces(document, texts), sentences)
            for a, b in token_offsets(tokenizer, text, list(ids))]


def shannon_breakdowns(tokenizer: Any, split: Callable[[str], list[str]], summary: str, document: str,
                       pair: Any, scores: dict[str, float], signature: str) -> dict[str, TokenBreakdown]:
    """The three breakdowns of one (summary, document) pair (see the module docstring)."""
    spans = tuple(document_spans(tokenizer, split, document, list(pair.sentences)))
    gain = pair.help_logprobs - pair.base_logprobs
    span = pair.ll_full - pair.ll_base
    b, h = pair.base_correct.astype(int), pair.help_correct.astype(int)
    columns = {
        "ll_base": tuple(pair.base_logprobs.tolist()), "ll_help": tuple(pair.help_logprobs.tolist()),
        "ll_full": tuple(pair.full_logprobs.tolist()),
        "cell": tuple(_CELLS[2 * x + y] for x, y in zip(b.tolist(), h.tolist())),
    }
    texts = {"summary": summary, "document": document}

    def make(name: str, values: np.ndarray, description: str) -> TokenBreakdown:
        return TokenBreakdown(metric="shannon_score", name=name, score=scores[name], texts=texts, spans=spans,
                              values=tuple(values.tolist()), aggregation="sum", description=description,
                              signature=signature, columns=columns)

    return {
        "shannon_score": make(
            "shannon_score", gain / span if span != 0 else np.zeros_like(gain),
            "per document token: (ll_help - ll_base) of the token / (ll_full - ll_base) of the document; "
            "sums to the Shannon Score"),
        "information_difference": make(
            "information_difference", gain,
            "per document token: log p(token | summary, context) - log p(token | context), nats; sums to "
            "the Information Difference"),
        "blanc_shannon": make(
            "blanc_shannon", (h - b) / max(len(b), 1),  # N = 0: an empty array
            "per document token: +1/N if the summary makes its argmax guess right (S01), -1/N if it makes "
            "it wrong (S10), else 0 (N document tokens); sums to BLANC-Shannon"),
    }
