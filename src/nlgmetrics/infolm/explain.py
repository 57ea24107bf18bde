"""Token-level explanation of InfoLM (``infolm(..., explain=True)``): where the distance decomposes.

InfoLM compares two *bags* of distributions, p = sum_j w_j p_j (the reference's positions, weights
w_j = normalised idf) and q = sum_k u_k q_k (the candidate's), by I[p, q]. Every token enters its
bag linearly through its weight, so each breakdown carries every token's weight (column
``weight``: its share of its text's bag). Whether the *distance* splits over tokens depends on I:

- ``l1_distance``, ``l2_distance``, ``l_infinity_distance``: I is 1-homogeneous in d = p - q, so
  I = sum_v g_v d_v with g = sign(d) (L1), d / |d| (L2), sign at the arg-max entry (L-inf); d is
  linear in the positions, hence exactly I = sum_j w_j (g . p_j) - sum_k u_k (g . q_k): a
  reference token's value is w_j g . p_j, a candidate token's - u_k g . q_k;
- ``kl_divergence``: KL(p || q) = sum_v p_v log(p_v / q_v) is linear in the reference bag p for the
  fixed log-ratio, hence exactly KL = sum_j w_j sum_v p_jv log(p_v / q_v); the candidate enters
  only through log q, not additively, so its tokens get 0 (their weights are still shown);
- every other measure (Fisher-Rao, JS, alpha, beta, AB, Rényi) is not additive over tokens (nor,
  for Fisher-Rao and the Rényi/AB logs, over vocabulary entries): ``aggregation == "none"``, and
  only the weights are given. An empty text (no scored token) also gives ``"none"``.

The per-position distributions are recomputed for the explained pair only (the score itself never
stores them); their sum reproduces the score within 1e-7 (relative; absolute below 1), not bit for
bit: the scorer batches texts together, this recomputation runs each pair alone.
With several references, the best (reported) one is explained.
"""

from __future__ import annotations

from typing import Any

import torch

from nlgmetrics.core.explanations import TokenBreakdown, TokenSpan, token_offsets
from nlgmetrics.engine import CausalQuery, iter_causal
from nlgmetrics.infolm.distributions import (
    IdfTable, TokenizedText, accumulate_distributions, bos_id, position_weights, tempered_softmax, vocab_size,
)
from nlgmetrics.infolm.measures import PROBABILITY_FLOOR

#: Measures whose value is a sum over the tokens (see the module docstring).
DECOMPOSABLE = frozenset({"l1_distance", "l2_distance", "l_infinity_distance", "kl_divergence"})


def position_distributions(lm: Any, text: TokenizedText, temperature: float, token_budget: int,
                           batch_size: int | None) -> torch.Tensor:
    """[positions, vocab] float64: the distribution p_j of each scored position of ``text``: the
    scorer's own queries (masked: one masked copy per position, through its accumulation with
    weight 1; causal: the text's one teacher-forced query, every row kept)."""
    if lm.kind != "masked":
        used = text.positions[-1] + 1
        query = CausalQuery((bos_id(lm),), text.input_ids[:used])
        with torch.inference_mode():
            for _, logits in iter_causal(lm, [query], lambda rows, _query: rows.clone(), token_budget=token_budget,
                                         batch_size=batch_size, prefix_cache=False, progress=False):
                probs = tempered_softmax(logits[:used].to(torch.float64), temperature)
        return probs[list(text.positions)].cpu()
    singles = [TokenizedText(text.input_ids, (p,), (t,), False) for p, t in zip(text.positions, text.tokens)]
    acc = torch.zeros(len(singles), vocab_size(lm), dtype=torch.float64, device=lm.device)
    with torch.inference_mode():
        accumulate_distributions(lm, singles, None, acc, temperature, token_budget, batch_size)
    return acc.cpu()


def _contributions(measure: str, p_rows: torch.Tensor, w: torch.Tensor, q_rows: torch.Tensor,
                   u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    p, q = w @ p_rows, u @ q_rows
    d = p - q
    if measure == "kl_divergence":
        ratio = p.clamp_min(PROBABILITY_FLOOR).log() - q.clamp_min(PROBABILITY_FLOOR).log()
        return w * (p_rows @ ratio), torch.zeros_like(u)
    if measure == "l1_distance":
        g = torch.sign(d)
    elif measure == "l2_distance":
        norm = d.norm()
        g = d / norm if norm > 0 else torch.zeros_like(d)
    else:  # l_infinity_distance
        g = torch.zeros_like(d)
        v = int(d.abs().argmax())
        g[v] = torch.sign(d[v])
    return w * (p_rows @ g), -u * (q_rows @ g)


def infolm_breakdown(lm: Any, prediction: str, reference: str, cand: TokenizedText, ref: TokenizedText,
                     table: IdfTable | None, measure: str, temperature: float, token_budget: int,
                     batch_size: int | None, score: float, signature: str) -> TokenBreakdown:
    """The breakdown of one example (its candidate against its best reference)."""
    tokenizer = lm.tokenizer
    texts = {"reference": reference, "prediction": prediction}
    spans: list[TokenSpan] = []
    weights: list[float] = []
    for source, string, text in (("reference", reference, ref), ("prediction", prediction, cand)):
        if not text.empty:
            spans += [TokenSpan(source, a, b) for a, b in token_offsets(tokenizer, string, list(text.tokens))]
            weights += position_weights(text, table)
    columns = {"weight": tuple(weights), "side": tuple(s.source for s in spans)}
    decomposes = measure in DECOMPOSABLE and not cand.empty and not ref.empty
    values = None
    if decomposes:
        p_rows = position_distributions(lm, ref, temperature, token_budget, batch_size)
        q_rows = position_distributions(lm, cand, temperature, token_budget, batch_size)
        w = torch.tensor(position_weights(ref, table), dtype=torch.float64)
        u = torch.tensor(position_weights(cand, table), dtype=torch.float64)
        ref_part, cand_part = _contributions(measure, p_rows, w, q_rows, u)
        values = tuple(ref_part.tolist() + cand_part.tolist())
        how = {"kl_divergence": "reference token j: w_j sum_v p_j(v) log(p(v)/q(v)); candidate tokens 0 "
                                "(they enter through log q, not additively)"}.get(
            measure, "reference token j: w_j g.p_j, candidate token k: -u_k g.q_k, g the (sub)gradient of the "
                     "distance at p - q")
        description = f"{measure}: {how}; sums to the score"
    else:
        reason = "an empty text has no token" if measure in DECOMPOSABLE else (
            "this measure is not a sum over tokens (only L1, L2, L-inf and KL are)")
        description = f"{measure}: does not decompose over tokens ({reason}); 'weight' is each token's share of its bag"
    return TokenBreakdown(metric="infolm", name="infolm", score=score, texts=texts, spans=tuple(spans),
                          values=values, aggregation="sum" if decomposes else "none",
                          description=description, signature=signature, columns=columns)

