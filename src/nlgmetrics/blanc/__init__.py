"""BLANC (Vasilyev, Dharnidharka & Bohannon 2020): how much a summary helps a masked LM fill in
the blanks of its document, without any reference summary. Numbers equal PyPI ``blanc`` 0.3.4.

Public API (``__all__``):

* :func:`blanc` (``variant="help"`` or ``"tune"``), :func:`blanc_help`, :func:`blanc_tune`
  -> :class:`BlancResult` (column ``blanc``, detail ``counts``, ``signature``); :func:`refusals`
  (what each variant refuses and why); :class:`TuneSettings` (what ``blanc_tune(..., tuning=...)``
  takes besides its main settings);
* the formula from the counts: :func:`relative_score`, :func:`improve_score`.

The building blocks stay in their modules: the masking (:mod:`~nlgmetrics.blanc.masking`),
BLANC-tune's recipe (:mod:`~nlgmetrics.blanc.tune`), the constants.

Modules: ``counts`` (the formula), ``masking`` (which tokens, the window), ``common`` (what both
variants share), ``help`` and ``tune`` (the variants), ``result`` (:class:`BlancResult`), ``api``
(:func:`blanc`).

>>> relative_score([[5, 3], [1, 1]]), improve_score([[5, 3], [1, 1]])
(0.2, 0.3333333333333333)
"""

from nlgmetrics.blanc.api import blanc, refusals
from nlgmetrics.blanc.counts import improve_score, relative_score
from nlgmetrics.blanc.help import blanc_help
from nlgmetrics.blanc.result import BlancResult
from nlgmetrics.blanc.tune import TuneSettings, blanc_tune

# Not in __all__, importable here because the evaluate module and the tests name them here; each
# belongs to the module it is imported from.
from nlgmetrics.blanc.api import RULES
from nlgmetrics.blanc.common import DEFAULT_MODEL

__all__ = [
    "BlancResult",
    "TuneSettings",
    "blanc",
    "blanc_help",
    "blanc_tune",
    "improve_score",
    "refusals",
    "relative_score",
]
