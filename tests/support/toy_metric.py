"""A toy metric, written as a new metric is written: a library function returning its result
class, and its protocol. ``tests/unit/core/test_registry.py`` registers it with the one registry line a
new metric adds, and runs it through every front end that has no line of its own for it.

Per example, the share of the prediction's words found in its best reference (0 for an empty
prediction); the main score is their mean.

>>> toy_overlap(["a b", "c"], [["a x"], "d"]).scores
{'toy_overlap': [0.5, 0.0]}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from nlgmetrics.core.protocol import MetricProtocol, Option
from nlgmetrics.core.result import Column, MetricResult
from nlgmetrics.core.signature import make_signature


@dataclass(frozen=True)
class ToyResult(MetricResult):
    """``toy_overlap`` per example, higher is better, in [0, 1]."""

    metric: ClassVar[str] = "toy_overlap"
    main: ClassVar[str] = "toy_overlap"
    columns: ClassVar[dict[str, Column]] = {
        "toy_overlap": Column(True, 0.0, 1.0, "share of the prediction's words in its best reference"),
    }


def _share(prediction: str, reference: str, lowercase: bool) -> float:
    if lowercase:
        prediction, reference = prediction.lower(), reference.lower()
    words = prediction.split()
    found = set(reference.split())
    return sum(word in found for word in words) / len(words) if words else 0.0


def toy_overlap(predictions: Sequence[str], references: Sequence[str | Sequence[str]], *,
                lowercase: bool = False) -> ToyResult:
    """The toy metric (module docstring); ``lowercase`` compares lower-cased words."""
    per_example = [[refs] if isinstance(refs, str) else list(refs) for refs in references]
    scores = [max(_share(p, r, lowercase) for r in refs) for p, refs in zip(predictions, per_example)]
    nrefs = {len(refs) for refs in per_example}
    signature = make_signature("toy_overlap", {"case": "lc" if lowercase else "mixed",
                                               "nrefs": nrefs.pop() if len(nrefs) == 1 else "var"})
    return ToyResult(scores={"toy_overlap": scores}, signature=signature)


PROTOCOL = MetricProtocol(
    name="toy_overlap",
    title="Toy overlap",
    description="The share of the prediction's words found in its best reference.",
    citation="@misc{toy, title = {A toy metric}}",
    second_input="references",
    compute="tests.support.toy_metric:toy_overlap",
    options=(Option("lowercase", "bool", "compare lower-cased words", signature_key="case"),),
)

#: Its evaluate module (metrics/toy_overlap/toy_overlap.py), as thin as every other.
MODULE = '''"""The toy metric as an evaluate module."""

import evaluate
from nlgmetrics.apps.evaluate_adapter import ProtocolModule
from tests.support.toy_metric import PROTOCOL

_KWARGS_DESCRIPTION = "predictions, references; returns toy_overlap."


class ToyOverlap(ProtocolModule, evaluate.Metric):
    protocol = PROTOCOL
    inputs_description = _KWARGS_DESCRIPTION
'''
