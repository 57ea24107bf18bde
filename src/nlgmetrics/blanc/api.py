"""BLANC's public entry point: :func:`blanc` (either variant) and its result, :class:`BlancResult`.

``blanc(predictions, sources, variant="help")`` runs :func:`~nlgmetrics.blanc.help.blanc_help`,
``variant="tune"`` runs :func:`~nlgmetrics.blanc.tune.blanc_tune`; options that belong to the other
variant are refused with an error that names them, rather than silently ignored.

>>> blanc(["A summary."], ["A document."], variant="help", finetune_epochs=1)
Traceback (most recent call last):
...
ValueError: blanc option(s) ['finetune_epochs'] apply to variant='tune' only (BLANC-tune); pass variant='tune' or drop them.
>>> BlancResult(scores={"blanc": [0.2]}, signature="blanc", counts=[[[5, 3], [1, 1]]]).main_score
0.2
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from nlgmetrics.blanc.counts import Counts
from nlgmetrics.core.result import Column, MetricResult
from nlgmetrics.core.validation import check_choice

Variant = Literal["help", "tune"]
#: ``"help"``: BLANC-help (the summary in front of each sentence); ``"tune"``: BLANC-tune (a model
#: copy fine-tuned on the summary).
VARIANTS: tuple[str, ...] = ("help", "tune")
DEFAULT_VARIANT: Variant = "help"


@dataclass(frozen=True)
class BlancResult(MetricResult):
    """Per-example BLANC scores (column ``blanc``), their counts, and the signature.

    ``counts[i]`` is ``[[S00, S01], [S10, S11]]``: masked tokens by whether they were predicted
    right without (first index) and with (second index) the summary's help (BLANC-help) or the
    summary-tuned model (BLANC-tune).
    """

    metric: ClassVar[str] = "blanc"
    main: ClassVar[str] = "blanc"
    columns: ClassVar[Mapping[str, Column]] = {
        "blanc": Column(True, -1.0, 1.0, "BLANC score: measure 'relative' (S01 - S10) / total in "
                        "[-1, 1], or 'improve' S01 / (S00 + S01 + S11) in [0, 1]; 0 when nothing "
                        "was masked"),
    }

    counts: list[Counts] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.counts) != len(self):
            raise ValueError(f"blanc: {len(self.counts)} count tables for {len(self)} examples")

    def details(self) -> dict[str, Any]:
        """``{"counts": [[[S00, S01], [S10, S11]], ...]}``, one table per example."""
        return {"counts": [[list(row) for row in table] for table in self.counts]}


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
    from nlgmetrics.blanc.help import blanc_help
    from nlgmetrics.blanc.tune import blanc_tune

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
