"""The result of :func:`nlgmetrics.ter.ter`: corpus TER and sentence TER per example.

- ``scores["sentence_ter"]``: TER of each example (its fewest edits over its references, divided
  by the mean reference length, times 100), [0, inf), lower is better (sacrebleu's
  ``sentence_ter``; above 100 when there are more edits than reference words);
- ``aggregate()``: ``ter`` (corpus TER: edits summed over the corpus divided by the summed mean
  reference lengths, times 100; the headline, ``main``), ``num_edits``, ``ref_length`` and the
  mean ``sentence_ter``;
- ``details()``: each example's ``num_edits`` and ``ref_length`` (mean over its references).

>>> r = TerResult(scores={"sentence_ter": [0.0, 50.0]}, signature="ter|version:0.1.0",
...               ter=20.0, num_edits=1, ref_length=5.0)
>>> r.main, r.main_score, r.higher_is_better, r.column("ter").range_text()
('ter', 20.0, False, '[0, inf)')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from nlgmetrics.core.corpus import CorpusResult
from nlgmetrics.core.result import Column

@dataclass(frozen=True)
class TerResult(CorpusResult):
    """Sentence TER per example and the corpus TER with its statistics (module docstring)."""

    metric: ClassVar[str] = "ter"
    main: ClassVar[str] = "ter"
    columns: ClassVar[Mapping[str, Column]] = {
        "sentence_ter": Column(False, 0.0, math.inf,
                               "sentence TER (0-100+) of each example: fewest edits / mean reference length"),
    }
    #: What the headline number (``aggregate()["ter"]``, not a per-example column) means.
    corpus_column: ClassVar[Column] = Column(
        False, 0.0, math.inf,
        "corpus TER (0-100+): edits summed over the corpus / summed mean reference lengths")
    plain_tuples: ClassVar[Mapping[str, type]] = {"sentence_num_edits": int, "sentence_ref_length": float}

    ter: float = 0.0  #: corpus TER, 0-100+ (lower is better)
    num_edits: int = 0  #: edits summed over the corpus (each example: its best reference)
    ref_length: float = 0.0  #: mean reference lengths (words) summed over the corpus
    sentence_num_edits: tuple[int, ...] = ()
    sentence_ref_length: tuple[float, ...] = ()

    def aggregate(self) -> dict[str, float]:
        """Corpus ``ter``, ``num_edits``, ``ref_length`` and the mean ``sentence_ter``."""
        return {"ter": float(self.ter), "num_edits": float(self.num_edits), "ref_length": float(self.ref_length),
                **self.mean()}

    def details(self) -> dict[str, Any]:
        """Each example's edits and mean reference length."""
        return {"num_edits": list(self.sentence_num_edits), "ref_length": list(self.sentence_ref_length)}
