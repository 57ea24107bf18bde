"""InfoLM parity with torchmetrics (1.9) ``InfoLM`` on the tiny random BERT fixture.

What torchmetrics computes, and the documented mapping to our definition (model card, section
"Relation to torchmetrics"), asserted here:

1. Measures: torchmetrics' ``kl_divergence`` and ``alpha_divergence`` are the *negatives* of the
   divergences (it computes sum q log(p/q) and (1 - sum ...)/(a(a-1))); every other measure is equal.
   ``TORCHMETRICS_SIGN`` records this. Tested on distributions directly (float64, exact) and end to end.
2. Pairing: torchmetrics sorts each side by token length and indexes the sorted distributions with
   the sorting permutation again instead of its inverse, so its k-th sentence-level score compares
   reference sigma_r(sigma_r(k)) with prediction sigma_p(sigma_p(k)) (sigma = argsort of lengths).
   On inputs already sorted by length (sigma = identity) scores are per example; we test both.
3. idf: torchmetrics computes the prediction side's idf from the predictions and the reference
   side's from the references; we use the references' table for both (the paper / issue definition).
   The mapping is tested through ``text_distributions(texts, idf=True)`` (table from those texts).

Tolerance: |diff| <= 1e-5 + 1e-5 |value| (fp32 on both sides; the relative part only matters for
values >> 1). Temperatures where fp32 torchmetrics itself is inaccurate (T=1: arccos near 1;
T=0.02: sums of huge ratios) are compared with torchmetrics' model in float64.
"""

from __future__ import annotations

import pytest
import torch

from nlgmetrics.infolm.measures import INFORMATION_MEASURES, TORCHMETRICS_SIGN, information_measure

torchmetrics_infolm = pytest.importorskip("torchmetrics.text.infolm")
from torchmetrics.functional.text.infolm import _InformationMeasure  # noqa: E402

# Distinct token lengths on each side, so torchmetrics' length sort has no ties (deterministic).
PREDS = [
    "the cat sat on the mat",
    "a quick brown fox jumps",
    "hello world",
    "he read the book because of history",
    "short",
]
REFS = [
    "a cat was sitting on a mat",
    "the fast brown fox leaped over",
    "hello there world",
    "he was into history so he read it",
    "a much longer reference, with more of the words",
]

MEASURE_CASES = [
    ("kl_divergence", None, None),
    ("alpha_divergence", 0.5, None),
    ("alpha_divergence", 2.0, None),
    ("alpha_divergence", -0.5, None),
    ("beta_divergence", None, 0.5),
    ("beta_divergence", None, -0.5),
    ("ab_divergence", 0.5, 1.0),
    ("ab_divergence", -0.5, 1.5),
    ("renyi_divergence", 0.5, None),
    ("renyi_divergence", 2.0, None),
    ("l1_distance", None, None),
    ("l2_distance", None, None),
    ("l_infinity_distance", None, None),
    ("fisher_rao_distance", None, None),
]


def _case_id(case):
    return "-".join(str(x) for x in case if x is not None)


def _close(theirs: torch.Tensor, ours: torch.Tensor, rtol: float = 1e-5, atol: float = 1e-5) -> float:
    diff = (theirs.double() - ours.double()).abs()
    assert torch.all(diff <= atol + rtol * ours.double().abs()), (theirs, ours, diff.max())
    return float(diff.max())


def test_every_torchmetrics_measure_is_covered():
    assert set(TORCHMETRICS_SIGN) == set(INFORMATION_MEASURES) - {"js_divergence"}
    assert {case[0] for case in MEASURE_CASES} == set(TORCHMETRICS_SIGN)


@pytest.mark.parametrize("case", MEASURE_CASES, ids=_case_id)
def test_measures_equal_torchmetrics_up_to_documented_sign(case):
    """torchmetrics' own measure code on the same float64 distributions: equal to ~1e-12."""
    measure, alpha, beta = case
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 6, 50, generator=generator, dtype=torch.float64) * 3
    p, q = torch.softmax(logits[0], -1), torch.softmax(logits[1], -1)  # p: reference, q: candidate
    theirs = _InformationMeasure(measure, alpha, beta)(q, p)  # torchmetrics(preds, target)
    ours = information_measure(measure, p, q, alpha, beta)
    torch.testing.assert_close(theirs, TORCHMETRICS_SIGN[measure] * ours, rtol=1e-10, atol=1e-12)


_LOADED: dict = {}


def _load_once(model_name_or_path, device=None):
    """torchmetrics reloads the weights for every metric object; load the (read-only) fixture once."""
    from torchmetrics.functional.text.helper_embedding_metric import _load_tokenizer_and_model

    key = (str(model_name_or_path), str(device))
    if key not in _LOADED:
        _LOADED[key] = _load_tokenizer_and_model(model_name_or_path, device)
    return _LOADED[key]


def _torchmetrics_scores(model_dir, measure, alpha, beta, temperature, idf, preds, refs, double=False):
    if not double:  # the float64 runs convert their model in place: give them a fresh copy
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(torchmetrics_infolm, "_load_tokenizer_and_model", _load_once)
            return _torchmetrics_scores_uncached(model_dir, measure, alpha, beta, temperature, idf, preds, refs)
    return _torchmetrics_scores_uncached(model_dir, measure, alpha, beta, temperature, idf, preds, refs, double)


def _torchmetrics_scores_uncached(model_dir, measure, alpha, beta, temperature, idf, preds, refs, double=False):
    metric = torchmetrics_infolm.InfoLM(
        str(model_dir), temperature=temperature, information_measure=measure, idf=idf, alpha=alpha,
        beta=beta, max_length=128, verbose=False, return_sentence_level_score=True,
    )
    if double:
        metric.model.double()
    _, scores = metric(preds, refs)
    return scores


def _torchmetrics_pairing(tokenizer, texts) -> torch.Tensor:
    """Index of the text that torchmetrics' k-th score uses: sigma(sigma(k)), sigma = length argsort."""
    lengths = torch.tensor([len(tokenizer(t)["input_ids"]) for t in texts])
    assert len(set(lengths.tolist())) == len(texts), "ties would make the pairing ambiguous"
    sigma = lengths.argsort()
    return sigma[sigma]


@pytest.fixture(scope="module")
def pairing(tiny_bert_dir):
    from nlgmetrics.engine import load_lm

    tokenizer = load_lm(tiny_bert_dir).tokenizer
    return _torchmetrics_pairing(tokenizer, PREDS), _torchmetrics_pairing(tokenizer, REFS)


@pytest.fixture(scope="module")
def distributions(tiny_bert_dir):
    """Our aggregated distributions per (temperature, idf), each side with its own idf table."""
    from nlgmetrics.infolm import text_distributions

    cache = {}

    def get(temperature, idf):
        key = (temperature, idf)
        if key not in cache:
            cache[key] = (
                text_distributions(tiny_bert_dir, PREDS, temperature=temperature, idf=idf),
                text_distributions(tiny_bert_dir, REFS, temperature=temperature, idf=idf),
            )
        return cache[key]

    return get


# The default (T=0.25, idf on) and a sharp temperature (idf off) for every measure; other combos below.
@pytest.mark.parametrize("case", MEASURE_CASES, ids=_case_id)
def test_end_to_end_parity_with_documented_mapping(tiny_bert_dir, distributions, pairing, case):
    """Every measure at the defaults (T=0.25, idf on); the formulas themselves are tested exactly above."""
    measure, alpha, beta = case
    temperature, idf = 0.25, True
    theirs = _torchmetrics_scores(tiny_bert_dir, measure, alpha, beta, temperature, idf, PREDS, REFS)
    dp, dr = distributions(temperature, idf)
    pred_index, ref_index = pairing
    ours = TORCHMETRICS_SIGN[measure] * information_measure(measure, dr[ref_index], dp[pred_index], alpha, beta)
    if measure == "fisher_rao_distance":
        _close_fisher_rao(tiny_bert_dir, theirs, ours, temperature, idf)
    else:
        _close(theirs, ours)


def _close_fisher_rao(model_dir, theirs: torch.Tensor, ours: torch.Tensor, temperature: float, idf: bool) -> None:
    """arccos is ill-conditioned next to 1: for a near-identical pair (distance ~1e-2) fp32 rounding
    of sum sqrt(pq) (~1e-7, and it depends on the CPU's SIMD path) moves the distance by ~1e-5..1e-4.
    Compare the fp32 run on the well-conditioned Bhattacharyya coefficient cos(d/2), and the
    distance itself with float64 torchmetrics."""
    _close(torch.cos(theirs.double() / 2), torch.cos(ours / 2), rtol=0, atol=1e-6)
    theirs64 = _torchmetrics_scores(model_dir, "fisher_rao_distance", None, None, temperature, idf, PREDS, REFS,
                                    double=True)
    _close(theirs64, ours)


@pytest.mark.parametrize("setting", [(0.25, False), (0.05, True), (0.05, False)], ids=lambda s: f"T{s[0]}-idf{s[1]}")
def test_temperature_idf_combinations(tiny_bert_dir, distributions, pairing, setting):
    temperature, idf = setting
    pred_index, ref_index = pairing
    dp, dr = distributions(temperature, idf)
    for measure, alpha, beta in [("ab_divergence", 0.5, 1.0), ("fisher_rao_distance", None, None)]:
        theirs = _torchmetrics_scores(tiny_bert_dir, measure, alpha, beta, temperature, idf, PREDS, REFS)
        ours = TORCHMETRICS_SIGN[measure] * information_measure(measure, dr[ref_index], dp[pred_index], alpha, beta)
        if measure == "fisher_rao_distance":
            _close_fisher_rao(tiny_bert_dir, theirs, ours, temperature, idf)
        else:
            _close(theirs, ours)


@pytest.mark.parametrize(
    "temperature,measure,alpha",
    [(1.0, "fisher_rao_distance", None), (0.02, "alpha_divergence", 2.0)],
)
def test_extreme_temperatures_against_float64_torchmetrics(tiny_bert_dir, distributions, pairing, temperature,
                                                           measure, alpha):
    """T=1: near-uniform bags, Fisher-Rao ~1e-2 (arccos next to 1); T=0.02: alpha=2 sums reach ~1e4."""
    pred_index, ref_index = pairing
    dp, dr = distributions(temperature, False)
    theirs = _torchmetrics_scores(tiny_bert_dir, measure, alpha, None, temperature, False, PREDS, REFS, double=True)
    ours = TORCHMETRICS_SIGN[measure] * information_measure(measure, dr[ref_index], dp[pred_index], alpha, None)
    _close(theirs, ours)


@pytest.mark.parametrize("measure", ["kl_divergence", "fisher_rao_distance"])
def test_public_api_equals_torchmetrics_on_length_sorted_inputs(tiny_bert_dir, measure):
    """sigma = identity: torchmetrics' scores are per example; our public ``infolm`` gives them."""
    from nlgmetrics.infolm import infolm

    preds = ["hi", "a cat sat", "the dog ran home", "one two three four five six"]
    refs = ["yo", "a cat is", "a dog ran to home", "one two three four five six seven"]
    # float64 torchmetrics: its fp32 arccos(sum sqrt(pq)) is off by up to ~1e-4 for near-identical texts.
    theirs = _torchmetrics_scores(tiny_bert_dir, measure, None, None, 0.1, False, preds, refs, double=True)
    ours = infolm(preds, refs, model=tiny_bert_dir, information_measure=measure, temperature=0.1,
                  idf=False, progress=False)
    _close(theirs, TORCHMETRICS_SIGN[measure] * torch.tensor(ours.scores["infolm"], dtype=torch.float64))
    # The corpus score is then the mean of the same numbers.
    assert abs(TORCHMETRICS_SIGN[measure] * ours.mean()["infolm"] - float(theirs.double().mean())) < 1e-5


def test_public_idf_uses_the_reference_table_on_both_sides(tiny_bert_dir):
    """Mapping 3: with idf on, our candidate side uses the *references'* table (torchmetrics: its own)."""
    from nlgmetrics.engine import load_lm
    from nlgmetrics.infolm import compute_idf, infolm, text_distributions, tokenize

    lm = load_lm(tiny_bert_dir)
    tokenized, _ = tokenize(lm, REFS, 128)
    table = compute_idf(t.tokens for t in tokenized)
    dp = text_distributions(tiny_bert_dir, PREDS, temperature=0.05, idf=table)
    dr = text_distributions(tiny_bert_dir, REFS, temperature=0.05, idf=table)
    want = information_measure("fisher_rao_distance", dr, dp)
    got = infolm(PREDS, REFS, model=tiny_bert_dir, temperature=0.05, idf=True, progress=False)
    _close(torch.tensor(got.scores["infolm"]), want, rtol=0, atol=1e-6)
