"""The check every quantized-model test makes: repeated calls each score as a naive forward does."""

from __future__ import annotations

from typing import Any

from nlgmetrics.fflm import fflm
from nlgmetrics.shannon import shannon_score

FFLM_COLUMNS = ("fflm", "delta_prior_summary", "delta_prior_document", "delta_cond_summary")


def assert_calls_score_as_naive(model: Any, tokenizer: Any, summary: str, document: str,
                                totals: dict[str, float], fflm_scores: Any, calls: int = 3) -> Any:
    """Score ``summary`` against ``document`` ``calls`` times with the Shannon score and FFLM: every
    call's log-likelihoods within 1e-4 of the naive ``totals`` and FFLM's columns within 1e-5 of
    ``fflm_scores`` (a later call must not drift: the engine may not change the model). Returns the
    last Shannon result."""
    for call in range(calls):
        shannon = shannon_score([summary], [document], model=model, model_tokenizer=tokenizer, progress=False)
        faithfulness = fflm([summary], [document], model=model, model_tokenizer=tokenizer, progress=False)
        for name in ("base", "help", "full"):
            assert abs(shannon.scores[f"ll_{name}"][0] - totals[name]) < 1e-4, (call, name)
        for name, expected in zip(FFLM_COLUMNS, fflm_scores):
            assert abs(faithfulness.scores[name][0] - expected) <= 1e-5, (call, name)
    return shannon
