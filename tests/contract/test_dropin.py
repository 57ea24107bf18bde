"""Drop-in: code written for evaluate's own ``rouge``, ``sacrebleu``, ``chrf`` and ``ter`` modules
runs on ours with only the ``evaluate.load(...)`` path changed, and gets the same numbers.

- Every call that the counterparts document (the examples of their docstrings and model cards in
  huggingface/evaluate, metrics/<name>), run on our module, against the counterpart's numbers
  computed here the way the counterpart computes them (sacrebleu on reference streams; rouge-score
  per example) and against the output the documentation shows. One difference is by design:
  evaluate's ``rouge`` aggregates with rouge-score's ``BootstrapAggregator`` (the median of 1000
  resampled means, which moves with the random state); we report the exact mean, so the oracle is
  the mean of rouge-score's per-example scores.
- Every argument of the counterparts, under its name, one at a time, against the same oracles.
- What the transformers summarization and translation examples and task guides do with the
  result (round or scale every value, read ``result["score"]``, add ``gen_len``), from a real
  ``Seq2SeqTrainer.evaluate()`` on a tiny random T5 whose ``compute_metrics`` calls
  ``evaluate.load(<our module folder>)``; the logged numbers are checked against the oracles.
- The default output of every module (the four LM metrics on the tiny fixture models) is numbers
  only, so that code can round, scale and log it; ROUGE's holds evaluate's keys only, aggregated
  and per example (its precision, recall and bounds come with ``return_details=True``), so that a
  Trainer logs the keys it logs with evaluate's rouge (checked against a stand-in named and
  computing as evaluate's).

The other documented departures, each tested here: mixed reference counts are accepted (evaluate's
sacrebleu, chrf and ter refuse them); with ``smooth_method="add-k"`` BLEU's ``counts`` and
``totals`` are the raw counts (sacrebleu adds k to them in place); TER with ``normalized=True``
normalises references once, as Tercom (sacrebleu twice; ``normalize_references_twice=True``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.evaluate_counterparts import counterpart_stand_in
from tests.support.evaluate_support import reference_lists, sacrebleu_streams

evaluate = pytest.importorskip("evaluate")
sacrebleu = pytest.importorskip("sacrebleu")
rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")

from sacrebleu.metrics import CHRF, TER  # noqa: E402  (after the importorskip above)

#: Our module folder answering to each of evaluate's modules.
FOLDER = {"rouge": "rouge_family", "sacrebleu": "bleu", "chrf": "chrf", "ter": "ter"}
ROUGE_DEFAULT_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def _load(metrics_dir: Path, counterpart: str):
    """``evaluate.load`` of our module for evaluate's ``counterpart``: the only line a user changes."""
    return evaluate.load(str(metrics_dir / FOLDER[counterpart]))


# ------------------------------------------------------------------------------------------------
# Oracles: the counterparts' outputs, computed with sacrebleu / rouge-score as the counterparts do.


class _CallableTokenizer:
    """rouge-score takes an object with a ``tokenize`` method; evaluate's rouge wraps a callable so."""

    def __init__(self, function):
        self.function = function

    def tokenize(self, text):
        return self.function(text)


def rouge_oracle(predictions, references, rouge_types=None, use_aggregator=True, use_stemmer=False,
                 tokenizer=None) -> dict[str, Any]:
    """evaluate's rouge output from rouge-score: the F-measure of each type per example
    (``score_multi`` where the references are lists, ``score`` where they are strings), and with
    ``use_aggregator`` their exact mean (evaluate: a bootstrap median; see the module docstring)."""
    types = list(rouge_types or ROUGE_DEFAULT_TYPES)
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=use_stemmer,
                                      tokenizer=None if tokenizer is None else _CallableTokenizer(tokenizer))
    per_example = [scorer.score_multi(r, p) if isinstance(r, list) else scorer.score(r, p)
                   for p, r in zip(predictions, references)]
    # rouge-score's F is the int 0 when precision and recall are 0 (a float otherwise); evaluate
    # passes it through. Ours is 0.0, a float like the rest of the column: the oracle says float too.
    columns = {t: [float(scores[t].fmeasure) for scores in per_example] for t in types}
    if not use_aggregator:
        return columns
    return {t: math.fsum(values) / len(values) for t, values in columns.items()}


def sacrebleu_family_oracle(counterpart: str, predictions, references, **options) -> dict[str, Any]:
    """evaluate's sacrebleu / chrf / ter output from sacrebleu: the references as streams (stream
    k holds the k-th reference of every prediction; None where a prediction has fewer, which
    sacrebleu skips and evaluate refuses), the counterpart's option names mapped to sacrebleu's."""
    streams = sacrebleu_streams(reference_lists(references))
    if counterpart == "sacrebleu":
        if options.get("tokenize", "given") is None:  # evaluate passes no tokenize then: sacrebleu's default
            del options["tokenize"]
        out = sacrebleu.corpus_bleu(predictions, streams, **options)
        return {"score": out.score, "counts": out.counts, "totals": out.totals, "precisions": out.precisions,
                "bp": out.bp, "sys_len": out.sys_len, "ref_len": out.ref_len}
    if counterpart == "chrf":
        out = CHRF(**options).corpus_score(predictions, streams)
        return {"score": out.score, "char_order": out.char_order, "word_order": out.word_order, "beta": out.beta}
    if counterpart == "ter":
        renamed = {"ignore_punct": "no_punct", "support_zh_ja_chars": "asian_support"}
        out = TER(**{renamed.get(k, k): v for k, v in options.items()}).corpus_score(predictions, streams)
        return {"score": out.score, "num_edits": out.num_edits, "ref_length": out.ref_length}
    raise AssertionError(counterpart)


def oracle(counterpart: str, predictions, references, **options) -> dict[str, Any]:
    if counterpart == "rouge":
        return rouge_oracle(predictions, references, **options)
    return sacrebleu_family_oracle(counterpart, predictions, references, **options)


def assert_counterpart_output(ours: dict[str, Any], want: dict[str, Any]) -> None:
    """The counterpart's keys come first, in its order, with its types (an int stays an int, a list
    a list) and its numbers (floats to 1e-9); our extra keys follow, numbers too."""
    assert list(ours)[:len(want)] == list(want), (list(ours), list(want))
    for key, expected in want.items():
        got = ours[key]
        assert type(got) is type(expected), (key, got, expected)
        if isinstance(expected, list):
            assert [type(g) for g in got] == [type(e) for e in expected], (key, got, expected)
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-9), (key, got, expected)
        else:
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-9), (key, got, expected)
    for key in list(ours)[len(want):]:
        assert _is_number(ours[key]) or (isinstance(ours[key], list) and all(map(_is_number, ours[key]))), key


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# ------------------------------------------------------------------------------------------------
# Every call that evaluate documents for the four modules (docstring examples and model cards of
# huggingface/evaluate metrics/rouge, metrics/sacrebleu, metrics/chrf, metrics/ter), with the
# values the documentation shows (rounded as shown there).


@dataclass(frozen=True)
class DocumentedCall:
    counterpart: str
    predictions: list[str]
    references: list[Any]
    options: dict[str, Any] = field(default_factory=dict)
    shown: dict[str, Any] = field(default_factory=dict)  #: what evaluate's documentation prints

    @property
    def id(self) -> str:
        options = ",".join(f"{k}={v.__name__ if callable(v) else v}" for k, v in self.options.items())
        return f"{self.counterpart}:{self.predictions[0][:12]}:{options}"


def _split(text: str) -> list[str]:
    return text.split()


_TER_PREDICTIONS = ["does this sentence match??", "what about this sentence?",
                    "What did the TER metric user say to the developer?"]
_TER_REFERENCES = [["does this sentence match", "does this sentence match!?!"],
                   ["wHaT aBoUt ThIs SeNtEnCe?", "wHaT aBoUt ThIs SeNtEnCe?"],
                   ["Your jokes are...", "...TERrible"]]
_CHRF_PREDICTIONS = ["The relationship between cats and dogs is not exactly friendly.",
                     "a good bookshop is just a genteel black hole that knows how to read."]
_CHRF_REFERENCES = [["The relationship between dogs and cats is not exactly friendly."],
                    ["A good bookshop is just a genteel Black Hole that knows how to read."]]

DOCUMENTED_CALLS = [
    # rouge: docstring and card
    DocumentedCall("rouge", ["hello there", "general kenobi"], ["hello there", "general kenobi"],
                   shown={"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0, "rougeLsum": 1.0}),
    DocumentedCall("rouge", ["hello there", "general kenobi"], ["hello there", "general kenobi"],
                   {"tokenizer": _split}, shown={"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0, "rougeLsum": 1.0}),
    DocumentedCall("rouge", ["hello there", "general kenobi"], [["hello", "there"], ["general kenobi", "general yoda"]],
                   shown={"rouge1": 0.8333, "rouge2": 0.5, "rougeL": 0.8333, "rougeLsum": 0.8333}),
    # The card prints rouge1 [0.5, 0.0] and 0.25 for these two calls, which is not what rouge-score
    # computes (see test_the_rouge_card_prints_other_numbers_than_rouge_score): only the oracle checks them.
    DocumentedCall("rouge", ["hello goodbye", "ankh morpork"], ["goodbye", "general kenobi"],
                   {"use_aggregator": False}),
    DocumentedCall("rouge", ["hello goodbye", "ankh morpork"], ["goodbye", "general kenobi"],
                   {"use_aggregator": True}),
    # sacrebleu: docstring and card
    DocumentedCall("sacrebleu", ["hello there general kenobi", "foo bar foobar"],
                   [["hello there general kenobi", "hello there !"], ["foo bar foobar", "foo bar foobar"]],
                   shown={"score": 100.0}),
    DocumentedCall("sacrebleu", ["hello there general kenobi", "on our way to ankh morpork"],
                   [["hello there general kenobi", "hello there !"], ["goodbye ankh morpork", "ankh morpork"]],
                   shown={"score": 39.76353643835252, "counts": [6, 4, 2, 1], "totals": [10, 8, 6, 4],
                          "precisions": [60.0, 50.0, 33.333333333333336, 25.0], "bp": 1.0, "sys_len": 10,
                          "ref_len": 7}),
    # chrf: docstring and card
    DocumentedCall("chrf", _CHRF_PREDICTIONS, _CHRF_REFERENCES,
                   shown={"score": 84.64214891738334, "char_order": 6, "word_order": 0, "beta": 2}),
    DocumentedCall("chrf", _CHRF_PREDICTIONS, _CHRF_REFERENCES, {"word_order": 2},
                   shown={"score": 82.87263732906315, "char_order": 6, "word_order": 2, "beta": 2}),
    DocumentedCall("chrf", _CHRF_PREDICTIONS, _CHRF_REFERENCES, {"word_order": 2, "lowercase": True},
                   shown={"score": 92.12853119829202, "char_order": 6, "word_order": 2, "beta": 2}),
    # ter: docstring and card
    DocumentedCall("ter", _TER_PREDICTIONS, _TER_REFERENCES, {"case_sensitive": True},
                   shown={"score": 150.0, "num_edits": 15, "ref_length": 10.0}),
    DocumentedCall("ter", _TER_PREDICTIONS[:2], _TER_REFERENCES[:2], {"case_sensitive": True},
                   shown={"score": 62.5, "num_edits": 5, "ref_length": 8.0}),
    DocumentedCall("ter", _TER_PREDICTIONS[:2], _TER_REFERENCES[:2], {"normalized": True, "case_sensitive": True},
                   shown={"score": 57.14285714285714, "num_edits": 6, "ref_length": 10.5}),
    DocumentedCall("ter", _TER_PREDICTIONS[:2], _TER_REFERENCES[:2], {"ignore_punct": True, "case_sensitive": False},
                   shown={"score": 0.0, "num_edits": 0, "ref_length": 8.0}),
    DocumentedCall("ter", _TER_PREDICTIONS, _TER_REFERENCES, {"ignore_punct": True, "case_sensitive": False},
                   shown={"score": 100.0, "num_edits": 10, "ref_length": 10.0}),
]


@pytest.mark.parametrize("call", DOCUMENTED_CALLS, ids=lambda call: call.id)
def test_every_documented_call_of_the_counterparts(call, metrics_dir):
    ours = _load(metrics_dir, call.counterpart).compute(predictions=call.predictions, references=call.references,
                                                         **call.options)
    want = oracle(call.counterpart, call.predictions, call.references, **call.options)
    assert_counterpart_output(ours, want)
    # what evaluate's documentation prints, to the digits it prints
    for key, shown in call.shown.items():
        assert ours[key] == pytest.approx(shown, abs=1e-4), (key, ours[key], shown)
        assert type(ours[key]) is type(shown), key


def _rouge_calls() -> list[tuple[list[str], list[Any], dict[str, Any]]]:
    """The ROUGE calls of :data:`DOCUMENTED_CALLS`, :data:`ARGUMENTS` and :data:`NO_EFFECT`, as
    (predictions, references, options)."""
    calls = [(c.predictions, c.references, c.options) for c in DOCUMENTED_CALLS if c.counterpart == "rouge"]
    return calls + [(PREDICTIONS, REFERENCES, options) for counterpart, options, *_ in ARGUMENTS + NO_EFFECT
                    if counterpart == "rouge"]


def test_rouge_default_output_has_evaluates_keys_only(metrics_dir):
    """Every ROUGE call of evaluate's documentation and of its arguments gives exactly evaluate's
    keys, in its order (one F-measure per type, aggregated or per example): nothing more for a
    Trainer to log."""
    calls = _rouge_calls()
    assert len(calls) >= 10 and any(options.get("use_aggregator") is False for *_, options in calls), calls
    rouge = _load(metrics_dir, "rouge")
    for predictions, references, options in calls:
        ours = rouge.compute(predictions=predictions, references=references, **options)
        assert list(ours) == list(rouge_oracle(predictions, references, **options)), options


def test_the_documented_key_lists_come_first(metrics_dir):
    """The documented ``print(list(results.keys()))``: the counterpart's keys lead, in its order."""
    rouge = _load(metrics_dir, "rouge").compute(predictions=["hello goodbye", "ankh morpork"],
                                                references=["goodbye", "general kenobi"], use_aggregator=False)
    assert list(rouge)[:4] == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    bleu = _load(metrics_dir, "sacrebleu").compute(predictions=["hello there general kenobi", "foo bar foobar"],
                                                   references=[["hello there general kenobi", "hello there !"],
                                                               ["foo bar foobar", "foo bar foobar"]])
    assert list(bleu)[:7] == ["score", "counts", "totals", "precisions", "bp", "sys_len", "ref_len"]
    assert round(bleu["score"], 1) == 100.0


def test_the_rouge_card_prints_other_numbers_than_rouge_score():
    """evaluate's rouge card shows rouge1 [0.5, 0.0] (0.25 aggregated) for "hello goodbye" against
    "goodbye"; rouge-score, which evaluate's rouge calls, gives F = 2PR / (P + R) with P = 1/2,
    R = 1: 2/3 (by hand). The card's numbers are wrong, so our module is checked against rouge-score."""
    per_example = rouge_oracle(["hello goodbye", "ankh morpork"], ["goodbye", "general kenobi"], use_aggregator=False)
    assert per_example["rouge1"] == pytest.approx([2 / 3, 0.0], abs=1e-12)


def test_the_documented_rouge_1_type_is_refused_as_by_rouge_score(metrics_dir):
    """evaluate's rouge card shows ``rouge_types=['rouge_1']`` giving ``rouge1``; rouge-score (and
    so evaluate's rouge) raises ValueError for that name. We refuse it too, naming the valid types."""
    call = dict(predictions=["hello goodbye", "ankh morpork"], references=["goodbye", "general kenobi"])
    with pytest.raises(ValueError, match="Invalid rouge type: rouge_1"):
        rouge_oracle(**call, rouge_types=["rouge_1"])
    with pytest.raises(ValueError, match=r"Unknown rouge type 'rouge_1'; use rouge1\.\.rouge100"):
        _load(metrics_dir, "rouge").compute(**call, rouge_types=["rouge_1"], use_aggregator=True)


# ------------------------------------------------------------------------------------------------
# Every argument of the counterparts, under its name, with its meaning.

#: Two references per prediction (evaluate's layout); punctuation, case, CJK, apostrophes.
PREDICTIONS = ["The cat sat on the mat.", "a dog barked, LOUDLY!", "猫が座った。", "it's raining cats today",
               "Running dogs ran"]
REFERENCES = [["the cat sat on a mat.", "A cat was sitting on the mat"], ["the dog barked loudly", "Dogs bark."],
              ["猫は座った。", "猫が寝た"], ["It is raining cats and dogs today", "rain today"],
              ["the dogs are running", "a dog runs"]]

#: Short segments without 4-grams: where effective order matters.
SHORT = (["the cat sat", "dog barked loudly", "a b"], [["the cat sat on the mat", "a cat"],
                                                       ["the dog barked", "dogs bark"], ["a c", "b"]])

#: (counterpart, options, corpus): one argument at a time, on a corpus where it changes the numbers.
ARGUMENTS = [
    ("rouge", {"rouge_types": ["rouge1", "rougeLsum"]}), ("rouge", {"use_aggregator": False}),
    ("rouge", {"use_stemmer": True}), ("rouge", {"tokenizer": _split}),
    ("sacrebleu", {"smooth_method": "none"}), ("sacrebleu", {"smooth_method": "floor"}),
    ("sacrebleu", {"smooth_method": "floor", "smooth_value": 0.3}), ("sacrebleu", {"smooth_method": "add-k"}),
    ("sacrebleu", {"smooth_method": "add-k", "smooth_value": 2}), ("sacrebleu", {"lowercase": True}),
    ("sacrebleu", {"tokenize": "intl"}), ("sacrebleu", {"tokenize": "char"}), ("sacrebleu", {"tokenize": "zh"}),
    ("sacrebleu", {"tokenize": "none"}), ("sacrebleu", {"use_effective_order": True}, SHORT),
    ("chrf", {"char_order": 4}), ("chrf", {"word_order": 2}), ("chrf", {"beta": 1}), ("chrf", {"beta": 3}),
    ("chrf", {"lowercase": True}), ("chrf", {"whitespace": True}), ("chrf", {"eps_smoothing": True}),
    ("ter", {"normalized": True}), ("ter", {"ignore_punct": True}),
    ("ter", {"normalized": True, "support_zh_ja_chars": True}), ("ter", {"ignore_punct": True, "support_zh_ja_chars": True}),
    ("ter", {"case_sensitive": True}),
]
#: Arguments whose documented meaning changes no number: None means the default (rouge's
#: rouge_types and tokenizer, sacrebleu's tokenize), and sacrebleu's force only silences a warning.
NO_EFFECT = [("rouge", {"rouge_types": None}), ("rouge", {"tokenizer": None}), ("rouge", {"use_aggregator": True}),
             ("sacrebleu", {"tokenize": None}), ("sacrebleu", {"force": True}), ("sacrebleu", {"force": False})]


def _argument_id(case) -> str:
    return f"{case[0]}-" + ",".join(f"{k}={getattr(v, '__name__', v)}" for k, v in case[1].items())


def raw_add_k_counts(want: dict[str, Any], smooth_value: float | None) -> dict[str, Any]:
    """sacrebleu's add-k smoothing adds k to its counts and totals of orders >= 2 in place, so its
    score object (and evaluate's sacrebleu output) reports them with k added; we report the raw
    counts (integers; every other key is the same). The one documented difference in the keys."""
    k = 1 if smooth_value is None else smooth_value
    return {**want, "counts": [want["counts"][0]] + [c - k for c in want["counts"][1:]],
            "totals": [want["totals"][0]] + [t - k for t in want["totals"][1:]]}


@pytest.mark.parametrize("case", ARGUMENTS, ids=_argument_id)
def test_every_argument_of_the_counterpart_with_its_meaning(case, metrics_dir):
    counterpart, options, (predictions, references) = (*case, (PREDICTIONS, REFERENCES))[:3]
    want = oracle(counterpart, predictions, references, **options)
    if options.get("smooth_method") == "add-k":
        want = raw_add_k_counts(want, options.get("smooth_value"))
    ours = _load(metrics_dir, counterpart).compute(predictions=predictions, references=references, **options)
    assert_counterpart_output(ours, want)
    # on this corpus the argument changes the numbers, so agreeing means it was passed on
    assert want != oracle(counterpart, predictions, references)


@pytest.mark.parametrize("case", NO_EFFECT, ids=_argument_id)
def test_arguments_without_an_effect_are_accepted(case, metrics_dir):
    counterpart, options = case
    want = oracle(counterpart, PREDICTIONS, REFERENCES, **options)
    ours = _load(metrics_dir, counterpart).compute(predictions=PREDICTIONS, references=REFERENCES, **options)
    assert_counterpart_output(ours, want)
    assert want == oracle(counterpart, PREDICTIONS, REFERENCES)


def test_add_k_counts_are_the_raw_counts(metrics_dir):
    """With add-k, sacrebleu's counts and totals hold k more for orders >= 2 than the n-grams
    counted (by hand: "a b c" against "a b d" matches 2 unigrams of 3 and 1 bigram of 2); ours are
    the n-grams counted; score and precisions are sacrebleu's."""
    call = dict(predictions=["a b c"], references=[["a b d"]], smooth_method="add-k")
    ours = _load(metrics_dir, "sacrebleu").compute(**call)
    theirs = sacrebleu_family_oracle("sacrebleu", **call)
    assert ours["counts"] == [2, 1, 0, 0] and ours["totals"] == [3, 2, 1, 0]
    assert theirs["counts"] == [2, 2, 1, 1] and theirs["totals"] == [3, 3, 2, 1]
    assert ours["score"] == pytest.approx(theirs["score"], abs=1e-9) and ours["precisions"] == theirs["precisions"]


def test_the_single_reference_layout_of_the_counterparts(metrics_dir):
    """A plain list of strings (one reference per prediction) is read as the counterparts read it."""
    single = [refs[0] for refs in REFERENCES]
    for counterpart in FOLDER:
        ours = _load(metrics_dir, counterpart).compute(predictions=PREDICTIONS, references=single)
        assert_counterpart_output(ours, oracle(counterpart, PREDICTIONS, single))


@pytest.mark.parametrize("counterpart", list(FOLDER))
def test_mixed_reference_counts_are_accepted(counterpart, metrics_dir):
    """evaluate's sacrebleu, chrf and ter refuse a varying number of references per prediction
    ("requires the same number of references for each prediction"); we accept it, with
    sacrebleu's numbers for streams padded with None (and rouge-score's best reference)."""
    ragged = [REFERENCES[0], REFERENCES[1][0], REFERENCES[2], [REFERENCES[3][0]], REFERENCES[4] + ["dogs run fast"]]
    ours = _load(metrics_dir, counterpart).compute(predictions=PREDICTIONS, references=ragged)
    lists = reference_lists(ragged)
    assert_counterpart_output(ours, oracle(counterpart, PREDICTIONS, lists))


def test_rouge_aggregate_is_the_exact_mean_where_evaluate_takes_a_bootstrap_median(metrics_dir):
    """Why our ROUGE aggregate can differ from evaluate's in the last digits: evaluate reports the
    median of rouge-score's bootstrap resampled means (``mid``), which depends on numpy's random
    state; we report the mean itself (which the bootstrap estimates)."""
    from rouge_score import scoring

    scorer = rouge_scorer.RougeScorer(["rouge1"])
    per_example = [scorer.score(r[0], p) for p, r in zip(PREDICTIONS, REFERENCES)]
    mids = set()
    for seed in range(5):
        np.random.seed(seed)  # rouge-score resamples with numpy's global random state
        aggregator = scoring.BootstrapAggregator()
        for scores in per_example:
            aggregator.add_scores(scores)
        mids.add(aggregator.aggregate()["rouge1"].mid.fmeasure)
    mean = math.fsum(s["rouge1"].fmeasure for s in per_example) / len(per_example)
    ours = _load(metrics_dir, "rouge").compute(predictions=PREDICTIONS, references=[r[0] for r in REFERENCES],
                                               rouge_types=["rouge1"])
    assert ours["rouge1"] == pytest.approx(mean, abs=1e-12)
    assert len(mids) > 1 and all(abs(mid - mean) < 0.1 for mid in mids)  # seed-dependent, near the mean


def test_ter_normalisation_departs_from_evaluate_only_where_documented(metrics_dir):
    """With normalized=True, sacrebleu 2.x (so evaluate's ter) normalises references twice; we
    normalise once, as Tercom (so a text scores 0 against itself). normalize_references_twice=True
    gives sacrebleu's numbers."""
    ter = _load(metrics_dir, "ter")
    call = dict(predictions=["it's."], references=[["it's."]], normalized=True)
    theirs = sacrebleu_family_oracle("ter", **call)
    assert theirs["score"] > 60
    assert ter.compute(**call)["score"] == 0.0
    assert_counterpart_output(ter.compute(**call, normalize_references_twice=True), theirs)


# ------------------------------------------------------------------------------------------------
# What the transformers examples and task guides do with the result, from a real Seq2SeqTrainer.


def _sentences_per_line(text: str) -> str:
    """The summarization example puts one sentence per line (``"\\n".join(nltk.sent_tokenize(t))``)
    for rougeLsum; nltk's punkt data is not available offline, a split after . ! ? stands in."""
    return "\n".join(part for part in re.split(r"(?<=[.!?])\s+", text.strip()) if part)


def summarization_example(metric, tokenizer, seen: list):
    """compute_metrics as in transformers' examples/pytorch/summarization (ROUGE x 100, gen_len)."""

    def compute_metrics(eval_preds):
        preds, labels = eval_preds
        if isinstance(preds, tuple):
            preds = preds[0]
        preds = np.where(preds != -100, preds, tokenizer.pad_token_id)
        decoded_preds = tokenizer.batch_decode(preds, skip_special_tokens=True)
        labels = np.where(labels != -100, labels, tokenizer.pad_token_id)
        decoded_labels = tokenizer.batch_decode(labels, skip_special_tokens=True)
        decoded_preds = [_sentences_per_line(p) for p in decoded_preds]
        decoded_labels = [_sentences_per_line(label) for label in decoded_labels]
        seen.append((decoded_preds, decoded_labels, preds))
        result = metric.compute(predictions=decoded_preds, references=decoded_labels, use_stemmer=True)
        result = {k: round(v * 100, 4) for k, v in result.items()}
        result["gen_len"] = np.mean([np.count_nonzero(pred != tokenizer.pad_token_id) for pred in preds])
        return result

    return compute_metrics


def summarization_task_guide(metric, tokenizer, seen: list):
    """compute_metrics as in transformers' summarization task guide (ROUGE, gen_len, round 4)."""

    def compute_metrics(eval_pred):
        predictions, labels = eval_pred
        decoded_preds = tokenizer.batch_decode(predictions, skip_special_tokens=True)
        labels = np.where(labels != -100, labels, tokenizer.pad_token_id)
        decoded_labels = tokenizer.batch_decode(labels, skip_special_tokens=True)
        seen.append((decoded_preds, decoded_labels, predictions))
        result = metric.compute(predictions=decoded_preds, references=decoded_labels, use_stemmer=True)
        result["gen_len"] = np.mean([np.count_nonzero(pred != tokenizer.pad_token_id) for pred in predictions])
        return {k: round(v, 4) for k, v in result.items()}

    return compute_metrics


def translation_example(metric, tokenizer, seen: list, name: str = "bleu"):
    """compute_metrics as in transformers' examples/pytorch/translation and the translation task
    guide (``{"bleu": result["score"]}``, gen_len, round 4); chrF and TER users read "score" too."""

    def compute_metrics(eval_preds):
        preds, labels = eval_preds
        if isinstance(preds, tuple):
            preds = preds[0]
        preds = np.where(preds != -100, preds, tokenizer.pad_token_id)
        decoded_preds = [p.strip() for p in tokenizer.batch_decode(preds, skip_special_tokens=True)]
        labels = np.where(labels != -100, labels, tokenizer.pad_token_id)
        decoded_labels = [[label.strip()] for label in tokenizer.batch_decode(labels, skip_special_tokens=True)]
        seen.append((decoded_preds, decoded_labels, preds))
        result = metric.compute(predictions=decoded_preds, references=decoded_labels)
        result = {name: result["score"]}
        result["gen_len"] = np.mean([np.count_nonzero(pred != tokenizer.pad_token_id) for pred in preds])
        return {k: round(v, 4) for k, v in result.items()}

    return compute_metrics


SOURCES = ["the cat sat on the mat all afternoon .", "a dog barked at the moon last night .",
           "rain fell on the city for three days .", "the council approved the new bike lanes ."]
GENERATION_MAX_LENGTH = 12


@pytest.fixture(scope="module")
def seq2seq(tmp_path_factory):
    """A tiny random T5 with the offline BERT WordPiece tokenizer, and an eval set whose first two
    labels are the model's own greedy outputs (so that the scores are not all 0)."""
    import datasets
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    from nlgmetrics.testing import load_test_tokenizer

    tokenizer = load_test_tokenizer("bert")
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(tokenizer), d_model=16, d_ff=32, d_kv=8, num_layers=1, num_decoder_layers=1,
                      num_heads=2, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id,
                      decoder_start_token_id=tokenizer.pad_token_id)
    model = T5ForConditionalGeneration(config).eval()
    inputs = tokenizer(SOURCES, padding=True, return_tensors="pt", return_token_type_ids=False)  # T5 takes none
    with torch.no_grad():
        generated = model.generate(**inputs, max_length=GENERATION_MAX_LENGTH, do_sample=False, num_beams=1)
    own = tokenizer.batch_decode(generated, skip_special_tokens=True)
    labels = [own[0], own[1] + " and more words .", "nothing in common here .", "the bike lanes ."]
    rows = {"input_ids": tokenizer(SOURCES)["input_ids"], "labels": tokenizer(labels)["input_ids"]}
    return model, tokenizer, datasets.Dataset.from_dict(rows), tmp_path_factory.mktemp("seq2seq")


def _evaluate_with_trainer(seq2seq, compute_metrics) -> tuple[dict, list]:
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

    model, tokenizer, dataset, output_dir = seq2seq
    args = Seq2SeqTrainingArguments(output_dir=str(output_dir), per_device_eval_batch_size=len(SOURCES),
                                    predict_with_generate=True, generation_max_length=GENERATION_MAX_LENGTH,
                                    report_to=[], use_cpu=True, disable_tqdm=True)
    trainer = Seq2SeqTrainer(model=model, args=args, eval_dataset=dataset, processing_class=tokenizer,
                             data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
                             compute_metrics=compute_metrics)
    metrics = trainer.evaluate()
    return metrics, trainer.state.log_history


def _logged(log_history: list[dict]) -> dict:
    """The last record Trainer logged, without the step it adds."""
    return {key: value for key, value in log_history[-1].items() if key != "step"}


def _gen_len(preds, pad_token_id) -> float:
    return round(float(np.mean([np.count_nonzero(row != pad_token_id) for row in preds])), 4)


@pytest.mark.slow
@pytest.mark.parametrize("example", [summarization_example, summarization_task_guide])
def test_trainer_summarization_compute_metrics_with_rouge_family(example, seq2seq, metrics_dir):
    seen: list = []
    tokenizer = seq2seq[1]
    metrics, log = _evaluate_with_trainer(seq2seq, example(_load(metrics_dir, "rouge"), tokenizer, seen))
    (decoded_preds, decoded_labels, preds), = seen
    want = rouge_oracle(decoded_preds, decoded_labels, use_stemmer=True)
    scale = 100 if example is summarization_example else 1
    for rouge_type, value in want.items():
        assert metrics[f"eval_{rouge_type}"] == round(value * scale, 4), rouge_type
    assert 0 < want["rouge1"] < 1  # two labels are the model's own outputs, two are not
    assert metrics["eval_gen_len"] == _gen_len(preds, tokenizer.pad_token_id) > 0
    assert _logged(log) == metrics  # and Trainer logged that dict
    # the same example with evaluate's rouge (a stand-in named and computing as evaluate's) logs
    # exactly the same keys: 4 ROUGE types and gen_len besides the Trainer's own
    stand_in = counterpart_stand_in(
        "rouge", lambda predictions, references, **options: rouge_oracle(predictions, references, **options),
        seq2seq[3])
    theirs, _ = _evaluate_with_trainer(seq2seq, example(stand_in, tokenizer, []))
    assert sorted(metrics) == sorted(theirs)
    assert {key for key in metrics if key.startswith("eval_rouge")} == {f"eval_{t}" for t in ROUGE_DEFAULT_TYPES}


@pytest.mark.slow
@pytest.mark.parametrize("counterpart", ["sacrebleu", "chrf", "ter"])
def test_trainer_translation_compute_metrics_reads_score(counterpart, seq2seq, metrics_dir):
    seen: list = []
    tokenizer = seq2seq[1]
    name = {"sacrebleu": "bleu", "chrf": "chrf", "ter": "ter"}[counterpart]
    compute_metrics = translation_example(_load(metrics_dir, counterpart), tokenizer, seen, name)
    metrics, log = _evaluate_with_trainer(seq2seq, compute_metrics)
    (decoded_preds, decoded_labels, preds), = seen
    want = sacrebleu_family_oracle(counterpart, decoded_preds, decoded_labels)
    assert metrics[f"eval_{name}"] == round(want["score"], 4)
    assert 0 < want["score"] < (200 if counterpart == "ter" else 100)
    assert metrics["eval_gen_len"] == _gen_len(preds, tokenizer.pad_token_id) > 0
    assert _logged(log) == metrics


# ------------------------------------------------------------------------------------------------
# Every module's default output: numbers only.

ALL_MODULES = ("rouge_family", "bleu", "chrf", "ter", "infolm", "shannon_score", "blanc", "fflm")
#: Where a list is the counterpart's own output (evaluate's sacrebleu).
COUNTERPART_LISTS = {"bleu": {"counts", "totals", "precisions"}}


@pytest.mark.slow
def test_every_module_default_output_is_numbers_only(metrics_dir, tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir):
    predictions = ["the cat sat on the mat", "a dog barked at night"]
    references = [["the cat was on the mat", "a cat sat"], "the dog barked at night"]
    sources = ["The cat sat on the mat all day. It slept.", "A dog barked at night. Nobody came."]
    model = {"infolm": tiny_bert_dir, "shannon_score": tiny_gpt2_dir, "blanc": tiny_bert_dir, "fflm": tiny_llama_dir}
    for name in ALL_MODULES:
        second = {"sources": sources} if name in ("shannon_score", "blanc", "fflm") else {"references": references}
        options = {"model": str(model[name]), "progress": False} if name in model else {}
        out = evaluate.load(str(metrics_dir / name)).compute(predictions=predictions, **second, **options)
        lists = COUNTERPART_LISTS.get(name, set())
        for key, value in out.items():
            if key in lists:
                assert isinstance(value, list) and value and all(map(_is_number, value)), (name, key, value)
            else:
                assert _is_number(value), (name, key, value)
        if not lists:  # the summarization example's scaling and rounding works as it is
            assert {k: round(v * 100, 4) for k, v in out.items()}
