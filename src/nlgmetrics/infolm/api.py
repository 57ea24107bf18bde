"""InfoLM's public API: :func:`infolm`, :func:`infolm_multi` and their result :class:`InfoLMResult`.

InfoLM (Colombo, Clavel, Piantanida, AAAI 2022): InfoLM(candidate, reference) =
I[p(.|reference), p(.|candidate)], an information measure I (:mod:`nlgmetrics.infolm.measures`)
between the weighted bags of LM distributions of the two texts
(:mod:`nlgmetrics.infolm.distributions` defines them). **Lower = more similar** for every measure
(0 = same distribution); with several references per candidate the best (smallest) value is
reported. The choices where the paper is silent (idf over the distinct references, empty texts,
truncation, identical texts scoring exactly 0, alpha divergences beyond float64) are listed in
the model card, ``metrics/infolm/README.md``.

Layout: the option checks, then one :func:`~nlgmetrics.engine.call.lm_call` in which every distinct
text is tokenized once and :func:`nlgmetrics.infolm.planning.score_examples` computes each distinct
text's distribution once (``chunk_size`` of them alive at a time) and measures every pair; then one
result per measure.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
>>> result = infolm(["the cat sat"], [["the cat sat", "a dog ran"]], model=path, progress=False)
>>> result.scores, result.details(), result.higher_is_better, result.column("infolm").range_text()
({'infolm': [0.0]}, {'best_reference': [0]}, False, '[0, 3.14159]')
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from nlgmetrics.core.explanations import TokenBreakdown
from nlgmetrics.core.result import Column, MetricResult
from nlgmetrics.core.signature import make_signature
from nlgmetrics.core.refusals import Refusal, refusal_sentences
from nlgmetrics.core.validation import (
    CACHE_DIR_RULE, BATCH_SIZE_RULE, CHUNK_SIZE_RULE, MAX_LENGTH_RULE, TOKEN_BUDGET_RULE, check_choice,
    check_reference_inputs, check_switches, shown_value, switch_rule,
)
from nlgmetrics.engine import LoadedLM
from nlgmetrics.engine.bookkeeping import ExampleProgress
from nlgmetrics.engine.call import check_call_options, lm_call
from nlgmetrics.infolm.distributions import (
    DEFAULT_TEMPERATURE, IDF_RULE, MAX_LENGTH_ROOM_RULE, TEMPERATURE_RULE, as_idf_table, check_temperature,
    compute_idf, default_token_budget, resolve_max_length, tokenize, warn_truncated,
)
from nlgmetrics.infolm.explain import infolm_breakdown
from nlgmetrics.infolm.measures import MEASURE_RANGES, MEASURE_RULES, check_measure
from nlgmetrics.infolm.planning import MeasureSpec, distinct_texts, score_examples

#: The paper's masked LM.
DEFAULT_MODEL = "bert-base-uncased"
#: Fisher-Rao: parameter-free, a true distance (symmetric, in [0, pi]), and the measure the paper
#: recommends when alpha/beta cannot be tuned.
DEFAULT_MEASURE = "fisher_rao_distance"
#: Distinct texts whose distributions are alive at once (memory: chunk x vocab x 8 bytes; numbers unchanged).
DEFAULT_CHUNK_SIZE = 256

SWITCH_RULE = switch_rule("progress", "explain")
MODEL_KIND_RULE = Refusal(
    ("model_kind",), "a `model_kind` other than 'masked', 'causal' or None (detected from the config)",
    "InfoLM's distributions are defined for these two kinds of LM only")
MEASURES_ENTRY_RULE = Refusal(
    ("measures",), "an infolm_multi `measures` list that is empty or has an entry other than a measure "
    "name, a (name, alpha, beta) or a (name, alpha, beta, temperature) tuple, or `alpha`/`beta`/"
    "`information_measure` passed beside it", "each entry must say which measure (and parameters) it is")
#: Every rule InfoLM's checks apply, in the order of its options (:func:`refusals`).
RULES: tuple[Refusal, ...] = (
    *MEASURE_RULES, TEMPERATURE_RULE, IDF_RULE, MODEL_KIND_RULE, MEASURES_ENTRY_RULE, TOKEN_BUDGET_RULE,
    BATCH_SIZE_RULE, MAX_LENGTH_RULE, MAX_LENGTH_ROOM_RULE, CHUNK_SIZE_RULE, SWITCH_RULE, CACHE_DIR_RULE,
)


def refusals() -> list[str]:
    """What InfoLM refuses and why, one plain sentence per rule its option checks enforce (the
    checks raise these very rules, so the list cannot drift from them).

    >>> any("alpha divergence whose value exceeds the float64 range" in s for s in refusals())
    True
    """
    return refusal_sentences(RULES)


@dataclass(frozen=True)
class InfoLMResult(MetricResult):
    """InfoLM scores: column ``infolm``, per example the smallest measure value over its references.

    **Lower is better** (``higher_is_better`` is False). The column's range depends on the measure
    (:data:`nlgmetrics.infolm.measures.MEASURE_RANGES`): ``result.column("infolm")`` gives it, e.g.
    [0, pi] for Fisher-Rao, [0, log 2] for Jensen-Shannon, [0, inf) for the KL, alpha, beta, AB and
    Rényi divergences; no measure is ever negative. The class-level ``columns`` give the range
    common to all measures, [0, inf).

    ``best_reference[i]`` (detail): index, within ``references[i]``, of the reference that gave the
    score. ``information_measure``: the measure used.
    """

    information_measure: str = DEFAULT_MEASURE
    best_reference: list[int] = field(default_factory=list)
    #: ``explain=True``: per example ``{"infolm": TokenBreakdown}`` (:mod:`nlgmetrics.infolm.explain`).
    explanations: list[dict[str, TokenBreakdown]] | None = field(default=None, repr=False)

    metric: ClassVar[str] = "infolm"
    main: ClassVar[str] = "infolm"
    columns: ClassVar[Mapping[str, Column]] = {"infolm": Column(
        False, 0.0, math.inf, "information measure between the reference's and the candidate's bags of LM "
        "distributions (smallest over the references); lower = more similar, 0 = identical")}

    def __post_init__(self) -> None:
        if self.information_measure not in MEASURE_RANGES:
            raise ValueError(f"Unknown information_measure={self.information_measure!r}; "
                             f"choose one of {list(MEASURE_RANGES)}.")
        super().__post_init__()

    def column(self, name: str) -> Column:
        """Direction and range of ``name``; for ``infolm``, the range of this result's measure."""
        column = super().column(name)
        if name == "infolm":
            low, high = MEASURE_RANGES[self.information_measure]
            return Column(column.higher_is_better, low, high, f"{self.information_measure}: {column.description}")
        return column

    def details(self) -> dict[str, Any]:
        """``best_reference``: per example, the index of its best (closest) reference."""
        return {"best_reference": list(self.best_reference)}


def infolm(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    model: str | os.PathLike | LoadedLM | torch.nn.Module = DEFAULT_MODEL,
    model_tokenizer: Any = None,
    revision: str | None = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    device_map: str | dict[str, int | str] | None = None,
    max_memory: dict[int | str, int | str] | None = None,
    offload_folder: str | os.PathLike | None = None,
    max_length: int | None = None,
    token_budget: int | str | None = None,
    batch_size: int | None = None,
    progress: bool = True,
    information_measure: str = DEFAULT_MEASURE,
    alpha: float | None = None,
    beta: float | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    idf: bool | Mapping[int, float] = True,
    model_kind: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    explain: bool = False,
    cache_dir: str | os.PathLike | None = None,
) -> InfoLMResult:
    """InfoLM of each prediction against its reference(s); see the module docstring for the definition.

    Args:
        predictions: candidate texts, one per example.
        references: per example a string or a non-empty list of strings; the best (smallest)
            distance over an example's references is its score.
        model: Hub id, local directory, ``"smollm2-135m"`` (offline causal LM), a ``LoadedLM`` or a
            ``PreTrainedModel`` (with ``model_tokenizer=``). Masked or causal is detected from the config
            (force with ``model_kind="masked"|"causal"``). Default :data:`DEFAULT_MODEL`.
        model_tokenizer: the Hugging Face tokenizer of a model instance (default: the model's own).
        revision, device, dtype: passed to :func:`nlgmetrics.engine.load_lm` (default float32).
        device_map, max_memory, offload_folder: a model bigger than one device, given by name or
            folder: passed to ``from_pretrained`` (e.g. ``device_map="auto"``,
            ``max_memory={0: "20GiB", "cpu": "60GiB"}``); the numbers do not change
            (:func:`nlgmetrics.engine.load_lm`).
        max_length: tokens per text including special tokens (None: the model's positions; a
            larger value is capped at them); longer texts are truncated (one warning).
        token_budget, batch_size: padded tokens / sequences per forward batch (engine; the numbers
            do not change). ``token_budget="auto"``: the largest that fits the free memory
            (:mod:`nlgmetrics.engine.budget`). ``token_budget=None`` (default): InfoLM's default budget, 8192 on GPU,
            2048 on CPU (where larger batches add memory, not speed).
        progress: show a progress bar over the examples of the call.
        information_measure: one of :data:`nlgmetrics.infolm.measures.INFORMATION_MEASURES`
            (default :data:`DEFAULT_MEASURE`); ``alpha`` for alpha, AB and Rényi divergences,
            ``beta`` for beta and AB divergences (ranges: :func:`nlgmetrics.infolm.measures.check_measure`).
        temperature: softmax temperature T, any finite T > 0 (default 0.25, torchmetrics' default).
        idf: True (idf from the distinct references of this call), False (uniform), or a
            ``{token_id: weight}`` mapping of finite weights >= 0.
        model_kind: ``"masked"``, ``"causal"`` or None (detected).
        chunk_size: distinct texts whose distributions are alive at once (memory: chunk x vocab x
            8 bytes; the numbers do not change).
        explain: also return per-token weights and, where the measure decomposes (L1, L2, L-inf,
            KL), each token's share of the score (``explanations``, :mod:`nlgmetrics.infolm.explain`;
            one extra pass over each explained pair); no number changes.
        cache_dir: a folder for the engine's store (default ``$NLGMETRICS_CACHE_DIR``; None: no
            store): each distinct text's bag of distributions is kept there and reused by later
            calls and processes (e.g. the same references against another system), keyed by
            everything that can change it (weights, tokenizer, dtype, device type, versions, the
            tokens, their idf weights, the temperature); the numbers do not change.

    Returns:
        :class:`InfoLMResult`: column ``infolm``, detail ``best_reference``, ``information_measure``
        and ``signature``; ``result.mean()["infolm"]`` is the corpus score.

    Raises:
        ValueError: bad inputs or options, each naming the fix. OSError: a model that cannot be loaded.

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
    >>> r = infolm(["a cat sat", ""], ["a cat sat down", ""], model=path, progress=False)
    >>> r.scores["infolm"][0] > 0.0, r.scores["infolm"][1]
    (True, 0.0)
    """
    return _infolm(
        predictions, references, [(information_measure, alpha, beta, None)], model=model,
        model_tokenizer=model_tokenizer, revision=revision, device=device, dtype=dtype, device_map=device_map,
        max_memory=max_memory, offload_folder=offload_folder, max_length=max_length,
        token_budget=token_budget, batch_size=batch_size, progress=progress, temperature=temperature, idf=idf,
        model_kind=model_kind, chunk_size=chunk_size, explain=explain, cache_dir=cache_dir)[0]


#: The options that choose the measure: one at a time in :func:`infolm`, a list in :func:`infolm_multi`.
_MEASURE_OPTIONS = ("information_measure", "alpha", "beta")


def infolm_multi(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    measures: Sequence[str | tuple[str, float | None, float | None] | tuple[str, float | None, float | None, float]],
    **options: Any,
) -> list[InfoLMResult]:
    """Several information measures (and temperatures) from one pass over the model.

    ``measures``: names, ``(name, alpha, beta)`` tuples, or ``(name, alpha, beta, temperature)``
    tuples, whose temperature replaces the ``temperature`` option for that entry (a temperature
    sweep: the logits are computed once and each temperature gets its own distributions, exactly
    those of a separate :func:`infolm` call; memory: ``chunk_size`` x vocab x 8 bytes per distinct
    temperature). The result list is aligned with ``measures``; each result's signature records
    its own temperature.
    ``options``: the keyword arguments of :func:`infolm` except ``information_measure``/``alpha``/``beta``.

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
    >>> fr, ab = infolm_multi(["a cat"], ["a dog"], ["fisher_rao_distance", ("ab_divergence", 1.0, 0.5)],
    ...                       model=path, progress=False)
    >>> fr.information_measure, "alpha:1|beta:0.5" in ab.signature
    ('fisher_rao_distance', True)
    >>> cold, hot = infolm_multi(["a cat"], ["a dog"], [("fisher_rao_distance", None, None, t) for t in (0.25, 2.0)],
    ...                          model=path, progress=False)
    >>> "temperature:0.25" in cold.signature, "temperature:2" in hot.signature
    (True, True)
    """
    if isinstance(measures, str) or not measures:
        raise MEASURES_ENTRY_RULE.error("`measures` must be a non-empty list of measure names or (name, alpha, beta) tuples.")
    specs = []
    for item in measures:
        if isinstance(item, str):
            item = (item, None, None)
        if not isinstance(item, (tuple, list)) or len(item) not in (3, 4):
            raise MEASURES_ENTRY_RULE.error(
                f"Bad entry {shown_value(item, 80)} in `measures`; use a name, a (name, alpha, beta) tuple "
                f"or a (name, alpha, beta, temperature) tuple.")
        if len(item) == 4 and item[3] is None:
            raise MEASURES_ENTRY_RULE.error(
                f"Bad entry {shown_value(item, 80)} in `measures`: give its temperature as a number > 0, "
                f"or use a (name, alpha, beta) tuple for the `temperature` option.")
        specs.append((*item, None) if len(item) == 3 else tuple(item))  # None: the `temperature` option
    for name in _MEASURE_OPTIONS:
        if name in options:
            raise MEASURES_ENTRY_RULE.error(f"Pass `{name}` inside `measures`, not as an option of infolm_multi.")
    # infolm's signature refuses unknown options and gives the defaults: one definition of each.
    try:
        bound = inspect.signature(infolm).bind(predictions, references, **options)
    except TypeError as error:  # e.g. "got an unexpected keyword argument 'x'"
        raise TypeError(f"infolm_multi() {error}") from None
    bound.apply_defaults()
    not_shared = ("predictions", "references", *_MEASURE_OPTIONS)
    shared = {name: value for name, value in bound.arguments.items() if name not in not_shared}
    return _infolm(predictions, references, specs, **shared)


def _infolm(
    predictions: Sequence[str], references: Sequence[str | Sequence[str]],
    specs: list[tuple[str, Any, Any, Any]], *, progress: bool, temperature: float,
    idf: bool | Mapping[int, float], model_kind: str | None, explain: bool, **call_options: Any,
) -> list[InfoLMResult]:
    # Every option of infolm is passed, with its defaults (infolm_multi binds its options to infolm);
    # ``call_options``: those every LM metric shares (check_call_options). Every check before the
    # model is loaded: a typo costs no model load.
    preds, refs = check_reference_inputs(predictions, references)
    temperature = check_temperature(temperature)
    # An entry's own temperature (infolm_multi) replaces the option; None means the option.
    checked: list[MeasureSpec] = [
        (m, *check_measure(m, a, b), temperature if t is None else check_temperature(t)) for m, a, b, t in specs]
    user_table = as_idf_table(idf)
    with MODEL_KIND_RULE.enforced():
        check_choice("model_kind", model_kind, [None, "masked", "causal"])
    options = check_call_options(**call_options)
    progress, explain = check_switches(SWITCH_RULE, progress=progress, explain=explain).values()

    with lm_call(options, kind=model_kind, default_budget=lambda lm: default_token_budget(lm, None),
                 progress=progress) as call:
        lm, token_budget, batch_size = call.lm, call.token_budget, call.batch_size
        limit = resolve_max_length(lm, call.max_length)  # the room a special token leaves depends on the kind

        # Distinct strings -> tokenized -> distinct token sequences ("text ids").
        strings = list(dict.fromkeys([*preds, *(r for group in refs for r in group)]))
        tokenized, truncated = tokenize(lm, strings, limit)
        texts, string_to_id = distinct_texts(dict(zip(strings, tokenized)))
        cand_ids = [string_to_id[p] for p in preds]
        ref_ids = [[string_to_id[r] for r in group] for group in refs]

        table = user_table
        if table is None and idf:  # idf=True: from the distinct references of the call
            table = compute_idf(texts[i].tokens for i in sorted({i for group in ref_ids for i in group}))

        with ExampleProgress(len(preds), "InfoLM", enabled=call.progress, store=call.store) as bar:
            per_spec = score_examples(call, texts, cand_ids, ref_ids, table, checked, bar)
    warn_truncated(truncated, len(strings), limit, stacklevel=4)  # once the call has succeeded

    idf_field = "no" if table is None else ("refs" if user_table is None else f"table-{user_table.fingerprint()}")
    results = []
    for (measure, a, b, spec_temperature), (scores, best) in zip(checked, per_spec):
        # check_measure gives None for a parameter the measure does not read: the signature says "none".
        fields = {"kind": lm.kind, "measure": measure, "alpha": a, "beta": b, "temperature": spec_temperature,
                  "idf": idf_field, "multi_ref": "min"}
        signature = make_signature("infolm", fields, model=lm.signature_fields(limit))
        # Each example's candidate against its reported (best) reference.
        explanations = [{"infolm": infolm_breakdown(
            lm, p, group[k], texts[string_to_id[p]], texts[string_to_id[group[k]]], table, measure,
            spec_temperature, token_budget, batch_size, score, signature)}
            for p, group, k, score in zip(preds, refs, best, scores)] if explain else None
        results.append(InfoLMResult(
            scores={"infolm": scores}, signature=signature, information_measure=measure, best_reference=best,
            explanations=explanations))
    return results
