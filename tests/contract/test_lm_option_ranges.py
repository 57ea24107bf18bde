"""Every LM metric's option ranges, walked at their edges: an accepted setting gives a finite,
non-saturated score (|score| < 1e300, inside the column's declared range), or it is refused with a
ValueError that names the range; never a clamped number that looks like a measurement.

Refusals are :class:`~nlgmetrics.core.refusals.OptionError` values carrying the rule that refused
them; each metric lists its rules (``nlgmetrics.<metric>.refusals()``, the "what we refuse and
why" of its model card). :func:`test_every_listed_rule_is_enforced_by_a_check` fires every listed
rule with a probe and checks that the probe's error carries that very rule, so the list cannot
drift from the checks. Most rules refuse before any model loads; the few that need the model
(its vocabulary, its parameters) or its numbers (an alpha divergence beyond float64, a tuning
that blows the weights up) say so in their sentence, and their errors name the range that works.

The shared rules have one check each (in ``nlgmetrics.core``), and every metric that takes the
option follows it: the sentence splitter's output (BLANC, Shannon), the seed (BLANC-tune), the
start token (Shannon, FFLM), ``token_budget=None`` (every LM metric: the metric's default budget).

Fast: the tiny random models of ``tests/conftest.py`` (loaded once per process by the engine's
cache), two short examples, InfoLM's measures and temperatures swept in one model pass each.
"""

from __future__ import annotations

import math
import re
import sys

import pytest

from nlgmetrics.blanc import TuneSettings
from nlgmetrics.core.refusals import OptionError

PREDS = ["the cat sat on the mat", ""]
REFS = [["a dog ran home"], ["hello"]]
SUMMARIES = ["Jack bought apples."]
DOCUMENTS = ["Jack went to the market. He bought apples and pears there."]
#: "Names the range": what is accepted (an interval, a comparison, the allowed values) or what to pass.
NAMES_A_RANGE = re.compile(r"must|needs|one of|between|\[|<=|>=|pass |use |fewer")
#: Non-saturated: the largest float (1.8e308) or anything near it is a clamp, not a measurement.
SATURATED = 1e300


def _assert_measured(result, context: str) -> None:
    """Finite, non-saturated values inside each column's declared range."""
    for name, values in result.scores.items():
        column = result.column(name)
        for value in values:
            assert math.isfinite(value) and abs(value) < SATURATED, (context, name, value)
            assert column.minimum - 1e-9 <= value <= column.maximum + 1e-9, (context, name, value)


def _assert_refused_with_range(error: Exception, rules, context: str) -> None:
    assert isinstance(error, OptionError), (context, type(error), error)
    assert error.refusal in rules, (context, error.refusal)
    assert NAMES_A_RANGE.search(str(error)), (context, str(error))


# ----------------------------------------------------------------------------------------------
# InfoLM: every measure's alpha / beta edges, at the temperature edges


_EDGES = [-1e301, -1e300, -3.0, -1.0, -0.5, -1e-300, -1e-301, 0.0, 1e-301, 1e-300, 0.5, 1 - 1e-12, 1.0,
          1 + 1e-12, 2.0, 3.0, 1e300, 1e301]
_AB_EDGES = [-1e300, -1.0, 1e-300, 1e300]
#: The sharpest temperature (one-hot distributions: the largest values) and the default. The
#: flattest (the largest float: uniform distributions, every value 0) is in the options test below.
_TEMPERATURES = [5e-324, 0.25]


def _parameter_grid():
    for alpha in _EDGES:
        yield "alpha_divergence", alpha, None
        yield "renyi_divergence", alpha, None
    for beta in [*_EDGES, -1 - 1e-12, -1 + 1e-12]:
        yield "beta_divergence", None, beta
    for alpha in _AB_EDGES:
        for beta in _AB_EDGES:
            yield "ab_divergence", alpha, beta
    for measure in ("kl_divergence", "l1_distance", "l2_distance", "l_infinity_distance", "fisher_rao_distance",
                    "js_divergence"):
        yield measure, None, None


def test_infolm_measure_parameters_at_their_edges(tiny_bert_dir):
    """Each (measure, alpha, beta) edge is refused up front naming its range, or measured at every
    temperature edge; an alpha divergence outside [-1, 2] may exceed float64 at a sharp temperature,
    and is then refused (naming [-1, 2]) instead of reported as the largest float."""
    from nlgmetrics.infolm import ALPHA_DIVERGENCE_FINITE_RANGE, RULES, check_measure, infolm_multi

    low, high = ALPHA_DIVERGENCE_FINITE_RANGE
    safe, unbounded = [], []
    for measure, alpha, beta in _parameter_grid():
        try:
            check_measure(measure, alpha, beta)
        except ValueError as error:
            _assert_refused_with_range(error, RULES, f"{measure} {alpha} {beta}")
            continue
        if measure == "alpha_divergence" and not low <= alpha <= high:
            unbounded.append(alpha)
        else:
            safe += [(measure, alpha, beta, t) for t in _TEMPERATURES]
    assert sorted(unbounded) == [-1e300, -3.0, 3.0, 1e300] and len(safe) > 80
    # Every safe setting at once: one model pass, one temperature sweep.
    for spec, result in zip(safe, infolm_multi(PREDS, REFS, safe, model=tiny_bert_dir, progress=False)):
        _assert_measured(result, str(spec))
    # Outside [-1, 2], at the temperature where its value is largest for each side of the range.
    for alpha, temperature in [(3.0, 0.25), (-3.0, 1e-300), (1e300, 0.25), (-1e300, 1e-300)]:
        try:
            result = infolm_multi(PREDS, REFS, [("alpha_divergence", alpha, None, temperature)],
                                  model=tiny_bert_dir, progress=False)[0]
        except ValueError as error:
            _assert_refused_with_range(error, RULES, f"alpha={alpha} T={temperature}")
            assert "alpha in [-1, 2]" in str(error)
            continue
        _assert_measured(result, f"alpha={alpha} T={temperature}")


def test_infolm_other_options_at_their_edges(tiny_bert_dir):
    from nlgmetrics.engine import load_lm
    from nlgmetrics.infolm import RULES, infolm

    ids = load_lm(tiny_bert_dir).tokenizer("the cat sat on the mat a dog ran home hello",
                                           add_special_tokens=False)["input_ids"]
    # Edges of independent options share a call (each call is a model pass); the temperature
    # edges are in the measure test above.
    accepted = [
        dict(idf={i: 1e308 for i in ids}, chunk_size=1, token_budget=1, batch_size=1, max_length=3),
        dict(idf={i: 5e-324 for i in ids}, chunk_size=10**9, token_budget=10**9, max_length=10**9),
        dict(idf={ids[0]: 0.0}, token_budget=None, model_kind="masked"),
        dict(idf=False, temperature=sys.float_info.max, information_measure="alpha_divergence", alpha=-1.0),
    ]
    for options in accepted:
        _assert_measured(infolm(PREDS, REFS, model=tiny_bert_dir, progress=False, **options), str(options))
    refused = [
        dict(temperature=0), dict(temperature=-1e-300), dict(temperature=math.inf), dict(temperature=math.nan),
        dict(idf={}), dict(idf={ids[0]: -1.0}), dict(idf={ids[0]: math.inf}), dict(idf={"a": 1.0}),
        dict(chunk_size=0), dict(token_budget=0), dict(batch_size=0), dict(max_length=0), dict(max_length=2),
        dict(model_kind="mlm"),
    ]
    for options in refused:
        with pytest.raises(ValueError) as caught:
            infolm(PREDS, REFS, model=tiny_bert_dir, progress=False, **options)
        _assert_refused_with_range(caught.value, RULES, str(options))


# ----------------------------------------------------------------------------------------------
# Shannon score, FFLM, BLANC: each option's edges


def test_shannon_options_at_their_edges(tiny_gpt2_dir):
    from nlgmetrics.engine import load_lm
    from nlgmetrics.shannon import RULES, shannon_score

    vocab = len(load_lm(tiny_gpt2_dir, "causal").tokenizer)
    # Edges of independent options share a call (each call is a model pass).
    accepted = [
        dict(num_upstream=10**6, start_token=vocab - 1, token_budget=1, batch_size=1, chunk_size=1),
        dict(max_length=3, start_token=0), dict(max_length=10**9, prefix_cache=False, token_budget=None),
    ]
    for options in accepted:
        result = shannon_score(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, progress=False, **options)
        _assert_measured(result, str(options))
    refused = [dict(num_upstream=-1), dict(max_length=2), dict(start_token=vocab), dict(start_token=-1),
               dict(start_token="<nope>"), dict(chunk_size=0), dict(token_budget=0), dict(prefix_cache="no")]
    for options in refused:
        with pytest.raises(ValueError) as caught:
            shannon_score(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, progress=False, **options)
        _assert_refused_with_range(caught.value, RULES, str(options))


def test_fflm_options_at_their_edges(tiny_gpt2_dir):
    from nlgmetrics.engine import load_lm
    from nlgmetrics.fflm import RULES, fflm

    tokenizer = load_lm(tiny_gpt2_dir, "causal").tokenizer
    separator_tokens = len(tokenizer.tokenize("TL;DR "))
    # Edges of independent options share a call (each call is a model pass); the weights only
    # combine the components, so their edges are read from one result (the same check_weights).
    accepted = [
        dict(weights=(0, 0, 1), max_length=separator_tokens + 2, start_token=len(tokenizer) - 1, token_budget=1),
        dict(weights=(1, 0, 0), max_length=None, separator="", start_token=0, token_budget=None),
    ]
    for options in accepted:
        result = fflm(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, progress=False, **options)
        _assert_measured(result, str(options))
        for weights in [(1, 0, 0), (0, 1, 0), (0, 0, 1)]:
            assert all(math.isfinite(v) and abs(v) < SATURATED for v in result.reweight(weights))
    refused = [dict(weights=(0.5, 0.5, 0.5)), dict(weights=(-0.1, 0.6, 0.5)), dict(weights=(1, 0)),
               dict(max_length=separator_tokens + 1), dict(separator=None), dict(start_token=len(tokenizer)),
               dict(chunk_size=0)]
    for options in refused:
        with pytest.raises(ValueError) as caught:
            fflm(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, progress=False, **options)
        _assert_refused_with_range(caught.value, RULES, str(options))


def test_blanc_help_options_at_their_edges(tiny_bert_dir):
    from nlgmetrics.blanc import RULES, blanc_help

    accepted = [
        dict(gap=1, min_token_length_normal=0, min_token_length_followup=0, len_sent_allow_cut=0, max_length=3,
             token_budget=1),
        dict(gap=10**6, gap_mask=10**6, min_token_length_lead=10**6, len_sent_allow_cut=10**6, max_length=10**9,
             measure="improve", token_budget=None, help_sep=""),
    ]
    for options in accepted:
        result = blanc_help(SUMMARIES, DOCUMENTS, model=str(tiny_bert_dir), progress=False, **options)
        _assert_measured(result, str(options))
    refused = [dict(gap=0), dict(gap_mask=0), dict(min_token_length_normal=-1), dict(len_sent_allow_cut=-1),
               dict(max_length=2), dict(measure="rel"), dict(filler_token="notatoken_zz"), dict(progress="no")]
    for options in refused:
        with pytest.raises(ValueError) as caught:
            blanc_help(SUMMARIES, DOCUMENTS, model=str(tiny_bert_dir), **{"progress": False, **options})
        _assert_refused_with_range(caught.value, RULES["help"], str(options))


def test_blanc_tune_options_at_their_edges(tiny_bert_dir):
    """The edges in one tuning (it is the slow part): the largest seed, random masking of every
    token, every masked token kept, the smallest learning rate, chunks of one token."""
    from nlgmetrics.blanc import RULES, blanc_tune

    edges = TuneSettings(mask_evenly=False, p_token_replace=0.0, p_token_original=1.0, chunk_size=1, chunk_stride=1,
                         warmup_steps=10**9, freeze_below=0, freeze_above=2)
    result = blanc_tune(SUMMARIES, DOCUMENTS, model=str(tiny_bert_dir), progress=False, finetune_epochs=1,
                        seed=2**64 - 1, p_mask=1.0, learning_rate=5e-324, tuning=edges)
    _assert_measured(result, "edges")
    refused = [dict(seed=2**64), dict(seed=-1), dict(p_mask=1.5),
               dict(tuning=TuneSettings(p_token_replace=0.6, p_token_original=0.6)), dict(learning_rate=0),
               dict(finetune_epochs=-1), dict(tuning=TuneSettings(chunk_size=0)),
               dict(tuning=TuneSettings(freeze_below=10**9)), dict(tuning={"epochs": 1})]
    for options in refused:
        with pytest.raises(ValueError) as caught:
            blanc_tune(SUMMARIES, DOCUMENTS, model=str(tiny_bert_dir), progress=False, **options)
        _assert_refused_with_range(caught.value, RULES["tune"], str(options))
    # A learning rate that blows the weights up gave 0.0 (the argmax of NaN logits): now an error.
    with pytest.raises(ValueError, match=r"learning_rate=1e\+10 made some weights NaN or infinite.*smaller"):
        blanc_tune(SUMMARIES, DOCUMENTS, model=str(tiny_bert_dir), progress=False, finetune_epochs=1,
                   learning_rate=1e10)


_HUGE = 10**5000  # beyond Python's 4300-digit printing limit and beyond float64


@pytest.mark.parametrize("metric, options", [
    ("infolm", dict(information_measure="alpha_divergence", alpha=_HUGE)), ("infolm", dict(temperature=_HUGE)),
    ("infolm", dict(idf={1: _HUGE})), ("infolm", dict(chunk_size=-_HUGE)), ("blanc_help", dict(gap=-_HUGE)),
    ("blanc_help", dict(max_length=-_HUGE)), ("blanc_tune", dict(p_mask=_HUGE)), ("blanc_tune", dict(seed=_HUGE)),
    ("shannon_score", dict(num_upstream=-_HUGE)), ("shannon_score", dict(start_token=-_HUGE)),
    ("fflm", dict(weights=(_HUGE, 0, 0))), ("fflm", dict(token_budget=-_HUGE)),
], ids=lambda value: value if isinstance(value, str) else "-".join(value))
def test_numbers_too_long_to_print_are_refused_by_their_rule(metric, options):
    """A number with thousands of digits is refused by the option's own rule, its size described,
    before any model loads (not Python's integer-conversion limit, nor an OverflowError)."""
    from nlgmetrics.blanc import blanc
    from nlgmetrics.fflm import fflm
    from nlgmetrics.infolm import infolm
    from nlgmetrics.shannon import shannon_score

    run = {"infolm": infolm, "shannon_score": shannon_score, "fflm": fflm,
           "blanc_help": lambda *a, **o: blanc(*a, variant="help", **o),
           "blanc_tune": lambda *a, **o: blanc(*a, variant="tune", **o)}[metric]
    rules, _ = _rules_and_sentences(metric)
    with pytest.raises(ValueError, match=r"integer of about 5001 digits|number too long to print") as caught:
        run(["a cat"], ["a dog"], model="no-such-org/no-such-model", progress=False, **options)
    _assert_refused_with_range(caught.value, rules, str(list(options)))


# ----------------------------------------------------------------------------------------------
# one rule per shared option, followed by every metric that takes it


def _by_numbers(text):
    return [len(word) for word in text.split()]


@pytest.mark.parametrize("metric", ["blanc", "shannon_score"])
def test_a_splitter_returning_non_strings_is_named_by_every_metric(metric, tiny_bert_dir, tiny_gpt2_dir):
    """One check of a custom splitter's output: both metrics name the splitter and what it returned
    (BLANC used to fail inside the tokenizer with its generic message)."""
    from nlgmetrics.blanc import blanc_help
    from nlgmetrics.core.sentences import SPLITTER_OUTPUT_RULE
    from nlgmetrics.shannon import shannon_score

    run, model = (blanc_help, str(tiny_bert_dir)) if metric == "blanc" else (shannon_score, tiny_gpt2_dir)
    with pytest.raises(ValueError, match=r"sentence splitter '_by_numbers' returned int \(4\) as sentence 0 .*"
                                         r"list of strings") as caught:
        run(SUMMARIES, DOCUMENTS, model=model, splitter=_by_numbers, progress=False)
    assert caught.value.refusal is SPLITTER_OUTPUT_RULE


@pytest.mark.parametrize("seed", [2**64, 2**70, -1, 10**5000], ids=["2**64", "2**70", "-1", "10**5000"])
def test_blanc_tune_refuses_a_seed_outside_the_generators_range_before_loading(seed):
    """2**70 used to fail inside torch with "Overflow when unpacking long long", after the model load."""
    from nlgmetrics.blanc import blanc_tune

    with pytest.raises(ValueError, match=r"`seed` must be an integer between 0 and 2\*\*64 - 1, got "):
        blanc_tune(SUMMARIES, DOCUMENTS, model="no-such-org/no-such-model", seed=seed, progress=False)


@pytest.mark.parametrize("metric", ["shannon_score", "fflm"])
def test_a_start_token_that_is_also_the_unknown_token_is_accepted_alike(metric, tiny_gpt2_dir):
    """SmolLM2's <|endoftext|> is also its UNK token: a vocabulary token all the same, accepted by
    both causal metrics as the id the vocabulary gives it (the Shannon score refused its own default)."""
    from nlgmetrics.core.signature import parse_signature
    from nlgmetrics.core.tokens import START_TOKEN_VOCABULARY_RULE
    from nlgmetrics.engine import load_lm
    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    tokenizer = load_lm(tiny_gpt2_dir, "causal").tokenizer
    assert tokenizer.unk_token == "<|endoftext|>"  # the case at hand
    eot = tokenizer.get_vocab()["<|endoftext|>"]
    run = shannon_score if metric == "shannon_score" else fflm
    by_string = run(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, start_token="<|endoftext|>", progress=False)
    by_id = run(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, start_token=eot, progress=False)
    assert by_string.scores == by_id.scores
    assert parse_signature(by_string.signature)["start_token"] == str(eot)
    with pytest.raises(ValueError, match=r"start_token='<nope>' is not a single token of this tokenizer") as caught:
        run(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, start_token="<nope>", progress=False)
    assert caught.value.refusal is START_TOKEN_VOCABULARY_RULE


@pytest.mark.parametrize("metric", ["infolm", "blanc", "shannon_score", "fflm"])
def test_token_budget_none_is_the_default_budget_for_every_lm_metric(metric, tiny_bert_dir, tiny_gpt2_dir):
    """None means the metric's default budget (the option left out), for every LM metric alike
    (BLANC, the Shannon score and FFLM used to refuse it; InfoLM accepted it)."""
    from nlgmetrics.blanc import blanc_help
    from nlgmetrics.fflm import fflm
    from nlgmetrics.infolm import infolm
    from nlgmetrics.shannon import shannon_score

    calls = {
        "infolm": lambda **o: infolm(PREDS, REFS, model=tiny_bert_dir, progress=False, **o),
        "blanc": lambda **o: blanc_help(SUMMARIES, DOCUMENTS, model=str(tiny_bert_dir), progress=False, **o),
        "shannon_score": lambda **o: shannon_score(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, progress=False, **o),
        "fflm": lambda **o: fflm(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, progress=False, **o),
    }
    none, default = calls[metric](token_budget=None), calls[metric]()
    assert none.scores == default.scores and none.signature == default.signature


# ----------------------------------------------------------------------------------------------
# what we refuse and why: every listed rule is enforced by a check, with that very rule


_BLANC_SHARED_PROBES = [
    dict(variant="tuned"), dict(measure="rel"), dict(gap=0), dict(token_budget=0), dict(batch_size=0),
    dict(max_length=0), dict(max_length=2), dict(splitter="spacy"), dict(splitter=_by_numbers), dict(explain="no"),
    dict(cache_dir=5),
]
#: metric -> (probe options, which fire one rule each); every rule of the metric's list has one.
PROBES = {
    "infolm": [
        dict(information_measure="cosine"), dict(information_measure="alpha_divergence"),
        dict(information_measure="renyi_divergence", alpha="2"), dict(information_measure="renyi_divergence", alpha=0.0),
        dict(information_measure="renyi_divergence", alpha=1e301),
        dict(information_measure="ab_divergence", alpha=1e-7, beta=-3e-7),
        dict(information_measure="alpha_divergence", alpha=50.0, temperature=0.001),
        dict(temperature=0), dict(idf="yes"), dict(model_kind="mlm"), dict(measures=[]), dict(token_budget=0),
        dict(batch_size=0), dict(max_length=0), dict(max_length=2), dict(chunk_size=0), dict(progress="no"),
        dict(cache_dir=5),
    ],
    "shannon_score": [
        dict(token_budget=0), dict(batch_size=0), dict(max_length=0), dict(max_length=2), dict(num_upstream=-1),
        dict(chunk_size=0), dict(explain="no"), dict(splitter="spacy"), dict(splitter=_by_numbers),
        dict(start_token=-1), dict(start_token="<nope>"), dict(cache_dir=5),
    ],
    "fflm": [
        dict(weights=(1, 1, 1)), dict(token_budget=0), dict(batch_size=0), dict(max_length=0), dict(max_length=3),
        dict(chunk_size=0), dict(separator=None), dict(start_token=True), dict(start_token=10**9),
        dict(explain=1), dict(cache_dir=5),
    ],
    "blanc_help": [
        *_BLANC_SHARED_PROBES, dict(filler_token=None), dict(filler_token="notatoken_zz"),
    ],
    "blanc_tune": [
        *_BLANC_SHARED_PROBES, dict(tuning=TuneSettings(gap=0)), dict(finetune_epochs=-1), dict(p_mask=2.0),
        dict(tuning=TuneSettings(top_fully="no")),
        dict(learning_rate=-1), dict(tuning=TuneSettings(freeze_below=10**9)), dict(seed=2**70),
        dict(finetune_epochs=1, learning_rate=1e300), dict(tuning={"batch_size": 2}),
    ],
}


def _probe(metric, options, tiny_bert_dir, tiny_gpt2_dir):
    from nlgmetrics.blanc import blanc
    from nlgmetrics.fflm import fflm
    from nlgmetrics.infolm import infolm, infolm_multi
    from nlgmetrics.shannon import shannon_score

    options = dict(options, progress=options.get("progress", False))
    if metric == "infolm":
        if "measures" in options:
            return infolm_multi(PREDS, REFS, options.pop("measures"), model=tiny_bert_dir, **options)
        return infolm(["a dog", "the cat"], ["a dog ran", "hello world there"], model=tiny_bert_dir, **options)
    if metric == "shannon_score":
        return shannon_score(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, **options)
    if metric == "fflm":
        return fflm(SUMMARIES, DOCUMENTS, model=tiny_gpt2_dir, **options)
    variant = options.pop("variant", "help" if metric == "blanc_help" else "tune")
    return blanc(SUMMARIES, DOCUMENTS, variant=variant, model=str(tiny_bert_dir), **options)


def _rules_and_sentences(metric):
    import nlgmetrics.blanc
    import nlgmetrics.fflm
    import nlgmetrics.infolm
    import nlgmetrics.shannon

    if metric.startswith("blanc_"):
        variant = metric.removeprefix("blanc_")
        return nlgmetrics.blanc.RULES[variant], nlgmetrics.blanc.refusals(variant)
    package = {"infolm": nlgmetrics.infolm, "shannon_score": nlgmetrics.shannon, "fflm": nlgmetrics.fflm}[metric]
    return package.RULES, package.refusals()


@pytest.mark.parametrize("metric", sorted(PROBES))
def test_every_listed_rule_is_enforced_by_a_check(metric, tiny_bert_dir, tiny_gpt2_dir):
    rules, sentences = _rules_and_sentences(metric)
    fired = []
    for options in PROBES[metric]:
        with pytest.raises(ValueError) as caught:
            _probe(metric, options, tiny_bert_dir, tiny_gpt2_dir)
        assert isinstance(caught.value, OptionError), (options, caught.value)
        assert caught.value.refusal in rules, (options, caught.value.refusal)
        fired.append(caught.value.refusal)
    assert set(fired) == set(rules), [r.refused for r in set(rules) - set(fired)]
    # The card's list: one plain sentence per rule, saying what, why and when.
    assert sentences == [rule.sentence() for rule in dict.fromkeys(rules)]
    for sentence in sentences:
        assert sentence.startswith("Refused: ") and ", because " in sentence and sentence.endswith(".")
        assert "; checked " in sentence
