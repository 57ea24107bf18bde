"""Stand-ins for evaluate's own ``rouge``, ``sacrebleu``, ``chrf`` and ``ter`` modules, for the
tests of what ``evaluate.combine`` makes of their names.

evaluate names a module after its class (``camelcase_to_snakecase(type(module).__name__)``), and
``evaluate.combine`` prefixes a key that several modules share with that name. A stand-in is an
``evaluate.Metric`` whose class bears the name of the counterpart's class and whose ``compute``
returns what a given function computes: combined by evaluate's own ``combine``, stand-ins give
the keys that evaluate's modules give for those outputs. evaluate's modules themselves are
downloaded from the Hub on ``evaluate.load``, which the offline tests cannot do.

Imported by test modules as ``from tests.support.evaluate_counterparts import ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: The class of each of evaluate's counterpart modules, by the name evaluate loads it under, as
#: huggingface/evaluate defines them: metrics/rouge/rouge.py ``class Rouge``,
#: metrics/sacrebleu/sacrebleu.py ``class Sacrebleu``, metrics/chrf/chrf.py ``class ChrF``,
#: metrics/ter/ter.py ``class Ter``. Transcribed by hand: the facts the naming tests rest on.
EVALUATE_CLASS_NAMES: dict[str, str] = {"rouge": "Rouge", "sacrebleu": "Sacrebleu", "chrf": "ChrF", "ter": "Ter"}

#: ``compute(predictions, references, **options) -> output`` of a stand-in.
StandInCompute = Callable[..., dict[str, Any]]


def evaluate_module_name(counterpart: str) -> str:
    """The name evaluate gives its module ``counterpart``, by evaluate's own rule applied to the
    class name (not by nlgmetrics' record of it)."""
    from evaluate.naming import camelcase_to_snakecase

    return camelcase_to_snakecase(EVALUATE_CLASS_NAMES[counterpart])


def counterpart_stand_in(counterpart: str, compute: StandInCompute, cache_dir: Path) -> Any:
    """An ``evaluate.Metric`` named as evaluate's module ``counterpart`` whose ``compute`` returns
    ``compute(predictions, references, **options)``. It takes, as evaluate's rouge does, one
    reference (a string) or a list of references per example, the same shape in every row, and
    passes them on as given. ``cache_dir``: where evaluate keeps its cache (never the user's, whose
    folders are named after evaluate's real modules)."""
    import datasets
    import evaluate

    text = datasets.Value("string", id="sequence")

    def _info(self: Any) -> Any:
        return evaluate.MetricInfo(
            description=f"A stand-in named as evaluate's {counterpart}.", citation="", inputs_description="",
            features=[datasets.Features({"predictions": text, "references": datasets.Sequence(text)}),
                      datasets.Features({"predictions": text, "references": text})],
        )

    def _compute(self: Any, predictions: Sequence[str], references: Sequence[str | Sequence[str]],
                 **options: Any) -> dict[str, Any]:
        return compute(list(predictions), [r if isinstance(r, str) else list(r) for r in references], **options)

    cls = type(EVALUATE_CLASS_NAMES[counterpart], (evaluate.Metric,), {"_info": _info, "_compute": _compute})
    return cls(cache_dir=str(cache_dir), keep_in_memory=True)


def returning(outputs: list[dict[str, Any]]) -> StandInCompute:
    """A stand-in ``compute`` giving ``outputs`` in turn, one per call, whatever the inputs: for
    checking the keys ``combine`` writes for given outputs."""
    queue = list(outputs)

    def compute(predictions: Sequence[str], references: Sequence[Sequence[str]], **options: Any) -> dict[str, Any]:
        return queue.pop(0)

    return compute
