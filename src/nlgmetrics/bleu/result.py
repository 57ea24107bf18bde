"""The result of :func:`nlgmetrics.bleu.bleu`: corpus BLEU, and sentence BLEU per example.

- ``scores["sentence_bleu"]``: sentence BLEU of each example, [0, 100], higher is better,
  always with effective order (sacrebleu's ``sentence_bleu`` default; without it every sentence
  shorter than the maximum n-gram order scores 0), whatever the corpus ``effective_order``;
- ``aggregate()``: ``bleu`` (corpus BLEU on sacrebleu's 0-100 scale: statistics summed over
  the corpus, then one BLEU; the headline, ``main``), ``bp``, ``ratio``,
  ``precision_1``..``precision_N`` (percent), ``sys_len``, ``ref_len`` and ``sentence_bleu``
  (the mean sentence BLEU, a different number from corpus BLEU);
- fields: the corpus statistics (``bleu``, ``bp``, ``sys_len``, ``ref_len``, ``precisions``,
  ``counts``, ``totals``); ``details()``: each example's ``sys_len`` and ``ref_len``.

>>> r = BleuResult(scores={"sentence_bleu": [100.0, 0.0]}, signature="bleu|version:0.1.0",
...                bleu=50.0, bp=1.0, sys_len=4, ref_len=4, precisions=(75.0, 50.0),
...                counts=(3, 1), totals=(4, 2))
>>> r.main, r.main_score, r.aggregate()["precision_2"], r.aggregate()["sentence_bleu"]
('bleu', 50.0, 50.0, 50.0)
>>> r.column("bleu").range_text(), r.higher_is_better
('[0, 100]', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from nlgmetrics.core.corpus import CorpusResult
from nlgmetrics.core.result import Column

@dataclass(frozen=True)
class BleuResult(CorpusResult):
    """Sentence BLEU per example and the corpus BLEU with its statistics (module docstring)."""

    metric: ClassVar[str] = "bleu"
    main: ClassVar[str] = "bleu"
    columns: ClassVar[Mapping[str, Column]] = {
        "sentence_bleu": Column(
            True, 0.0, 100.0,
            "sentence BLEU (0-100) of each example, with effective order (sacrebleu's sentence default)",
        ),
    }
    #: What the headline number (``aggregate()["bleu"]``, not a per-example column) means.
    corpus_column: ClassVar[Column] = Column(
        True, 0.0, 100.0, "corpus BLEU (0-100): n-gram statistics summed over the corpus, then one BLEU")
    plain_tuples: ClassVar[Mapping[str, type]] = {
        "precisions": float, "counts": int, "totals": int, "sentence_sys_len": int, "sentence_ref_len": int,
    }

    bleu: float = 0.0  #: corpus BLEU, 0-100
    bp: float = 0.0  #: corpus brevity penalty
    sys_len: int = 0  #: hypothesis tokens in the corpus
    ref_len: int = 0  #: closest-reference tokens in the corpus
    precisions: tuple[float, ...] = ()  #: corpus n-gram precisions (percent), orders 1..N
    counts: tuple[int, ...] = ()  #: matched n-grams per order (before add-k smoothing)
    totals: tuple[int, ...] = ()  #: hypothesis n-grams per order
    sentence_sys_len: tuple[int, ...] = ()  #: hypothesis tokens of each example
    sentence_ref_len: tuple[int, ...] = ()  #: closest-reference tokens of each example

    @property
    def ratio(self) -> float:
        """Corpus hypothesis / reference length (0 when the reference length is 0)."""
        return self.sys_len / self.ref_len if self.ref_len else 0.0

    def aggregate(self) -> dict[str, float]:
        """Corpus ``bleu``, ``bp``, ``ratio``, ``precision_1..N``, ``sys_len``, ``ref_len``, and
        the mean ``sentence_bleu``."""
        precisions = {f"precision_{order}": p for order, p in enumerate(self.precisions, start=1)}
        return {"bleu": float(self.bleu), "bp": float(self.bp), "ratio": float(self.ratio), **precisions,
                "sys_len": float(self.sys_len), "ref_len": float(self.ref_len), **self.mean()}

    def details(self) -> dict[str, Any]:
        """Each example's hypothesis length and closest reference length (tokens)."""
        return {"sys_len": list(self.sentence_sys_len), "ref_len": list(self.sentence_ref_len)}

    def to_dict(self) -> dict[str, Any]:
        """The base layout plus the corpus ``counts`` and ``totals`` per n-gram order."""
        return {**super().to_dict(), "counts": list(self.counts), "totals": list(self.totals)}
