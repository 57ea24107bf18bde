"""What BLANC-help and BLANC-tune share: option checks (the window's floor among them), the masked
LM's special ids, text preparation (blanc's NFKD, sentence split, WordPiece), the masked copies of
the document sentences and their queries, running the queries through the engine, tallying the
masked tokens, the truncation warning and the signature.

>>> clean_text("caf\\u00e9") == "cafe\\u0301"
True
>>> cell = [[0, 0], [0, 0]]
>>> class Ids:  # a tokenizer's id -> token mapping is all tally needs
...     def convert_ids_to_tokens(self, ids):
...         return ["cat" if i == 1 else "dog" for i in ids]
>>> tally(cell, ("cat", "cat"), base=[2, 1], helped=[1, 1], tokenizer=Ids())
>>> cell  # one token right only with help (S01), one right both ways (S11)
[[0, 1], [0, 1]]
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nlgmetrics.blanc.counts import MEASURES, Counts
from nlgmetrics.blanc.masking import MaskingOptions, MinTokenLengths, even_maskings, fit_to_window
from nlgmetrics.core.sentences import SentenceSplitter
from nlgmetrics.core.signature import make_signature
from nlgmetrics.core.refusals import Refusal
from nlgmetrics.core.validation import check_choice, check_int, check_switches, shown_value, switch_rule

if TYPE_CHECKING:  # pragma: no cover
    from nlgmetrics.engine import LoadedLM, MaskedQuery
    from nlgmetrics.engine.bookkeeping import ExampleProgress, WarnOnce

#: The paper's (and blanc's) masked LM.
DEFAULT_MODEL = "bert-base-uncased"
#: Padded tokens per forward pass (speed only; the numbers do not depend on it).
DEFAULT_TOKEN_BUDGET = 8192
#: blanc's window: ``[CLS] help + sentence [SEP]`` never exceeds BERT's 512 positions (blanc uses
#: 512 whatever the model; the default here is min(512, model positions), so small models work).
BLANC_MAX_LENGTH = 512
#: The smallest window that holds ``[CLS]``, one token and ``[SEP]``.
MIN_MAX_LENGTH = 3

#: The switches both variants take.
SWITCH_RULE = switch_rule("progress", "explain")
MEASURE_RULE = Refusal(
    ("measure",), f"a `measure` other than {' or '.join(repr(m) for m in MEASURES)}",
    "BLANC's score is one of these two functions of the counts")
MAX_LENGTH_ROOM_RULE = Refusal(
    ("max_length",), f"a `max_length` below {MIN_MAX_LENGTH}", "the window must hold [CLS], a token and [SEP]")

#: The one warning kind both variants count (:class:`~nlgmetrics.engine.bookkeeping.WarnOnce`).
TRUNCATION_WARNING = {
    "truncated": (
        "BLANC: {count} sentence input(s) exceeded the {window}-token window and were cut as blanc "
        "cuts them (sentence tail first, down to len_sent_allow_cut tokens, then the summary's "
        "trailing sentences); their cut-off tokens are not scored."
    ),
}


# ----------------------------------------------------------------------------------------------
# checks (all before any model is loaded)


def check_scoring(measure: Any, gap: Any, gap_mask: Any, min_token_length_normal: Any,
                  min_token_length_lead: Any, min_token_length_followup: Any, len_sent_allow_cut: Any,
                  progress: Any, explain: Any,
                  max_length: int | None) -> tuple[str, MaskingOptions, bool, bool]:
    """BLANC's checks both variants share, after the engine's
    (:func:`~nlgmetrics.engine.call.check_call_options`): ``measure`` (``'relative'`` or
    ``'improve'``), the masking of the document sentences (plain ints from here on, numpy ints
    accepted: the signature does not depend on the type), the ``progress`` and ``explain``
    switches, and BLANC's floor on the checked ``max_length``: the window must hold ``[CLS]``, a
    token and ``[SEP]``.

    >>> check_scoring("relative", 2, 1, 4, 2, 100, 100, True, False, 2)
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: `max_length` must be at least 3 for BLANC ([CLS], one token, [SEP]) or None (blanc's 512-token window, capped at the model's positions), got 2.
    """
    with MEASURE_RULE.enforced():
        measure = check_choice("measure", measure, MEASURES)
    lengths = MinTokenLengths(min_token_length_normal, min_token_length_lead, min_token_length_followup)
    masking = MaskingOptions(gap, gap_mask, lengths, len_sent_allow_cut).validate()
    progress, explain = check_switches(SWITCH_RULE, progress=progress, explain=explain).values()
    with MAX_LENGTH_ROOM_RULE.enforced():
        check_int("max_length", max_length, minimum=MIN_MAX_LENGTH, allow_none=True, message=(
            f"`max_length` must be at least {MIN_MAX_LENGTH} for BLANC ([CLS], one token, [SEP]) or None "
            f"(blanc's {BLANC_MAX_LENGTH}-token window, capped at the model's positions), got {shown_value(max_length)}."))
    return measure, masking, progress, explain


# ----------------------------------------------------------------------------------------------
# the model


def special_ids(tokenizer: Any) -> tuple[int, int, int]:
    """``(cls, sep, mask)`` token ids; a clear error for tokenizers without them."""
    ids = []
    for name in ("cls_token", "sep_token", "mask_token"):
        token = getattr(tokenizer, name, None)
        if token is None:
            raise ValueError(
                f"BLANC needs a masked-LM tokenizer with a {name} (BERT-like); "
                f"{type(tokenizer).__name__} has none. Pass a masked LM such as 'bert-base-uncased'."
            )
        ids.append(tokenizer.convert_tokens_to_ids(token))
    return ids[0], ids[1], ids[2]


# ----------------------------------------------------------------------------------------------
# texts


def clean_text(text: str) -> str:
    """blanc's only normalisation: Unicode NFKD (accents become combining marks)."""
    return unicodedata.normalize("NFKD", text)


def tokenize_text(tokenizer: Any, text: str) -> list[str]:
    """``tokenizer.tokenize(text)`` without transformers' "Token indices sequence length is longer
    than the specified maximum sequence length ... will result in indexing errors" log.

    BLANC tokenizes whole sentences (and BLANC-tune whole summaries) and then cuts them to its
    window itself (:func:`~nlgmetrics.blanc.masking.fit_to_window`, with its own warning; tuning
    chunks of ``tuning.chunk_size`` tokens), so that log is false here, and alarming. Fast
    tokenizers take ``verbose=False`` for exactly this check; slow ones never run it in
    ``tokenize`` (and older transformers would log "Keyword arguments not recognized" for the
    keyword).
    """
    if getattr(tokenizer, "is_fast", False):
        return tokenizer.tokenize(text, verbose=False)
    return tokenizer.tokenize(text)


# ----------------------------------------------------------------------------------------------
# the masked copies


@dataclass(frozen=True)
class CopyInputs:
    """What the masked copies are built from: the tokenizer, the sentence splitter, the window,
    the document masking, and BLANC-help's filler id and help separator ids (BLANC-tune puts no
    help in front of the sentence)."""

    tokenizer: Any
    split: SentenceSplitter
    window: int
    masking: MaskingOptions
    filler_id: int | None = None
    sep_ids: tuple[int, ...] = ()


#: One masked copy of one sentence for one example: ``(example, help query, base query, true tokens,
#: sentence index, masked positions in the sentence)`` (the last two for explanations).
MaskedCopy = tuple[int, int, int, tuple[str, ...], int, tuple[int, ...]]


def plan_copies(
    examples: Iterable[int], helps: Sequence[str], documents: Sequence[str], inputs: CopyInputs,
    warn: WarnOnce,
) -> tuple[list[MaskedQuery], list[MaskedCopy]]:
    """The distinct queries ``[CLS] help sep masked-sentence [SEP]``, and the same with one filler
    per help token (base), of each masked copy of each sentence of ``documents[i]`` with the help
    ``helps[i]``, for ``i`` in ``examples``; and per copy, which two queries it needs (one and the
    same when there is no help). Each distinct text is split and tokenized once per call (one
    document, many summaries), a memo that lives only as long as the call."""
    from nlgmetrics.engine import MaskedQuery
    from nlgmetrics.engine.bookkeeping import QueryRegistry

    @functools.cache
    def sentences(text: str) -> list[list[str]]:  # WordPiece tokens per sentence; do not mutate
        return [tokenize_text(inputs.tokenizer, s) for s in inputs.split(clean_text(text))] if text else []

    registry: QueryRegistry = QueryRegistry(lambda key: MaskedQuery(input_ids=key[0], mask_positions=key[1]))
    copies: list[MaskedCopy] = []
    cls_id, sep_id, _ = special_ids(inputs.tokenizer)
    to_ids = inputs.tokenizer.convert_tokens_to_ids
    masking = inputs.masking
    for example in examples:
        help_sentences = sentences(helps[example]) or [[]]  # blanc's "no help": one empty sentence
        for index, sentence in enumerate(sentences(documents[example])):
            sent, help_tokens, cut = fit_to_window(
                sentence, help_sentences, len_sep=len(inputs.sep_ids),
                len_sent_allow_cut=masking.len_sent_allow_cut, max_length=inputs.window)
            warn.add("truncated", int(cut))
            tail = (*inputs.sep_ids, *to_ids(sent), sep_id)
            help_full = (cls_id, *to_ids(help_tokens), *tail)
            base_full = (cls_id, *[inputs.filler_id] * len(help_tokens), *tail)
            offset = 1 + len(help_tokens) + len(inputs.sep_ids)
            for positions in even_maskings(sent, masking.gap, masking.gap_mask, masking.lengths):
                shifted = tuple(p + offset for p in positions)
                help_query = registry.add((help_full, shifted))
                base_query = registry.add((base_full, shifted))
                copies.append((example, help_query, base_query, tuple(sent[p] for p in positions), index,
                               tuple(positions)))
    return registry.queries, copies


# ----------------------------------------------------------------------------------------------
# running the queries and counting


class NonFiniteLogitsError(FloatingPointError):
    """The model returned NaN or infinite logits: its argmax predictions would be meaningless."""


def argmax_ids(logits: Any, _query: Any) -> list[int]:
    """Engine reduce: the predicted token id at each masked position (ties: lowest id, as torch).

    NaN or infinite logits (a float16 overflow, or weights a tuning has blown up) raise
    :class:`NonFiniteLogitsError`: their argmax is arbitrary, and so would the counts be.
    """
    if not bool(logits.isfinite().all()):
        raise NonFiniteLogitsError(
            f"BLANC: the masked LM returned NaN or infinite logits ({logits.dtype}), so its predictions "
            f"(and the counts) would be meaningless; float16 overflows easily: use dtype='float32' or "
            f"'bfloat16', or check the model (a float32 load of its original weights)."
        )
    return logits.argmax(dim=-1).tolist()


def run_queries(
    lm: LoadedLM,
    queries: Sequence[MaskedQuery],
    *,
    token_budget: int,
    batch_size: int | None,
    bar: ExampleProgress | None = None,
    examples: int = 0,
    store: Any = None,
) -> list[list[int]]:
    """Argmax predictions of every query, aligned with ``queries``.

    ``bar`` (with the ``examples`` these queries complete) advances in proportion to the results;
    the engine's own bar stays off, so one bar counts examples over the whole call. ``store``: the
    engine's store (:mod:`nlgmetrics.engine.store`), only for a model whose fingerprint names its
    weights (never a tuned copy).
    """
    import numpy as np

    from nlgmetrics.engine import StoredReduction, iter_masked
    from nlgmetrics.engine.store import OnePerId

    # One predicted id per masked position (the query's second id sequence), stored as int64.
    reduction = StoredReduction("argmax_ids", argmax_ids, lambda ids: (np.asarray(ids, dtype=np.int64),),
                                lambda arrays: arrays[0].tolist(), accepts=OnePerId(1, ("i8",)))
    out: list[Any] = [None] * len(queries)
    results = iter_masked(lm, queries, reduction, token_budget=token_budget, batch_size=batch_size,
                          progress=False, store=store) if queries else iter(())
    if bar is not None:
        results = bar.track(results, examples=examples, queries=len(queries))
    for index, result in results:
        out[index] = result
    return out


def tally(cell: Counts, truth: Sequence[str], base: Sequence[int], helped: Sequence[int],
          tokenizer: Any) -> None:
    """Add the masked tokens of one masked copy to ``cell[base correct][helped correct]``.

    Correctness compares token *strings* (predicted id -> token), exactly like blanc.
    """
    to_token = tokenizer.convert_ids_to_tokens
    for true, b, h in zip(truth, to_token(list(base)), to_token(list(helped))):
        cell[int(b == true)][int(h == true)] += 1


# ----------------------------------------------------------------------------------------------
# the signature


def blanc_signature(variant: str, lm: LoadedLM, window: int, *, measure: str, masking: MaskingOptions,
                    splitter: str, options: Mapping[str, Any]) -> str:
    """``blanc|<model keys>|variant:<help|tune>|<options>|...``: every option that changes the number,
    those both variants have (``measure``, the document ``masking``, the ``splitter``) and the
    variant's own ``options``."""
    shared = {"measure": measure, **masking.signature_fields(),
              "len_sent_allow_cut": masking.len_sent_allow_cut, "splitter": splitter, "masking": "even"}
    return make_signature("blanc", {"variant": variant, **shared, **options}, model=lm.signature_fields(window))
