"""FFLM planning: tokens of each example, the authors' truncation rule, and the engine queries.

Tokenization as in the authors' scorer: each text on its own (``tokenizer.tokenize`` without
special tokens, then ``convert_tokens_to_ids``), sequences ``[start] + condition + sep + target``.
The authors' truncation rule, at ``limit`` tokens per sequence: when the summary is the target
(s2s, prefix) the condition is cut (its first tokens kept); when the document is the target
(s2s_doc) the document is cut; lm_doc is ``p(X | start)`` over at most ``limit - 1`` tokens, cut
to the length of s2s_doc. A summary too long to fit even with an empty condition (the authors'
code fails there) is cut to the room left after the start token and the separator, the same cut
in its three lists.

>>> class Words:  # a whitespace tokenizer whose tokens are their own ids
...     def tokenize(self, text): return text.split()
...     def convert_tokens_to_ids(self, tokens): return [int(t) for t in tokens]
>>> plan = plan_example("1 2 3 4 5 6", "7 8", Words(), {}, limit=8, room=6)
>>> plan.summary, plan.cond_budget, plan.truncated
((7, 8), 4, True)
>>> queries, slots = build_queries([plan], start=0, sep=(9,), limit=8)
>>> queries[slots[0]["s2s"].query].prefix_ids  # [start] + X[:4] + sep, target Y
(0, 1, 2, 3, 4, 9)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from nlgmetrics.core.tokens import BOS, EOS, StartCandidate, check_start_token

if TYPE_CHECKING:  # the engine imports torch; load it only when a model runs
    from nlgmetrics.engine import CausalQuery

#: The five per-token probability lists of an example, in the order of FFLMProbabilities.
LISTS = ("s2s", "lm", "prefix", "s2s_doc", "lm_doc")


@dataclass(frozen=True)
class ExamplePlan:
    """Token-level plan for one example: what each of the five lists scores."""

    summary: tuple[int, ...]  #: Y after the (rare) over-long-summary cut
    cond_budget: int  #: tokens of X (s2s) / of Y+" "+X (prefix) kept; also tokens of X scored
    document: tuple[int, ...]  #: full X
    prefix_condition: tuple[int, ...]  #: tok(Y + " " + X), cut to cond_budget
    truncated: bool  #: any of the example's sequences was cut


class ListSlot(NamedTuple):
    """Where one list sits in the engine results: ``logprobs[query][skip:stop]``."""

    query: int
    skip: int = 0
    stop: int | None = None  #: lm_doc only: cut to the document tokens scored in s2s_doc


def token_ids(tokenizer: Any, text: str, cache: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """The authors' tokenization: ``tokenize`` (no special tokens) then ``convert_tokens_to_ids``."""
    ids = cache.get(text)
    if ids is None:
        ids = tuple(int(i) for i in tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text)))
        cache[text] = ids
    return ids


#: FFLM's default start token (:func:`nlgmetrics.core.tokens.resolve_start_token`): the tokenizer's
#: BOS, else its EOS. The authors hard-coded id 0, the BOS of the LLaMA checkpoint they used; the
#: tokenizer's own BOS is the same choice for any other model.
DEFAULT_START_TOKENS: tuple[StartCandidate, ...] = (BOS, EOS)


def plan_example(
    document: str,
    summary: str,
    tokenizer: Any,
    cache: dict[str, tuple[int, ...]],
    limit: int,
    room: int,
) -> ExamplePlan:
    """Apply the authors' truncation rule to one example (see the module docstring).

    ``limit``: tokens per sequence; ``room``: tokens left for the summary after the start token and
    the separator (``limit - 1 - len(sep)``, at least 1).
    """
    x = token_ids(tokenizer, document, cache)
    y_full = token_ids(tokenizer, summary, cache)
    # The authors never cut the summary; one that leaves no room at all is cut here (their code
    # would fail), identically in s2s, lm and prefix so the three lists stay aligned.
    y = y_full[:room]
    budget = room - len(y)  # tokens left for the condition (s2s, prefix) or the document (s2s_doc)
    # Joint string, tokenized as one piece like the authors (BPE merges may differ at the joint).
    prefix_condition = token_ids(tokenizer, summary + " " + document, cache)
    cond_budget = min(len(x), budget)
    truncated = (
        len(y) < len(y_full)
        or len(x) > budget
        or len(prefix_condition) > budget
        or len(x) > limit - 1  # lm_doc itself is cut
    )
    return ExamplePlan(
        summary=y,
        cond_budget=cond_budget,
        document=x,
        prefix_condition=prefix_condition[:budget],
        truncated=truncated,
    )


def build_queries(
    plans: Sequence[ExamplePlan], start: int, sep: tuple[int, ...], limit: int
) -> tuple[list[CausalQuery], list[dict[str, ListSlot | None]]]:
    """The distinct engine queries, and for each example where its five lists sit in the results
    (:data:`LISTS` -> :class:`ListSlot`, or ``None`` for an empty list)."""
    from nlgmetrics.engine import CausalQuery
    from nlgmetrics.engine.bookkeeping import QueryRegistry

    # Registered once each (the engine dedupes too; this keeps the list short): one lm_doc query per
    # distinct document, one lm query per distinct summary.
    registry: QueryRegistry[tuple[tuple[int, ...], tuple[int, ...]], CausalQuery] = QueryRegistry(
        lambda key: CausalQuery(prefix_ids=key[0], target_ids=key[1])
    )

    # s2s: group the summaries of each document so they share one prefix. Without truncation the
    # prefix is (start, X, sep) for all. With truncation each summary keeps a different number of
    # document tokens; share the common (start, X[:shortest]) and put the rest in the target, whose
    # extra rows we skip: same sequence, so the same probabilities, and the prefix is still shared.
    by_document: dict[tuple[int, ...], list[int]] = {}
    for i, plan in enumerate(plans):
        if plan.summary:
            by_document.setdefault(plan.document, []).append(i)
    s2s_slot: dict[int, ListSlot] = {}
    for document, members in by_document.items():
        budgets = {plans[i].cond_budget for i in members}
        shared = min(budgets)
        for i in members:
            plan = plans[i]
            if len(budgets) == 1:
                prefix, target, skip = (start, *document[:shared], *sep), plan.summary, 0
            else:
                extra = document[shared : plan.cond_budget]
                prefix = (start, *document[:shared])
                target = (*extra, *sep, *plan.summary)
                skip = len(extra) + len(sep)
            s2s_slot[i] = ListSlot(registry.add((prefix, target)), skip)

    slots: list[dict[str, ListSlot | None]] = []
    for i, plan in enumerate(plans):
        slot: dict[str, ListSlot | None] = dict.fromkeys(LISTS)
        if plan.summary:
            slot["s2s"] = s2s_slot[i]
            slot["lm"] = ListSlot(registry.add(((start,), plan.summary)))
            slot["prefix"] = ListSlot(registry.add(((start, *plan.prefix_condition, *sep), plan.summary)))
        if plan.cond_budget > 0:
            document = plan.document[: plan.cond_budget]
            slot["s2s_doc"] = ListSlot(registry.add(((start, *plan.summary, *sep), document)))
            # lm_doc over X[:limit - 1] as the authors, once per distinct document, cut per example.
            lm_doc = registry.add(((start,), plan.document[: limit - 1]))
            slot["lm_doc"] = ListSlot(lm_doc, 0, plan.cond_budget)
        slots.append(slot)
    return registry.queries, slots


def slot_logprobs(logprobs: Sequence[np.ndarray], slot: ListSlot | None) -> np.ndarray:
    """The log-probabilities of one list from the engine results (empty for ``None``)."""
    if slot is None:
        return np.zeros(0, dtype=np.float64)
    return np.asarray(logprobs[slot.query][slot.skip : slot.stop])
