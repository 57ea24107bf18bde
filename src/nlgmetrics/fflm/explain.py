"""Token-level explanation of FFLM (``fflm(..., explain=True)``).

Each component is a mean of per-token terms (:func:`nlgmetrics.fflm.components.fflm_token_terms`),
so it decomposes exactly over the tokens it averages:

- ``delta_prior_summary`` = sum over the n scored summary tokens of term_i / n, with
  term_i = (log p(Y_i | X) - log p(Y_i)) * exp(1 - p(Y_i | X));
- ``delta_cond_summary``: the same with log p(Y_i | Y, X) in place of log p(Y_i);
- ``delta_prior_document`` = sum over the m scored document tokens of term_j / m;
- ``fflm`` = sum over summary tokens of (a term_prior_i + d term_cond_i) / n plus sum over document
  tokens of b term_j / m (one breakdown over both texts).

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> from nlgmetrics.fflm import fflm
>>> path = build_random_model("llama", tempfile.mkdtemp(), size="tiny")
>>> r = fflm(["A cat sat."], ["The cat sat on the mat."], model=path, progress=False, explain=True)
>>> b = r.explanations[0]["fflm"]
>>> sorted(set(s.source for s in b.spans)), abs(b.total() - r.scores["fflm"][0]) < 1e-9
(['document', 'summary'], True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nlgmetrics.core.explanations import TokenBreakdown, TokenSpan, token_offsets
from nlgmetrics.fflm.components import fflm_token_terms


def _share(terms: np.ndarray) -> np.ndarray:
    return terms / len(terms) if len(terms) else terms


def fflm_breakdowns(tokenizer: Any, summary: str, document: str, plan: Any, probs: Any,
                    weights: tuple[float, float, float], scores: dict[str, float], signature: str,
                    ) -> dict[str, TokenBreakdown]:
    """The four breakdowns of one example (see the module docstring)."""
    prior_y, prior_x, cond_y = fflm_token_terms(probs.s2s, probs.lm, probs.prefix, probs.s2s_doc, probs.lm_doc)
    summary_spans = tuple(TokenSpan("summary", a, b) for a, b in token_offsets(tokenizer, summary, list(plan.summary)))
    document_ids = list(plan.document[: plan.cond_budget])
    document_spans = tuple(TokenSpan("document", a, b) for a, b in token_offsets(tokenizer, document, document_ids))
    texts = {"summary": summary, "document": document}
    a, b, d = weights

    def make(name: str, spans: tuple[TokenSpan, ...], values: np.ndarray, description: str,
             columns: dict[str, tuple[float, ...]]) -> TokenBreakdown:
        return TokenBreakdown(metric="fflm", name=name, score=scores[name], texts=texts, spans=spans,
                              values=tuple(values.tolist()), aggregation="sum", description=description,
                              signature=signature, columns=columns)

    summary_columns = {"p_s2s": tuple(probs.s2s.tolist()), "p_lm": tuple(probs.lm.tolist()),
                       "p_prefix": tuple(probs.prefix.tolist())}
    document_columns = {"p_s2s_doc": tuple(probs.s2s_doc.tolist()), "p_lm_doc": tuple(probs.lm_doc.tolist())}
    return {breakdown.name: breakdown for breakdown in (
        make("fflm", summary_spans + document_spans,
             np.concatenate([a * _share(prior_y) + d * _share(cond_y), b * _share(prior_x)]),
             f"summary token: ({a:g} * prior term + {d:g} * cond term) / n; document token: {b:g} * "
             f"prior term / m; sums to FFLM", {}),
        make("delta_prior_summary", summary_spans, _share(prior_y),
             "per summary token: (log p(y|X) - log p(y)) * exp(1 - p(y|X)) / n; sums to Delta_prior(Y)",
             summary_columns),
        make("delta_prior_document", document_spans, _share(prior_x),
             "per document token: (log p(x|Y) - log p(x)) * exp(1 - p(x|Y)) / m; sums to Delta_prior(X)",
             document_columns),
        make("delta_cond_summary", summary_spans, _share(cond_y),
             "per summary token: (log p(y|X) - log p(y|Y,X)) * exp(1 - p(y|X)) / n; sums to Delta_cond(Y)",
             summary_columns),
    )}
