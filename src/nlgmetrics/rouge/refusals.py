"""What :func:`~nlgmetrics.rouge.rouge_family` refuses and why, as data (:mod:`nlgmetrics.core.refusals`).

One :class:`~nlgmetrics.core.refusals.Refusal` per rule its option checks apply, in the order of
its options; :func:`refusals` gives them as the plain sentences of the model card's "What we
refuse and why" section. The switch and seed rules are core's, declared with ROUGE's options in
``rouge/api.py`` and raised by core's checks; the other checks (``rouge/api.py``, ``rouge/types.py``,
``rouge/tokenizers.py``) raise plain ``ValueError``\\ s. tests/contract/test_card_refusals.py fires every rule
here with a probe and maps every documented out-of-range setting to a rule, so the list cannot
drift from the checks.

>>> any("`rougeS*`" in sentence for sentence in refusals())
True
"""

from __future__ import annotations

from nlgmetrics.core.refusals import BEFORE_SCORING, WHILE_SCORING_TEXTS, Refusal, refusal_sentences
from nlgmetrics.rouge.api import MAX_BOOTSTRAP, SEED_RULE, SWITCH_RULE
from nlgmetrics.rouge.tokenizers import TOKENIZER_NAMES
from nlgmetrics.rouge.types import MAX_ROUGE_N, MAX_SKIP_GAP

TYPE_NAME_RULE = Refusal(
    ("rouge_types",), f"a `rouge_types` entry other than `rouge1`..`rouge{MAX_ROUGE_N}`, `rougeL`, `rougeLsum`, "
    "`rougeW`, `rougeS<gap>`, `rougeSU<gap>`, `rougeS*` or `rougeSU*`", "no other ROUGE variant is implemented",
    BEFORE_SCORING)
TYPE_ORDER_RULE = Refusal(
    ("rouge_types",), f"ROUGE-N with n above {MAX_ROUGE_N} (e.g. `rouge{MAX_ROUGE_N + 1}`)",
    "published ROUGE stops at n = 4 and memorisation checks at about 50: a larger n is a typo that would "
    "cost minutes or all the memory", BEFORE_SCORING)
SKIP_GAP_RULE = Refusal(
    ("rouge_types",), f"a skip gap above {MAX_SKIP_GAP:,} (e.g. `rougeS{MAX_SKIP_GAP + 1}`; `rougeS*` and "
    "`rougeSU*` take any gap)", "a gap at least a text's length already counts every word pair, as `rougeS*` "
    "does, so a larger number is a typo", BEFORE_SCORING)
TYPE_LIST_RULE = Refusal(
    ("rouge_types",), "a `rouge_types` that is not a list of type names (a number), is empty or names a type twice",
    "the first type is the headline, and each type gives one set of columns", BEFORE_SCORING)
TOKENIZER_RULE = Refusal(
    ("tokenizer",), f"a `tokenizer` other than {', '.join(repr(n) for n in TOKENIZER_NAMES)}, None, a callable "
    "or an object with a `tokenize` method (a class instead of its instance is refused too)",
    "no other word splitter is known", BEFORE_SCORING)
TOKENIZER_OUTPUT_RULE = Refusal(
    ("tokenizer",), "a callable `tokenizer` that returns anything but a list of strings for a text",
    "its tokens are counted as they are (a string would be counted character by character)", WHILE_SCORING_TEXTS)
STEMMER_RULE = Refusal(
    ("use_stemmer",), "a `use_stemmer` other than False, True, 'porter' or 'rouge155'",
    "no other stemmer is implemented, and 1 or 'no' would silently select one", BEFORE_SCORING)
CALLABLE_STEMMING_RULE = Refusal(
    ("use_stemmer", "remove_stopwords", "tokenizer"), "`use_stemmer` or `remove_stopwords=True` with a callable "
    "`tokenizer`", "its tokens are used as they are (rouge-score silently ignores `use_stemmer` there): stem or "
    "filter inside the callable, or use a named tokenizer", BEFORE_SCORING)
CHOICE_RULE = Refusal(
    ("multi_ref", "rouge_w_normalization", "aggregation"), "a `multi_ref` other than 'best' or 'average', a "
    "`rouge_w_normalization` other than 'rouge155' or 'paper', or an `aggregation` other than 'bootstrap' or "
    "'rouge155'", "no other way of combining references, normalising ROUGE-W or aggregating is implemented",
    BEFORE_SCORING)
BETA_RULE = Refusal(
    ("beta",), "a `beta` that is not a finite number > 0",
    "F-beta weighs recall beta times as much as precision (1 gives F1)", BEFORE_SCORING)
ROUGE_W_WEIGHT_RULE = Refusal(
    ("rouge_w_weight",), "a `rouge_w_weight` that is not a finite number >= 1",
    "ROUGE-W weighs a run of k matches `k**w`, and only w >= 1 rewards consecutive matches (1 is ROUGE-L; "
    "ROUGE-1.5.5 uses 1.2)", BEFORE_SCORING)
ROUGE_W_OVERFLOW_RULE = Refusal(
    ("rouge_w_weight",), "a `rouge_w_weight` so large that ROUGE-W's numbers leave the float range for a text "
    "(the error names the largest weight for its length, `rouge_w_weight_limit`)",
    "an overflowed count would silently give 0 or NaN", WHILE_SCORING_TEXTS)
N_BOOTSTRAP_RULE = Refusal(
    ("n_bootstrap",), f"an `n_bootstrap` that is not an integer between 0 and {MAX_BOOTSTRAP:,}",
    "it is a count of resamples (0: no confidence interval), each held in memory, and the interval settles long "
    "before (ROUGE-1.5.5 uses 1000)", BEFORE_SCORING)
ROUGE155_RESAMPLES_RULE = Refusal(
    ("n_bootstrap", "aggregation"), "`n_bootstrap=0` with `aggregation='rouge155'`",
    "ROUGE-1.5.5's averages are means of bootstrap resamples", BEFORE_SCORING)
CONFIDENCE_RULE = Refusal(
    ("confidence",), "a `confidence` that is not a number strictly between 0 and 1 (e.g. 95 for 0.95)",
    "it is the interval's level as a fraction, and a 100% interval has no finite bounds", BEFORE_SCORING)

#: Every rule ROUGE's checks apply, in the order of its options (:func:`refusals`).
RULES: tuple[Refusal, ...] = (
    TYPE_NAME_RULE, TYPE_ORDER_RULE, SKIP_GAP_RULE, TYPE_LIST_RULE, TOKENIZER_RULE, TOKENIZER_OUTPUT_RULE,
    STEMMER_RULE, CALLABLE_STEMMING_RULE, SWITCH_RULE, CHOICE_RULE, BETA_RULE, ROUGE_W_WEIGHT_RULE,
    ROUGE_W_OVERFLOW_RULE, N_BOOTSTRAP_RULE, ROUGE155_RESAMPLES_RULE, CONFIDENCE_RULE, SEED_RULE,
)


def refusals() -> list[str]:
    """What the ROUGE family refuses and why, one plain sentence per rule its option checks apply.

    >>> refusals()[2]
    "Refused: a skip gap above 1,000,000 (e.g. `rougeS1000001`; `rougeS*` and `rougeSU*` take any gap), because a gap at least a text's length already counts every word pair, as `rougeS*` does, so a larger number is a typo; checked before any text is scored."
    """
    return refusal_sentences(RULES)
