"""Input checks for the ``evaluate`` modules (metrics/<name>/<name>.py), run before evaluate's own
machinery sees the inputs.

Two things go wrong inside evaluate 0.4 / datasets before a module's ``_compute`` runs:

* ``compute(predictions=[], references=[])`` on a module declaring several feature formats (one
  reference, or a list of references, per example) raises a bare ``IndexError`` while evaluate
  guesses the format from the first row;
* evaluate checks the type of the first row only, and datasets' ``Value("string")`` then casts
  every later item to ``str``: ``predictions=["a", 3]`` is scored as ``["a", "3"]``.

:class:`CheckedTextInputs` is a mixin placed before ``evaluate.Metric`` in a module's bases: its
``add_batch`` (which ``compute`` calls too) and ``add`` check every item with
:mod:`nlgmetrics.validation` (the same messages as the library functions), then hand over to
evaluate unchanged. It is a plain class (not an ``evaluate.Metric``), so ``evaluate.load`` still
finds the module's own class.

>>> class Fake:  # stands in for evaluate.Metric: records what reaches it
...     features = {"predictions": None, "references": None}
...     def _feature_names(self):
...         return list(self.features)
...     def add_batch(self, **batch):
...         return "added"
>>> class Module(CheckedTextInputs, Fake):
...     pass
>>> Module().add_batch(predictions=["a", "b"], references=["a", "b"])
'added'
>>> Module().add_batch(predictions=["a", 3], references=["a", "b"])
Traceback (most recent call last):
...
ValueError: `predictions[1]` is int (3), not a string; convert every item to str (use '' for a missing text).
>>> Module().add_batch(predictions=[], references=[])
Traceback (most recent call last):
...
ValueError: `predictions` is empty; pass at least one example.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from nlgmetrics.validation import as_texts, check_text

#: How the single-example ``add`` names its arguments (evaluate: ``prediction=``, ``reference=``).
_SINGULAR = {"predictions": "prediction", "references": "reference"}


def _list_columns(features: Any) -> set[str]:
    """Columns for which some declared feature format takes a list of strings per example (e.g.
    several references), rather than one string."""
    formats = features if isinstance(features, list) else [features]
    return {
        name
        for declared in formats
        if isinstance(declared, Mapping)
        for name, feature in declared.items()
        if getattr(feature, "dtype", None) != "string"
    }


def check_text_item(label: str, item: Any, lists_allowed: bool) -> None:
    """One example of one column: a string, or (where the module takes several per example, e.g.
    references) a list or tuple of strings."""
    if lists_allowed and isinstance(item, (list, tuple)):
        for j, text in enumerate(item):
            check_text(f"{label}[{j}]", text)
    else:
        check_text(label, item)


def check_text_batch(batch: Mapping[str, Any], list_columns: set[str]) -> None:
    """Every column of a batch: a non-empty list of texts (every item checked, not only the first
    row). An empty batch is the library's "is empty" error, not evaluate's IndexError (and it would
    add nothing to a stream of batches anyway)."""
    for name, column in batch.items():
        if name not in list_columns:
            items = as_texts(name, column, allow_empty_list=True)
        else:
            if column is None or isinstance(column, (str, Set, Mapping)):
                as_texts(name, column)  # the library's message for None, a single string, a set
            items = list(column)
            for index, item in enumerate(items):
                check_text_item(f"{name}[{index}]", item, lists_allowed=True)
        if not items:
            raise ValueError(f"`{name}` is empty; pass at least one example.")


class CheckedTextInputs:
    """Mixin for ``evaluate.Metric`` subclasses whose inputs are texts (see the module docstring):
    ``class RougeFamily(CheckedTextInputs, evaluate.Metric)``."""

    def _text_inputs(self, first: Any, second: Any, kwargs: dict[str, Any]) -> dict[str, Any] | None:
        """The module's feature columns, as evaluate will read them (``predictions``/``references``
        keywords plus any other feature name, e.g. ``sources``)."""
        names = self._feature_names()  # type: ignore[attr-defined]
        if set(kwargs) - set(names):
            return None  # evaluate's own "Bad inputs for evaluation module" error is clear
        given = {"predictions": first, "references": second, **kwargs}
        return {name: given.get(name) for name in names}

    # evaluate appends the module's inputs description to these docstrings: they must exist.
    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> Any:
        """Add a batch of examples (every item checked first; see :mod:`nlgmetrics.evaluate_support`).
        """
        batch = self._text_inputs(predictions, references, kwargs)
        if batch is not None:
            check_text_batch(batch, _list_columns(self.features))  # type: ignore[attr-defined]
        return super().add_batch(predictions=predictions, references=references, **kwargs)  # type: ignore[misc]

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> Any:
        """Add one example (checked first; see :mod:`nlgmetrics.evaluate_support`).
        """
        example = self._text_inputs(prediction, reference, kwargs)
        if example is not None:
            list_columns = _list_columns(self.features)  # type: ignore[attr-defined]
            for name, item in example.items():
                check_text_item(_SINGULAR.get(name, name), item, lists_allowed=name in list_columns)
        return super().add(prediction=prediction, reference=reference, **kwargs)  # type: ignore[misc]
