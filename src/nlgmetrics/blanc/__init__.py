"""BLANC (Vasilyev, Dharnidharka & Bohannon 2020): how much a summary helps a masked LM fill in
the blanks of its document, without any reference summary. Numbers equal PyPI ``blanc`` 0.3.4.

Public API:

* :func:`blanc` (``variant="help"`` or ``"tune"``), :func:`blanc_help`, :func:`blanc_tune`
  -> :class:`BlancResult` (column ``blanc``, detail ``counts``, ``signature``); :func:`refusals`
  (what each variant refuses and why);
* the formula: :func:`relative_score`, :func:`improve_score`, :func:`score_from_counts`;
* the masking: :class:`MinTokenLengths`, :class:`MaskingOptions`, :func:`is_maskable`,
  :func:`even_maskings`, :func:`random_maskings`, :func:`fit_to_window`;
* BLANC-tune's recipe: :class:`TuneSettings` (what ``blanc_tune(..., tuning=...)`` takes besides
  its main settings), and the building blocks :class:`TuneOptions` (the resolved recipe),
  :func:`tuning_examples`, :func:`finetune_copy`.

Modules: ``counts`` (the formula), ``masking`` (which tokens, the window), ``common`` (what both
variants share), ``help`` and ``tune`` (the variants), ``result`` (:class:`BlancResult`), ``api``
(:func:`blanc`).

>>> relative_score([[5, 3], [1, 1]]), improve_score([[5, 3], [1, 1]])
(0.2, 0.3333333333333333)
"""

from nlgmetrics.blanc.api import DEFAULT_VARIANT, RULES, VARIANTS, blanc, refusals
from nlgmetrics.blanc.common import BLANC_MAX_LENGTH, DEFAULT_MODEL
from nlgmetrics.blanc.counts import MEASURES, Counts, improve_score, relative_score, score_from_counts
from nlgmetrics.blanc.help import blanc_help
from nlgmetrics.blanc.masking import (
    MaskingOptions,
    MinTokenLengths,
    even_maskings,
    fit_to_window,
    is_maskable,
    random_maskings,
)
from nlgmetrics.blanc.result import BlancResult
from nlgmetrics.blanc.tune import TuneOptions, TuneSettings, blanc_tune, finetune_copy, tuning_examples

__all__ = [
    "BLANC_MAX_LENGTH",
    "DEFAULT_MODEL",
    "DEFAULT_VARIANT",
    "MEASURES",
    "RULES",
    "VARIANTS",
    "BlancResult",
    "Counts",
    "MaskingOptions",
    "MinTokenLengths",
    "TuneOptions",
    "TuneSettings",
    "blanc",
    "blanc_help",
    "blanc_tune",
    "even_maskings",
    "finetune_copy",
    "fit_to_window",
    "improve_score",
    "is_maskable",
    "random_maskings",
    "refusals",
    "relative_score",
    "score_from_counts",
    "tuning_examples",
]
