"""FFLM: zero-shot faithfulness from probability changes of a causal LM (Jia et al., EMNLP 2023).

For a source document X and a summary Y, one causal language model gives five per-token
probability lists (probability of each target token given everything before it):

====================  ===========================================  ==========================
list                  condition -> target                           used by
====================  ===========================================  ==========================
``s2s``               BOS, X, sep  ->  Y                            every component
``lm``                BOS          ->  Y                            Delta_prior(Y)
``prefix``            BOS, tok(Y + " " + X), sep  ->  Y             Delta_cond(Y)
``s2s_doc``           BOS, Y, sep  ->  X                            Delta_prior(X)
``lm_doc``            BOS          ->  X  (cut to len(s2s_doc))     Delta_prior(X)
====================  ===========================================  ==========================

with ``sep = "TL;DR "``. Probabilities equal to 0 are floored at 1e-6 and ``loss = -log p``::

    Delta_prior(Y) = mean_i (lm_loss_i     - s2s_loss_i)     * exp(1 - s2s_i)
    Delta_cond(Y)  = mean_i (prefix_loss_i - s2s_loss_i)     * exp(1 - s2s_i)
    Delta_prior(X) = mean_i (lm_doc_loss_i - s2s_doc_loss_i) * exp(1 - s2s_doc_i)
    FFLM = a * Delta_prior(Y) + b * Delta_prior(X) + d * Delta_cond(Y),   a + b + d = 1

Higher is more faithful. Defaults follow the authors' released scorer
(github.com/JiaQiSJTU/FaithEval-FFLM, ``scorers/delta.py`` and ``summary-level-evaluation.py``):

* every text is tokenized **on its own** (``tokenizer.tokenize`` without special tokens) and the
  token lists are concatenated ``[BOS] + condition + sep + target``; the condition of ``prefix`` is
  the single string ``Y + " " + X`` tokenized as one piece, as the authors do;
* at most ``max_length = 2048`` tokens per sequence: when the target is the summary, the condition is
  cut (its first tokens are kept); when the target is the document, the document is cut;
* weights ``(a, b, d) = (0.25, 0.25, 0.5)`` (the authors' faithfulness-rating setting).

Where the authors' code is undefined we chose (and document in the model card):

* BOS is the tokenizer's BOS token (the authors hard-coded id 0, which was the BOS of the LLaMA
  checkpoint they used); falls back to EOS; override with ``bos_token_id``;
* the limit is ``min(max_length, model context)``;
* a summary too long to fit even with an empty condition (the authors' code crashes there) is cut to
  ``max_length - 1 - len(sep)`` tokens, the same cut in all three summary lists;
* a component whose target has no tokens (empty text, or a document cut to nothing) is 0.0.

Speed: the engine scores every distinct query once, batches by length, and computes the
``(BOS, X, sep)`` prefix once per document (KV cache) for all of its summaries; ``lm_doc`` is run
once per distinct document and ``lm`` once per distinct summary.

Memory: work is planned and run ``chunk_size`` (default 64) distinct documents at a time, each with
all of its summaries, so the reuse above is unchanged; only one chunk's queries and per-token
log-probabilities are alive at once, and only the per-example results (plus the probability lists
when ``return_probabilities=True``) are kept. The numbers do not depend on ``chunk_size``, which is
therefore not part of the signature. Warnings (truncation, empty targets) come once per call.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("llama", tempfile.mkdtemp(), size="tiny")
>>> result = fflm(["The cat sat on the mat."], ["A cat sat."], model=path, progress=False)
>>> len(result.fflm), result.weights
(1, (0.25, 0.25, 0.5))
>>> abs(result.fflm[0] - (0.25 * result.delta_prior_summary[0] + 0.25 * result.delta_prior_document[0]
...                      + 0.5 * result.delta_cond_summary[0])) < 1e-12
True
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm.auto import tqdm

from nlgmetrics.signature import make_signature
from nlgmetrics.validation import as_texts, check_int, check_same_length

if TYPE_CHECKING:  # torch is imported lazily; the annotation only
    from nlgmetrics.engine.transfer import DeferredHost

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_WEIGHTS",
    "DEFAULT_SEPARATOR",
    "DEFAULT_MAX_LENGTH",
    "PROBABILITY_FLOOR",
    "FFLMProbabilities",
    "FFLMResult",
    "fflm",
    "fflm_components",
    "check_weights",
]

#: Default model: public, ungated (Apache-2.0) *foundation* (base, not instruction-tuned) causal LM
#: of the LLaMA architecture, with a context (8192) above the authors' 2048-token limit. See the
#: model card (metrics/fflm/README.md) for the reasons and paper-faithful alternatives.
DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-1.7B"
#: (a, b, d) for (Delta_prior(Y), Delta_prior(X), Delta_cond(Y)): the authors' rating setting.
DEFAULT_WEIGHTS = (0.25, 0.25, 0.5)
DEFAULT_SEPARATOR = "TL;DR "
DEFAULT_MAX_LENGTH = 2048
#: The authors replace a probability of exactly 0 (an underflowed softmax) by this value.
PROBABILITY_FLOOR = 1e-6
# The authors' probabilities come from a float32 softmax: a probability underflows to 0 there when
# its log is below log(smallest float32 subnormal) ~ -103.3. We floor exactly those.
_FLOAT32_UNDERFLOW_LOGPROB = math.log(float(np.nextafter(np.float32(0), np.float32(1))))


@dataclass(frozen=True)
class FFLMProbabilities:
    """The five per-token probability lists of one example (after the 1e-6 floor), float64."""

    s2s: np.ndarray  #: p(Y_i | BOS, X, sep, Y_<i)
    lm: np.ndarray  #: p(Y_i | BOS, Y_<i)
    prefix: np.ndarray  #: p(Y_i | BOS, Y + " " + X, sep, Y_<i)
    s2s_doc: np.ndarray  #: p(X_i | BOS, Y, sep, X_<i)
    lm_doc: np.ndarray  #: p(X_i | BOS, X_<i), cut to len(s2s_doc)


@dataclass(frozen=True)
class FFLMResult:
    """Per-example FFLM scores, their three components, and how they were computed.

    ``fflm[i] = a * delta_prior_summary[i] + b * delta_prior_document[i] + d * delta_cond_summary[i]``
    with ``(a, b, d) = weights``. Higher is more faithful.
    """

    fflm: list[float]
    delta_prior_summary: list[float]  #: Delta_prior(Y)
    delta_prior_document: list[float]  #: Delta_prior(X)
    delta_cond_summary: list[float]  #: Delta_cond(Y)
    weights: tuple[float, float, float]
    signature: str
    summary_tokens: list[int]  #: summary tokens scored (after truncation)
    document_tokens: list[int]  #: document tokens scored in s2s_doc / lm_doc (after truncation)
    truncated: list[bool]  #: True when any of the example's sequences was cut to max_length
    probabilities: list[FFLMProbabilities] | None = field(default=None, repr=False)

    @property
    def mean(self) -> float:
        """Mean FFLM over the examples."""
        return float(np.mean(self.fflm))

    def reweight(self, weights: Sequence[float]) -> list[float]:
        """FFLM under other weights ``(a, b, d)``, from the stored components (no model work).

        The paper grid-searches the weights for inconsistency detection; this makes that cheap.
        """
        a, b, d = check_weights(weights)
        return [
            a * py + b * px + d * cy
            for py, px, cy in zip(
                self.delta_prior_summary, self.delta_prior_document, self.delta_cond_summary
            )
        ]


def check_weights(weights: Any) -> tuple[float, float, float]:
    """Validate ``(a, b, d)``: three finite numbers in [0, 1] summing to 1 (within 1e-6).

    >>> check_weights([0.2, 0.3, 0.5])
    (0.2, 0.3, 0.5)
    """
    if weights is None or isinstance(weights, str) or not hasattr(weights, "__len__"):
        raise ValueError(
            f"weights={weights!r}: pass three numbers (a, b, d) for "
            f"(Delta_prior(Y), Delta_prior(X), Delta_cond(Y)) that sum to 1, e.g. (0.25, 0.25, 0.5)."
        )
    if len(weights) != 3:
        raise ValueError(
            f"weights has {len(weights)} values; pass exactly three (a, b, d) for "
            f"(Delta_prior(Y), Delta_prior(X), Delta_cond(Y)), e.g. (0.25, 0.25, 0.5)."
        )
    try:
        values = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        raise ValueError(f"weights={weights!r} must be numbers, e.g. (0.25, 0.25, 0.5).") from None
    if not all(math.isfinite(w) and 0.0 <= w <= 1.0 for w in values):
        raise ValueError(f"weights={values!r}: each weight must be a finite number in [0, 1].")
    if abs(sum(values) - 1.0) > 1e-6:
        raise ValueError(
            f"weights={values!r} sum to {sum(values):g}; FFLM needs a + b + d = 1 "
            f"(e.g. (0.25, 0.25, 0.5), or divide each weight by their sum)."
        )
    return values  # type: ignore[return-value]


def fflm_components(
    s2s: np.ndarray,
    lm: np.ndarray,
    prefix: np.ndarray,
    s2s_doc: np.ndarray,
    lm_doc: np.ndarray,
) -> tuple[float, float, float]:
    """(Delta_prior(Y), Delta_prior(X), Delta_cond(Y)) from the five floored probability lists.

    A component over an empty list is 0.0 (no token, no probability change), never NaN.

    >>> p = np.array([0.5]); q = np.array([0.25])  # ln(0.5 / 0.25) * exp(1 - 0.5) = 1.142807
    >>> [round(v, 6) for v in fflm_components(p, q, p, p, q)]
    [1.142807, 1.142807, 0.0]
    """
    s2s_loss = -np.log(s2s)
    s2s_weight = np.exp(1.0 - s2s)
    prior_y = _mean_or_zero((-np.log(lm) - s2s_loss) * s2s_weight)
    cond_y = _mean_or_zero((-np.log(prefix) - s2s_loss) * s2s_weight)
    prior_x = _mean_or_zero((-np.log(lm_doc) + np.log(s2s_doc)) * np.exp(1.0 - s2s_doc))
    return prior_y, prior_x, cond_y


def _target_logprobs(logits: Any, query: Any) -> DeferredHost:
    """Reduce for the engine: (log p of each target token, None), float64 on the host once read.

    The engine's float32 reduction, like the authors' float32 softmax; several times cheaper than
    the float64 log-softmax of ``causal_target_scores`` (plus an argmax we do not need), which on
    small models cost more than the forward pass. Deferred: the engine reads the numbers after
    launching the next batch (engine/transfer.py).
    """
    from nlgmetrics.engine import target_logprobs_float32_deferred

    return target_logprobs_float32_deferred(logits, query.target_ids)


def _mean_or_zero(values: np.ndarray) -> float:
    return float(np.mean(values)) if values.size else 0.0


def _floored_probabilities(logprobs: np.ndarray) -> np.ndarray:
    """exp(logprobs), with the authors' floor: a probability that is 0 in float32 becomes 1e-6."""
    logprobs = np.asarray(logprobs, dtype=np.float64)
    if np.isnan(logprobs).any():
        raise RuntimeError(
            "the model produced NaN log-probabilities (often float16 overflow); "
            "rerun with dtype='float32' or 'bfloat16'."
        )
    probs = np.exp(logprobs)
    return np.where(logprobs < _FLOAT32_UNDERFLOW_LOGPROB, PROBABILITY_FLOOR, probs)


@dataclass(frozen=True)
class _Plan:
    """Token-level plan for one example: what each of the five lists scores."""

    summary: tuple[int, ...]  # Y after the (rare) over-long-summary cut
    cond_budget: int  # tokens of X (s2s) / of Y+" "+X (prefix) kept; also tokens of X scored
    document: tuple[int, ...]  # full X
    prefix_condition: tuple[int, ...]  # tok(Y + " " + X), cut to cond_budget
    truncated: bool


def _token_ids(tokenizer: Any, text: str, cache: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """The authors' tokenization: ``tokenize`` (no special tokens) then ``convert_tokens_to_ids``."""
    ids = cache.get(text)
    if ids is None:
        ids = tuple(int(i) for i in tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text)))
        cache[text] = ids
    return ids


def _resolve_bos(tokenizer: Any, bos_token_id: int | None) -> int:
    if bos_token_id is not None:
        bos_token_id = check_int("bos_token_id", bos_token_id, minimum=0, message=(
            f"bos_token_id={bos_token_id!r} must be a non-negative integer token id."))
        # An id past the vocabulary would fail deep in the embedding with a bare IndexError.
        if bos_token_id >= len(tokenizer):
            raise ValueError(
                f"bos_token_id={bos_token_id} is outside the vocabulary (size {len(tokenizer)}); "
                f"pass an id below it, or None for the tokenizer's BOS token."
            )
        return bos_token_id
    for candidate in (tokenizer.bos_token_id, tokenizer.eos_token_id):
        if candidate is not None:
            return int(candidate)
    raise ValueError(
        "the tokenizer has neither a BOS nor an EOS token; FFLM starts every sequence with one. "
        "Pass bos_token_id=<id> explicitly."
    )


def _check_max_length(max_length: Any) -> int:
    return check_int("max_length", max_length, minimum=1, message=(
        f"max_length={max_length!r} must be a positive integer (tokens per sequence; "
        f"the authors use {DEFAULT_MAX_LENGTH})."))


def fflm(
    documents: Sequence[str],
    summaries: Sequence[str],
    *,
    model: str | os.PathLike | Any = DEFAULT_MODEL,
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    max_length: int = DEFAULT_MAX_LENGTH,
    separator: str = DEFAULT_SEPARATOR,
    bos_token_id: int | None = None,
    device: str | None = None,
    dtype: str | None = None,
    revision: str | None = None,
    token_budget: int = 8192,
    batch_size: int | None = None,
    prefix_cache: bool = True,
    return_probabilities: bool = False,
    chunk_size: int = 64,
    progress: bool = True,
) -> FFLMResult:
    """Score each ``summaries[i]`` for faithfulness to ``documents[i]`` with FFLM.

    Args:
        documents: source documents X, one per example (repeat a document for each of its summaries:
            repeated documents are detected and their shared work is done once).
        summaries: summaries Y, one per example.
        model: a causal LM: Hub id, local directory, the offline alias ``"smollm2-135m"``, or a
            :class:`nlgmetrics.engine.LoadedLM`. Default :data:`DEFAULT_MODEL`.
        weights: ``(a, b, d)`` for ``(Delta_prior(Y), Delta_prior(X), Delta_cond(Y))``; sum to 1.
        max_length: tokens per sequence including BOS (authors: 2048); capped at the model context.
        separator: text between condition and target (authors: ``"TL;DR "``).
        bos_token_id: first token of every sequence (default: the tokenizer's BOS, else EOS).
        device, dtype, revision: passed to :func:`nlgmetrics.engine.load_lm` (default fp32).
        token_budget, batch_size: batching limits of the engine (do not change the numbers).
        prefix_cache: share the ``(BOS, X, sep)`` prefix across summaries of a document (KV cache);
            the numbers do not change (within 1e-5 in fp32).
        return_probabilities: also return the five floored per-token probability lists.
        chunk_size: distinct documents planned and scored at a time, each with all of its
            summaries (bounds memory on a large call; the numbers do not change).
        progress: show a progress bar (over the examples of the whole call).

    Returns:
        :class:`FFLMResult` with per-example ``fflm`` and components, ``weights`` and ``signature``.

    Raises:
        ValueError: mismatched lengths, None or non-string items, an empty input list, bad weights
        or max_length, a model that cannot be loaded (with how to fix it).
    """
    from nlgmetrics.engine import CausalQuery, is_main_process, iter_causal, load_lm
    from nlgmetrics.engine.planning import chunk_by_key

    docs = as_texts("documents", documents)
    sums = as_texts("summaries", summaries)
    check_same_length(documents=docs, summaries=sums)
    weights_t = check_weights(weights)
    max_length = _check_max_length(max_length)
    chunk_size = check_int("chunk_size", chunk_size, minimum=1, message=(
        f"chunk_size={chunk_size!r} must be a positive integer (distinct documents scored at a "
        f"time, e.g. 64; it does not change the numbers)."))
    if not isinstance(separator, str):
        raise ValueError(f"separator={separator!r} must be a string (the authors use 'TL;DR ').")

    lm = load_lm(model, kind="causal", device=device, dtype=dtype, revision=revision)
    tokenizer = lm.tokenizer
    bos = _resolve_bos(tokenizer, bos_token_id)
    limit = min(max_length, int(lm.max_length))
    cache: dict[str, tuple[int, ...]] = {}
    sep = _token_ids(tokenizer, separator, cache)
    # Room for the summary once BOS and the separator are in: the summary must keep >= 1 token.
    room = limit - 1 - len(sep)
    if room < 1:
        raise ValueError(
            f"max_length={limit} leaves no room for a summary after BOS and the {len(sep)}-token "
            f"separator {separator!r}; use max_length >= {len(sep) + 2} (the authors use 2048)."
        )

    # Bounded memory (issue 9): plan and score ``chunk_size`` distinct documents at a time, each
    # with all of its summaries, so lm_doc (once per document) and the shared (BOS, X, sep) prefix
    # cache are reused exactly as in one big call. Only one chunk's queries and per-token
    # log-probabilities are alive at once; we keep the per-example outputs.
    n = len(docs)
    scores: list[tuple[float, float, float] | None] = [None] * n
    kept_probs: list[FFLMProbabilities | None] = [None] * n
    summary_tokens = [0] * n
    document_tokens = [0] * n
    truncated = [False] * n
    empty = 0
    a, b, d = weights_t
    with tqdm(total=n, desc="FFLM", unit="pair", disable=not progress or not is_main_process()) as bar:
        for examples in chunk_by_key(docs, chunk_size):
            chunk_cache = dict(cache)  # per chunk: the token memo must not grow with the whole call
            plans = [_plan(docs[i], sums[i], tokenizer, chunk_cache, limit, room) for i in examples]
            queries, slots = _build_queries(plans, bos, sep, limit, CausalQuery)
            logprobs: list[np.ndarray] = [np.zeros(0)] * len(queries)
            shown = done = 0
            for query_index, (values, _no_argmax) in iter_causal(
                lm,
                queries,
                _target_logprobs,
                token_budget=token_budget,
                batch_size=batch_size,
                prefix_cache=prefix_cache,
                progress=False,  # the bar above counts examples over the whole call
            ):
                logprobs[query_index] = values
                done += 1
                reached = len(examples) * done // len(queries)
                if reached > shown:
                    bar.update(reached - shown)
                    shown = reached
            bar.update(len(examples) - shown)

            for i, plan, slot in zip(examples, plans, slots):
                probs = FFLMProbabilities(
                    s2s=_slot_probs(logprobs, slot["s2s"]),
                    lm=_slot_probs(logprobs, slot["lm"]),
                    prefix=_slot_probs(logprobs, slot["prefix"]),
                    s2s_doc=_slot_probs(logprobs, slot["s2s_doc"]),
                    lm_doc=_slot_probs(logprobs, slot["lm_doc"]),
                )
                empty += (not plan.summary) or plan.cond_budget == 0
                scores[i] = fflm_components(
                    probs.s2s, probs.lm, probs.prefix, probs.s2s_doc, probs.lm_doc
                )
                if return_probabilities:
                    kept_probs[i] = probs
                summary_tokens[i] = len(plan.summary)
                document_tokens[i] = plan.cond_budget
                truncated[i] = plan.truncated
            del plans, queries, slots, logprobs

    if any(truncated):
        warnings.warn(
            f"FFLM: {sum(truncated)} of {n} examples exceed {limit} tokens per sequence and "
            f"were truncated as the authors do (the condition is cut when the summary is the target, "
            f"the document is cut when it is the target).",
            stacklevel=2,
        )
    if empty:
        warnings.warn(
            f"FFLM: {empty} example(s) have an empty summary or no document tokens left to score; "
            f"their components over the missing tokens are 0.0 (see the model card).",
            stacklevel=2,
        )

    signature = make_signature(
        "fflm",
        {
            "model": lm.name if not isinstance(lm.name, os.PathLike) else os.fspath(lm.name),
            "fp": lm.fingerprint,
            "dtype": str(lm.dtype).replace("torch.", ""),
            "maxlen": limit,
            "sep": repr(separator),
            "bos": bos,
            "w": weights_t,
            "floor": PROBABILITY_FLOOR,
        },
    )
    delta_py = [s[0] for s in scores]  # type: ignore[index]
    delta_px = [s[1] for s in scores]  # type: ignore[index]
    delta_cy = [s[2] for s in scores]  # type: ignore[index]
    return FFLMResult(
        fflm=[a * py + b * px + d * cy for py, px, cy in zip(delta_py, delta_px, delta_cy)],
        delta_prior_summary=delta_py,
        delta_prior_document=delta_px,
        delta_cond_summary=delta_cy,
        weights=weights_t,
        signature=signature,
        summary_tokens=summary_tokens,
        document_tokens=document_tokens,
        truncated=truncated,
        probabilities=kept_probs if return_probabilities else None,  # type: ignore[arg-type]
    )


def _plan(
    document: str,
    summary: str,
    tokenizer: Any,
    cache: dict[str, tuple[int, ...]],
    limit: int,
    room: int,
) -> _Plan:
    """Apply the authors' truncation rule to one example (see the module docstring)."""
    x = _token_ids(tokenizer, document, cache)
    y_full = _token_ids(tokenizer, summary, cache)
    # The authors never cut the summary; one that leaves no room at all is cut here (their code
    # would fail), identically in s2s, lm and prefix so the three lists stay aligned.
    y = y_full[:room]
    budget = room - len(y)  # tokens left for the condition (s2s, prefix) or the document (s2s_doc)
    # Joint string, tokenized as one piece like the authors (BPE merges may differ at the joint).
    prefix_condition = _token_ids(tokenizer, summary + " " + document, cache)
    cond_budget = min(len(x), budget)
    truncated = (
        len(y) < len(y_full)
        or len(x) > budget
        or len(prefix_condition) > budget
        or len(x) > limit - 1  # lm_doc itself is cut
    )
    return _Plan(
        summary=y,
        cond_budget=cond_budget,
        document=x,
        prefix_condition=prefix_condition[:budget],
        truncated=truncated,
    )


def _build_queries(
    plans: list[_Plan], bos: int, sep: tuple[int, ...], limit: int, query_type: Any
) -> tuple[list[Any], list[dict[str, tuple[int, int] | None]]]:
    """All CausalQuery objects, and for each example where its five lists sit in the results.

    A slot is ``(query_index, rows_to_skip)``: the list is ``logprobs[query_index][skip:]``
    (then cut to ``cond_budget`` for lm_doc), or ``None`` for an empty list.
    """
    queries: list[Any] = []
    index: dict[Any, int] = {}

    def add(prefix: tuple[int, ...], target: tuple[int, ...]) -> int:
        query = query_type(prefix_ids=prefix, target_ids=target)
        if query not in index:  # the engine dedupes too; this keeps our list short
            index[query] = len(queries)
            queries.append(query)
        return index[query]

    # s2s: group the summaries of each document so they share one prefix. Without truncation the
    # prefix is (BOS, X, sep) for all. With truncation each summary keeps a different number of
    # document tokens; share the common (BOS, X[:shortest]) and put the rest in the target, whose
    # extra rows we skip: same sequence, so the same probabilities, and the prefix is still shared.
    by_document: dict[tuple[int, ...], list[int]] = {}
    for i, plan in enumerate(plans):
        if plan.summary:
            by_document.setdefault(plan.document, []).append(i)
    s2s_slot: dict[int, tuple[int, int]] = {}
    for document, members in by_document.items():
        budgets = {plans[i].cond_budget for i in members}
        shared = min(budgets)
        for i in members:
            plan = plans[i]
            if len(budgets) == 1:
                prefix, target, skip = (bos, *document[:shared], *sep), plan.summary, 0
            else:
                extra = document[shared : plan.cond_budget]
                prefix = (bos, *document[:shared])
                target = (*extra, *sep, *plan.summary)
                skip = len(extra) + len(sep)
            s2s_slot[i] = (add(prefix, target), skip)

    # lm_doc: once per distinct document, over X[:limit - 1] as the authors, cut per example later.
    lm_doc_query: dict[tuple[int, ...], int] = {}
    slots: list[dict[str, tuple[int, int] | None]] = []
    for i, plan in enumerate(plans):
        slot: dict[str, tuple[int, int] | None] = dict.fromkeys(
            ("s2s", "lm", "prefix", "s2s_doc", "lm_doc")
        )
        if plan.summary:
            slot["s2s"] = s2s_slot[i]
            slot["lm"] = (add((bos,), plan.summary), 0)
            slot["prefix"] = (add((bos, *plan.prefix_condition, *sep), plan.summary), 0)
        if plan.cond_budget > 0:
            slot["s2s_doc"] = (add((bos, *plan.summary, *sep), plan.document[: plan.cond_budget]), 0)
            if plan.document not in lm_doc_query:
                lm_doc_query[plan.document] = add((bos,), plan.document[: limit - 1])
            slot["lm_doc"] = (lm_doc_query[plan.document], 0, plan.cond_budget)  # type: ignore[assignment]
        slots.append(slot)
    return queries, slots


def _slot_probs(logprobs: list[np.ndarray], slot: tuple[int, ...] | None) -> np.ndarray:
    if slot is None:
        return np.zeros(0, dtype=np.float64)
    query_index, skip, *stop = slot
    values = logprobs[query_index][skip:]
    if stop:
        values = values[: stop[0]]
    return _floored_probabilities(values)
