"""What TER refuses and why, as data (:mod:`nlgmetrics.core.refusals`).

One :class:`~nlgmetrics.core.refusals.Refusal` per rule the option checks of
:func:`~nlgmetrics.ter.ter` (its ``TerOptions``) and its statistics functions apply, in the order of
their options; :func:`refusals` gives them as the plain sentences of the model card's "What we
refuse and why" section. The switch rule is core's, declared with TER's switches in
``ter/api.py`` and raised by core's check; the other checks raise plain ``ValueError``\\ s
(``TypeError`` for an unknown option). tests/contract/test_card_refusals.py fires every rule here with a
probe, so the list cannot drift from the checks.

>>> any("`normalize_references_twice=True`" in sentence for sentence in refusals())
True
"""

from __future__ import annotations

from nlgmetrics.core.refusals import BEFORE_SCORING, Refusal, refusal_sentences
from nlgmetrics.ter.api import SWITCH_RULE

TWICE_RULE = Refusal(
    ("normalize_references_twice", "normalized"), "`normalize_references_twice=True` without `normalized=True`",
    "without the normaliser a second pass changes nothing, and the signature would record an option that did "
    "not act", BEFORE_SCORING)
OPTION_NAME_RULE = Refusal(
    ("options",), "an option that TER does not have, given to `ter_statistics` or `ter_from_statistics` "
    "(a `TypeError` listing TER's options)", "it would be silently ignored", BEFORE_SCORING)
STATISTICS_RULE = Refusal(
    ("summed_stats",), "`ter_from_statistics` statistics that are not rows of two finite numbers >= 0 "
    "(edits, reference length)", "they must be the sums of `ter_statistics` rows", BEFORE_SCORING)

#: Every rule TER's checks apply, in the order of its options (:func:`refusals`).
RULES: tuple[Refusal, ...] = (SWITCH_RULE, TWICE_RULE, OPTION_NAME_RULE, STATISTICS_RULE)


def refusals() -> list[str]:
    """What TER refuses and why, one plain sentence per rule its option checks apply.

    >>> refusals()[1]
    'Refused: `normalize_references_twice=True` without `normalized=True`, because without the normaliser a second pass changes nothing, and the signature would record an option that did not act; checked before any text is scored.'
    """
    return refusal_sentences(RULES)
