"""What chrF refuses and why, as data (:mod:`nlgmetrics.core.refusals`).

One :class:`~nlgmetrics.core.refusals.Refusal` per rule the option checks of
:func:`~nlgmetrics.chrf.chrf` (its ``ChrfOptions``) and its statistics functions apply, in the order
of their options; :func:`refusals` gives them as the plain sentences of the model card's "What we
refuse and why" section. The switch rule is core's, declared with chrF's switches in
``chrf/api.py`` and raised by core's check; the other checks raise plain ``ValueError``\\ s
(``TypeError`` for an unknown option). tests/contract/test_card_refusals.py fires every rule here with a
probe and maps every documented out-of-range setting to a rule, so the list cannot drift from the
checks.

>>> any("above 1e+150" in sentence for sentence in refusals())
True
"""

from __future__ import annotations

from nlgmetrics.chrf.api import MAX_BETA, SWITCH_RULE
from nlgmetrics.core.corpus import MAX_NGRAM_ORDER
from nlgmetrics.core.refusals import BEFORE_SCORING, Refusal, refusal_sentences

ORDER_RULE = Refusal(
    ("char_order", "word_order"), f"a `char_order` or `word_order` that is not an integer between 0 and "
    f"{MAX_NGRAM_ORDER}", "they are the largest character and word n-gram orders (chrF: 6 and 0; chrF++: 6 and 2), "
    "and every order up to them is counted", BEFORE_SCORING)
NO_NGRAM_RULE = Refusal(
    ("char_order", "word_order"), "`char_order=0` with `word_order=0`", "no n-gram would be left to compare",
    BEFORE_SCORING)
BETA_RULE = Refusal(
    ("beta",), "a `beta` that is not a finite number >= 0",
    "recall counts beta times as much as precision (chrF uses 2; 0 scores precision only, as in sacrebleu)",
    BEFORE_SCORING)
BETA_RANGE_RULE = Refusal(
    ("beta",), f"a `beta` above {MAX_BETA:g}", "F-beta weighs precision by `beta**2`, which must fit a float",
    BEFORE_SCORING)
OPTION_NAME_RULE = Refusal(
    ("options",), "an option that chrF does not have, given to `chrf_statistics` or `chrf_from_statistics` "
    "(a `TypeError` listing chrF's options)", "it would be silently ignored", BEFORE_SCORING)
STATISTICS_RULE = Refusal(
    ("summed_stats",), "`chrf_from_statistics` statistics that are not 3 x (`char_order` + `word_order`) "
    "finite counts >= 0 per row", "they must be the sums of `chrf_statistics` rows computed with the same options",
    BEFORE_SCORING)

#: Every rule chrF's checks apply, in the order of its options (:func:`refusals`).
RULES: tuple[Refusal, ...] = (
    ORDER_RULE, NO_NGRAM_RULE, BETA_RULE, BETA_RANGE_RULE, SWITCH_RULE, OPTION_NAME_RULE, STATISTICS_RULE,
)


def refusals() -> list[str]:
    """What chrF refuses and why, one plain sentence per rule its option checks apply.

    >>> refusals()[3]
    'Refused: a `beta` above 1e+150, because F-beta weighs precision by `beta**2`, which must fit a float; checked before any text is scored.'
    """
    return refusal_sentences(RULES)
