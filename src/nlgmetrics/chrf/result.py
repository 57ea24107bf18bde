"""The result of :func:`nlgmetrics.chrf.chrf`: corpus chrF (or chrF++), and sentence chrF per example.

- ``scores["sentence_chrf"]``: chrF of each example against its best reference, [0, 100], higher
  is better (sacrebleu's ``sentence_chrf``);
- ``aggregate()``: ``chrf`` (corpus chrF on sacrebleu's 0-100 scale: the n-gram statistics of
  every example, each against its best reference, summed over the corpus, then one F-score; the
  headline, ``main``) and ``sentence_chrf`` (the mean sentence chrF, a different number);
- fields: ``chrf``, the summed ``statistics`` (``[hyp, ref, match]`` per order, characters first)
  and ``char_order`` / ``word_order`` / ``beta``; ``details()``: each example's ``best_reference``
  (index into its references; the first of equal scores).

>>> r = ChrfResult(scores={"sentence_chrf": [100.0, 0.0]}, signature="chrf|version:0.1.0",
...                chrf=62.5, statistics=(3, 4, 3), best_reference=(0, 1))
>>> r.main, r.main_score, r.aggregate()["sentence_chrf"], r.details()
('chrf', 62.5, 50.0, {'best_reference': [0, 1]})
>>> r.name, r.column("chrf").range_text(), r.higher_is_better
('chrF2', '[0, 100]', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from nlgmetrics.core.corpus import CorpusResult
from nlgmetrics.core.result import Column

@dataclass(frozen=True)
class ChrfResult(CorpusResult):
    """Sentence chrF per example and the corpus chrF with its statistics (module docstring)."""

    metric: ClassVar[str] = "chrf"
    main: ClassVar[str] = "chrf"
    columns: ClassVar[Mapping[str, Column]] = {
        "sentence_chrf": Column(True, 0.0, 100.0,
                                "sentence chrF (0-100) of each example against its best reference"),
    }
    #: What the headline number (``aggregate()["chrf"]``, not a per-example column) means.
    corpus_column: ClassVar[Column] = Column(
        True, 0.0, 100.0, "corpus chrF (0-100): n-gram statistics summed over the corpus, then one F-score")
    plain_tuples: ClassVar[Mapping[str, type]] = {"statistics": int, "best_reference": int}

    chrf: float = 0.0  #: corpus chrF, 0-100
    statistics: tuple[int, ...] = ()  #: corpus [hyp, ref, match] per order (characters, then words)
    char_order: int = 6
    word_order: int = 0
    beta: float = 2.0
    best_reference: tuple[int, ...] = ()  #: per example, the index of the reference used

    @property
    def name(self) -> str:
        """sacrebleu's name of the variant: ``chrF2`` (chrF), ``chrF2++`` (word order 2), ..."""
        return f"chrF{self.beta:g}" + "+" * self.word_order

    def aggregate(self) -> dict[str, float]:
        """Corpus ``chrf`` and the mean ``sentence_chrf``."""
        return {"chrf": float(self.chrf), **self.mean()}

    def details(self) -> dict[str, Any]:
        """Each example's best reference (index into its references)."""
        return {"best_reference": list(self.best_reference)}

    def to_dict(self) -> dict[str, Any]:
        """The base layout plus the corpus ``statistics`` and the n-gram orders."""
        return {**super().to_dict(), "statistics": list(self.statistics), "char_order": self.char_order,
                "word_order": self.word_order, "beta": self.beta}
