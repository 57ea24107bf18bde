"""Shannon Score, Information Difference and BLANC-Shannon (Egan, Vasilyev & Bohannon, AAAI 2022):
how much a summary helps a causal LM predict its source document (see :mod:`nlgmetrics.shannon.api`).

Public API (``__all__``): :func:`shannon_score` (``predictions`` = summaries, ``sources`` =
documents) -> :class:`ShannonResult`; :func:`refusals` (what it refuses and why);
:func:`shannon_ratios` (the formulas). The defaults are constants of :mod:`nlgmetrics.shannon.api`.

Layout: ``ratios`` (the formulas), ``planning`` (which queries the engine scores), ``scoring``
(running and assembling one chunk of documents), ``api`` (the metric and its result).

>>> shannon_ratios(-10.0, -7.0, -4.0, [[5, 3], [1, 1]])
(0.5, 3.0, 0.2)
>>> ShannonResult.main, sorted(ShannonResult.columns)
('shannon_score', ['blanc_shannon', 'information_difference', 'll_base', 'll_full', 'll_help', 'shannon_score'])
"""

from nlgmetrics.shannon.api import ShannonResult, refusals, shannon_score
from nlgmetrics.shannon.ratios import shannon_ratios

# Not in __all__, importable here because the tests name them here (RULES) and every LM metric's
# package offers its default model under this name.
from nlgmetrics.shannon.api import DEFAULT_MODEL, RULES

__all__ = [
    "ShannonResult",
    "refusals",
    "shannon_ratios",
    "shannon_score",
]
