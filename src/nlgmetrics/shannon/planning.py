"""Query planning for the Shannon Score: which (prefix, target) pairs the engine scores for one
(document, summary) pair, and which rows of which query give each sentence token's score.

Every sentence of the document is scored three times, teacher-forced, after ``<start>`` and a
prompt (``U`` = the ``num_upstream`` preceding sentences, empty by default):

- base: ``<start> + U``;
- help: ``<start> + summary + U``;
- full: ``<start> + U + sentence + U``.

base and full share ONE query: the full prompt begins with the base prompt, so the target
``sentence + U + sentence`` after ``<start> + U`` yields the base rows first and the full rows last.
Not under a rotary scaling that depends on the pass's length (:mod:`nlgmetrics.engine.rope`) where
the merged pass is in another regime than the base pass alone: base is then a query of its own.
Queries are registered in a :class:`~nlgmetrics.engine.bookkeeping.QueryRegistry` keyed by
``(prefix, target)``: the base/full queries are identical for every summary of a document, so
they run once; all help queries of a summary share the prefix ``<start> + summary`` (one prefix
cache per summary).

>>> from nlgmetrics.engine.bookkeeping import QueryRegistry
>>> registry = QueryRegistry(lambda key: key)    # the metric builds CausalQuery objects instead
>>> plan = plan_pair(registry, [(5, 6), (7,)], (9,), start_id=0, num_upstream=0, max_length=16)
>>> registry.queries
[((0,), (5, 6, 5, 6)), ((0, 9), (5, 6)), ((0,), (7, 7)), ((0, 9), (7,))]
>>> plan.per_sentence[0].base, plan.per_sentence[0].full
([Piece(query=0, start=0, stop=2, row=0)], [Piece(query=0, start=0, stop=2, row=2)])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch is imported lazily; the annotation only
    from nlgmetrics.engine.bookkeeping import QueryRegistry
    from nlgmetrics.engine.rope import LengthDependentRope

Ids = tuple[int, ...]
#: A query's registry key: (prefix ids, target ids).
QueryKey = tuple[Ids, Ids]


@dataclass(frozen=True)
class Piece:
    """Sentence tokens ``[start, stop)`` are scored by rows ``[row, row + stop - start)`` of
    engine query number ``query``."""

    query: int
    start: int
    stop: int
    row: int = 0


@dataclass(frozen=True)
class SentencePlan:
    """The pieces that assemble one sentence's scores in each pass."""

    base: list[Piece]
    helped: list[Piece]
    full: list[Piece]


@dataclass(frozen=True)
class PairPlan:
    """One (document, summary) pair: its scored sentences (after truncation), its summary ids and
    a :class:`SentencePlan` per sentence."""

    sentences: list[Ids]
    summary: Ids
    per_sentence: list[SentencePlan]


def context_pieces(
    context: Ids, target: Ids, max_length: int, registry: QueryRegistry[QueryKey, Any]
) -> list[Piece]:
    """Split scoring ``target`` after ``context`` into queries that fit ``max_length`` positions.

    One teacher-forced pass reads ``context + target[:-1]``. When that is too long, the first
    ``max_length - len(context) + 1`` targets (the ones blanc also scores with the whole prompt)
    keep the whole context; the others are scored in one pass over the last ``max_length`` input
    tokens (fresh attention over that window; blanc slides a stale KV cache there).

    >>> from nlgmetrics.engine.bookkeeping import QueryRegistry
    >>> registry = QueryRegistry(lambda key: key)
    >>> context_pieces((0, 1, 2), (3, 4, 5, 6), 4, registry)
    [Piece(query=0, start=0, stop=2, row=0), Piece(query=1, start=2, stop=4, row=0)]
    >>> registry.queries
    [((0, 1, 2), (3, 4)), ((2, 3, 4), (5, 6))]
    """
    n = len(target)
    if len(context) + n - 1 <= max_length:
        return [Piece(registry.add((context, target)), 0, n)]
    fit = max(0, max_length - len(context) + 1)
    head = [Piece(registry.add((context, target[:fit])), 0, fit)] if fit else []
    full = context + target
    # Inputs are full[:-1]; keep the last max_length of them. The prefix is what precedes the
    # remaining targets inside that window (at least one token since rest <= max_length - 1).
    prefix = full[len(full) - 1 - max_length : len(context) + fit]
    return [*head, Piece(registry.add((prefix, target[fit:])), fit, n)]


def plan_pair(
    registry: QueryRegistry[QueryKey, Any],
    sentences: Sequence[Ids],
    summary: Ids,
    start_id: int,
    num_upstream: int,
    max_length: int,
    rope: LengthDependentRope | None = None,
) -> PairPlan:
    """Register the base/help/full queries of one (document, summary) pair (see the module
    docstring); ``summary`` must already fit (at most ``max_length - 2`` tokens). ``rope``: the
    model's length-dependent rotary scaling (:func:`~nlgmetrics.engine.rope.length_dependent_rope`),
    which decides whether base may be read from the merged base/full pass.

    >>> from nlgmetrics.engine.bookkeeping import QueryRegistry
    >>> from nlgmetrics.engine.rope import LengthDependentRope
    >>> longrope = LengthDependentRope(("longrope",), threshold=4, same_length_only=False)
    >>> registry = QueryRegistry(lambda key: key)
    >>> _ = plan_pair(registry, [(5, 6), (7,)], (9,), start_id=0, num_upstream=0, max_length=16, rope=longrope)
    >>> registry.queries  # <start> + 5 6 alone is short, <start> + 5 6 5 6 long: base on its own
    [((0,), (5, 6)), ((0, 5, 6), (5, 6)), ((0, 9), (5, 6)), ((0,), (7, 7)), ((0, 9), (7,))]
    """
    # blanc: every sentence is cut so that <start> + summary + sentence fits the context.
    keep = max_length - 1 - len(summary)
    cut = [sentence[:keep] for sentence in sentences]
    start = (start_id,)
    per_sentence = []
    for j, sentence in enumerate(cut):
        upstream = tuple(t for s in cut[max(0, j - num_upstream) : j] for t in s)
        base_context = start + upstream
        merged = sentence + upstream + sentence
        n = len(sentence)
        # The merged pass is as long as the full query alone; the base rows keep their own numbers
        # only where the rotary frequencies of a pass that long are those of the base pass.
        merged_keeps_base = rope is None or rope.keeps_numbers(len(base_context) + n, len(base_context) + len(merged))
        if merged_keeps_base and len(base_context) + len(merged) - 1 <= max_length:
            query = registry.add((base_context, merged))
            base_pieces = [Piece(query, 0, n, 0)]
            # The middle U rows are unused; the full rows come last.
            full_pieces = [Piece(query, 0, n, n + len(upstream))]
        else:
            base_pieces = context_pieces(base_context, sentence, max_length, registry)
            full_pieces = context_pieces(start + upstream + sentence + upstream, sentence, max_length, registry)
        # An empty summary: the help prompt IS the base prompt (ll_help == ll_base exactly).
        help_pieces = (context_pieces(start + summary + upstream, sentence, max_length, registry) if summary
                       else base_pieces)
        per_sentence.append(SentencePlan(base_pieces, help_pieces, full_pieces))
    return PairPlan(cut, summary, per_sentence)
