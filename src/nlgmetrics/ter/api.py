"""``ter``: corpus TER and sentence TER per example (Snover et al. 2006), with sacrebleu's numbers.

TER counts the fewest edits (insertions, deletions, substitutions of words and shifts of word
blocks) that turn the hypothesis into a reference, divided by the reference length. With several
references an example takes its fewest edits over them and the *mean* length of its references
(Tercom's and sacrebleu's definition). Corpus TER sums both over the examples. References are
given per example (a string or a list of strings; ragged allowed), like the BLEU module.

One documented departure from sacrebleu: with ``normalized=True``, sacrebleu 2.x runs Tercom's
normaliser over each *reference twice* (once when it caches the references, once more when it
splits them into words) and over the hypothesis once. The normaliser is not idempotent (``it's.``
becomes ``it's .`` and then ``it 's .``), so sacrebleu scores ``it's.`` against itself 66.67.
We normalise both sides once, as Tercom does (TER of a text against itself is 0);
``normalize_references_twice=True`` reproduces sacrebleu's numbers (signature ``ref_norm:twice``).

:func:`ter_statistics` / :func:`ter_from_statistics` are the sufficient statistics
``[edits, mean reference length]`` per example and the corpus TER of their sums.

>>> r = ter(["the cat sat on the mat"], [["a cat sat on the mat", "the cat sat"]])
>>> r.main_score, r.scores["sentence_ter"], r.details()
(22.22222222222222, [22.22222222222222], {'num_edits': [1], 'ref_length': [4.5]})
>>> r.signature
'ter|asian_support:no|case:lc|no_punct:no|normalized:no|nrefs:2|version:0.1.0'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlgmetrics.core.corpus import check_summed_statistics, declared_options, score_examples, score_rows
from nlgmetrics.core.refusals import BEFORE_SCORING
from nlgmetrics.core.signature import make_signature
from nlgmetrics.core.validation import check_switches, switch_rule
from nlgmetrics.ter.result import TerResult
from nlgmetrics.ter.shifts import shifted_edits
from nlgmetrics.ter.tokenize import tercom_words


#: TER's options are all switches.
SWITCH_RULE = switch_rule("normalized", "no_punct", "asian_support", "case_sensitive", "normalize_references_twice",
                          stage=BEFORE_SCORING)


def ter_score(num_edits: float, ref_length: float) -> float:
    """TER (0-100+) from edits and reference length; an empty reference with edits is 100.

    >>> ter_score(2, 8.0), ter_score(3, 0), ter_score(0, 0)
    (25.0, 100.0, 0.0)
    """
    if ref_length > 0:
        return 100 * (num_edits / ref_length)
    return 100.0 if num_edits > 0 else 0.0


@dataclass(frozen=True)
class TerOptions:
    """The validated options of TER (plain bools).

    >>> TerOptions.checked(normalized=True).signature(1)
    'ter|asian_support:no|case:lc|no_punct:no|normalized:yes|nrefs:1|version:0.1.0'
    """

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False
    normalize_references_twice: bool = False

    @classmethod
    def checked(cls, **options: Any) -> TerOptions:
        """The options of :func:`ter` (the fields above, all switches; False for those not given),
        each checked."""
        values = check_switches(SWITCH_RULE, **declared_options(cls, options, "TER"))
        if values["normalize_references_twice"] and not values["normalized"]:
            # Without the normaliser a second pass changes nothing; refusing says so instead of
            # recording an option in the signature that did not act.
            raise ValueError("normalize_references_twice=True only acts with normalized=True (it reproduces "
                             "sacrebleu's second normalisation of the references); pass normalized=True too, "
                             "or drop normalize_references_twice.")
        return cls(**values)

    def signature(self, nrefs: int | str) -> str:
        """Every option that changes the number (``case`` as in the BLEU and chrF signatures)."""
        keys = {
            "case": "mixed" if self.case_sensitive else "lc",
            "normalized": self.normalized,
            "no_punct": self.no_punct,
            "asian_support": self.asian_support,
            "nrefs": nrefs,
        }
        if self.normalize_references_twice:
            keys["ref_norm"] = "twice"
        return make_signature("ter", keys)

    def words(self, text: str) -> list[str]:
        return tercom_words(text, self.normalized, self.no_punct, self.asian_support, self.case_sensitive)

    def segment(self, prediction: str, references: Sequence[str]) -> tuple[int, float]:
        """``(fewest edits over the references, mean reference length)`` of one example."""
        hyp = self.words(prediction)
        refs = [self.words(reference) for reference in references]
        if self.normalize_references_twice:  # normalised once more, as sacrebleu 2.x does
            refs = [self.words(" ".join(words)) for words in refs]
        return min(shifted_edits(hyp, ref) for ref in refs), sum(map(len, refs)) / len(refs)


def ter(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
    normalize_references_twice: bool = False,
) -> TerResult:
    """Corpus TER and sentence TER per example: sacrebleu's ``TER(...).corpus_score`` and
    ``sentence_score`` numbers. Lower is better.

    Args:
        predictions: one hypothesis per example.
        references: per example, one reference or a list of references (ragged allowed).
        normalized: Tercom's normalisation (punctuation split off, XML entities decoded, ...).
        no_punct: remove ``. , ? : ; ! " ( )`` (and, with ``asian_support``, CJK punctuation).
        asian_support: with ``normalized``, CJK characters become words; with ``no_punct``, CJK
            and full-width punctuation is removed.
        case_sensitive: keep case (default: lower-case everything, as Tercom and sacrebleu).
        normalize_references_twice: with ``normalized``, run the normaliser over each reference
            twice, as sacrebleu 2.x does (its numbers bit for bit); default once, as Tercom.

    Returns:
        :class:`~nlgmetrics.ter.result.TerResult`: ``aggregate()["ter"]`` is corpus TER (0-100+),
        with ``num_edits``, ``ref_length`` and the mean ``sentence_ter``; ``scores["sentence_ter"]``.

    Example:
        >>> r = ter(["b c a", "x"], ["a b c", "x"])
        >>> r.scores["sentence_ter"], r.main_score
        ([33.33333333333333, 0.0], 25.0)
        >>> ter(["it's."], ["it's."], normalized=True).main_score
        0.0
        >>> twice = ter(["it's."], ["it's."], normalized=True, normalize_references_twice=True)
        >>> round(twice.main_score, 2), twice.signature.split("|")[-2]
        (66.67, 'ref_norm:twice')
    """
    options = TerOptions.checked(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                                 case_sensitive=case_sensitive,
                                 normalize_references_twice=normalize_references_twice)
    segments, nrefs = score_examples(options.segment, predictions, references)
    edits, lengths = zip(*segments)  # never empty: an empty input is refused
    ref_length = 0.0
    for length in lengths:  # in order, as sacrebleu sums them
        ref_length += length
    return TerResult(
        scores={"sentence_ter": [ter_score(e, length) for e, length in segments]},
        signature=options.signature(nrefs),
        ter=ter_score(sum(edits), ref_length),
        num_edits=sum(edits),
        ref_length=ref_length,
        sentence_num_edits=edits,
        sentence_ref_length=lengths,
    )


def ter_statistics(predictions: Sequence[str], references: Sequence[str | Sequence[str]], **options: Any) -> np.ndarray:
    """Per-example sufficient statistics, shape ``(n_examples, 2)`` (float64):
    ``[fewest edits, mean reference length]``. Column sums give the corpus TER through
    :func:`ter_from_statistics`. ``options``: those of :func:`ter`.

    Example:
        >>> stats = ter_statistics(["b c a", "x"], ["a b c", "x"])
        >>> stats.tolist(), ter_from_statistics(stats.sum(axis=0))
        ([[1.0, 3.0], [0.0, 1.0]], 25.0)
    """
    segments, _ = score_examples(TerOptions.checked(**options).segment, predictions, references)
    return np.array(segments, dtype=np.float64)  # an empty input is refused


def ter_from_statistics(summed_stats: Any, **options: Any) -> float | np.ndarray:
    """TER (0-100+) from ``[edits, reference length]`` summed over examples; a 2-D array (one
    summed row per resample) gives one score per row. ``options`` are accepted (and checked) for
    symmetry with :func:`ter_statistics`; they do not enter this step.

    Example:
        >>> ter_from_statistics([[2, 8.0], [0, 0.0]]).tolist()
        [25.0, 0.0]
    """
    TerOptions.checked(**options)
    array = check_summed_statistics(summed_stats, 2, layout="[edits, reference length]", source="ter_statistics")
    return score_rows(array, lambda row: ter_score(*row))
