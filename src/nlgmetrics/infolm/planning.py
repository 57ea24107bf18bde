"""InfoLM's work plan: every distinct text's distribution computed once, with bounded memory.

- :func:`distinct_texts`: the call's strings -> distinct token sequences. Two strings with the
  same tokens (different case with an uncased vocabulary) share one distribution, and every text
  without a scorable token shares the empty-text distribution.
- :func:`score_examples`: visits the examples grouped by reference (a reference shared by 25
  systems stays cached while they are scored), computes the new texts of at most ``chunk_size``
  of them at a time, drops a distribution as soon as no remaining example needs it, and measures
  every (example, reference) pair, keeping the smallest value per example. A value beyond float64
  (an alpha divergence, see :mod:`nlgmetrics.infolm.measures`) stops the call with an error that
  names the setting and the range that is finite for every input: there is no number to report.

>>> from nlgmetrics.infolm.distributions import TokenizedText
>>> cat, empty = TokenizedText((1, 5, 2), (1,), (5,), False), TokenizedText((1, 2), (), (), True)
>>> texts, ids = distinct_texts({"cat": cat, "": empty, " ": empty, "CAT": cat})
>>> len(texts), ids
(2, {'cat': 0, '': 1, ' ': 1, 'CAT': 0})
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from nlgmetrics.engine.bookkeeping import ExampleProgress
from nlgmetrics.engine.call import LMCall
from nlgmetrics.engine.store_sharing import recall_arrays
from nlgmetrics.infolm.distributions import (
    BAG_REDUCTION, IdfTable, TokenizedText, accumulate_distributions, bag_key, check_finite_distributions,
    vocab_size,
)
from nlgmetrics.infolm.measures import ALPHA_DIVERGENCE_FINITE_RANGE, ALPHA_OVERFLOW_RULE, information_measure

#: (information measure, alpha, beta, temperature), checked.
MeasureSpec = tuple[str, float | None, float | None, float]


def distinct_texts(tokenized: Mapping[str, TokenizedText]) -> tuple[list[TokenizedText], dict[str, int]]:
    """``(texts, text_id_of_string)``: the distinct token sequences of ``tokenized`` (a string ->
    tokens mapping, in first-seen order) and the index in ``texts`` of each string."""
    keys = {string: ((), True) if tok.empty else (tok.input_ids, False) for string, tok in tokenized.items()}
    # Each key's first text, in first-seen order.
    first: dict[tuple[tuple[int, ...], bool], TokenizedText] = {}
    for string, key in keys.items():
        first.setdefault(key, tokenized[string])
    text_id = {key: i for i, key in enumerate(first)}
    return list(first.values()), {string: text_id[key] for string, key in keys.items()}


def score_examples(
    call: LMCall, texts: list[TokenizedText], cand_ids: list[int], ref_ids: list[list[int]],
    table: IdfTable | None, specs: Sequence[MeasureSpec], bar: ExampleProgress,
) -> list[tuple[list[float], list[int]]]:
    """Per spec, ``(scores, best_reference)`` of every example (see the module docstring).

    Each distinct temperature of ``specs`` has its own distributions, all from the same model pass.
    ``bar`` advances over the examples of each chunk as the engine's results come in. A value
    beyond float64 raises the :data:`~nlgmetrics.infolm.measures.ALPHA_OVERFLOW_RULE` error.
    ``call``: the model, its batching and ``chunk_size``, and the store
    (:mod:`nlgmetrics.engine.store`): a text whose bags it holds is not run; the bags of the others
    are written once their chunk is done.
    """
    lm, n = call.lm, len(cand_ids)
    remaining = Counter(t for c, group in zip(cand_ids, ref_ids) for t in {c, *group})  # examples per text
    order = sorted(range(n), key=lambda i: (min(ref_ids[i]), i))
    vocab = vocab_size(lm)
    temperatures = list(dict.fromkeys(spec[3] for spec in specs))
    # text id -> its distribution at each of ``temperatures`` (same order).
    cache: dict[int, list[torch.Tensor]] = {}
    out = [([0.0] * n, [0] * n) for _ in specs]

    def accepts_bag(_query: bytes, arrays: tuple) -> bool:
        """A stored bag is read only as one float64 vocabulary row per temperature; else a miss."""
        return len(arrays) == len(temperatures) and all(
            a is not None and a.dtype == np.float64 and a.shape == (vocab,) for a in arrays)

    def run_chunk(examples: list[int], new: list[int]) -> None:
        keys = {t: bag_key(texts[t], table, temperatures) for t in new}
        found, keep = recall_arrays(call.store, lm, BAG_REDUCTION, keys, accept=accepts_bag)
        for t, rows in found.items():
            cache[t] = [torch.from_numpy(row).to(lm.device) for row in rows]
        new = [t for t in new if t not in found]
        if new:
            accs = [torch.zeros(len(new), vocab, dtype=torch.float64, device=lm.device) for _ in temperatures]
            accumulate_distributions(
                lm, [texts[t] for t in new], table, accs[0], temperatures[0],
                call.token_budget, call.batch_size,
                track=lambda results, queries: bar.track(results, examples=len(examples), queries=queries),
                other_temperatures=list(zip(temperatures[1:], accs[1:])))
            for acc in accs:
                check_finite_distributions(acc, lm)
            for row, t in enumerate(new):
                cache[t] = [acc[row] for acc in accs]
            if keep is not None:
                keep([(t, tuple(acc[row].cpu().numpy() for acc in accs)) for row, t in enumerate(new)])
        else:  # every text is cached already: the chunk's examples are done at once
            list(bar.track((), examples=len(examples), queries=0))
        # One {text: distribution} view per temperature, shared by the specs at that temperature.
        views = [{t: rows[k] for t, rows in cache.items()} for k in range(len(temperatures))]
        for spec, (scores, best) in zip(specs, out):
            at_temperature = views[temperatures.index(spec[3])]
            _measure_examples(examples, at_temperature, cand_ids, ref_ids, spec, scores, best)
        for i in examples:
            for t in {cand_ids[i], *ref_ids[i]}:
                remaining[t] -= 1
                if remaining[t] == 0:
                    del cache[t]
        # Survivors (e.g. a reference whose other systems come in the next chunk) are copied out so
        # that this chunk's [len(new), vocab] block can be freed.
        for t in new:
            if t in cache:
                cache[t] = [row.clone() for row in cache[t]]

    with torch.inference_mode():
        examples: list[int] = []
        new: dict[int, None] = {}  # the chunk's texts to compute, in first-seen order
        for i in order:
            want = dict.fromkeys(t for t in (cand_ids[i], *ref_ids[i]) if t not in cache)
            if examples and len(new | want) > call.chunk_size:
                run_chunk(examples, list(new))
                examples, new = [], {}
                want = {t: None for t in want if t not in cache}  # the chunk may have left some cached
            examples.append(i)
            new |= want
        if examples:
            run_chunk(examples, list(new))
    return out


def _measure_examples(
    examples: list[int], cache: dict[int, torch.Tensor], cand_ids: list[int], ref_ids: list[list[int]],
    spec: MeasureSpec, scores: list[float], best: list[int], pairs_per_call: int = 16,
) -> None:
    """Measure every (example, reference) pair of ``examples``; keep the smallest per example."""
    measure, alpha, beta, _ = spec
    pairs = [(i, k) for i in examples for k in range(len(ref_ids[i])) if ref_ids[i][k] != cand_ids[i]]
    values: dict[tuple[int, int], float] = {}
    for start in range(0, len(pairs), pairs_per_call):
        part = pairs[start : start + pairs_per_call]
        p = torch.stack([cache[ref_ids[i][k]] for i, k in part])
        q = torch.stack([cache[cand_ids[i]] for i, _ in part])
        out = information_measure(measure, p, q, alpha, beta).cpu().tolist()
        values.update(zip(part, out))
    for i in examples:
        # Identical token sequences have identical distributions: exactly 0, not 0 + rounding.
        per_ref = [0.0 if r == cand_ids[i] else _not_nan(values[(i, k)], measure)
                   for k, r in enumerate(ref_ids[i])]
        k_best = min(range(len(per_ref)), key=per_ref.__getitem__)
        # The score is the smallest value: one reference beyond float64 does not matter when
        # another is closer; only an example whose every reference is beyond it has no number.
        scores[i] = _finite(per_ref[k_best], spec, i)
        best[i] = k_best


def _not_nan(value: float, measure: str) -> float:
    """``value``; NaN is a bug (every measure is NaN-free on finite distributions)."""
    if math.isnan(value):
        raise FloatingPointError(
            f"InfoLM {measure} gave NaN on finite distributions; this is a bug in nlgmetrics, please "
            f"report it with the inputs and options.")
    return value


def _finite(value: float, spec: MeasureSpec, example: int) -> float:
    """``value``, an example's score, which must be a number: +inf (an alpha divergence beyond
    float64 for every reference of the example) has none to report, and the largest float would
    look like a measurement: an error naming what to change."""
    if math.isinf(value):
        measure, alpha, _, temperature = spec
        low, high = ALPHA_DIVERGENCE_FINITE_RANGE
        raise ALPHA_OVERFLOW_RULE.error(
            f"InfoLM: {measure} with alpha={alpha:g} at temperature={temperature:g} exceeds the float64 "
            f"range (above {sys.float_info.max:.4g}) for example {example}: probabilities next to 0 make "
            f"sum p^alpha q^(1-alpha) overflow, so there is no number to report. Use alpha in "
            f"[{low:g}, {high:g}] (finite for every input: at most 5e299), a higher temperature, or "
            f"renyi_divergence (the logarithm of the same sum, finite for every alpha > 0).")
    return value
