"""Running one chunk of Shannon Score work: tokenise, plan (:mod:`nlgmetrics.shannon.planning`),
score every distinct query once with the engine, and assemble each pair's per-token numbers.

A chunk is a set of whole documents with all of their summaries (see
:func:`nlgmetrics.engine.planning.chunk_by_key`): only one chunk's queries and per-token scores are
alive at a time, whatever the size of the call, and the reuse of the base/full passes and of each
summary's prefix cache is the same as in one big call.

>>> from nlgmetrics.testing import build_random_model
>>> from nlgmetrics.core.tokens import resolve_start_token
>>> from nlgmetrics.engine import load_lm
>>> import tempfile
>>> lm = load_lm(build_random_model("gpt2", tempfile.mkdtemp(), size="tiny"), "causal")
>>> start = resolve_start_token(lm.tokenizer, None, default_start_tokens(lm), metric="Shannon Score")
>>> start == lm.tokenizer.convert_tokens_to_ids(END_OF_TEXT)
True
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nlgmetrics.core.tokens import BOS, EOS, StartCandidate
from nlgmetrics.shannon.planning import Ids, PairPlan, plan_pair

if TYPE_CHECKING:  # torch is imported lazily; the annotations only
    from nlgmetrics.engine import LoadedLM
    from nlgmetrics.engine.bookkeeping import ExampleProgress, WarnOnce
    from nlgmetrics.engine.call import LMCall

# The paper's "end-of-text token": GPT-2's <|endoftext|> (also present in SmolLM2's vocabulary);
# the first choice of the default start token.
END_OF_TEXT = "<|endoftext|>"

#: One warning per kind counted while scoring, per call (:class:`nlgmetrics.engine.bookkeeping.WarnOnce`).
WARNINGS = {
    "truncated_summaries": (
        "{count} summaries are longer than max_length allows ({summary_limit} tokens) and were cut "
        "to that length."
    ),
    # The cut itself is blanc's, documented in the model card.
    "cut_sentences": (
        "{count} document sentence(s) do not fit max_length ({max_length} tokens) after the start "
        "token and the summary, and were cut to their first tokens as in blanc; their remaining "
        "tokens are not scored. Use a model with a longer context or split such sentences."
    ),
}


def default_start_tokens(lm: LoadedLM) -> tuple[StartCandidate, ...]:
    """The Shannon Score's default start token, in order of preference (the first the model has
    wins, :func:`nlgmetrics.core.tokens.resolve_start_token`):

    1. ``<|endoftext|>``, the paper's and blanc's token (GPT-2's EOS; SmolLM2's vocabulary has it);
    2. the tokenizer's BOS: a model with its own beginning-of-sequence token (Gemma's ``<bos>``,
       Llama's ``<s>``) was trained to see it first, not its EOS;
    3. the model's EOS (blanc's ``config.eos_token_id``, the first when it is a list), else the
       tokenizer's.
    """
    eos = getattr(lm.model.config, "eos_token_id", None)
    if isinstance(eos, (list, tuple)):
        eos = eos[0] if eos else None
    return (END_OF_TEXT, BOS, eos, EOS)


@dataclass(frozen=True)
class ScoringSetup:
    """Everything a chunk needs that is fixed for the whole call: the engine's call (the model, the
    store, ``max_length``, the batching) and the Shannon Score's own options."""

    call: LMCall
    split: Callable[[str], list[str]]
    start_id: int
    num_upstream: int
    prefix_cache: bool


@dataclass(frozen=True)
class PairScores:
    """The raw components of one (document, summary) pair.

    ``sentences`` are the scored (truncated) sentence ids; the per-token arrays are aligned with
    their concatenation. ``s[b][h]`` counts tokens predicted right (1) / wrong (0) without (``b``)
    and with (``h``) the summary.
    """

    ll_base: float
    ll_help: float
    ll_full: float
    s: list[list[int]]
    sentences: list[Ids]
    summary_ids: Ids
    base_logprobs: np.ndarray
    help_logprobs: np.ndarray
    full_logprobs: np.ndarray
    base_correct: np.ndarray
    help_correct: np.ndarray


def _gather(scores: Sequence[tuple[np.ndarray, np.ndarray]], plan: PairPlan, scored: str
            ) -> tuple[np.ndarray, np.ndarray]:
    """One pass's log-probabilities and hits of every token of a pair (``scored``: the pass's
    :class:`~nlgmetrics.shannon.planning.SentencePlan` field), sentences concatenated."""
    lengths = [len(sentence) for sentence in plan.sentences]
    logprobs = np.empty(sum(lengths), dtype=np.float64)
    correct = np.empty(sum(lengths), dtype=bool)
    starts = itertools.accumulate([0, *lengths])  # of each sentence in the concatenation
    for first, sentence, pieces in zip(starts, plan.sentences, plan.per_sentence):
        for piece in getattr(pieces, scored):
            piece_logprobs, piece_argmax = scores[piece.query]
            rows = slice(piece.row, piece.row + piece.stop - piece.start)
            tokens = slice(first + piece.start, first + piece.stop)
            logprobs[tokens] = piece_logprobs[rows]
            target = np.asarray(sentence[piece.start : piece.stop], dtype=np.int64)
            correct[tokens] = piece_argmax[rows] == target
    return logprobs, correct


def score_chunk(
    setup: ScoringSetup,
    summaries: Sequence[str],
    documents: Sequence[str],
    examples: Sequence[int],
    counts: WarnOnce,
    bar: ExampleProgress,
) -> Iterator[tuple[int, PairScores]]:
    """Plan, run and assemble the examples ``examples`` (whole documents); yield ``(i, scores)``.

    ``counts`` accumulates the warnings' events; ``bar`` advances by examples, in proportion to
    the chunk's queries done.
    """
    from nlgmetrics.engine import TARGET_LOGPROBS_ARGMAX, CausalQuery, iter_causal
    from nlgmetrics.engine.bookkeeping import QueryRegistry
    from nlgmetrics.engine.rope import length_dependent_rope

    call, max_length = setup.call, setup.call.max_length
    rope = length_dependent_rope(getattr(call.lm.model, "config", None))

    @functools.cache  # per chunk: the memo must not grow with the whole call
    def encode(text: str) -> Ids:
        # No special tokens: blanc's GPT-2 encode adds none.
        return tuple(call.lm.tokenizer(text, add_special_tokens=False)["input_ids"]) if text else ()

    doc_sentences: dict[str, list[Ids]] = {}
    registry = QueryRegistry(lambda key: CausalQuery(prefix_ids=key[0], target_ids=key[1]))
    plans = []
    for i in examples:
        document = documents[i]
        if document not in doc_sentences:
            pieces = setup.split(document) if document.strip() else []
            doc_sentences[document] = [ids for ids in (encode(piece.strip()) for piece in pieces) if ids]
        sentences = doc_sentences[document]
        summary_ids = encode(summaries[i].strip())
        if len(summary_ids) > max_length - 2:
            summary_ids = summary_ids[: max_length - 2]
            counts.add("truncated_summaries")
        # plan_pair cuts each sentence to what the context leaves after <start> + summary.
        counts.add("cut_sentences", sum(len(s) > max_length - 1 - len(summary_ids) for s in sentences))
        plans.append(plan_pair(registry, sentences, summary_ids, setup.start_id, setup.num_upstream, max_length,
                               rope))

    scores: list[tuple[np.ndarray, np.ndarray]] = [None] * len(registry)  # type: ignore[list-item]
    # The engine's bar stays off: the caller's bar counts examples over the whole call. A chunk of
    # empty documents needs no engine call.
    results = iter_causal(
        call.lm, registry.queries, TARGET_LOGPROBS_ARGMAX, token_budget=call.token_budget, batch_size=call.batch_size,
        prefix_cache=setup.prefix_cache, store=call.store, progress=False) if registry.queries else iter(())
    for number, value in bar.track(results, examples=len(examples), queries=len(registry)):
        scores[number] = value

    for i, plan in zip(examples, plans):
        base, b = _gather(scores, plan, "base")
        helped, h = _gather(scores, plan, "helped")
        full, _ = _gather(scores, plan, "full")
        # s[b][h]: the tokens by whether they are predicted right without (b) and with (h) the summary.
        s = np.bincount(2 * b + h, minlength=4).reshape(2, 2).tolist()
        yield i, PairScores(
            ll_base=float(base.sum()), ll_help=float(helped.sum()), ll_full=float(full.sum()), s=s,
            sentences=plan.sentences, summary_ids=plan.summary, base_logprobs=base,
            help_logprobs=helped, full_logprobs=full, base_correct=b, help_correct=h,
        )
