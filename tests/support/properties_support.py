"""Shared pieces of the property-based reliability suite: messy-text strategies, hypothesis
settings, comparison helpers, and one way to call any metric (through the registry).

Imported by the ``tests/test_properties_*.py`` and ``tests/contract/test_errors_all_metrics.py`` modules as
``from tests.support.properties_support import ...`` (a test module never imports another test module);
``tests/contract/test_properties_common.py`` tests the strategies and helpers themselves.

Every metric is called as the command line, the demos and the Trainer hook call it:
``get_protocol(name).run(predictions, others, **options)`` (:func:`run_metric`), which returns the
library's :class:`~nlgmetrics.core.result.MetricResult`; the checks read ``result.scores``
(``{column: [float, ...]}``, one value per example) and ``result.column(name)`` (direction and
range). There is no per-metric adapter: one set of property checks serves every metric.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from nlgmetrics.core.result import MetricResult

# ------------------------------------------------------------------------------------------------
# hypothesis profiles: small, derandomized (the same examples in CI every time), no deadline (the
# machine is shared; timing says nothing about correctness).

TEXT_SETTINGS = settings(
    max_examples=30, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
LM_SETTINGS = settings(
    max_examples=15, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                           HealthCheck.function_scoped_fixture],
)

# ------------------------------------------------------------------------------------------------
# messy texts, by category

WHITESPACE = " \t\n\r\u00a0\u2003\u3000\u2028"
PUNCTUATION = "!?.,;:-\u2014\u2026\"'()[]{}\u00bf\u00a1\u3002\u3001\u060c\u061f*#@%&/\\"
EMOJI = ["\U0001F600", "\U0001F389", "\U0001F44D\U0001F3FD", "\U0001F468\u200d\U0001F469\u200d\U0001F467",
         "\U0001F1EF\U0001F1F5", "\u2764\ufe0f", "\U0001F9D1\U0001F3FF\u200d\U0001F52C"]
CONTROL = "".join(map(chr, [0, 1, 7, 8, 11, 12, 27, 127, 0x85, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F,
                            0x202E, 0xFEFF, 0x2066]))
ASCII_WORDS = ["the", "cat", "sat", "on", "mat", "A", "dog", "ran", "Quickly", "it's", "U.S.", "3.14",
               "e-mail", "New", "York", "x", "I"]


def _chars(lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.characters(min_codepoint=lo, max_codepoint=hi)


_cjk_word = st.text(st.one_of(_chars(0x4E00, 0x4E80), _chars(0x3041, 0x3096), _chars(0xAC00, 0xAC40)),
                    min_size=1, max_size=6)
_arabic_word = st.text(_chars(0x0621, 0x064A), min_size=1, max_size=7)
_hebrew_word = st.text(_chars(0x05D0, 0x05EA), min_size=1, max_size=6)
_rtl_text = st.lists(st.one_of(_arabic_word, _hebrew_word), min_size=1, max_size=4).map(
    lambda words: "\u200f".join(words) if len(words) > 2 else " ".join(words))
_combining_word = st.lists(
    st.tuples(st.sampled_from("aeioucnAEZ"), st.text(_chars(0x0300, 0x036F), min_size=1, max_size=3)),
    min_size=1, max_size=4,
).map(lambda pairs: "".join(base + marks for base, marks in pairs))
_ascii_sentence = st.lists(st.sampled_from(ASCII_WORDS), min_size=1, max_size=9).map(
    lambda words: " ".join(words) + ".")

CATEGORIES: dict[str, st.SearchStrategy[str]] = {
    "empty": st.just(""),
    "whitespace": st.text(st.sampled_from(WHITESPACE), min_size=1, max_size=6),
    "single_char": st.characters(blacklist_categories=("Cs",)),
    "punctuation": st.text(st.sampled_from(PUNCTUATION), min_size=1, max_size=8),
    "cjk": st.lists(_cjk_word, min_size=1, max_size=3).map("\u3002".join),
    "emoji": st.lists(st.sampled_from(EMOJI), min_size=1, max_size=4).map(" ".join),
    "rtl": _rtl_text,
    "combining": _combining_word,
    "control": st.text(st.sampled_from(CONTROL), min_size=1, max_size=4),
    "words": st.lists(_ascii_sentence, min_size=1, max_size=3).map(" ".join),
    # literal special-token strings: tokenizers map them to special ids ([MASK] inside a BLANC
    # document, <|endoftext|> inside a Shannon summary...)
    "special_tokens": st.lists(st.sampled_from(["[MASK]", "[SEP]", "[CLS]", "[PAD]", "[UNK]", "<|endoftext|>",
                                                "<|im_start|>", "<|im_end|>", "<s>", "</s>", "word"]),
                               min_size=1, max_size=4).map(" ".join),
}


def _mixed(parts: list[str]) -> str:
    return " ".join(parts)


#: One messy text: a single category, or a mix of 2-3 (e.g. English words + emoji + control chars).
messy_text = st.one_of(
    *CATEGORIES.values(),
    st.lists(st.one_of(*CATEGORIES.values()), min_size=2, max_size=3).map(_mixed),
)


def long_text(n_tokens: int = 10_500, sentence_every: int = 2_500) -> str:
    """A text of more than ``n_tokens`` whitespace tokens (far beyond every tiny model's context),
    with a sentence boundary every ``sentence_every`` words so sentence-based metrics see a few long
    sentences (a 10k-token text of short sentences costs minutes on a shared CPU)."""
    words = ["alpha", "beta", "gamma", "delta", "cat", "sat", "mat", "dog", "ran", "far"]
    tokens = [words[i % len(words)] + ("." if (i + 1) % sentence_every == 0 else "") for i in range(n_tokens)]
    return " ".join(tokens)


#: Same as ``messy_text`` but sometimes a 10k+-token text.
messy_or_long_text = st.one_of(messy_text, st.integers(10_500, 11_000).map(long_text))


@st.composite
def reference_batches(draw: Callable, text: st.SearchStrategy[str] = messy_text, max_rows: int = 6,
                      max_refs: int = 3) -> tuple[list[str], list[list[str]]]:
    """(predictions, ragged references): some rows have a reference equal to the prediction,
    some rows are duplicated."""
    n = draw(st.integers(1, max_rows))
    preds = [draw(text) for _ in range(n)]
    refs = [[draw(text) for _ in range(draw(st.integers(1, max_refs)))] for _ in range(n)]
    for i in range(n):
        if draw(st.booleans()):  # reference identical to the candidate, at a random slot
            refs[i][draw(st.integers(0, len(refs[i]) - 1))] = preds[i]
    for _ in range(draw(st.integers(0, 2))):  # duplicated rows
        j = draw(st.integers(0, n - 1))
        preds.append(preds[j])
        refs.append(list(refs[j]))
    return preds, refs


@st.composite
def source_batches(draw: Callable, text: st.SearchStrategy[str] = messy_text, max_rows: int = 5
                   ) -> tuple[list[str], list[str]]:
    """(predictions, sources) for reference-free metrics: sources shared by several predictions,
    predictions equal to their source, duplicated rows."""
    n_sources = draw(st.integers(1, 3))
    pool = [draw(text) for _ in range(n_sources)]
    n = draw(st.integers(1, max_rows))
    sources = [pool[draw(st.integers(0, n_sources - 1))] for _ in range(n)]
    predictions = [source if draw(st.integers(0, 4)) == 0 else draw(text) for source in sources]
    for _ in range(draw(st.integers(0, 2))):
        j = draw(st.integers(0, n - 1))
        sources.append(sources[j])
        predictions.append(predictions[j])
    return predictions, sources


# ------------------------------------------------------------------------------------------------
# property helpers


def assert_all_finite(cols: dict[str, list[float]], context: str = "") -> None:
    """No NaN / inf in any per-example number."""
    for name, values in cols.items():
        bad = [(i, v) for i, v in enumerate(values) if not math.isfinite(v)]
        assert not bad, f"{context}: non-finite {name} at (index, value) {bad[:5]}"


def assert_columns_close(a: dict[str, list[float]], b: dict[str, list[float]], context: str,
                         atol: float = 1e-5, rtol: float = 0.0) -> None:
    """Same columns, same length, |a - b| <= atol + rtol * |a| everywhere."""
    assert a.keys() == b.keys(), context
    for name in a:
        x, y = np.asarray(a[name], dtype=np.float64), np.asarray(b[name], dtype=np.float64)
        assert x.shape == y.shape, f"{context}: {name} has {x.shape} vs {y.shape} values"
        diff = np.abs(x - y)
        limit = atol + rtol * np.abs(x)
        worst = int(np.argmax(diff - limit)) if diff.size else 0
        assert (diff <= limit).all(), (
            f"{context}: {name}[{worst}] differs by {diff[worst]:.3g} ({x[worst]!r} vs {y[worst]!r})")


def take(cols: dict[str, list[float]], order: Sequence[int]) -> dict[str, list[float]]:
    """Rows ``order`` of every column."""
    return {name: [values[i] for i in order] for name, values in cols.items()}


def call_unmutated(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` and assert it left every (nested) argument as it found it."""
    before = copy.deepcopy((args, kwargs))
    ids = [id(a) for a in args]
    result = fn(*args, **kwargs)
    assert (args, kwargs) == before, f"{getattr(fn, '__name__', fn)} mutated its inputs"
    assert [id(a) for a in args] == ids
    return result


def permutation(n: int, seed: int) -> list[int]:
    """A deterministic permutation of range(n), never the identity when n > 1."""
    order = [int(i) for i in np.random.default_rng(seed).permutation(n)]
    return order if n < 2 or order != list(range(n)) else order[1:] + order[:1]


# ------------------------------------------------------------------------------------------------
# every metric, one call: the registry


def run_metric(name: str, predictions: Any, others: Any, **options: Any) -> MetricResult:
    """``get_protocol(name).run(predictions, others, progress=False, **options)``: the registry's call
    (``others``: references or sources, as the metric reads), the library's result unchanged."""
    from nlgmetrics.registry import get_protocol

    return get_protocol(name).run(predictions, others, progress=False, **options)


def assert_in_declared_range(result: MetricResult, context: str = "", slack: float = 1e-9) -> None:
    """Every per-example value lies in the range its column declares (``result.column(name)``)."""
    for name, values in result.scores.items():
        column = result.column(name)
        bad = [(i, v) for i, v in enumerate(values) if not column.minimum - slack <= v <= column.maximum + slack]
        assert not bad, f"{context}: {name} outside its declared {column.range_text()} at (index, value) {bad[:5]}"


#: Columns that are sums over a document's tokens (nats): invariance is checked relative to their
#: size (float32 logits, ~1e-7 relative per token, summed over up to ~10^4 tokens).
SUM_COLUMNS = {"ll_base", "ll_help", "ll_full"}


def shannon_tolerances(cols: dict[str, list[float]]) -> dict[str, np.ndarray]:
    """Error bounds of Shannon's derived columns, propagated from a 1e-6 relative error of the sums.

    ``information_difference = ll_help - ll_base`` inherits the absolute error of the sums, and
    ``shannon_score = (ll_help - ll_base) / (ll_full - ll_base)`` is ill-conditioned when
    ``ll_full ~ ll_base`` (a random tiny model, a summary equal to the document): there a 1e-6
    relative change of the sums (prefix cache on/off: KV cache vs full pass) moves the ratio by
    ~1e-6 * |ll| / |ll_full - ll_base| (measured 2.9e-5 on one such example).
    """
    base, help_, full = (np.asarray(cols[k], dtype=np.float64) for k in ("ll_base", "ll_help", "ll_full"))
    noise = 1e-6 * (np.abs(base) + np.abs(help_) + np.abs(full))
    denominator = np.abs(full - base)
    score = np.abs(np.asarray(cols["shannon_score"], dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(denominator > 0, 2 * noise * (1 + score) / np.maximum(denominator, 1e-300), 0.0)
    return {"information_difference": 1e-5 + noise, "shannon_score": 1e-5 + np.minimum(ratio, 1.0)}


def assert_invariant(a, b, context):
    """1e-5 absolute on scores; 1e-6 relative on log-likelihood sums and error-propagated bounds
    on the Shannon columns derived from them (see :func:`shannon_tolerances`)."""
    special = {k for k in a if k in SUM_COLUMNS}
    bounds = shannon_tolerances(a) if "shannon_score" in a else {}
    special |= set(bounds)
    assert_columns_close({k: v for k, v in a.items() if k not in special},
                         {k: v for k, v in b.items() if k not in special}, context)
    if special - set(bounds):
        assert_columns_close({k: a[k] for k in special - set(bounds)}, {k: b[k] for k in special - set(bounds)},
                             context, atol=1e-5, rtol=1e-6)
    for name, limit in bounds.items():
        x, y = np.asarray(a[name], dtype=np.float64), np.asarray(b[name], dtype=np.float64)
        assert x.shape == y.shape, f"{context}: {name} has {x.shape} vs {y.shape} values"
        bad = np.nonzero(np.abs(x - y) > limit)[0]
        assert bad.size == 0, (
            f"{context}: {name}[{bad[0]}] differs by {abs(x[bad[0]] - y[bad[0]]):.3g} > {limit[bad[0]]:.3g}")
