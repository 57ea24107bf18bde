"""BLANC's public entry point: :func:`blanc` (either variant); its result is :class:`BlancResult`
(:mod:`nlgmetrics.blanc.result`).

``blanc(predictions, sources, variant="help")`` runs :func:`~nlgmetrics.blanc.help.blanc_help`,
``variant="tune"`` runs :func:`~nlgmetrics.blanc.tune.blanc_tune`; options that belong to the other
variant are refused with an error that names them, rather than silently ignored.

>>> blanc(["A summary."], ["A document."], variant="help", finetune_epochs=1)
Traceback (most recent call last):
...
nlgmetrics.core.refusals.OptionError: blanc option(s) ['finetune_epochs'] apply to variant='tune' only (BLANC-tune); pass variant='tune' or drop them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Literal

from nlgmetrics.blanc.common import MAX_LENGTH_ROOM_RULE, MEASURE_RULE, SWITCH_RULE
from nlgmetrics.blanc.help import FILLER_RULE, FILLER_VOCABULARY_RULE, blanc_help
from nlgmetrics.blanc.masking import MASKING_RULE
from nlgmetrics.blanc.result import BlancResult
from nlgmetrics.blanc.tune import TUNE_RULES, blanc_tune
from nlgmetrics.core.refusals import Refusal, refusal_sentences
from nlgmetrics.core.sentences import SPLITTER_OUTPUT_RULE, SPLITTER_RULE
from nlgmetrics.core.validation import (
    CACHE_DIR_RULE,
    BATCH_SIZE_RULE,
    MAX_LENGTH_RULE,
    TOKEN_BUDGET_RULE,
    check_choice,
)

Variant = Literal["help", "tune"]
#: ``"help"``: BLANC-help (the summary in front of each sentence); ``"tune"``: BLANC-tune (a model
#: copy fine-tuned on the summary).
VARIANTS: tuple[str, ...] = ("help", "tune")
DEFAULT_VARIANT: Variant = "help"

VARIANT_RULE = Refusal(
    ("variant",), "a `variant` other than 'help' or 'tune', or an option of the other variant (e.g. "
    "`finetune_epochs` with variant='help') or of neither",
    "an option that the variant does not read would be silently ignored")
#: The rules both variants' checks apply, then each variant's own (:func:`refusals`).
SHARED_RULES: tuple[Refusal, ...] = (
    VARIANT_RULE, MEASURE_RULE, MASKING_RULE, TOKEN_BUDGET_RULE, BATCH_SIZE_RULE, MAX_LENGTH_RULE,
    MAX_LENGTH_ROOM_RULE, SPLITTER_RULE, SPLITTER_OUTPUT_RULE, SWITCH_RULE, CACHE_DIR_RULE,
)
RULES: dict[str, tuple[Refusal, ...]] = {
    "help": (*SHARED_RULES, FILLER_RULE, FILLER_VOCABULARY_RULE),
    "tune": (*SHARED_RULES, *TUNE_RULES),
}


def refusals(variant: Variant = DEFAULT_VARIANT) -> list[str]:
    """What BLANC (``variant="help"`` or ``"tune"``) refuses and why, one plain sentence per rule its
    option checks enforce (the checks raise these very rules, so the list cannot drift from them).

    >>> any("`seed`" in sentence for sentence in refusals("tune")), any("`seed`" in s for s in refusals("help"))
    (True, False)
    """
    with VARIANT_RULE.enforced():
        check_choice("variant", variant, VARIANTS)
    return refusal_sentences(RULES[variant])


def _keyword_options(function: Callable[..., Any]) -> set[str]:
    return {name for name, parameter in inspect.signature(function).parameters.items()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY}


def blanc(
    predictions: Sequence[str], sources: Sequence[str], *, variant: Variant = DEFAULT_VARIANT,
    **options: Any,
) -> BlancResult:
    """BLANC of each summary ``predictions[i]`` for its document ``sources[i]``.

    ``variant="help"`` (default): :func:`~nlgmetrics.blanc.help.blanc_help`; ``variant="tune"``:
    :func:`~nlgmetrics.blanc.tune.blanc_tune`; ``options`` are that function's keyword options.
    An option of the other variant only (e.g. ``finetune_epochs`` for help, ``filler_token`` for
    tune) or an unknown one raises ``ValueError`` naming it, before any model is loaded.
    """
    functions = {"help": blanc_help, "tune": blanc_tune}
    with VARIANT_RULE.enforced():
        check_choice("variant", variant, VARIANTS)
    accepted = _keyword_options(functions[variant])
    unknown = sorted(set(options) - accepted)
    if unknown:
        other = "tune" if variant == "help" else "help"
        if set(unknown) <= _keyword_options(functions[other]):
            raise VARIANT_RULE.error(
                f"blanc option(s) {unknown} apply to variant={other!r} only (BLANC-{other}); "
                f"pass variant={other!r} or drop them.")
        raise VARIANT_RULE.error(
            f"Unknown blanc option(s) {unknown} for variant={variant!r}; valid options: {sorted(accepted)}.")
    return functions[variant](predictions, sources, **options)
