"""BLEU as sufficient statistics per example, and BLEU from their (resampled) sums.

How :mod:`nlgmetrics.compare` resamples BLEU (its protocol's ``resampling``): the paired tests
resample examples; for a corpus-level metric they resample each example's sufficient statistics
and recompute the corpus score from their sum (as sacrebleu does), never average sentence scores. One row per example, sacrebleu's column layout:

``[hyp_len, closest_ref_len, matches_1..N, hypothesis_ngrams_1..N]``

The statistics come from :meth:`BleuScorer.segment <nlgmetrics.bleu.BleuScorer.segment>` and the
score from :meth:`~nlgmetrics.bleu.score.BleuScore.from_counts`: the same options, defaults and
caches as :func:`nlgmetrics.bleu.bleu`.

>>> stats = bleu_statistics(["the cat sat on the mat", "a dog"], [["the cat sat on a mat"], ["a dog"]])
>>> stats.tolist()
[[6, 6, 5, 3, 2, 1, 6, 5, 4, 3], [2, 2, 2, 1, 0, 0, 2, 1, 0, 0]]
>>> from nlgmetrics.bleu import bleu
>>> bleu_from_statistics(stats.sum(axis=0)) == bleu(["the cat sat on the mat", "a dog"],
...                                                [["the cat sat on a mat"], ["a dog"]]).main_score
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nlgmetrics.bleu.api import BleuScorer, scorer_with
from nlgmetrics.core.corpus import check_summed_statistics, score_examples


def bleu_statistics(
    predictions: Sequence[str], references: Sequence[str | Sequence[str]], **options: Any
) -> np.ndarray:
    """Sufficient statistics of every example, an ``int64`` array ``(n, 2 + 2 * max_ngram_order)``.

    ``options``: those of :func:`nlgmetrics.bleu.bleu` (the smoothing options are accepted and
    only matter to :func:`bleu_from_statistics`).
    """
    scorer = BleuScorer(**options)  # validates the options; the library's defaults
    segments, _ = score_examples(scorer.segment, predictions, references)
    rows = [[hyp_len, closest, *correct, *total] for hyp_len, closest, correct, total in segments]
    return np.array(rows, dtype=np.int64).reshape(len(segments), 2 + 2 * scorer.max_ngram_order)


def bleu_from_statistics(summed: Any, **options: Any) -> float | np.ndarray:
    """Corpus BLEU (0-100) from summed statistics (one row of :func:`bleu_statistics`' layout); a
    2-D array (one summed row per resample) gives one score per row, as chrF's and TER's
    ``*_from_statistics`` do.

    The statistics are checked as theirs are (:func:`~nlgmetrics.core.corpus.check_summed_statistics`):
    the row length, and finite counts >= 0 (a negative or NaN entry would reach a logarithm).
    The elements are passed on unconverted: a ``float32`` sum (the paired bootstrap, like
    sacrebleu's) is computed in ``float32`` where sacrebleu's is, so the resampled scores are
    sacrebleu's to the last bit.

    >>> bleu_from_statistics([4, 4, 4, 3, 2, 1, 4, 3, 2, 1])
    100.0
    >>> bleu_from_statistics([4, 4, -1, 3, 2, 1, 4, 3, 2, 1])
    Traceback (most recent call last):
    ...
    ValueError: summed must hold finite non-negative counts (sums of bleu_statistics rows).
    """
    scorer = scorer_with(**options)
    order = scorer.max_ngram_order
    layout = (f"[hyp_len, closest_ref_len, matches_1..{order}, hypothesis_ngrams_1..{order}] for "
              f"max_ngram_order={order}")
    array = check_summed_statistics(summed, 2 + 2 * order, layout=layout, source="bleu_statistics",
                                    values="counts", name="summed")
    if array.ndim == 2:  # numpy rows: their elements keep the array's dtype
        return np.array([_score(scorer, row) for row in array], dtype=np.float64)
    return _score(scorer, summed)


def _score(scorer: BleuScorer, summed: Sequence[Any]) -> float:
    """BLEU of one checked row of summed statistics, with the scorer's options (its corpus score)."""
    order = scorer.max_ngram_order
    correct, total = summed[2:2 + order], summed[2 + order:]
    return scorer._score(correct, total, int(summed[0]), int(summed[1]), scorer.effective_order).score
