"""sacrebleu's reference layout: reference *streams*, read into one list of references per example.

sacrebleu's ``corpus_bleu(hypotheses, references)`` takes ``references`` as a list of streams, each
a list holding one reference per hypothesis (stream ``k`` is "the k-th reference of every
example"). A hypothesis with fewer references has ``None`` in the streams it lacks; sacrebleu drops
those (an empty string ``""`` is kept: a reference of length 0). Our :func:`~nlgmetrics.bleu.bleu`
takes the other layout, one reference or list of references per example. The two layouts look
alike (lists of lists of strings), so a stream layout that does not fit the hypotheses is refused
here with an error that names the expected layout, instead of being read the other way.

>>> examples_from_streams([["a", "b"], ["c", None]], n=2)
[['a', 'c'], ['b']]
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from nlgmetrics.core.validation import check_text

#: What every layout error repeats: the layout expected, and where the other layout is accepted.
LAYOUT = (
    "{function} takes sacrebleu's layout: `references` is a list of reference streams, each a list "
    "with one reference per hypothesis (None where a hypothesis has fewer references), e.g. "
    "{function}(hypotheses, [refs]) for one reference each or {function}(hypotheses, [refs_a, refs_b]) "
    "for two. For one reference or a list of references per example, call "
    "nlgmetrics.bleu.bleu(predictions, references) instead."
)


def _is_list_like(value: Any) -> bool:
    """A list, tuple or other ordered collection (not a string, a dict or a set)."""
    excluded = isinstance(value, (str, bytes, Mapping, Set))
    return not excluded and hasattr(value, "__len__") and hasattr(value, "__getitem__")


def _layout_error(problem: str, function: str) -> ValueError:
    return ValueError(f"{problem} {LAYOUT.format(function=function)}")


def _checked_stream(stream: Any, k: int, n: int, function: str) -> list[str | None]:
    """Stream ``k``: a list of ``n`` strings or None (a string stream is refused by the caller)."""
    if not _is_list_like(stream):
        raise _layout_error(f"`references[{k}]` is {type(stream).__name__}, not a list of references.", function)
    entries = list(stream)
    if len(entries) != n:
        raise _layout_error(
            f"`references[{k}]` has {len(entries)} entries but there are {n} hypotheses "
            f"(references given per example?).",
            function,
        )
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            check_text(f"references[{k}][{i}]", entry)
        elif entry is not None:
            nested = " (nested one level too deep?)" if _is_list_like(entry) else ""
            raise _layout_error(
                f"`references[{k}][{i}]` is {type(entry).__name__}, not a string or None{nested}.", function
            )
    return entries


def examples_from_streams(references: Any, n: int, function: str = "corpus_bleu") -> list[list[str]]:
    """The references of each of ``n`` hypotheses, read from sacrebleu's streams.

    Entry ``i`` of every stream belongs to hypothesis ``i``; ``None`` entries are dropped (a
    variable number of references per hypothesis), empty strings kept, as sacrebleu does. A
    hypothesis left without any reference is an error (sacrebleu fails on it with a TypeError).
    ``function`` names the caller in the errors.
    """
    if references is None:
        raise _layout_error("`references` is None.", function)
    if isinstance(references, str):
        raise _layout_error("`references` is a single string.", function)
    if not _is_list_like(references):
        raise _layout_error(f"`references` is {type(references).__name__}.", function)
    streams = list(references)
    if not streams:
        raise _layout_error("`references` is empty: give at least one reference stream.", function)
    if any(isinstance(stream, str) for stream in streams):
        flat = all(isinstance(stream, str) for stream in streams)
        what = "a flat list of strings" if flat else "a mix of strings and lists"
        raise _layout_error(f"`references` is {what} (references given per example?).", function)
    checked = [_checked_stream(stream, k, n, function) for k, stream in enumerate(streams)]
    per_example = [[stream[i] for stream in checked if stream[i] is not None] for i in range(n)]
    for i, refs in enumerate(per_example):
        if not refs:
            raise ValueError(
                f"Hypothesis {i} has no reference: every stream holds None at position {i}; give each "
                f"hypothesis at least one reference (None only marks a missing extra reference)."
            )
    return per_example


def references_of_one(references: Any, function: str = "sentence_bleu") -> list[str]:
    """The references of one hypothesis (sacrebleu's ``sentence_bleu``: a list of strings; None
    entries dropped). A single string is read as one reference, the only thing it can mean."""
    if isinstance(references, str):
        return [check_text("references", references)]
    if references is None or not _is_list_like(references):
        raise ValueError(
            f"`references` is {type(references).__name__}; {function} scores one hypothesis against "
            f"a list of reference strings, e.g. {function}(hypothesis, ['ref a', 'ref b'])."
        )
    refs: list[str] = []
    for j, ref in enumerate(references):
        if isinstance(ref, str):
            refs.append(check_text(f"references[{j}]", ref))
        elif ref is not None:
            raise ValueError(
                f"`references[{j}]` is {type(ref).__name__}, not a string; {function} scores one "
                f"hypothesis against a list of reference strings (for many hypotheses use "
                f"nlgmetrics.bleu.bleu(predictions, references))."
            )
    if not refs:
        raise ValueError(f"`references` holds no reference string; {function} needs at least one.")
    return refs
