"""Helpers for the tests of the reference-based ``evaluate`` modules (ROUGE, BLEU, chrF, TER,
InfoLM) and of the drop-in tests (tests/contract/test_dropin.py): feeding a module in batches, ordering a
corpus of mixed reference shapes, and the references in the shapes the reference implementations
take (sacrebleu's streams: what evaluate's sacrebleu, chrf and ter pass to sacrebleu).

Imported by test modules as ``from tests.support.evaluate_support import ...``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: The two orders of a mixed corpus: evaluate casts a batch to the shape of its first row, so both
#: a list of references first and a single string first must give the library's numbers.
FIRST_SHAPES = ("list", "string")


def compute_in_two_batches(module: Any, predictions: Sequence[str], references: Sequence[Any], split: int,
                           **options: Any) -> dict[str, Any]:
    """``module.add_batch`` the examples before ``split``, then the rest, then ``compute(**options)``."""
    module.add_batch(predictions=predictions[:split], references=references[:split])
    module.add_batch(predictions=predictions[split:], references=references[split:])
    return module.compute(**options)


def mixed_shapes_first(predictions: Sequence[str], references: Sequence[Any], first: str
                       ) -> tuple[list[str], list[Any]]:
    """A corpus whose example 0 has a list of references and example 1 a single string, reordered
    so that the ``first`` shape ("list" or "string") comes first (examples 0 and 1 swapped for
    "string"; the rest keep their places)."""
    assert isinstance(references[0], list) and isinstance(references[1], str), "example 0: a list, 1: a string"
    if first not in FIRST_SHAPES:
        raise AssertionError(f"first={first!r}; choose one of {FIRST_SHAPES}")
    order = list(range(len(predictions)))
    if first == "string":
        order[0], order[1] = 1, 0
    return [predictions[i] for i in order], [references[i] for i in order]


def reference_lists(references: Sequence[str | list[str]]) -> list[list[str]]:
    """Each example's references as a list (a single string becomes a one-item list)."""
    return [[r] if isinstance(r, str) else r for r in references]


def sacrebleu_streams(references: Sequence[list[str]]) -> list[list[str | None]]:
    """Per-example reference lists -> sacrebleu's reference streams (None = missing)."""
    width = max(len(r) for r in references)
    return [[r[k] if k < len(r) else None for r in references] for k in range(width)]
