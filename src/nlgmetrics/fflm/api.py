"""FFLM's public API: :func:`fflm`, its result :class:`FFLMResult`, and :func:`check_weights`.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("llama", tempfile.mkdtemp(), size="tiny")
>>> result = fflm(["A cat sat."], ["The cat sat on the mat."], model=path, progress=False)
>>> len(result), result.weights, result.main, list(result.details())
(1, (0.25, 0.25, 0.5), 'fflm', ['summary_tokens', 'document_tokens', 'truncated'])
>>> s = result.scores
>>> abs(s["fflm"][0] - (0.25 * s["delta_prior_summary"][0] + 0.25 * s["delta_prior_document"][0]
...                     + 0.5 * s["delta_cond_summary"][0])) < 1e-12
True
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from nlgmetrics.core.explanations import TokenBreakdown
from nlgmetrics.core.result import Column, MetricResult
from nlgmetrics.core.signature import make_signature
from nlgmetrics.core.refusals import AFTER_LOADING, Refusal, refusal_sentences
from nlgmetrics.core.tokens import START_TOKEN_RULE, START_TOKEN_VOCABULARY_RULE, resolve_start_token
from nlgmetrics.core.validation import (
    CACHE_DIR_RULE,
    BATCH_SIZE_RULE,
    CHUNK_SIZE_RULE,
    MAX_LENGTH_RULE,
    TOKEN_BUDGET_RULE,
    check_source_inputs,
    check_switches,
    shown_value,
    switch_rule,
)
from nlgmetrics.fflm.components import (
    COMPONENT_BOUND,
    PROBABILITY_FLOOR,
    fflm_components,
    floored_probabilities,
)
from nlgmetrics.fflm.explain import fflm_breakdowns
from nlgmetrics.fflm.planning import (
    DEFAULT_START_TOKENS,
    build_queries,
    check_start_token,
    plan_example,
    slot_logprobs,
    token_ids,
)

if TYPE_CHECKING:  # torch is imported lazily; the annotations only
    from nlgmetrics.engine import CausalQuery, LoadedLM

#: Default model: public, ungated (Apache-2.0) *foundation* (base, not instruction-tuned) causal LM
#: of the LLaMA architecture, with a context (8192) above the authors' 2048-token limit. The paper
#: used LLaMA-7B; see the model card (metrics/fflm/README.md) for the reasons and paper-faithful
#: alternatives.
DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-1.7B"
#: (a, b, d) for (Delta_prior(Y), Delta_prior(X), Delta_cond(Y)): the authors' rating setting.
DEFAULT_WEIGHTS = (0.25, 0.25, 0.5)
#: Text between condition and target, as the authors.
DEFAULT_SEPARATOR = "TL;DR "
#: Tokens per sequence, start token included, as the authors (capped at the model's context).
DEFAULT_MAX_LENGTH = 2048
#: Padded tokens per forward pass (speed only).
DEFAULT_TOKEN_BUDGET = 8192
#: Distinct documents planned and scored at a time (memory only).
DEFAULT_CHUNK_SIZE = 64
#: How far from 1 the weights may sum.
WEIGHT_SUM_TOLERANCE = 1e-6

SWITCH_RULE = switch_rule("progress", "explain", "prefix_cache")
WEIGHTS_RULE = Refusal(
    ("weights",), "`weights` other than three finite numbers in [0, 1] that sum to 1 "
    f"(within {WEIGHT_SUM_TOLERANCE:g})", "FFLM is a weighted average of its three components")
SEPARATOR_RULE = Refusal(("separator",), "a `separator` that is not a string", "it is text put between condition and target")
MAX_LENGTH_ROOM_RULE = Refusal(
    ("max_length", "separator"), "a `max_length` that leaves no room for a summary token after the start "
    "token and the separator's tokens", "every sequence must score at least one summary token", AFTER_LOADING)
#: Every rule FFLM's checks apply, in the order of its options (:func:`refusals`).
RULES: tuple[Refusal, ...] = (
    WEIGHTS_RULE, TOKEN_BUDGET_RULE, BATCH_SIZE_RULE, MAX_LENGTH_RULE, MAX_LENGTH_ROOM_RULE, CHUNK_SIZE_RULE,
    SEPARATOR_RULE, START_TOKEN_RULE, START_TOKEN_VOCABULARY_RULE, SWITCH_RULE, CACHE_DIR_RULE,
)


def refusals() -> list[str]:
    """What FFLM refuses and why, one plain sentence per rule its option checks enforce (the checks
    raise these very rules, so the list cannot drift from them).

    >>> any("`weights`" in sentence for sentence in refusals())
    True
    """
    return refusal_sentences(RULES)


_DESCRIPTIONS = {
    "fflm": "a * Delta_prior(Y) + b * Delta_prior(X) + d * Delta_cond(Y)",
    "delta_prior_summary": "Delta_prior(Y): how much the document raises the summary's probability",
    "delta_prior_document": "Delta_prior(X): how much the summary raises the document's probability",
    "delta_cond_summary": "Delta_cond(Y): how little the summary's own copy adds once the document is there",
}
#: The component columns, in the order of the weights (a, b, d).
COMPONENTS = ("delta_prior_summary", "delta_prior_document", "delta_cond_summary")


def _fflm_column(weights: tuple[float, float, float], columns: Mapping[str, Sequence[float]]) -> list[float]:
    """Per example a * Delta_prior(Y) + b * Delta_prior(X) + d * Delta_cond(Y), from the component columns."""
    a, b, d = weights
    return [a * py + b * px + d * cy for py, px, cy in zip(*(columns[name] for name in COMPONENTS))]


@dataclass(frozen=True)
class FFLMProbabilities:
    """The five per-token probability lists of one example (after the 1e-6 floor), float64."""

    s2s: np.ndarray  #: p(Y_i | start, X, sep, Y_<i)
    lm: np.ndarray  #: p(Y_i | start, Y_<i)
    prefix: np.ndarray  #: p(Y_i | start, Y + " " + X, sep, Y_<i)
    s2s_doc: np.ndarray  #: p(X_i | start, Y, sep, X_<i)
    lm_doc: np.ndarray  #: p(X_i | start, X_<i), cut to len(s2s_doc)


@dataclass(frozen=True)
class FFLMResult(MetricResult):
    """Per-example FFLM scores, their three components, and how they were computed.

    Columns (``result.scores``), all higher is better, each within [-281, 281]
    (:data:`nlgmetrics.fflm.components.COMPONENT_BOUND`; in practice within about +-10):
    ``fflm[i] = a * delta_prior_summary[i] + b * delta_prior_document[i] + d * delta_cond_summary[i]``
    with ``(a, b, d) = weights``. ``mean()`` / ``aggregate()``: the mean of every column;
    ``main_score``: the mean FFLM.

    Details (:meth:`details`): ``summary_tokens`` (summary tokens scored, after truncation),
    ``document_tokens`` (document tokens scored in s2s_doc / lm_doc, after truncation), ``truncated``
    (any of the example's sequences was cut to max_length). With ``explain=True`` (else None):
    ``token_probabilities``, per example the five floored per-token probability lists
    (:class:`FFLMProbabilities`), and ``explanations``, per example the per-token breakdown of each
    column.
    """

    weights: tuple[float, float, float] = DEFAULT_WEIGHTS
    summary_tokens: list[int] = field(default_factory=list)
    document_tokens: list[int] = field(default_factory=list)
    truncated: list[bool] = field(default_factory=list)
    #: ``explain=True``: per example the five floored per-token probability lists.
    token_probabilities: list[FFLMProbabilities] | None = field(default=None, repr=False)
    #: ``explain=True``: per example ``{column: TokenBreakdown}`` (:mod:`nlgmetrics.fflm.explain`).
    explanations: list[dict[str, TokenBreakdown]] | None = field(default=None, repr=False)

    metric: ClassVar[str] = "fflm"
    main: ClassVar[str] = "fflm"
    columns: ClassVar[Mapping[str, Column]] = {
        name: Column(True, -COMPONENT_BOUND, COMPONENT_BOUND, description)
        for name, description in _DESCRIPTIONS.items()
    }

    def details(self) -> dict[str, Any]:
        """Per-example token counts and truncation flags."""
        return {name: list(getattr(self, name)) for name in ("summary_tokens", "document_tokens", "truncated")}

    def reweight(self, weights: Sequence[float]) -> list[float]:
        """Per-example FFLM under other weights ``(a, b, d)``, from the stored components (no model
        work), as a list; this result (its ``fflm`` column and signature) is unchanged.

        The paper grid-searches the weights for inconsistency detection; this makes that cheap.
        """
        return _fflm_column(check_weights(weights), self.scores)


def check_weights(weights: Any) -> tuple[float, float, float]:
    """Validate ``(a, b, d)``: three finite numbers in [0, 1] summing to 1 (within 1e-6).

    >>> check_weights([0.2, 0.3, 0.5])
    (0.2, 0.3, 0.5)
    """
    if weights is None or isinstance(weights, str) or not hasattr(weights, "__len__"):
        raise WEIGHTS_RULE.error(
            f"weights={weights!r}: pass three numbers (a, b, d) for "
            f"(Delta_prior(Y), Delta_prior(X), Delta_cond(Y)) that sum to 1, e.g. (0.25, 0.25, 0.5)."
        )
    if len(weights) != 3:
        raise WEIGHTS_RULE.error(
            f"weights has {len(weights)} values; pass exactly three (a, b, d) for "
            f"(Delta_prior(Y), Delta_prior(X), Delta_cond(Y)), e.g. (0.25, 0.25, 0.5)."
        )
    try:
        values = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        raise WEIGHTS_RULE.error(f"weights={shown_value(weights, 80)} must be numbers, e.g. (0.25, 0.25, 0.5).") from None
    except OverflowError:  # an integer beyond float64: a number, but not in [0, 1]
        values = (math.inf,)
    if not all(np.isfinite(w) and 0.0 <= w <= 1.0 for w in values):
        raise WEIGHTS_RULE.error(
            f"weights={shown_value(weights, 80)}: each weight must be a finite number in [0, 1].")
    if abs(sum(values) - 1.0) > WEIGHT_SUM_TOLERANCE:
        raise WEIGHTS_RULE.error(
            f"weights={values!r} sum to {sum(values):g}; FFLM needs a + b + d = 1 "
            f"(e.g. (0.25, 0.25, 0.5), or divide each weight by their sum)."
        )
    return values  # type: ignore[return-value]


_WARNINGS = {
    "truncated": (
        "FFLM: {count} of {total} examples exceed {limit} tokens per sequence and were truncated as "
        "the authors do (the condition is cut when the summary is the target, the document is cut "
        "when it is the target)."
    ),
    "empty": (
        "FFLM: {count} example(s) have an empty summary or no document tokens left to score; their "
        "components over the missing tokens are 0.0 (see the model card)."
    ),
}


def fflm(
    predictions: Sequence[str],
    sources: Sequence[str],
    *,
    model: str | os.PathLike | LoadedLM | Any = DEFAULT_MODEL,
    model_tokenizer: Any = None,
    revision: str | None = None,
    device: str | None = None,
    dtype: str | None = None,
    device_map: str | dict[str, int | str] | None = None,
    max_memory: dict[int | str, int | str] | None = None,
    offload_folder: str | os.PathLike | None = None,
    max_length: int | None = DEFAULT_MAX_LENGTH,
    token_budget: int | str | None = DEFAULT_TOKEN_BUDGET,
    batch_size: int | None = None,
    progress: bool = True,
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    separator: str = DEFAULT_SEPARATOR,
    start_token: int | str | None = None,
    prefix_cache: bool = True,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    explain: bool = False,
    cache_dir: str | os.PathLike | None = None,
) -> FFLMResult:
    """Score each summary ``predictions[i]`` for faithfulness to its document ``sources[i]`` with FFLM.

    Args:
        predictions: summaries Y, one per example.
        sources: source documents X, one per example (repeat a document for each of its summaries:
            repeated documents are detected and their shared work is done once).
        model: a causal LM: Hub id, local directory, the offline alias ``"smollm2-135m"``, a
            :class:`nlgmetrics.engine.LoadedLM`, or a model instance with ``model_tokenizer=``.
            Default :data:`DEFAULT_MODEL`.
        model_tokenizer: the Hugging Face tokenizer to use with ``model``; needed when ``model`` is
            a model instance (default: the model's own).
        revision, device, dtype: passed to :func:`nlgmetrics.engine.load_lm` (default float32).
        device_map, max_memory, offload_folder: a model bigger than one device, given by name or
            folder: passed to ``from_pretrained`` (e.g. ``device_map="auto"``,
            ``max_memory={0: "20GiB", "cpu": "60GiB"}``); the numbers do not change
            (:func:`nlgmetrics.engine.load_lm`).
        max_length: tokens per sequence including the start token (default the authors' 2048);
            None = the model's context; a value above the model's context is capped at it.
        token_budget, batch_size: batching limits of the engine (do not change the numbers;
            ``token_budget=None``: the default budget, as for every LM metric; ``"auto"``: the largest
            that fits the free memory, :mod:`nlgmetrics.engine.budget`).
        progress: show a progress bar (over the examples of the whole call).
        weights: ``(a, b, d)`` for ``(Delta_prior(Y), Delta_prior(X), Delta_cond(Y))``; sum to 1.
        separator: text between condition and target (authors: ``"TL;DR "``).
        start_token: first token of every sequence, a token id or a token string (default: the
            tokenizer's BOS token, else EOS).
        prefix_cache: share the ``(start, X, sep)`` prefix across summaries of a document (KV
            cache); the numbers do not change (within 1e-5 in float32).
        chunk_size: distinct documents planned and scored at a time, each with all of its
            summaries (bounds memory on a large call; the numbers do not change, so it is not in
            the signature).
        explain: also return everything per token: the per-token breakdowns of the four columns
            (``explanations``, :mod:`nlgmetrics.fflm.explain`) and the five floored per-token
            probability lists they come from (``token_probabilities``); no number changes.
        cache_dir: a folder for the engine's store (default ``$NLGMETRICS_CACHE_DIR``; None: no
            store): what the model computed for each distinct input is kept there and reused by
            later calls and processes, keyed by everything that can change it (weights, tokenizer,
            dtype, device type, versions, the tokens); the numbers do not change.

    Returns:
        :class:`FFLMResult`: columns ``fflm``, ``delta_prior_summary``, ``delta_prior_document``,
        ``delta_cond_summary``; ``weights``, ``signature``, per-example details.

    Raises:
        ValueError: mismatched lengths, None or non-string items, an empty input list, bad weights,
        engine options, chunk_size or start token, a too-small max_length, a model that is not a
        causal LM (each with how to fix it). OSError: a model that cannot be loaded.
    """
    from nlgmetrics.engine import TARGET_LOGPROBS, iter_causal
    from nlgmetrics.engine.bookkeeping import ExampleProgress, WarnOnce
    from nlgmetrics.engine.call import check_call_options, lm_call
    from nlgmetrics.engine.planning import chunk_by_key

    summaries, documents = check_source_inputs(predictions, sources)
    weights_t = check_weights(weights)
    options = check_call_options(
        model, model_tokenizer=model_tokenizer, revision=revision, device=device, dtype=dtype,
        device_map=device_map, max_memory=max_memory, offload_folder=offload_folder, max_length=max_length,
        token_budget=token_budget, batch_size=batch_size, chunk_size=chunk_size, cache_dir=cache_dir)
    if not isinstance(separator, str):
        raise SEPARATOR_RULE.error(
            f"separator={shown_value(separator)} must be a string (the authors use {DEFAULT_SEPARATOR!r}).")
    start_token = check_start_token(start_token)
    switches = check_switches(SWITCH_RULE, prefix_cache=prefix_cache, explain=explain, progress=progress)
    prefix_cache, explain, progress = switches.values()

    with lm_call(options, kind="causal", default_budget=DEFAULT_TOKEN_BUDGET, progress=progress) as call:
        lm, limit = call.lm, call.max_length
        start = resolve_start_token(lm.tokenizer, start_token, DEFAULT_START_TOKENS, metric="FFLM")
        sep = token_ids(lm.tokenizer, separator, {})
        # Room for the summary once the start token and the separator are in: it must keep >= 1 token.
        room = limit - 1 - len(sep)
        if room < 1:
            raise MAX_LENGTH_ROOM_RULE.error(
                f"max_length={limit} leaves no room for a summary after the start token and the "
                f"{len(sep)}-token separator {separator!r}; use max_length >= {len(sep) + 2} "
                f"(the authors use {DEFAULT_MAX_LENGTH})."
            )

        # Bounded memory: plan and score ``chunk_size`` distinct documents at a time, each with all of
        # its summaries, so lm_doc (once per document) and the shared (start, X, sep) prefix cache are
        # reused exactly as in one big call. Only one chunk's queries and per-token log-probabilities
        # are alive at once; we keep the per-example outputs.
        n = len(documents)
        components: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * n
        summary_tokens, document_tokens, truncated = [0] * n, [0] * n, [False] * n
        explained: dict[int, tuple[Any, FFLMProbabilities]] = {}
        counts = WarnOnce()
        with ExampleProgress(n, "FFLM", enabled=call.progress, store=call.store) as bar:
            for examples in chunk_by_key(documents, call.chunk_size):
                # A token memo per chunk: it must not grow with the whole call.
                chunk_cache: dict[str, tuple[int, ...]] = {}
                plans = [plan_example(documents[i], summaries[i], lm.tokenizer, chunk_cache, limit, room)
                         for i in examples]
                queries, slots = build_queries(plans, start, sep, limit)
                logprobs: list[np.ndarray] = [np.zeros(0)] * len(queries)
                results = iter_causal(lm, queries, TARGET_LOGPROBS, token_budget=call.token_budget,
                                      batch_size=call.batch_size, prefix_cache=prefix_cache, store=call.store,
                                      progress=False)  # the bar counts examples over the whole call
                for query_index, (values, _no_argmax) in bar.track(results, examples=len(examples),
                                                                   queries=len(queries)):
                    logprobs[query_index] = values

                for i, plan, slot in zip(examples, plans, slots):
                    probs = FFLMProbabilities(**{
                        name: floored_probabilities(slot_logprobs(logprobs, where)) for name, where in slot.items()
                    })
                    components[i] = fflm_components(probs.s2s, probs.lm, probs.prefix, probs.s2s_doc, probs.lm_doc)
                    summary_tokens[i] = len(plan.summary)
                    document_tokens[i] = plan.cond_budget
                    truncated[i] = plan.truncated
                    if explain:
                        explained[i] = (plan, probs)
                    counts.add("truncated", plan.truncated)
                    counts.add("empty", (not plan.summary) or plan.cond_budget == 0)
                del plans, queries, slots, logprobs
    counts.emit(_WARNINGS, total=n, limit=limit)

    signature = make_signature(
        "fflm",
        {
            "separator": repr(separator),
            "start_token": start,
            "weights_abd": weights_t,
            "probability_floor": PROBABILITY_FLOOR,
        },
        model=lm.signature_fields(limit),
    )
    columns = dict(zip(COMPONENTS, (list(values) for values in zip(*components))))
    scores = {"fflm": _fflm_column(weights_t, columns), **columns}
    explanations = [
        fflm_breakdowns(lm.tokenizer, summaries[i], documents[i], *explained[i], weights_t,
                        {name: values[i] for name, values in scores.items()}, signature)
        for i in range(n)
    ] if explain else None
    return FFLMResult(
        scores=scores,
        signature=signature,
        weights=weights_t,
        summary_tokens=summary_tokens,
        document_tokens=document_tokens,
        truncated=truncated,
        token_probabilities=[explained[i][1] for i in range(n)] if explain else None,
        explanations=explanations,
    )
