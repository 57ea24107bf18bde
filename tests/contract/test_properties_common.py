"""Tests of the property suite's own pieces (``tests/support/properties_support.py``): the strategies
really produce every category of messy text (so a property test cannot silently stop covering,
e.g., right-to-left scripts), and the helpers catch what they must.
"""

from __future__ import annotations

import unicodedata
from typing import ClassVar

import pytest
from hypothesis import given, settings

from nlgmetrics.core.result import Column, MetricResult
from tests.support.properties_support import (
    TEXT_SETTINGS,
    WHITESPACE,
    assert_columns_close,
    assert_in_declared_range,
    call_unmutated,
    long_text,
    messy_text,
    reference_batches,
    source_batches,
)


# ------------------------------------------------------------------------------------------------
# tests of the strategies themselves


def _category_of(text: str) -> set[str]:
    found = set()
    if text == "":
        found.add("empty")
    elif text.strip() == "" and all(c in WHITESPACE for c in text):
        found.add("whitespace")
    for c in text:
        name = unicodedata.name(c, "")
        cat = unicodedata.category(c)
        if "CJK" in name or "HIRAGANA" in name or "HANGUL" in name:
            found.add("cjk")
        if "ARABIC" in name or "HEBREW" in name:
            found.add("rtl")
        if cat == "Mn":
            found.add("combining")
        if cat in ("Cc", "Cf"):
            found.add("control")
        if cat == "So" or ord(c) >= 0x1F000:
            found.add("emoji")
        if cat.startswith("P"):
            found.add("punctuation")
    return found


@pytest.mark.parametrize("category", ["empty", "whitespace", "cjk", "rtl", "combining", "control", "emoji",
                                      "punctuation"])
def test_messy_text_reaches_every_category(category: str) -> None:
    """``messy_text`` can produce each category (guards against a strategy that silently went narrow)."""
    from hypothesis import find

    find(messy_text, lambda t: category in _category_of(t),
         settings=settings(database=None, derandomize=True, max_examples=2000))


def test_long_text_exceeds_every_tiny_context() -> None:
    text = long_text()
    assert len(text.split()) > 10_000
    assert 1 <= text.count(".") <= 10


@TEXT_SETTINGS
@given(reference_batches())
def test_reference_batches_shape(batch) -> None:
    preds, refs = batch
    assert len(preds) == len(refs)
    assert all(isinstance(r, list) and r and all(isinstance(x, str) for x in r) for r in refs)


@TEXT_SETTINGS
@given(source_batches())
def test_source_batches_shape(batch) -> None:
    predictions, sources = batch
    assert len(predictions) == len(sources) >= 1
    assert all(isinstance(x, str) for x in [*predictions, *sources])


def test_call_unmutated_catches_mutation() -> None:
    def bad(xs):
        xs.append("x")

    with pytest.raises(AssertionError, match="mutated"):
        call_unmutated(bad, ["a"])


def test_assert_columns_close_catches_differences() -> None:
    with pytest.raises(AssertionError, match="differs"):
        assert_columns_close({"a": [0.0, 1.0]}, {"a": [0.0, 1.0 + 1e-4]}, "ctx")
    assert_columns_close({"a": [0.0, 1.0]}, {"a": [0.0, 1.0 + 1e-7]}, "ctx")


def test_assert_in_declared_range_reads_the_columns() -> None:
    class Bounded(MetricResult):
        metric: ClassVar[str] = "bounded"
        main: ClassVar[str] = "b"
        columns: ClassVar[dict[str, Column]] = {"b": Column(True, -1.0, 1.0, "bounded")}

    assert_in_declared_range(Bounded(scores={"b": [-1.0, 0.0, 1.0]}, signature="bounded"), "ctx")
    with pytest.raises(AssertionError, match=r"b outside its declared \[-1, 1\] at \(index, value\) \[\(1, 1.5\)\]"):
        assert_in_declared_range(Bounded(scores={"b": [0.0, 1.5]}, signature="bounded"), "ctx")
