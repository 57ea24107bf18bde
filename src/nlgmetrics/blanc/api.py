"""BLANC's public entry point: :func:`blanc` (either variant); its result is :class:`BlancResult`
(:mod:`nlgmetrics.blanc.result`).

``blanc(predictions, sources, variant="help")`` runs :func:`~nlgmetrics.blanc.help.blanc_help`,
``variant="tune"`` runs :func:`~nlgmetrics.blanc.tune.blanc_tune`; options that belong to the other
variant are refused with an error that names them, rather than silently ignored.

>>> blanc(["A summary."], ["A document."], variant="help", finetune_epochs=1)
Traceback (most recent call last):
...
ValueError: blanc option(s) ['finetune_epochs'] apply to variant='tune' only (BLANC-tune); pass variant='tune' or drop them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Literal

from nlgmetrics.blanc.help import blanc_help
from nlgmetrics.blanc.result import BlancResult
from nlgmetrics.blanc.tune import blanc_tune
from nlgmetrics.core.validation import check_choice

Variant = Literal["help", "tune"]
#: ``"help"``: BLANC-help (the summary in front of each sentence); ``"tune"``: BLANC-tune (a model
#: copy fine-tuned on the summary).
VARIANTS: tuple[str, ...] = ("help", "tune")
DEFAULT_VARIANT: Variant = "help"


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
    check_choice("variant", variant, VARIANTS)
    accepted = _keyword_options(functions[variant])
    unknown = sorted(set(options) - accepted)
    if unknown:
        other = "tune" if variant == "help" else "help"
        if set(unknown) <= _keyword_options(functions[other]):
            raise ValueError(
                f"blanc option(s) {unknown} apply to variant={other!r} only (BLANC-{other}); "
                f"pass variant={other!r} or drop them.")
        raise ValueError(
            f"Unknown blanc option(s) {unknown} for variant={variant!r}; valid options: {sorted(accepted)}.")
    return functions[variant](predictions, sources, **options)
