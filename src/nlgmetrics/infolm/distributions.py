"""InfoLM's text distributions: tokenization, idf weights, and the weighted bag p(.|x) of a text.

For a text x with scored tokens x_1..x_L (special tokens excluded) and temperature T, a masked LM
gives p_j = softmax(logits at j of x with x_j masked / T), a causal LM p_j = softmax(logits
predicting x_j from BOS + x_<j / T); p(.|x) = sum_j w_j p_j / sum_j w_j with w_j = idf(x_j) or 1.

The softmax subtracts each row's largest logit *before* dividing by T, so every finite T > 0
gives finite probabilities (T = 1e-300: the argmax one-hot; T = 1e300: uniform), never inf / inf.
The idf weights of a text are divided by their largest one before they are summed, so weights up
to the largest float (1e308 each) normalise without overflowing.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> p = text_distributions(build_random_model("bert", tempfile.mkdtemp()), ["a cat", ""])
>>> tuple(p.shape), [round(float(s), 6) for s in p.sum(-1)]
((2, 30522), [1.0, 1.0])
"""

from __future__ import annotations

import hashlib
import itertools
import math
import numbers
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from nlgmetrics.core.refusals import AFTER_LOADING, Refusal
from nlgmetrics.core.validation import (
    as_texts, check_engine_options, check_model_tokenizer, check_real, resolve_token_budget, shown_value,
)
from nlgmetrics.engine import CausalQuery, LoadedLM, MaskedQuery, iter_causal, iter_masked, load_lm

#: torchmetrics' default, so that numbers agree with the reference implementation out of the box.
DEFAULT_TEMPERATURE = 0.25

#: The truncation warning, one per call.
TRUNCATION_WARNING = (
    "InfoLM: {count} of {total} distinct texts are longer than max_length={limit} tokens "
    "(special tokens included) and were truncated to their first tokens; pass a larger "
    "max_length (up to the model's positions) or shorter texts to score all of them."
)

# What the checks of this module refuse, and why (nlgmetrics.infolm.refusals lists them).
TEMPERATURE_RULE = Refusal(
    ("temperature",), "a `temperature` that is not a finite number > 0",
    "the softmax divides the logits by it (every finite T > 0 is computed without overflow: "
    "T -> 0 gives the argmax, a huge T the uniform distribution)")
IDF_RULE = Refusal(
    ("idf",), "an `idf` that is not True, False or a non-empty {token_id: weight} mapping of integer ids "
    "to finite weights >= 0", "the weights average each text's distributions")
MAX_LENGTH_ROOM_RULE = Refusal(
    ("max_length",), "a `max_length` below 3 for a masked LM or below 2 for a causal LM",
    "the special tokens would leave no room for a token to score", AFTER_LOADING)

# ----------------------------------------------------------------------------------------------
# tokenization


@dataclass(frozen=True)
class TokenizedText:
    """One text ready for the engine.

    ``input_ids``: the model input (masked LM: with special tokens; causal LM: the target tokens,
    the BOS prefix is added by the query). ``positions``: indices into ``input_ids`` that are scored
    (masked LM: the positions to mask; causal LM: target indices). ``tokens``: the scored token ids.
    ``empty``: no scorable token (the empty-text rule applies).
    """

    input_ids: tuple[int, ...]
    positions: tuple[int, ...]
    tokens: tuple[int, ...]
    empty: bool


def bos_id(lm: LoadedLM) -> int:
    """The first token of every causal context (BOS, else EOS, else CLS)."""
    from nlgmetrics.core.tokens import BOS, CLS, EOS, default_start_token_id

    found = default_start_token_id(lm.tokenizer, (BOS, EOS, CLS))  # the rule the LM metrics share
    if found is not None:
        return found
    raise ValueError(
        f"The tokenizer of {lm.name!r} has no BOS/EOS token to start a causal context; set "
        "tokenizer.bos_token before calling infolm.")


def resolve_max_length(lm: LoadedLM, max_length: int | None) -> int:
    """The length limit applied (tokens per text incl. special tokens): ``None`` = the model's
    positions, a larger value is capped at them, a value leaving no room for a token is an error."""
    if max_length is None:  # a given value was checked with the engine's options
        return lm.max_length
    minimum = 3 if lm.kind == "masked" else 2
    if max_length < minimum:
        raise MAX_LENGTH_ROOM_RULE.error(
            f"max_length={max_length} leaves no room for a token (special tokens need {minimum - 1}); "
            f"pass max_length >= {minimum}.")
    return min(max_length, lm.max_length)


def warn_truncated(count: int, total: int, limit: int, stacklevel: int = 3) -> None:
    """The truncation warning, when :func:`tokenize` cut ``count`` of ``total`` texts (``stacklevel``
    as for :meth:`nlgmetrics.engine.bookkeeping.WarnOnce.emit`: 3 points at the caller's caller)."""
    if count:
        warnings.warn(TRUNCATION_WARNING.format(count=count, total=total, limit=limit), stacklevel=stacklevel)


def tokenize(lm: LoadedLM, texts: Sequence[str], max_length: int) -> tuple[list[TokenizedText], int]:
    """Tokenize ``texts`` for InfoLM; return ``(tokenized, number_truncated)``.

    Truncation keeps the first tokens so that the model input (special tokens included) has at most
    ``max_length`` tokens, like ``tokenizer(..., truncation=True, max_length=max_length)``.
    """
    tokenizer = lm.tokenizer
    if not texts:
        return [], 0
    masked = lm.kind == "masked"  # load_lm refuses a masked LM whose tokenizer has no mask token
    # The tokenizer truncates (keeping the first tokens, like torchmetrics); overflowing rows tell us
    # which texts were cut, so the caller can warn once. Causal: the BOS prefix takes one position.
    encoded = tokenizer(
        list(texts),
        add_special_tokens=masked,
        truncation=True,
        max_length=max_length if masked else max_length - 1,
        return_overflowing_tokens=True,
        return_special_tokens_mask=True,
        verbose=False,
    )
    # Ids never scored: CLS/SEP/PAD as torchmetrics does (plus BOS/EOS for causal tokenizers).
    names = ("cls_token_id", "sep_token_id", "pad_token_id", "bos_token_id", "eos_token_id")
    excluded = {i for i in (getattr(tokenizer, n, None) for n in names) if isinstance(i, int)}
    sample_of_row = encoded.get("overflow_to_sample_mapping", list(range(len(encoded["input_ids"]))))
    out: list[TokenizedText] = []
    for row, sample in enumerate(sample_of_row):  # the rows of text k follow those of text k - 1
        if sample < len(out):
            continue  # an overflow row: the text was truncated; keep only its first window
        full = tuple(encoded["input_ids"][row])
        added = encoded["special_tokens_mask"][row]
        positions = tuple(i for i, flag in enumerate(added) if not flag and full[i] not in excluded)
        out.append(TokenizedText(full, positions, tuple(full[i] for i in positions), empty=not positions))
    return out, sum(count > 1 for count in Counter(sample_of_row).values())


# ----------------------------------------------------------------------------------------------
# idf


@dataclass(frozen=True)
class IdfTable:
    """Token weights: ``weights[token_id]``, ``default`` for ids missing from the table.

    >>> table = compute_idf([(1, 2), (2, 3)])
    >>> round(table.weight(2), 4), round(table.weight(1), 4), round(table.weight(99), 4)
    (0.0, 0.4055, 1.0986)
    """

    weights: Mapping[int, float]
    default: float

    def weight(self, token_id: int) -> float:
        return self.weights.get(token_id, self.default)

    def fingerprint(self) -> str:
        """Short hash of the table, for signatures of user-supplied tables."""
        items = sorted((int(k), float(v)) for k, v in self.weights.items())
        digest = hashlib.sha256(repr((items, float(self.default))).encode()).hexdigest()
        return digest[:10]


def bag_key(text: TokenizedText, table: IdfTable | None, temperatures: Sequence[float]) -> bytes:
    """Everything besides the model that decides a text's bags (one per temperature): its tokens,
    scored positions, the weight of each, and the temperatures (for the engine's store)."""
    import struct

    import numpy as np

    from nlgmetrics.engine.store import ids_bytes

    weights = [] if text.empty else position_weights(text, table)
    return (ids_bytes(text.input_ids, text.positions) + struct.pack("<?", text.empty)
            + np.asarray(weights, dtype=np.float64).tobytes() + b"|"
            + np.asarray(temperatures, dtype=np.float64).tobytes())


#: What the store keeps of a text (one float64 row per temperature); part of its keys.
BAG_REDUCTION = "infolm:weighted-tempered-softmax-sum:float64"


def compute_idf(token_ids: Iterable[Sequence[int]]) -> IdfTable:
    """idf(t) = log((N + 1) / (df(t) + 1)) over the N given documents (BERTScore / torchmetrics form).

    A token in no document gets log(N + 1). Pass *distinct* documents to make the table
    independent of duplicated rows (``infolm`` does).
    """
    df: Counter[int] = Counter()  # documents holding each token
    n = 0
    for n, ids in enumerate(token_ids, 1):
        df.update(set(ids))
    weights = {t: math.log((n + 1) / (c + 1)) for t, c in df.items()}
    return IdfTable(weights, math.log(n + 1))


def as_idf_table(idf: Any) -> IdfTable | None:
    """A user's ``idf`` as a table (``None`` for True/False); ValueError for anything else.

    >>> as_idf_table({5: 2.0, 7: 1e308}).default
    1e+308
    >>> as_idf_table({5: -1.0})
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: `idf[5]`=-1.0; weights must be finite numbers >= 0.
    """
    if isinstance(idf, IdfTable):
        return idf
    if isinstance(idf, bool):
        return None
    if not isinstance(idf, Mapping):
        raise IDF_RULE.error(
            f"`idf` must be True, False or a {{token_id: weight}} mapping, got {shown_value(idf)}.")
    if not idf:
        raise IDF_RULE.error("`idf` is an empty mapping; pass {token_id: weight, ...}, True or False.")
    weights: dict[int, float] = {}
    with IDF_RULE.enforced():  # check_real's ValueError raised as this rule's error
        for key, value in idf.items():
            # numbers.Integral / Real: numpy scalars (an idf table built with numpy) are fine too.
            if isinstance(key, bool) or not isinstance(key, numbers.Integral):
                raise IDF_RULE.error(f"`idf` keys must be token ids (int), got {shown_value(key)}.")
            weights[int(key)] = check_real(value, minimum=0, message=(
                f"`idf[{shown_value(key)}]`={shown_value(value)}; weights must be finite numbers >= 0."))
    return IdfTable(weights, max(weights.values()))


def position_weights(text: TokenizedText, table: IdfTable | None) -> list[float]:
    """Normalised weights of the scored positions (sum 1); uniform when idf is off or all-zero.

    The weights are divided by their largest one first: their plain sum overflows for weights
    near the largest float, and w / inf would make every weight 0 (an all-zero distribution).

    >>> text = TokenizedText((1, 2), (0, 1), (1, 2), empty=False)
    >>> position_weights(text, IdfTable({1: 1e308, 2: 1e308}, 0.0))
    [0.5, 0.5]
    """
    n = len(text.positions)
    if table is not None:
        raw = [table.weight(t) for t in text.tokens]
        largest = max(raw, default=0.0)
        if largest > 0:
            scaled = [w / largest for w in raw]
            total = math.fsum(scaled)  # in [1, n]
            return [w / total for w in scaled]
    return [1.0 / n] * n


# ----------------------------------------------------------------------------------------------
# distributions


def check_temperature(temperature: Any) -> float:
    """A finite temperature > 0, as a float (every such value is computed without overflow)."""
    with TEMPERATURE_RULE.enforced():
        value = check_real(temperature, finite=False,
                           message=f"`temperature` must be a positive number, got {shown_value(temperature)}.")
    if not math.isfinite(value) or value <= 0:
        raise TEMPERATURE_RULE.error(f"`temperature`={temperature} must be finite and > 0 (e.g. 0.25).")
    return value


def tempered_softmax(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """softmax(logits / T) in float64, as softmax((logits - max) / T): (logits - max) <= 0, so
    dividing by a tiny T gives at worst -inf (probability 0), never inf - inf. The input is left
    unchanged.

    >>> tempered_softmax(torch.tensor([[1.0, 2.0]]), 1e-300).tolist()
    [[0.0, 1.0]]
    """
    x = logits.to(torch.float64)
    shifted = x.sub_(x.amax(-1, keepdim=True)) if x is not logits else x - x.amax(-1, keepdim=True)
    return torch.softmax(shifted.div_(temperature), dim=-1)


def vocab_size(lm: LoadedLM) -> int:
    """Width of the model's output distributions."""
    embeddings = lm.model.get_output_embeddings()
    if embeddings is not None and getattr(embeddings, "weight", None) is not None:
        return int(embeddings.weight.shape[0])
    return int(lm.model.config.vocab_size)


def default_token_budget(lm: LoadedLM, token_budget: int | None) -> int:
    """Padded tokens per forward batch; None (:func:`~nlgmetrics.core.validation.resolve_token_budget`):
    InfoLM's default, 8192 on accelerators, 2048 on CPU, where bigger batches are no faster and
    their activations add to the peak memory."""
    return resolve_token_budget(token_budget, 2048 if lm.device.type == "cpu" else 8192)


def check_finite_distributions(acc: torch.Tensor, lm: LoadedLM) -> None:
    """The model's logits were finite (NaN or +inf logits, e.g. a float16 overflow, would give
    NaN distributions and then NaN or wrong scores)."""
    if not bool(torch.isfinite(acc).all()):
        dtype = str(lm.dtype).removeprefix("torch.")
        fix = ("float16 overflows easily: use dtype='float32' or 'bfloat16'" if dtype == "float16" else
               "the model's weights produce them: check the model (a float32 load of its original weights)")
        raise FloatingPointError(
            f"InfoLM: {lm.name!r} returned NaN or +inf logits in {dtype}, so its distributions (and any "
            f"score) would be NaN; {fix}.")


def accumulate_distributions(
    lm: LoadedLM, texts: Sequence[TokenizedText], table: IdfTable | None, acc: torch.Tensor,
    temperature: float, token_budget: int, batch_size: int | None,
    track: Callable[[Iterable[Any], int], Iterable[Any]] = lambda results, _queries: results,
    flush_rows: int = 64, other_temperatures: Sequence[tuple[float, torch.Tensor]] = (),
) -> None:
    """Write the aggregated distribution of ``texts[i]`` (weights from ``table``) into ``acc[i]``.

    ``acc`` is float64 ``[len(texts), vocab]`` of zeros on the model's device. Per-position
    distributions are never stored: each is multiplied by its weight and added to its text's row.
    Memory beside ``acc``: a masked LM's logits, one row per masked copy (about two batches' rows,
    a row per sequence); a causal LM's one batch's logits, the float64 softmax of one text at one
    temperature (input and output: 16 bytes x rows x vocab) and one unit's bags
    (:func:`causal_bag_reduction`), never a copy of the logits.
    ``track(results, number_of_queries)`` sees the engine's results go by (a progress bar).
    ``other_temperatures``: more ``(temperature, acc)`` pairs, filled from the same logits, so a
    temperature sweep costs one model pass (each ``acc`` gets exactly what a call of its own gives).
    """
    targets = [(temperature, acc), *other_temperatures]
    if lm.kind == "masked":
        queries: list[MaskedQuery] = []
        slots: list[tuple[int, float]] = []  # per query: the row of its text in ``acc``, its weight
        tokenizer = lm.tokenizer
        for i, text in enumerate(texts):
            if text.empty:
                # One slot without context: [CLS] [MASK] [SEP] (the mask id is masked again).
                ids = tuple(tokenizer(tokenizer.mask_token)["input_ids"])
                units = [(ids, ids.index(tokenizer.mask_token_id), 1.0)]
            else:
                weights = position_weights(text, table)
                units = [(text.input_ids, p, w) for p, w in zip(text.positions, weights)]
            for ids, position, weight in units:
                queries.append(MaskedQuery(ids, (position,)))
                slots.append((i, weight))
        # reduce returns a copy of the logits row (a view would drag the whole batch's storage
        # along when results are pickled across processes); softmax + weighting happen in blocks
        # of `flush_rows` rows, so one kernel handles many queries instead of one launch per query.
        results = iter(track(iter_masked(
            lm, queries, lambda logits, _query: logits.clone(), token_budget=token_budget,
            batch_size=batch_size, progress=False,
        ), len(queries)))
        while part := list(itertools.islice(results, flush_rows)):
            # At most three [flush_rows, vocab] float64 blocks are alive (logits, shifted, probabilities).
            block = torch.cat([row for _, row in part]).to(acc.device, torch.float64)
            w = torch.tensor([slots[q][1] for q, _ in part], dtype=torch.float64, device=acc.device)
            rows = torch.tensor([slots[q][0] for q, _ in part], device=acc.device)
            del part  # the rows are in the block now
            for t, target in targets:
                target.index_add_(0, rows, tempered_softmax(block, t).mul_(w[:, None]))
            del block  # not kept while the engine computes the next rows
        return

    bos = bos_id(lm)
    queries_c: list[CausalQuery] = []
    row_weights: list[tuple[float, ...]] = []  # one weight per target row
    for text in texts:
        if text.empty:
            # The first-token distribution after BOS: one target token (any id), row 0 only.
            queries_c.append(CausalQuery((bos,), (bos,)))
            row_weights.append((1.0,))
            continue
        weight_at = dict(zip(text.positions, position_weights(text, table)))
        # Rows after the last scored position are not needed: drop them from the target.
        used = text.positions[-1] + 1
        queries_c.append(CausalQuery((bos,), text.input_ids[:used]))
        row_weights.append(tuple(weight_at.get(row, 0.0) for row in range(used)))
    reduce, variant_of_text = causal_bag_reduction(queries_c, row_weights, [t for t, _ in targets], acc.device)
    results_c = iter_causal(lm, queries_c, reduce, token_budget=token_budget, batch_size=batch_size,
                            prefix_cache=False, progress=False)
    for i, bags in track(results_c, len(queries_c)):
        for (_, target), bag in zip(targets, bags[variant_of_text[i]]):
            target[i] += bag


def causal_bag_reduction(
    queries: Sequence[CausalQuery], row_weights: Sequence[tuple[float, ...]], temperatures: Sequence[float],
    device: torch.device,
) -> tuple[Callable[[torch.Tensor, CausalQuery], list[list[torch.Tensor]]], list[int]]:
    """``(reduce, variant_of_text)``: a ``reduce`` for :func:`~nlgmetrics.engine.iter_causal` that
    turns a query's logits into its bags while the batch's logits exist, and which of the query's
    results is text ``i``'s: ``reduce(logits, queries[i])[variant_of_text[i]][k]`` is
    ``row_weights[i] @ tempered_softmax(logits, temperatures[k])``, float64 ``[vocab]`` on ``device``.

    Nothing of ``[rows, vocab]`` size outlives the call of ``reduce``: the engine holds a unit's
    results until the next unit has run, so they must be the bags, not the logits. Each bag is the
    same operations on the same operands as a softmax of the kept logits would be, so the same bits.
    The engine runs identical queries once: should two texts share a query but not its weights
    (:func:`tokenize` makes no such pair), each still gets its own bag from the shared logits.
    """
    variants: dict[CausalQuery, list[tuple[float, ...]]] = {}
    variant_of_text: list[int] = []
    for query, weights in zip(queries, row_weights, strict=True):
        known = variants.setdefault(query, [])
        if weights not in known:
            known.append(weights)
        variant_of_text.append(known.index(weights))

    def reduce(logits: torch.Tensor, query: CausalQuery) -> list[list[torch.Tensor]]:
        rows = logits.to(device)
        out = []
        for weights in variants[query]:
            w = torch.tensor(weights, dtype=torch.float64, device=device)
            # One temperature's float64 softmax at a time: 2 x rows x vocab x 8 bytes at most.
            out.append([w @ tempered_softmax(rows, t) for t in temperatures])
        return out

    return reduce, variant_of_text


def text_distributions(
    model: Any,
    texts: Sequence[str],
    *,
    temperature: float = DEFAULT_TEMPERATURE,
    idf: bool | Mapping[int, float] | IdfTable = False,
    max_length: int | None = None,
    model_tokenizer: Any = None,
    revision: str | None = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    token_budget: int | str | None = None,
    batch_size: int | None = None,
) -> torch.Tensor:
    """Aggregated distributions p(.|x) of ``texts``: float64 ``[len(texts), vocab]`` on the CPU.

    A building block for analyses (and the parity tests); it holds all rows at once, so use
    :func:`nlgmetrics.infolm.infolm` for large inputs. ``idf=True`` computes the table from
    ``texts`` themselves (distinct texts). See the module docstring for an example.
    """
    texts = as_texts("texts", texts)
    temperature = check_temperature(temperature)
    token_budget, batch_size, max_length = check_engine_options(token_budget, batch_size, max_length)
    table = as_idf_table(idf)
    check_model_tokenizer(model, model_tokenizer)
    lm = load_lm(model, model_tokenizer=model_tokenizer, device=device, dtype=dtype, revision=revision)
    token_budget = default_token_budget(lm, token_budget)
    limit = resolve_max_length(lm, max_length)
    tokenized, truncated = tokenize(lm, texts, limit)
    warn_truncated(truncated, len(texts), limit)
    if table is None and idf is True:
        table = compute_idf(dict.fromkeys(t.tokens for t in tokenized))
    acc = torch.zeros(len(texts), vocab_size(lm), dtype=torch.float64, device=lm.device)
    with torch.inference_mode():
        accumulate_distributions(lm, tokenized, table, acc, temperature, token_budget, batch_size)
    check_finite_distributions(acc, lm)
    return acc.cpu()
