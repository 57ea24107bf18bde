"""The Shannon Score tests' documents and summaries, and the call they score them with (used by
tests/unit/shannon and tests/parity/test_shannon_parity.py)."""

from __future__ import annotations

from nlgmetrics.shannon import shannon_score

DOC_A = (
    "The city council met on Monday to discuss the new park. Residents asked for more trees and "
    "a playground. The mayor said the plan would cost two million dollars."
)
DOC_B = "Jack drove his minivan to the bazaar. He bought milk and honey for his large family."
SUMM_A1 = "The council discussed a park costing two million dollars."
SUMM_A2 = "Residents want trees."
SUMM_B = "Jack bought milk and honey."


def score(model_dir, summs, docs, **kwargs):
    """shannon_score(summaries, documents) on a model directory, without a progress bar."""
    kwargs.setdefault("progress", False)
    return shannon_score(summs, docs, model=str(model_dir), **kwargs)


def column(result, name):
    return result.scores[name]
