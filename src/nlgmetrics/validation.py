"""Input checks shared by every metric: clear errors that name the problem and the fix.

Nothing here mutates what the user passed: lists are copied into new tuples/lists.

>>> as_texts("predictions", ["a", "b"])
['a', 'b']
>>> as_reference_lists(["a", ["b", "c"]], n=2)
[['a'], ['b', 'c']]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from typing import Any


def _type_name(value: Any) -> str:
    return type(value).__name__


def _reject_unordered(name: str, values: Any) -> None:
    """A set has no order (rows would be silently misaligned with the other argument) and a dict
    iterates over its keys: neither is a list of examples."""
    if isinstance(values, (Set, Mapping)):
        kind = "dict" if isinstance(values, Mapping) else "set"
        raise ValueError(
            f"`{name}` is a {kind} ({_type_name(values)}); pass a list with one item per example, "
            f"in the same order as the other argument."
        )


def _check_unicode(label: str, text: str) -> None:
    """Reject lone surrogates (e.g. from ``errors="surrogateescape"`` or a JSON ``"\\udc80"``):
    they are not valid Unicode, and tokenizers fail on them with a bare TypeError."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"`{label}` contains a lone surrogate {text[error.start]!r} at position {error.start}, "
            f"which is not valid Unicode; decode your data with errors='replace' (or fix the bytes)."
        ) from None


def as_texts(name: str, values: Any, *, allow_empty_list: bool = False) -> list[str]:
    """Check that ``values`` is a list of strings; return a new list.

    Raises ValueError naming the argument, the offending index and how to fix it.
    """
    if values is None:
        raise ValueError(f"`{name}` is None; pass a list of strings (one per example).")
    if isinstance(values, str):
        raise ValueError(
            f"`{name}` is a single string; pass a list of strings, e.g. {name}=[{values[:30]!r}]."
        )
    _reject_unordered(name, values)
    if not isinstance(values, Sequence) and not hasattr(values, "__iter__"):
        raise ValueError(f"`{name}` must be a list of strings, got {_type_name(values)}.")
    texts = list(values)
    if not texts and not allow_empty_list:
        raise ValueError(f"`{name}` is empty; pass at least one example.")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(
                f"`{name}[{index}]` is {_type_name(text)} ({text!r:.40}), not a string; "
                f"convert every item to str (use '' for a missing text)."
            )
        _check_unicode(f"{name}[{index}]", text)
    return texts


def as_reference_lists(references: Any, n: int, name: str = "references") -> list[list[str]]:
    """Normalise references to one non-empty list of strings per example (ragged allowed).

    Each item may be a string (one reference) or a list of strings (several references).
    """
    if references is None:
        raise ValueError(f"`{name}` is None; pass one reference (or a list of references) per example.")
    if isinstance(references, str):
        raise ValueError(f"`{name}` is a single string; pass a list with one item per example.")
    _reject_unordered(name, references)
    items = list(references)
    if len(items) != n:
        raise ValueError(
            f"`{name}` has {len(items)} items but there are {n} predictions; "
            f"pass exactly one reference or list of references per prediction."
        )
    normalised: list[list[str]] = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            _check_unicode(f"{name}[{index}]", item)
            normalised.append([item])
            continue
        if item is None or not isinstance(item, (list, tuple)):
            raise ValueError(
                f"`{name}[{index}]` is {_type_name(item)}; each item must be a string or a list "
                f"of strings (several references for one prediction)."
            )
        if not item:
            raise ValueError(f"`{name}[{index}]` is an empty list; give at least one reference.")
        for j, ref in enumerate(item):
            if not isinstance(ref, str):
                hint = " (references nested too deeply?)" if isinstance(ref, (list, tuple)) else ""
                raise ValueError(
                    f"`{name}[{index}][{j}]` is {_type_name(ref)}, not a string{hint}; "
                    f"pass references as a list of strings per prediction."
                )
            _check_unicode(f"{name}[{index}][{j}]", ref)
        normalised.append(list(item))
    return normalised


def check_same_length(**named: Sequence[Any]) -> int:
    """All arguments must have the same number of examples; return that number."""
    lengths = {name: len(values) for name, values in named.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name}={length}" for name, length in lengths.items())
        raise ValueError(
            f"Mismatched lengths ({detail}); pass one item per example in each argument."
        )
    return next(iter(lengths.values()))


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """Reject an unknown option value, listing the valid ones."""
    if value not in choices:
        raise ValueError(f"Unknown {name}={value!r}; choose one of {list(choices)}.")
    return value
