"""Pieces of the generated-input layer over the public faces (``tests/contract/test_hypothesis_faces.py``):
texts of every shape and Unicode class, each metric's options drawn from its documented ranges,
and one way to score the same batch through the library function and through the ``nlgmetrics``
command line (in-process, as ``tests/unit/apps/test_cli.py`` drives it).

Texts reuse the messy-text categories of :mod:`tests.support.properties_support` (empty, whitespace, one
character, punctuation, CJK, emoji, right-to-left, combining marks, control characters, special
token strings) and add the shapes that matter to sentence- and context-based metrics: long texts
(beyond every tiny model's context) and texts of many lines.

Options: for each metric, every option the command line offers (``spec.options`` of the
registry, since both faces must be able to take it), drawn from the range its docstring states
and its edge values; :data:`OUTSIDE` holds values just outside each range (which must be refused
with a clear error). An option is left out half of the time, so the library defaults are
exercised too.
The evaluate modules' own output switches are drawn by :func:`module_switches`.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from tests.support.harness import library_function, option_text  # noqa: F401 (library_function: re-exported)
from tests.support.properties_support import CATEGORIES

# ------------------------------------------------------------------------------------------------
# settings: derandomized (the same examples every run), no deadline (a shared machine), few examples
# (the whole layer runs in the unit part of the suite within a minute).

_QUIET_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                 HealthCheck.function_scoped_fixture]
TEXT_FACE_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                              suppress_health_check=_QUIET_HEALTH)
#: No shrinking with a model: each call costs about a second, and a shrink runs hundreds; the first
#: failing example is reported as drawn.
_NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]
LM_FACE_SETTINGS = settings(max_examples=5, deadline=None, derandomize=True, database=None,
                            suppress_health_check=_QUIET_HEALTH, phases=_NO_SHRINK)
#: Refusals come before any model runs: cheap, so more of them.
REFUSAL_SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                            suppress_health_check=_QUIET_HEALTH, phases=_NO_SHRINK)

# ------------------------------------------------------------------------------------------------
# texts

_LONG_WORDS = ["alpha", "beta", "gamma", "delta", "cat", "sat", "mat", "dog", "ran", "far"]


def long_words(n_words: int, sentence_every: int = 100) -> str:
    """``n_words`` words with a full stop every ``sentence_every`` words: beyond every tiny model's
    context (128 or 256 positions) while staying a handful of sentences (cheap for the LM metrics)."""
    return " ".join(_LONG_WORDS[i % len(_LONG_WORDS)] + ("." if (i + 1) % sentence_every == 0 else "")
                    for i in range(n_words))


#: Unicode classes and small shapes (one character, empty, whitespace only...).
_ONE_CATEGORY = st.one_of(*CATEGORIES.values())
#: A text of more than 256 words: beyond the tiny models' 128 (BERT) and 256 (GPT-2) positions.
long_text = st.integers(270, 360).map(long_words)
#: 3 to 7 lines (sentences for ROUGE-Lsum, documents for the sentence-based LM metrics).
many_lines = st.lists(_ONE_CATEGORY, min_size=3, max_size=7).map("\n".join)
#: Two or three categories in one text, separated by a space, a line break or nothing.
_mixed = st.lists(_ONE_CATEGORY, min_size=2, max_size=3).flatmap(
    lambda parts: st.sampled_from([" ", "\n", ""]).map(lambda sep: sep.join(parts)))
#: Any text of the layer: one category, long, many lines, or two or three categories mixed.
face_text = st.one_of(_ONE_CATEGORY, long_text, many_lines, _mixed)
#: The same without long texts (where a long text costs minutes: BLANC-tune's summaries).
short_face_text = st.one_of(_ONE_CATEGORY, many_lines, _mixed)
#: A source document: any text of the layer, or (as often) prose: sentences of words with other
#: categories among them, on one line or several, or a long text. The reference-free metrics
#: score a summary against its document sentence by sentence, so most documents have some.
document_text = st.one_of(
    face_text,
    st.lists(st.one_of(CATEGORIES["words"], CATEGORIES["words"], _ONE_CATEGORY), min_size=2, max_size=6).flatmap(
        lambda parts: st.sampled_from([" ", "\n"]).map(lambda sep: sep.join(parts))),
    long_text,
)


@st.composite
def summary_batches(draw: Callable, summary: st.SearchStrategy[str] = face_text,
                    document: st.SearchStrategy[str] = document_text, max_rows: int = 2) -> tuple[list[str], list[str]]:
    """(summaries, documents): 1 to ``max_rows`` pairs, sometimes a summary equal to its document
    or a document shared by two summaries."""
    documents = [draw(document) for _ in range(draw(st.integers(1, max_rows)))]
    summaries = [doc if draw(st.integers(0, 4)) == 0 else draw(summary) for doc in documents]
    if draw(st.booleans()):  # a second summary of the first document
        documents.append(documents[0])
        summaries.append(draw(summary))
    return summaries, documents

# ------------------------------------------------------------------------------------------------
# options, from each metric's documented ranges
#
# Each builder draws options inside the documented ranges (edges included); :data:`OUTSIDE` lists,
# per option, values just outside them, which must be refused. Inside the ranges a metric may
# still refuse a setting for a stated reason (a ROUGE-W weight too large for a text's length, a
# start token not in the vocabulary, a max_length leaving no room for FFLM's separator): the
# property allows a clear error there, and the tests check that the accepted path is walked too.


def _sometimes(options: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """A dict holding each option with probability 1/2 (left out: the library default)."""
    return st.fixed_dictionaries({}, optional=options)


def _floats(low: float, high: float, *edges: float) -> st.SearchStrategy[float]:
    """A float in ``[low, high]`` or one of the documented ``edges`` (extremes such as 1e300)."""
    inside = st.floats(low, high, allow_nan=False, allow_infinity=False)
    return st.one_of(inside, st.sampled_from(list(edges))) if edges else inside


def _engine(minimum_length: int) -> dict[str, st.SearchStrategy[Any]]:
    """The engine options every LM metric offers: ``max_length`` (None, or at least the metric's
    documented minimum; above the context it is capped), ``batch_size`` and ``token_budget``
    (None or positive; the numbers do not depend on them), ``dtype`` (float32 or bfloat16 on CPU)."""
    return {
        "max_length": st.one_of(st.none(), st.integers(minimum_length, 300), st.just(10**6)),
        "batch_size": st.one_of(st.none(), st.integers(1, 4)),
        "token_budget": st.one_of(st.none(), st.integers(256, 4096)),
        "dtype": st.sampled_from([None, "float32", "bfloat16"]),
    }


#: Engine settings every LM metric refuses (max_length, batch_size, token_budget >= 1).
_ENGINE_OUTSIDE = [{"max_length": 0}, {"batch_size": 0}, {"batch_size": -1}, {"token_budget": 0}]

_ROUGE_TYPES = ["rouge1", "rouge2", "rouge4", "rouge100", "rougeL", "rougeLsum", "rougeW", "rougeS*", "rougeS0",
                "rougeS4", "rougeSU*", "rougeSU4"]


def _rouge_options() -> st.SearchStrategy[dict[str, Any]]:
    from nlgmetrics.rouge import AGGREGATIONS, MULTI_REF_MODES, TOKENIZER_NAMES

    def with_a_resample_for_rouge155(options: dict[str, Any]) -> dict[str, Any]:
        # ROUGE-1.5.5's averages are means of resamples: it needs one (0 is refused, an OUTSIDE case)
        if options.get("aggregation") == "rouge155" and options.get("n_bootstrap") == 0:
            return options | {"n_bootstrap": 1}
        return options

    return _sometimes({
        "rouge_types": st.lists(st.sampled_from(_ROUGE_TYPES), min_size=1, max_size=3, unique=True),
        "tokenizer": st.sampled_from(TOKENIZER_NAMES),
        "use_stemmer": st.booleans(),
        "remove_stopwords": st.booleans(),
        "multi_ref": st.sampled_from(MULTI_REF_MODES),
        # any finite beta > 0 (where beta**2 overflows, F is the recall)
        "beta": _floats(1e-3, 100.0, 1e-300, 1.0, 1e300),
        # w >= 1; a weight too large for a text's length is a clear error naming the bound
        "rouge_w_weight": _floats(1.0, 30.0, 1.0, 1.2, 1e300),
        # resamples >= 0 (0: no interval); kept small for time
        "n_bootstrap": st.integers(0, 30),
        "aggregation": st.sampled_from(AGGREGATIONS),
    }).map(with_a_resample_for_rouge155)


def _bleu_options() -> st.SearchStrategy[dict[str, Any]]:
    from nlgmetrics.bleu import SMOOTH_METHODS, TOKENIZER_NAMES

    # the MeCab and SentencePiece (flores) tokenizers need optional packages, and flores a model file
    # (their own tests: test_bleu_mecab.py, test_bleu_spm.py; test_properties_text.py draws flores)
    tokenizers = [name for name in TOKENIZER_NAMES if "mecab" not in name and not name.startswith("flores")]
    return _sometimes({
        "tokenize": st.sampled_from(tokenizers),
        "smooth_method": st.sampled_from(SMOOTH_METHODS),
        "smooth_value": st.one_of(st.none(), _floats(0.0, 10.0, 0.0, 0.1, 1.0)),  # >= 0
        "lowercase": st.booleans(),
        "max_ngram_order": st.integers(1, 8),  # >= 1
        "effective_order": st.booleans(),
    })


def _chrf_options() -> st.SearchStrategy[dict[str, Any]]:
    return _sometimes({
        # orders >= 0, not both 0 (nothing to compare: a clear error)
        "char_order": st.integers(0, 8),
        "word_order": st.integers(0, 3),
        "beta": _floats(0.0, 10.0, 0, 0.0, 1.0, 2.0, 1e300),  # >= 0 (0: precision only, as sacrebleu)
        "lowercase": st.booleans(),
        "whitespace": st.booleans(),
        "eps_smoothing": st.booleans(),
    })


def _ter_options() -> st.SearchStrategy[dict[str, Any]]:
    return _sometimes({name: st.booleans() for name in
                       ("normalized", "no_punct", "asian_support", "case_sensitive", "normalize_references_twice")})


#: alpha / beta of the InfoLM divergences: any float of the documented float64 scale
#: (1e-300 <= |x| <= 1e300), edges included. A measure undefined at some point (alpha 0 or 1...)
#: refuses it with a clear error.
_DIVERGENCE_PARAMETER = _floats(-5.0, 5.0, 0.5, 2.0, -0.5, 1e-300, 1e300, -1e300)


def _infolm_options() -> st.SearchStrategy[dict[str, Any]]:
    from nlgmetrics.core.measure_names import INFORMATION_MEASURES

    return _sometimes({
        "information_measure": st.sampled_from(INFORMATION_MEASURES),
        # any finite T > 0 (extremes: every distribution one-hot, or uniform)
        "temperature": _floats(0.05, 10.0, 0.25, 1e-300, 1e300),
        "idf": st.booleans(),
        "alpha": _DIVERGENCE_PARAMETER,
        "beta": _DIVERGENCE_PARAMETER,
        # model_kind is not drawn: its one valid value is the model's kind, and the faces already
        # run InfoLM with a model of each kind (detected)
        **_engine(minimum_length=1),
    })


#: A start token: None (the default), a token string, a token id of the tiny models' vocabulary
#: (49152 entries). No all-digit strings: the command line reads those as ids.
_START_TOKEN = st.one_of(st.none(), st.sampled_from(["<|endoftext|>", "the", "<s>", "[CLS]"]), st.integers(0, 49151))


def _shannon_options() -> st.SearchStrategy[dict[str, Any]]:
    return _sometimes({
        "num_upstream": st.integers(0, 3),  # >= 0
        # not "punkt": it needs nltk data, absent offline (its refusal has its own test), and
        # every example it takes is one less scored
        "splitter": st.sampled_from([None, "pysbd"]),
        "start_token": _START_TOKEN,
        **_engine(minimum_length=3),  # documented: at least 3
    })


_BLANC_TUNE = {
    "finetune_epochs": st.integers(0, 1),  # >= 0; at most one epoch (time)
    "p_mask": _floats(0.0, 1.0, 0.0, 0.15, 1.0),  # in [0, 1]
    "learning_rate": _floats(1e-7, 1e-2, 5e-5, 1.0),  # > 0
    "seed": st.integers(0, 2**64 - 1),  # torch's seeds
}


@st.composite
def _blanc_options(draw: Callable) -> dict[str, Any]:
    """BLANC-help, or (a third of the time) BLANC-tune with its options and at most one epoch."""
    options = draw(_sometimes({
        "measure": st.sampled_from(["relative", "improve"]),
        "gap": st.integers(1, 8),  # >= 1
        "gap_mask": st.integers(1, 3),  # >= 1
        **_engine(minimum_length=3),  # documented: at least 3
    }))
    variant = draw(st.sampled_from(["help", "help", "tune"]))
    if variant == "tune":
        options |= draw(_sometimes(_BLANC_TUNE))
        options.setdefault("finetune_epochs", 1)  # blanc_tune's default of 10 costs seconds per call
    if variant != "help" or draw(st.booleans()):
        options["variant"] = variant
    return options


@st.composite
def _fflm_weights(draw: Callable) -> list[float]:
    """(a, b, d): three finite numbers in [0, 1] summing to 1."""
    a = draw(st.floats(0, 1))
    b = draw(st.floats(0, 1 - a))
    return [a, b, max(0.0, 1.0 - a - b)]


def _fflm_options() -> st.SearchStrategy[dict[str, Any]]:
    return _sometimes({
        "weights": _fflm_weights(),
        "separator": st.sampled_from(["TL;DR ", "", " ", "\n", "Summary: ", "摘要：", "😀 "]),
        "start_token": _START_TOKEN,
        # at least the start token, the separator and one token: below, a clear error
        **_engine(minimum_length=1),
    })


_BUILDERS: dict[str, Callable[[], st.SearchStrategy[dict[str, Any]]]] = {
    "rouge_family": _rouge_options, "bleu": _bleu_options, "chrf": _chrf_options, "ter": _ter_options,
    "infolm": _infolm_options, "shannon_score": _shannon_options, "blanc": _blanc_options,
    "fflm": _fflm_options,
}

#: Per metric, settings with one value just outside its documented range (each must be refused),
#: as patches of an option dict (with what makes the value matter, e.g. a measure that reads alpha).
OUTSIDE: dict[str, list[dict[str, Any]]] = {
    # n <= MAX_ROUGE_N (100), gap <= MAX_SKIP_GAP; beta > 0; w >= 1; resamples >= 0
    "rouge_family": [{"rouge_types": ["rouge101"]}, {"rouge_types": ["rouge1", "rougeS1000001"]},
                     {"rouge_types": ["rougeS" + "9" * 5000]}, {"beta": 0.0}, {"beta": -1.0},
                     {"rouge_w_weight": 0.5}, {"n_bootstrap": -1}, {"aggregation": "rouge155", "n_bootstrap": 0}],
    "bleu": [{"smooth_value": -1.0}, {"max_ngram_order": 0}, {"max_ngram_order": -1}],
    # orders >= 0; beta in [0, MAX_BETA]
    "chrf": [{"char_order": -1}, {"word_order": -1}, {"beta": -1e-300}, {"beta": -2.0}, {"beta": 1e300}],
    "ter": [],  # switches only
    # T > 0; alpha/beta within 1e-300 <= |x| <= 1e300, where the measure reads them
    "infolm": [{"temperature": 0.0}, {"temperature": -1.0},
               {"information_measure": "alpha_divergence", "alpha": 1e301},
               {"information_measure": "renyi_divergence", "alpha": -1e-301},
               {"information_measure": "beta_divergence", "beta": 1e301},
               {"information_measure": "ab_divergence", "alpha": 0.5, "beta": -1e301}, *_ENGINE_OUTSIDE],
    # (a negative start token id cannot be written on the command line: "-1" is a token string there)
    "shannon_score": [{"num_upstream": -1}, {"start_token": 10**6}, {"max_length": 2}, *_ENGINE_OUTSIDE],
    # gaps >= 1; tune: epochs >= 0, p_mask in [0, 1], learning rate > 0, seed in [0, 2**64 - 1]
    # (a tune option given to BLANC-help is refused as such)
    "blanc": [{"gap": 0}, {"gap_mask": 0}, {"finetune_epochs": -1}, {"p_mask": 1.5}, {"p_mask": -0.1},
              {"learning_rate": 0.0}, {"learning_rate": -1e-5}, {"seed": 2**70}, {"seed": -1}, {"max_length": 2},
              *_ENGINE_OUTSIDE],
    # three weights in [0, 1] summing to 1
    "fflm": [{"weights": [0.5, 0.5, 0.5]}, {"weights": [-0.5, 0.5, 1.0]}, {"weights": [1.0, 0.0]},
             {"start_token": 10**6}, *_ENGINE_OUTSIDE],
}


@st.composite
def metric_options(draw: Callable, metric: str, outside: bool = False) -> dict[str, Any]:
    """Option dicts of ``metric`` (every option its command line offers) inside the documented
    ranges; with ``outside``, patched by one setting of :data:`OUTSIDE`."""
    options = draw(_BUILDERS[metric](), label="inside")
    if outside:
        options = outside_setting(options, draw(st.sampled_from(OUTSIDE[metric]), label="outside"))
    return options


def outside_setting(options: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``options`` patched by one setting of :data:`OUTSIDE`; a BLANC-tune option goes with
    ``variant="tune"`` (and one epoch), so that it is refused for its value, not its variant."""
    options = options | patch
    if set(patch) & set(_BLANC_TUNE):
        options["variant"] = "tune"
    if options.get("variant") == "tune":
        options.setdefault("finetune_epochs", 1)
    return options


def module_switches() -> st.SearchStrategy[dict[str, bool]]:
    """The output switches an evaluate module takes besides its metric's options, each given half
    of the time (left out: its default, False): ``return_details`` (ROUGE's precision, recall and
    bounds; every module takes it, as ``evaluate.combine`` passes it to all) and
    ``return_signature``. ``use_aggregator`` is not drawn: the checks compare both layouts."""
    return _sometimes({"return_details": st.booleans(), "return_signature": st.booleans()})


# ------------------------------------------------------------------------------------------------
# the two faces


@dataclass(frozen=True)
class CliRun:
    """What one ``nlgmetrics score`` run gave: exit status, the JSON file's entry of the metric
    (None when it failed), and what it wrote on stderr."""

    status: int
    payload: dict[str, Any] | None
    stderr: str


def run_cli(metric: str, second_input: str, predictions: Sequence[str], others: Sequence[Any],
            options: dict[str, Any], model: str | None, folder: Path) -> CliRun:
    """``nlgmetrics score`` on one JSONL file holding the batch (``json.dumps`` escapes newlines,
    control characters and every non-ASCII character, so any text survives), the options as
    ``--option METRIC.NAME=VALUE``, the model as ``--model METRIC=DIR``, results to a JSON file."""
    from nlgmetrics.apps.cli import main

    data, out = folder / "batch.jsonl", folder / "scores.json"
    out.unlink(missing_ok=True)
    data.write_text("".join(json.dumps({"prediction": p, "other": o}) + "\n" for p, o in zip(predictions, others)),
                    encoding="utf-8")
    column = "--reference-column" if second_input == "references" else "--source-column"
    argv = ["score", "--data", str(data), "--prediction-column", "prediction", column, "other", "-m", metric,
            "--json", str(out), "--quiet", "--no-progress"]
    if model is not None:
        argv += ["--model", f"{metric}={model}"]
    for name, value in options.items():
        argv += ["--option", f"{metric}.{name}={option_text(value)}"]
    stderr, stdout = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
        status = main(argv)
    payload = json.loads(out.read_text(encoding="utf-8"))["metrics"][metric] if status == 0 else None
    return CliRun(status, payload, stderr.getvalue())


def assert_finite_unsaturated(values: dict[str, float], context: str) -> None:
    """Every number finite and not the largest float (a saturated value is no measurement)."""
    bad = {k: v for k, v in values.items() if not math.isfinite(v) or abs(v) >= sys.float_info.max}
    assert not bad, f"{context}: non-finite or saturated numbers {bad}"
