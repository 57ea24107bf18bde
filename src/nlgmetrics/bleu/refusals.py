"""What BLEU refuses and why, as data (:mod:`nlgmetrics.core.refusals`).

One :class:`~nlgmetrics.core.refusals.Refusal` per rule the option checks of :func:`~nlgmetrics.bleu.bleu`
and its sacrebleu-named building blocks apply, in the order of their options; :func:`refusals`
gives them as the plain sentences of the model card's "What we refuse and why" section. The
switch rule is core's, declared with BLEU's switches in ``bleu/api.py`` and raised by core's check;
the other checks raise plain ``ValueError``\\ s. tests/contract/test_card_refusals.py fires every rule here
with a probe and maps every documented out-of-range setting to a rule, so the list cannot drift
from the checks.

>>> any("`smooth_method`" in sentence for sentence in refusals())
True
"""

from __future__ import annotations

from nlgmetrics.bleu.api import SMOOTH_METHODS, SWITCH_RULE, TOKENIZER_NAMES
from nlgmetrics.core.corpus import MAX_NGRAM_ORDER
from nlgmetrics.core.refusals import BEFORE_SCORING, Refusal, refusal_sentences

TOKENIZE_RULE = Refusal(
    ("tokenize",), f"a `tokenize` other than {', '.join(repr(n) for n in TOKENIZER_NAMES)} (None only in "
    "`corpus_bleu` and `sentence_bleu`, where it is sacrebleu's default, '13a')",
    "these are sacrebleu's tokenizers, and the signature must name the one used", BEFORE_SCORING)
SMOOTH_METHOD_RULE = Refusal(
    ("smooth_method",), f"a `smooth_method` other than {', '.join(repr(m) for m in SMOOTH_METHODS)}",
    "these are sacrebleu's smoothings (Chen & Cherry 2014)", BEFORE_SCORING)
SMOOTH_VALUE_RULE = Refusal(
    ("smooth_value",), "a `smooth_value` that is not a finite number >= 0 or None",
    "it is the floor of a zero precision ('floor', default 0.1) or the k added to the counts ('add-k', "
    "default 1)", BEFORE_SCORING)
ORDER_RULE = Refusal(
    ("max_ngram_order",), f"a `max_ngram_order` that is not an integer between 1 and {MAX_NGRAM_ORDER}",
    "it is the largest n-gram order of the geometric mean (BLEU uses 4), and every order up to it is counted",
    BEFORE_SCORING)
STREAMS_RULE = Refusal(
    ("references",), "`corpus_bleu` references that are not sacrebleu's reference streams (a flat list of "
    "strings, a stream whose length is not the number of hypotheses)",
    "references given per example would be silently read as streams: `bleu()` takes that layout",
    BEFORE_SCORING)
STATISTICS_RULE = Refusal(
    ("summed",), "`bleu_from_statistics` statistics that are not 2 + 2 x `max_ngram_order` finite counts >= 0 "
    "per row",
    "they must be the sums of `bleu_statistics` rows computed with the same options", BEFORE_SCORING)

#: Every rule BLEU's checks apply, in the order of its options (:func:`refusals`).
RULES: tuple[Refusal, ...] = (
    TOKENIZE_RULE, SMOOTH_METHOD_RULE, SMOOTH_VALUE_RULE, ORDER_RULE, SWITCH_RULE, STREAMS_RULE, STATISTICS_RULE,
)


def refusals() -> list[str]:
    """What BLEU refuses and why, one plain sentence per rule its option checks apply.

    >>> refusals()[3]
    'Refused: a `max_ngram_order` that is not an integer between 1 and 100, because it is the largest n-gram order of the geometric mean (BLEU uses 4), and every order up to it is counted; checked before any text is scored.'
    """
    return refusal_sentences(RULES)
