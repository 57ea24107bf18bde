"""InfoLM (Colombo, Clavel, Piantanida, AAAI 2022): a distance between two bags of LM distributions.

For a text x with tokens x_1..x_L (special tokens excluded) and temperature T, a **masked LM** gives
for every position j the distribution p_j = softmax(logits at j of x with x_j masked / T); a
**causal LM** gives p_j = softmax(logits predicting x_j from BOS + x_<j / T). The text's distribution
is the weighted bag p(.|x) = sum_j w_j p_j / sum_j w_j, with w_j = idf(x_j) (idf on) or 1.
InfoLM(candidate, reference) = I[p(.|reference), p(.|candidate)] for an information measure I
(:mod:`nlgmetrics.information_measures`). **Lower = more similar** for every measure (0 = same
distribution). With several references per candidate the best (smallest) value is reported.

Choices where the paper / issue is silent (also in ``metrics/infolm/README.md``):

- idf (``idf=True``): idf(t) = log((N + 1) / (df(t) + 1)) over the N *distinct* (tokenized)
  references of the call, the same table for candidates and references; a token absent from every
  reference gets log(N + 1). Distinct, so duplicated rows do not change any score. ``idf`` may also
  be a ``{token_id: weight}`` mapping (ids missing from it get its largest weight).
- A text whose weights are all 0 (every token occurs in every reference) falls back to uniform weights.
- Empty / whitespace-only texts (no scorable token): their distribution is the model's prediction
  for a single slot without context: ``[CLS] [MASK] [SEP]`` (masked) or the first-token
  distribution after BOS (causal). Finite for every measure; two empty texts are at distance 0.
- Texts longer than ``max_length`` tokens (special tokens included; default: the model's
  positions) are truncated to their first tokens, with one warning per call.
- Identical (same token ids) candidate and reference: the score is exactly 0.

Speed: every distinct text is scored once (a REALSumm reference shared by 25 systems runs once),
the engine packs masked copies by token budget and applies the LM head at the masked position only,
and distributions are accumulated on the fly per text in float64 on the model's device; only
``chunk_size`` text distributions ([chunk, vocab]) are alive at a time.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
>>> result = infolm(["the cat sat"], [["the cat sat", "a dog ran"]], model=path, progress=False)
>>> result.scores, result.lower_is_better
([0.0], True)
"""

from __future__ import annotations

import hashlib
import math
import numbers
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from tqdm.auto import tqdm

from nlgmetrics.engine import CausalQuery, LoadedLM, MaskedQuery, iter_causal, iter_masked, load_lm
from nlgmetrics.information_measures import (
    INFORMATION_MEASURES,
    NEEDS_ALPHA,
    NEEDS_BETA,
    check_measure,
    information_measure as measure_fn,
)
from nlgmetrics.signature import make_signature
from nlgmetrics.validation import as_reference_lists, as_texts, check_int, check_real, check_same_length

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_MEASURE",
    "DEFAULT_TEMPERATURE",
    "INFORMATION_MEASURES",
    "IdfTable",
    "InfoLMResult",
    "compute_idf",
    "infolm",
    "infolm_multi",
    "text_distributions",
    "tokenize",
]

DEFAULT_MODEL = "bert-base-uncased"
#: Fisher-Rao: parameter-free, a true distance (symmetric, in [0, pi]), and the measure the paper
#: recommends when alpha/beta cannot be tuned.
DEFAULT_MEASURE = "fisher_rao_distance"
#: torchmetrics' default, so that numbers agree with the reference implementation out of the box.
DEFAULT_TEMPERATURE = 0.25

LOWER_IS_BETTER_NOTE = (
    "InfoLM is a divergence/distance between the candidate's and the reference's bags of LM "
    "distributions: lower = more similar (0 = identical); the best of several references is the smallest."
)


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


def _excluded_ids(tokenizer: Any) -> set[int]:
    """Ids never scored: CLS/SEP/PAD as torchmetrics does (plus BOS/EOS for causal tokenizers)."""
    names = ("cls_token_id", "sep_token_id", "pad_token_id", "bos_token_id", "eos_token_id")
    return {i for i in (getattr(tokenizer, n, None) for n in names) if isinstance(i, int)}


def _bos_id(lm: LoadedLM) -> int:
    tokenizer = lm.tokenizer
    for name in ("bos_token_id", "eos_token_id", "cls_token_id"):
        value = getattr(tokenizer, name, None)
        if isinstance(value, int):
            return value
    raise ValueError(
        f"The tokenizer of {lm.name!r} has no BOS/EOS token to start a causal context; set "
        "tokenizer.bos_token before calling infolm."
    )


def resolve_max_length(lm: LoadedLM, max_length: int | None) -> int:
    """``max_length`` (tokens incl. special tokens) checked against the model's positions."""
    if max_length is None:
        return lm.max_length
    max_length = check_int("max_length", max_length,
                           message=f"`max_length` must be a positive int or None, got {max_length!r}.")
    minimum = 3 if lm.kind == "masked" else 2
    if max_length < minimum:
        raise ValueError(
            f"max_length={max_length} leaves no room for a token (special tokens need {minimum - 1}); "
            f"pass max_length >= {minimum}."
        )
    if max_length > lm.max_length:
        raise ValueError(
            f"max_length={max_length} exceeds what {lm.name!r} accepts ({lm.max_length} positions); "
            f"pass max_length <= {lm.max_length} or None."
        )
    return max_length


def tokenize(lm: LoadedLM, texts: Sequence[str], max_length: int) -> tuple[list[TokenizedText], int]:
    """Tokenize ``texts`` for InfoLM; return ``(tokenized, number_truncated)``.

    Truncation keeps the first tokens so that the model input (special tokens included) has at most
    ``max_length`` tokens, like ``tokenizer(..., truncation=True, max_length=max_length)``.
    """
    tokenizer = lm.tokenizer
    if not texts:
        return [], 0
    masked = lm.kind == "masked"
    if masked and tokenizer.mask_token_id is None:
        raise ValueError(f"The tokenizer of {lm.name!r} has no mask token; InfoLM needs one for a masked LM.")
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
    excluded = _excluded_ids(tokenizer)
    sample_of_row = encoded.get("overflow_to_sample_mapping", list(range(len(encoded["input_ids"]))))
    out: list[TokenizedText] = []
    rows_per_sample = [0] * len(texts)
    for row, sample in enumerate(sample_of_row):
        rows_per_sample[sample] += 1
        if rows_per_sample[sample] > 1:
            continue  # an overflow row: the text was truncated; keep only its first window
        full = tuple(encoded["input_ids"][row])
        added = encoded["special_tokens_mask"][row]
        positions = tuple(i for i, flag in enumerate(added) if not flag and full[i] not in excluded)
        out.append(TokenizedText(full, positions, tuple(full[i] for i in positions), empty=not positions))
    truncated = sum(1 for count in rows_per_sample if count > 1)
    return out, truncated


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
    source: str = "table"

    def weight(self, token_id: int) -> float:
        return self.weights.get(token_id, self.default)

    def fingerprint(self) -> str:
        """Short hash of the table, for signatures of user-supplied tables."""
        items = sorted((int(k), float(v)) for k, v in self.weights.items())
        digest = hashlib.sha256(repr((items, float(self.default))).encode()).hexdigest()
        return digest[:10]


def compute_idf(token_ids: Iterable[Sequence[int]]) -> IdfTable:
    """idf(t) = log((N + 1) / (df(t) + 1)) over the N given documents (BERTScore / torchmetrics form).

    A token in no document gets log(N + 1). Pass *distinct* documents to make the table
    independent of duplicated rows (``infolm`` does).
    """
    df: dict[int, int] = {}
    n = 0
    for ids in token_ids:
        n += 1
        for token in set(ids):
            df[token] = df.get(token, 0) + 1
    weights = {t: math.log((n + 1) / (c + 1)) for t, c in df.items()}
    return IdfTable(weights, math.log(n + 1), source="computed")


def _as_idf_table(idf: Any) -> IdfTable | None:
    if isinstance(idf, IdfTable):
        return idf
    if isinstance(idf, Mapping):
        if not idf:
            raise ValueError("`idf` is an empty mapping; pass {token_id: weight, ...}, True or False.")
        weights: dict[int, float] = {}
        for key, value in idf.items():
            # numbers.Integral / Real: numpy scalars (an idf table built with numpy) are fine too.
            if isinstance(key, bool) or not isinstance(key, numbers.Integral):
                raise ValueError(f"`idf` keys must be token ids (int), got {key!r}.")
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
                raise ValueError(f"`idf[{key}]`={value!r}; weights must be finite numbers >= 0.")
            weights[int(key)] = float(value)
        return IdfTable(weights, max(weights.values()), source="user")
    return None


def _position_weights(text: TokenizedText, table: IdfTable | None) -> list[float]:
    """Normalised weights of the scored positions (sum 1); uniform when idf is off or all-zero."""
    n = len(text.positions)
    if table is not None:
        raw = [table.weight(t) for t in text.tokens]
        total = sum(raw)
        if total > 0:
            return [w / total for w in raw]
    return [1.0 / n] * n


# ----------------------------------------------------------------------------------------------
# distributions


def _check_temperature(temperature: Any) -> float:
    value = check_real("temperature", temperature, finite=False,
                       message=f"`temperature` must be a positive number, got {temperature!r}.")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"`temperature`={temperature} must be finite and > 0 (e.g. 0.25).")
    return value


def _compute_into(
    lm: LoadedLM,
    texts: Sequence[TokenizedText],
    tables: Sequence[IdfTable | None],
    acc: torch.Tensor,
    temperature: float,
    token_budget: int,
    batch_size: int | None,
    flush_rows: int = 64,
) -> None:
    """Write the aggregated distribution of ``texts[i]`` (weights from ``tables[i]``) into ``acc[i]``.

    ``acc`` is float64 ``[len(texts), vocab]`` of zeros on the model's device. Per-position
    distributions are never stored: each is multiplied by its weight and added to its text's row.
    """
    if lm.kind == "masked":
        queries: list[MaskedQuery] = []
        slots: list[int] = []
        weights: list[float] = []
        tokenizer = lm.tokenizer
        for i, (text, table) in enumerate(zip(texts, tables)):
            if text.empty:
                # One slot without context: [CLS] [MASK] [SEP] (the mask id is masked again).
                ids = tuple(tokenizer(tokenizer.mask_token)["input_ids"])
                queries.append(MaskedQuery(ids, (ids.index(tokenizer.mask_token_id),)))
                slots.append(i)
                weights.append(1.0)
                continue
            for position, weight in zip(text.positions, _position_weights(text, table)):
                queries.append(MaskedQuery(text.input_ids, (position,)))
                slots.append(i)
                weights.append(weight)
        buffer: list[tuple[torch.Tensor, int]] = []
        pending: list[int] = []

        def flush() -> None:
            # In place where possible: at most two [flush_rows, vocab] float64 blocks are alive.
            scaled = torch.cat([row for row, _ in buffer]).to(acc.device, torch.float64).div_(temperature)
            buffer.clear()
            probs = torch.softmax(scaled, dim=-1)
            del scaled
            w = torch.tensor([weights[q] for q in pending], dtype=torch.float64, device=acc.device)
            acc.index_add_(0, torch.tensor([slots[q] for q in pending], device=acc.device), probs.mul_(w[:, None]))
            pending.clear()

        # reduce returns a copy of the logits row (a view would drag the whole batch's storage
        # along when results are pickled across processes); softmax + weighting happen in batches
        # of `flush_rows` rows, so one kernel handles many queries instead of one launch per query.
        for q, row in iter_masked(
            lm, queries, lambda logits, _query: logits.clone(), token_budget=token_budget,
            batch_size=batch_size, progress=False,
        ):
            buffer.append((row, q))
            pending.append(q)
            if len(buffer) >= flush_rows:
                flush()
        if buffer:
            flush()
        return

    bos = _bos_id(lm)
    queries_c: list[CausalQuery] = []
    row_weights: list[tuple[int, list[float]]] = []  # (number of rows used, weights per row)
    for text, table in zip(texts, tables):
        if text.empty:
            # The first-token distribution after BOS: one target token (any id), row 0 only.
            queries_c.append(CausalQuery((bos,), (bos,)))
            row_weights.append((1, [1.0]))
            continue
        per_position = _position_weights(text, table)
        dense = [0.0] * len(text.input_ids)
        for position, weight in zip(text.positions, per_position):
            dense[position] = weight
        # Rows after the last scored position are not needed: drop them from the target.
        used = text.positions[-1] + 1
        queries_c.append(CausalQuery((bos,), text.input_ids[:used]))
        row_weights.append((used, dense[:used]))
    for i, logits in iter_causal(
        lm, queries_c, lambda logits, _query: logits.clone(), token_budget=token_budget,
        batch_size=batch_size, prefix_cache=False, progress=False,
    ):
        used, dense = row_weights[i]
        probs = torch.softmax(logits[:used].to(acc.device, torch.float64) / temperature, dim=-1)
        acc[i] += torch.tensor(dense, dtype=torch.float64, device=acc.device) @ probs


def text_distributions(
    model: Any,
    texts: Sequence[str],
    *,
    temperature: float = DEFAULT_TEMPERATURE,
    idf: bool | Mapping[int, float] | IdfTable = False,
    max_length: int | None = None,
    tokenizer: Any = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    token_budget: int | None = None,
    batch_size: int | None = None,
) -> torch.Tensor:
    """Aggregated distributions p(.|x) of ``texts``: float64 ``[len(texts), vocab]`` on the CPU.

    A building block for analyses (and the parity tests); it holds all rows at once, so use
    :func:`infolm` for large inputs. ``idf=True`` computes the table from ``texts`` themselves
    (distinct texts).

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> p = text_distributions(build_random_model("bert", tempfile.mkdtemp()), ["a cat", ""])
    >>> tuple(p.shape), [round(float(s), 6) for s in p.sum(-1)]
    ((2, 30522), [1.0, 1.0])
    """
    lm = load_lm(model, tokenizer=tokenizer, device=device, dtype=dtype)
    token_budget = default_token_budget(lm, token_budget)
    texts = as_texts("texts", texts)
    temperature = _check_temperature(temperature)
    limit = resolve_max_length(lm, max_length)
    tokenized, truncated = tokenize(lm, texts, limit)
    _warn_truncated(truncated, len(texts), limit)
    table = _as_idf_table(idf)
    if table is None and idf is True:
        table = compute_idf(dict.fromkeys(t.tokens for t in tokenized))
    elif table is None and idf is not False:
        raise ValueError(f"`idf` must be True, False or a {{token_id: weight}} mapping, got {idf!r}.")
    vocab = _vocab_size(lm)
    acc = torch.zeros(len(texts), vocab, dtype=torch.float64, device=lm.device)
    with torch.inference_mode():
        _compute_into(lm, tokenized, [table] * len(texts), acc, temperature, token_budget, batch_size)
    return acc.cpu()


def default_token_budget(lm: LoadedLM, token_budget: int | None) -> int:
    """Padded tokens per forward batch: 8192 on accelerators; 2048 on CPU, where bigger batches are
    no faster but the activations of a bert-base batch of 8192 tokens add ~400 MB of peak memory."""
    if token_budget is not None:
        return token_budget
    return 2048 if lm.device.type == "cpu" else 8192


def _vocab_size(lm: LoadedLM) -> int:
    embeddings = lm.model.get_output_embeddings()
    if embeddings is not None and getattr(embeddings, "weight", None) is not None:
        return int(embeddings.weight.shape[0])
    return int(lm.model.config.vocab_size)


def _warn_truncated(truncated: int, total: int, limit: int) -> None:
    if truncated:
        warnings.warn(
            f"InfoLM: {truncated} of {total} distinct texts are longer than max_length={limit} tokens "
            f"(special tokens included) and were truncated to their first tokens; pass a larger "
            f"max_length (up to the model's positions) or shorter texts to score all of them.",
            UserWarning,
            stacklevel=3,
        )


# ----------------------------------------------------------------------------------------------
# the metric


@dataclass(frozen=True)
class InfoLMResult:
    """InfoLM scores. ``scores[i]``: the smallest measure value over the references of example i.

    ``best_reference[i]``: index (within ``references[i]``) of the reference that gave it.
    **Lower = more similar** (``lower_is_better`` is always True; see ``note``).
    """

    scores: list[float]
    mean: float
    signature: str
    information_measure: str
    best_reference: list[int] = field(default_factory=list)
    lower_is_better: bool = True
    note: str = LOWER_IS_BETTER_NOTE

    def to_dict(self) -> dict[str, Any]:
        return {
            "infolm": self.mean,
            "scores": list(self.scores),
            "best_reference": list(self.best_reference),
            "information_measure": self.information_measure,
            "lower_is_better": self.lower_is_better,
            "note": self.note,
            "signature": self.signature,
        }


def _check_positive_int(name: str, value: Any, allow_none: bool = False) -> int | None:
    return check_int(name, value, minimum=1, allow_none=allow_none, message=(
        f"`{name}` must be a positive int{' or None' if allow_none else ''}, got {value!r}."))


def infolm(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    model: str | os.PathLike | LoadedLM | torch.nn.Module = DEFAULT_MODEL,
    information_measure: str = DEFAULT_MEASURE,
    alpha: float | None = None,
    beta: float | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    idf: bool | Mapping[int, float] = True,
    max_length: int | None = None,
    tokenizer: Any = None,
    model_kind: str | None = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    token_budget: int | None = None,
    batch_size: int | None = None,
    chunk_size: int = 256,
    progress: bool = True,
) -> InfoLMResult:
    """InfoLM of each prediction against its reference(s); see the module docstring for the definition.

    Args:
        predictions: candidate texts, one per example.
        references: per example a string or a non-empty list of strings; the best (smallest)
            distance over an example's references is its score.
        model: Hub id, local directory, ``"smollm2-135m"`` (offline causal LM), a ``LoadedLM`` or a
            ``PreTrainedModel`` (with ``tokenizer=``). Masked or causal is detected from the config
            (force with ``model_kind="masked"|"causal"``).
        information_measure: one of :data:`INFORMATION_MEASURES`; ``alpha`` for alpha, AB and
            Rényi divergences, ``beta`` for beta and AB divergences.
        temperature: softmax temperature T > 0 (default 0.25, torchmetrics' default).
        idf: True (idf from the distinct references of this call), False (uniform), or a
            ``{token_id: weight}`` mapping.
        max_length: tokens per text including special tokens (default: the model's positions);
            longer texts are truncated (one warning).
        token_budget, batch_size: padded tokens / sequences per forward batch (engine). Default
            token budget: 8192 on GPU, 2048 on CPU (same speed there, ~10x less peak memory).
        chunk_size: distinct texts whose distributions are alive at once (memory: chunk x vocab x 8 bytes).
        progress: show a progress bar over distinct texts.

    Returns:
        :class:`InfoLMResult` with per-example ``scores``, their ``mean``, ``signature``.

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
    >>> r = infolm(["a cat sat", ""], ["a cat sat down", ""], model=path, progress=False)
    >>> r.scores[0] > 0.0, r.scores[1]
    (True, 0.0)
    """
    return _infolm(
        predictions, references, [(information_measure, alpha, beta)], model=model, temperature=temperature,
        idf=idf, max_length=max_length, tokenizer=tokenizer, model_kind=model_kind, device=device, dtype=dtype,
        token_budget=token_budget, batch_size=batch_size, chunk_size=chunk_size, progress=progress,
    )[0]


def infolm_multi(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    measures: Sequence[str | tuple[str, float | None, float | None]],
    **options: Any,
) -> list[InfoLMResult]:
    """Several information measures from one pass over the model (distributions computed once).

    ``measures``: names, or ``(name, alpha, beta)`` tuples; the result list is aligned with it.
    ``options``: the keyword arguments of :func:`infolm` except ``information_measure``/``alpha``/``beta``.

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
    >>> fr, ab = infolm_multi(["a cat"], ["a dog"], ["fisher_rao_distance", ("ab_divergence", 1.0, 0.5)],
    ...                       model=path, progress=False)
    >>> fr.information_measure, "alpha:1|beta:0.5" in ab.signature
    ('fisher_rao_distance', True)
    """
    if isinstance(measures, str) or not measures:
        raise ValueError("`measures` must be a non-empty list of measure names or (name, alpha, beta) tuples.")
    specs = []
    for item in measures:
        if isinstance(item, str):
            specs.append((item, None, None))
        elif isinstance(item, (tuple, list)) and len(item) == 3:
            specs.append(tuple(item))
        else:
            raise ValueError(f"Bad entry {item!r} in `measures`; use a name or a (name, alpha, beta) tuple.")
    for name in ("information_measure", "alpha", "beta"):
        if name in options:
            raise ValueError(f"Pass `{name}` inside `measures`, not as an option of infolm_multi.")
    return _infolm(predictions, references, specs, **options)


def _infolm(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    specs: list[tuple[str, float | None, float | None]],
    *,
    model: str | os.PathLike | LoadedLM | torch.nn.Module = DEFAULT_MODEL,
    temperature: float = DEFAULT_TEMPERATURE,
    idf: bool | Mapping[int, float] = True,
    max_length: int | None = None,
    tokenizer: Any = None,
    model_kind: str | None = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    token_budget: int | None = None,
    batch_size: int | None = None,
    chunk_size: int = 256,
    progress: bool = True,
) -> list[InfoLMResult]:
    preds = as_texts("predictions", predictions)
    refs = as_reference_lists(references, len(preds))
    check_same_length(predictions=preds, references=refs)
    specs = [(m, *check_measure(m, a, b)) for m, a, b in specs]
    temperature = _check_temperature(temperature)
    if not (isinstance(idf, bool) or isinstance(idf, Mapping)):
        raise ValueError(f"`idf` must be True, False or a {{token_id: weight}} mapping, got {idf!r}.")
    user_table = _as_idf_table(idf) if isinstance(idf, Mapping) else None
    if model_kind not in (None, "masked", "causal"):
        raise ValueError(f"Unknown model_kind={model_kind!r}; choose one of [None, 'masked', 'causal'].")
    token_budget = _check_positive_int("token_budget", token_budget, allow_none=True)
    batch_size = _check_positive_int("batch_size", batch_size, allow_none=True)
    chunk_size = _check_positive_int("chunk_size", chunk_size)

    lm = load_lm(model, model_kind, tokenizer=tokenizer, device=device, dtype=dtype)
    token_budget = default_token_budget(lm, token_budget)
    limit = resolve_max_length(lm, max_length)

    # Distinct strings -> tokenized -> distinct token sequences ("text ids"): two strings with the
    # same tokens (e.g. different case with an uncased vocabulary) share one distribution.
    strings = list(dict.fromkeys([*preds, *(r for group in refs for r in group)]))
    tokenized, truncated = tokenize(lm, strings, limit)
    _warn_truncated(truncated, len(strings), limit)
    key_to_id: dict[tuple[tuple[int, ...], bool], int] = {}
    texts: list[TokenizedText] = []
    string_to_id: dict[str, int] = {}
    for string, tok in zip(strings, tokenized):
        # Every text without a scorable token has the same (empty-text) distribution.
        key = ((), True) if tok.empty else (tok.input_ids, False)
        if key not in key_to_id:
            key_to_id[key] = len(texts)
            texts.append(tok)
        string_to_id[string] = key_to_id[key]
    cand_ids = [string_to_id[p] for p in preds]
    ref_ids = [[string_to_id[r] for r in group] for group in refs]

    if user_table is not None:
        table: IdfTable | None = user_table
    elif idf:
        distinct_refs = sorted({i for group in ref_ids for i in group})
        table = compute_idf(texts[i].tokens for i in distinct_refs)
    else:
        table = None

    per_spec = _score_all(
        lm, texts, cand_ids, ref_ids, table, specs, temperature, token_budget, batch_size, chunk_size, progress,
    )
    idf_field = "no" if table is None else ("refs" if user_table is None else f"table-{user_table.fingerprint()}")
    results = []
    for (measure, a, b), (scores, best) in zip(specs, per_spec):
        signature = make_signature(
            "infolm",
            {
                **lm.signature_fields,
                "kind": lm.kind,
                "measure": measure,
                "alpha": a if measure in NEEDS_ALPHA else None,
                "beta": b if measure in NEEDS_BETA else None,
                "T": temperature,
                "idf": idf_field,
                "maxlen": limit,
                "multiref": "min",
            },
        )
        results.append(InfoLMResult(
            scores=scores,
            mean=float(sum(scores) / len(scores)),
            signature=signature,
            information_measure=measure,
            best_reference=best,
        ))
    return results


def _score_all(
    lm: LoadedLM,
    texts: list[TokenizedText],
    cand_ids: list[int],
    ref_ids: list[list[int]],
    table: IdfTable | None,
    specs: list[tuple[str, float | None, float | None]],
    temperature: float,
    token_budget: int,
    batch_size: int | None,
    chunk_size: int,
    progress: bool,
) -> list[tuple[list[float], list[int]]]:
    """Score every example, computing each distinct text once with bounded memory.

    Examples are visited grouped by reference (so a shared reference stays cached while its
    systems are scored) and collected into chunks of at most ``chunk_size`` new texts; a text's
    distribution is dropped as soon as no remaining example needs it.
    """
    n = len(cand_ids)
    remaining: dict[int, int] = {}
    for c, group in zip(cand_ids, ref_ids):
        for t in {c, *group}:
            remaining[t] = remaining.get(t, 0) + 1
    order = sorted(range(n), key=lambda i: (min(ref_ids[i]), i))
    vocab = _vocab_size(lm)
    cache: dict[int, torch.Tensor] = {}
    out = [([0.0] * n, [0] * n) for _ in specs]
    needed_texts = len(remaining)
    bar = tqdm(total=needed_texts, desc="InfoLM", unit="text", disable=not progress)

    def run_chunk(examples: list[int], new: list[int]) -> None:
        if new:
            acc = torch.zeros(len(new), vocab, dtype=torch.float64, device=lm.device)
            _compute_into(lm, [texts[t] for t in new], [table] * len(new), acc, temperature, token_budget, batch_size)
            for row, t in enumerate(new):
                cache[t] = acc[row]
            bar.update(len(new))
        for (measure, alpha, beta), (scores, best) in zip(specs, out):
            _score_examples(examples, cache, cand_ids, ref_ids, measure, alpha, beta, scores, best)
        for i in examples:
            for t in {cand_ids[i], *ref_ids[i]}:
                remaining[t] -= 1
                if remaining[t] == 0:
                    del cache[t]
        # Survivors (e.g. a reference whose other systems come in the next chunk) are copied out so
        # that this chunk's [len(new), vocab] block can be freed.
        for t in new:
            if t in cache:
                cache[t] = cache[t].clone()

    with torch.inference_mode():
        examples: list[int] = []
        new: list[int] = []
        scheduled: set[int] = set()
        for i in order:
            want = [t for t in dict.fromkeys([cand_ids[i], *ref_ids[i]]) if t not in cache and t not in scheduled]
            if examples and len(new) + len(want) > chunk_size:
                run_chunk(examples, new)
                examples, new, scheduled = [], [], set()
                want = [t for t in dict.fromkeys([cand_ids[i], *ref_ids[i]]) if t not in cache]
            examples.append(i)
            new.extend(want)
            scheduled.update(want)
        if examples:
            run_chunk(examples, new)
    bar.close()
    return out


def _score_examples(
    examples: list[int],
    cache: dict[int, torch.Tensor],
    cand_ids: list[int],
    ref_ids: list[list[int]],
    measure: str,
    alpha: float | None,
    beta: float | None,
    scores: list[float],
    best: list[int],
    pairs_per_call: int = 16,
) -> None:
    """Measure every (example, reference) pair of ``examples``; keep the smallest per example."""
    pairs = [(i, k) for i in examples for k in range(len(ref_ids[i])) if ref_ids[i][k] != cand_ids[i]]
    values: dict[tuple[int, int], float] = {}
    for start in range(0, len(pairs), pairs_per_call):
        part = pairs[start : start + pairs_per_call]
        p = torch.stack([cache[ref_ids[i][k]] for i, k in part])
        q = torch.stack([cache[cand_ids[i]] for i, _ in part])
        out = measure_fn(measure, p, q, alpha, beta).cpu().tolist()
        values.update(zip(part, out))
    for i in examples:
        # Identical token sequences have identical distributions: exactly 0, not 0 + rounding.
        per_ref = [0.0 if r == cand_ids[i] else values[(i, k)] for k, r in enumerate(ref_ids[i])]
        per_ref = [_finite(v, measure) for v in per_ref]
        k_best = min(range(len(per_ref)), key=per_ref.__getitem__)
        scores[i] = per_ref[k_best]
        best[i] = k_best


def _finite(value: float, measure: str) -> float:
    """Guard against overflow (only reachable with extreme temperatures and alpha/beta)."""
    if math.isnan(value):
        raise FloatingPointError(
            f"InfoLM {measure} gave NaN; this should not happen, please report it with your inputs and options."
        )
    if math.isinf(value):
        warnings.warn(
            f"InfoLM {measure} overflowed to {value} (probabilities underflow at this temperature / "
            f"alpha / beta); returning the largest float instead. Use a higher temperature.",
            RuntimeWarning,
            stacklevel=4,
        )
        return math.copysign(torch.finfo(torch.float64).max, value)
    return value
