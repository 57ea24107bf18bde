"""Clear errors across every metric: every bad input is rejected with an error whose *message*
names the problem and the fix. Messages are matched by content, not by exact wording only where
the wording is the point (the argument name, the index, what to pass instead).

Every metric is called through the registry, as the CLI, the demos and the Trainer hook call it
(``tests.support.properties_support.run_metric``: ``get_protocol(name).run(predictions, others, **options)``,
``others`` being references or sources), with the tiny random models of ``tests/conftest.py``;
the model cards and the evaluate modules are checked too. BLANC-tune is the registry's ``blanc``
with ``variant="tune"``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from nlgmetrics.blanc import TuneSettings
from nlgmetrics.registry import get_protocol, metric_names
from tests.support.harness import (
    VARIANT_CASES,
    harness_metric_names,
    input_checked_params,
    model_context,
    model_fixture,
    module_folder,
    registering_test_metrics,
)
from tests.support.properties_support import run_metric

#: The cases: every metric the harness checks, and the variants that are cases of their own
#: (``blanc_tune``: ``blanc`` with ``variant="tune"``).
CASES = [*harness_metric_names(), *VARIANT_CASES]
#: The registry name of each case.
REGISTRY_NAME = {case: VARIANT_CASES[case][0] if case in VARIANT_CASES else case for case in CASES}


def _second_input(case: str) -> str:
    return get_protocol(REGISTRY_NAME[case]).second_input


def _cases(second: str | None = None) -> list:
    """The cases (whose second input is ``second``); a test-only metric that checks no input is an
    expected failure."""
    return input_checked_params([case for case in CASES if second is None or _second_input(case) == second])


def _lm_cases(kinds: tuple[str, ...] | None = None) -> list[str]:
    """The LM cases (whose metric accepts exactly the model ``kinds``: its protocol's ``model_kinds``)."""
    protocols = {case: get_protocol(REGISTRY_NAME[case]) for case in CASES}
    return sorted(case for case, protocol in protocols.items()
                  if protocol.uses_model and (kinds is None or tuple(protocol.model_kinds) == kinds))


with registering_test_metrics():  # the lists read the test-only metrics' protocols too
    ALL = _cases()
    REFERENCE_METRICS = _cases("references")
    SOURCE_METRICS = _cases("sources")
    LM_CASES = _lm_cases()
    MASKED_ONLY = _lm_cases(("masked",))
    CAUSAL_ONLY = _lm_cases(("causal",))
    WITHOUT_MODEL = [name for name in harness_metric_names() if not get_protocol(name).uses_model]


@pytest.fixture(scope="module", autouse=True)
def _test_metrics_registered():
    with registering_test_metrics():
        yield


def _names(case: str) -> tuple[str, str]:
    """The argument names a case reports for its (first, second) positional input."""
    return "predictions", _second_input(case)


@pytest.fixture(scope="module")
def model_for(request):
    """case -> keyword options: the LM metric's fixture model (tests/support/harness.py) and, for a
    variant case, its options."""
    def options(case: str) -> dict:
        name = REGISTRY_NAME[case]
        fixture = model_fixture(name)
        model = {} if fixture is None else {"model": str(request.getfixturevalue(fixture))}
        return model | (VARIANT_CASES[case][1] if case in VARIANT_CASES else {})
    return options


def _run(metric, first, second, model_for, **options):
    """The registry call of case ``metric`` with its model options (``options`` override them)."""
    return run_metric(REGISTRY_NAME[metric], first, second, **(model_for(metric) | options))


def _raises(metric, first, second, pattern, model_for, exc=ValueError, **options):
    with pytest.raises(exc) as info:
        _run(metric, first, second, model_for, **options)
    message = str(info.value)
    assert re.search(pattern, message, flags=re.S), f"{metric}: {message!r} does not match {pattern!r}"
    return message


# ------------------------------------------------------------------------------------------------
# the inputs themselves


@pytest.mark.parametrize("metric", ALL)
def test_mismatched_lengths(metric, model_for) -> None:
    """The message gives both lengths (either wording the metrics use)."""
    second = _names(metric)[1]
    message = _raises(metric, ["a cat", "a dog"], ["a cat sat."],
                      rf"(Mismatched lengths \(predictions=2, {second}=1\)|`{second}` has 1 items but there are 2)",
                      model_for)
    assert re.search(r"(one|exactly one) .*per (example|prediction)", message), message


@pytest.mark.parametrize("metric", ALL)
@pytest.mark.parametrize("which", [0, 1])
def test_none_instead_of_a_list(metric, which, model_for) -> None:
    args = [["a cat"], ["a cat sat."]]
    args[which] = None
    name = _names(metric)[which]
    _raises(metric, *args, rf"`{name}` is None; pass", model_for)


@pytest.mark.parametrize("metric", ALL)
@pytest.mark.parametrize("item", [None, 3, 2.5, b"bytes"], ids=["None", "int", "float", "bytes"])
def test_non_string_item(metric, item, model_for) -> None:
    name = _names(metric)[0]
    _raises(metric, ["a cat", item], ["a cat sat.", "a dog ran."],
            rf"`{name}\[1\]` is {type(item).__name__}.*not a string.*convert every item to str", model_for)


@pytest.mark.parametrize("metric", ALL)
@pytest.mark.parametrize("item", [None, 7], ids=["None", "int"])
def test_non_string_item_in_second_argument(metric, item, model_for) -> None:
    name = _names(metric)[1]
    _raises(metric, ["a cat", "a dog"], ["a cat sat.", item], rf"`{name}\[1\]` is {type(item).__name__}", model_for)


@pytest.mark.parametrize("metric", ALL)
@pytest.mark.parametrize("which", [0, 1])
def test_single_string_instead_of_a_list(metric, which, model_for) -> None:
    args = [["a cat sat"], ["a cat sat."]]
    args[which] = args[which][0]
    name = _names(metric)[which]
    _raises(metric, *args, rf"`{name}` is a single string; pass a list", model_for)


@pytest.mark.parametrize("metric", ALL)
def test_empty_input_list(metric, model_for) -> None:
    _raises(metric, [], [], r"is empty; pass at least one example", model_for)


@pytest.mark.parametrize("metric", ALL)
@pytest.mark.parametrize("which", [0, 1])
def test_lone_surrogate_is_invalid_unicode(metric, which, model_for) -> None:
    """A lone surrogate (``errors="surrogateescape"`` decoding, or a JSON ``"\\udc80"`` escape) is
    not text: every metric says so by position (tokenizers used to fail with a bare TypeError)."""
    args = [["a cat", "fine"], ["A cat sat.", "fine."]]
    args[which][1] = "bad \udc80 bytes."
    name = _names(metric)[which]
    _raises(metric, *args, rf"`{name}\[1\]` contains a lone surrogate '\\udc80' at position 4.*errors='replace'",
            model_for)


@pytest.mark.parametrize("metric", REFERENCE_METRICS)
def test_references_nested_too_deeply(metric, model_for) -> None:
    _raises(metric, ["a cat"], [[["a cat"]]], r"`references\[0\]\[0\]` is list.*nested too deeply", model_for)


@pytest.mark.parametrize("metric", REFERENCE_METRICS)
def test_empty_reference_list(metric, model_for) -> None:
    _raises(metric, ["a cat"], [[]], r"`references\[0\]` is an empty list; give at least one reference", model_for)


@pytest.mark.parametrize("metric", SOURCE_METRICS)
def test_list_of_documents_for_one_summary(metric, model_for) -> None:
    """Reference-free metrics take one source per prediction, not a list (wrong nesting)."""
    _raises(metric, ["a cat"], [["doc one.", "doc two."]], r"`sources\[0\]` is list.*not a string", model_for)


@pytest.mark.parametrize("metric", ALL)
@pytest.mark.parametrize("container", [set, dict.fromkeys], ids=["set", "dict"])
def test_unordered_or_mapping_container(metric, container, model_for) -> None:
    """A set (arbitrary order: rows would be silently misaligned) or a dict (its keys would be
    scored) is not a list of examples."""
    name = _names(metric)[0]
    _raises(metric, container(["a cat", "a dog"]), ["a cat sat.", "a dog ran."],
            rf"`{name}` is a (set|dict).*pass a list", model_for)


# ------------------------------------------------------------------------------------------------
# options

BAD_OPTIONS = {
    "rouge_family": [
        (dict(rouge_types=["rougeX"]), r"Unknown rouge type 'rougeX'; use rouge1"),
        (dict(rouge_types=[]), r"`rouge_types` is empty; pass at least one"),
        (dict(multi_ref="max"), r"Unknown multi_ref='max'; choose one of \['best', 'average'\]"),
        (dict(beta=0), r"beta=0 must be a finite positive number"),
        # n_bootstrap=0 is valid now (per-example columns without an interval)
        (dict(n_bootstrap=-1), r"n_bootstrap=-1 must be a non-negative integer"),
        (dict(confidence=95), r"confidence=95 must be a number strictly between 0 and 1"),
        (dict(seed="x"), r"`seed` must be an integer between 0 and 2\*\*64 - 1 or None, got 'x'"),
        (dict(use_stemmer="no"), r"Unknown use_stemmer='no'; choose False, True"),
        (dict(remove_stopwords="no"), r"`remove_stopwords` must be True or False, got 'no'"),
    ],
    "bleu": [
        (dict(tokenize="spm"), r"Unknown tokenize='spm'; choose one of"),
        (dict(smooth_method="add_k"), r"Unknown smooth_method='add_k'; choose one of .*'add-k'"),
        (dict(max_ngram_order=0), r"max_ngram_order=0 must be a positive integer"),
        (dict(smooth_value=-1), r"smooth_value=-1 must be a non-negative number"),
        (dict(lowercase="yes"), r"`lowercase` must be True or False, got 'yes'"),
        (dict(effective_order="no"), r"`effective_order` must be True or False, got 'no'"),
    ],
    "chrf": [
        (dict(char_order=-1), r"char_order=-1 must be a non-negative integer"),
        (dict(word_order=2.0), r"word_order=2.0 must be a non-negative integer \(0: chrF, 2: chrF\+\+\)"),
        (dict(char_order=0, word_order=0), r"leave no n-grams to compare; use char_order=6"),
        (dict(beta=-1), r"beta=-1 must be a finite number >= 0"),
        (dict(whitespace="yes"), r"`whitespace` must be True or False, got 'yes'"),
        (dict(eps_smoothing=1), r"`eps_smoothing` must be True or False, got 1"),
    ],
    "ter": [
        (dict(normalized="yes"), r"`normalized` must be True or False, got 'yes'"),
        (dict(no_punct=1), r"`no_punct` must be True or False, got 1"),
        (dict(asian_support=None), r"`asian_support` must be True or False, got None"),
        (dict(case_sensitive="no"), r"`case_sensitive` must be True or False, got 'no'"),
    ],
    "infolm": [
        (dict(information_measure="kl"), r"Unknown information_measure='kl'; choose one of \['kl_divergence'"),
        (dict(information_measure="alpha_divergence"), r"needs `alpha`; pass e.g. alpha="),
        (dict(temperature=0), r"`temperature`=0 must be finite and > 0"),
        (dict(model_kind="mlm"), r"Unknown model_kind='mlm'; choose one of"),
        (dict(idf="yes"), r"`idf` must be True, False or a"),
        (dict(max_length=2), r"max_length=2 leaves no room.*pass max_length >= 3"),
        (dict(token_budget=0), r"`token_budget` must be a positive integer"),
        (dict(batch_size=0), r"`batch_size` must be a positive integer or None"),
        (dict(max_length=0), r"`max_length` must be a positive integer or None.*got 0"),
        (dict(dtype="float8"), r"dtype must be one of 'float32', 'bfloat16', 'float16'"),
    ],
    "shannon_score": [
        (dict(splitter="spacy"), r"Unknown sentence splitter 'spacy'; use 'pysbd'"),
        (dict(num_upstream=-1), r"`num_upstream` must be an integer >= 0"),
        (dict(token_budget=0), r"`token_budget` must be a positive integer"),
        (dict(batch_size=0), r"`batch_size` must be a positive integer or None"),
        (dict(max_length=0), r"`max_length` must be a positive integer or None.*got 0"),
        (dict(start_token="<nope>"), r"start_token='<nope>' is not a single token.*pass a token string"),
        (dict(start_token=10**9), r"start_token=1000000000 is outside the vocabulary"),
    ],
    "blanc": [
        (dict(measure="rel"), r"Unknown measure='rel'; choose one of \['relative', 'improve'\]"),
        (dict(gap=0), r"`gap` must be a positive integer"),
        (dict(gap_mask=0), r"`gap_mask` must be a positive integer"),
        (dict(filler_token="notatoken_zz"), r"`filler_token` 'notatoken_zz' is not a token.*pass a single"),
        (dict(max_length=2), r"`max_length` must be at least 3 for BLANC"),
        (dict(token_budget=0), r"`token_budget` must be a positive integer"),
        (dict(batch_size=-1), r"`batch_size` must be a positive integer or None"),
        (dict(variant="tuned"), r"Unknown variant='tuned'; choose one of \['help', 'tune'\]"),
    ],
    "blanc_tune": [
        (dict(measure="rel"), r"Unknown measure='rel'"),
        (dict(p_mask=2.0), r"`p_mask` must be a probability in \[0, 1\]"),
        (dict(learning_rate=-1), r"`learning_rate` must be positive"),
        (dict(finetune_epochs=-1), r"`finetune_epochs` must be a non-negative integer"),
        (dict(tuning=TuneSettings(batch_size=0)), r"`tuning.batch_size` must be a positive integer"),
    ],
    "fflm": [
        (dict(weights=[1, 1, 1]), r"sum to 3; FFLM needs a \+ b \+ d = 1"),
        (dict(weights=[0.5, 0.5]), r"weights has 2 values; pass exactly three"),
        (dict(weights=[float("nan"), 0.5, 0.5]), r"each weight must be a finite number"),
        (dict(max_length=0), r"`max_length` must be a positive integer or None.*got 0"),
        (dict(max_length=3), r"leaves no room for a summary.*use max_length >= "),
        (dict(separator=None), r"separator=None must be a string"),
        (dict(start_token=-1), r"start_token=-1 must be None, a non-negative token id or a token string"),
        (dict(start_token=10**9), r"start_token=1000000000 is outside the vocabulary"),
        (dict(token_budget=0), r"`token_budget` must be a positive integer"),
    ],
}


@pytest.mark.parametrize(
    "metric, options, pattern",
    [(m, o, p) for m, cases in BAD_OPTIONS.items() for o, p in cases],
    ids=[f"{m}-{'-'.join(f'{k}={v!r}'[:30] for k, v in o.items())}" for m, cases in BAD_OPTIONS.items() for o, _ in cases],
)
def test_unknown_or_invalid_option_value(metric, options, pattern, model_for) -> None:
    _raises(metric, ["the cat sat"], ["The cat sat on the mat. It slept."], pattern, model_for, **options)


@pytest.mark.parametrize("metric", ["shannon_score", "blanc"])
def test_punkt_splitter_without_its_data(metric, model_for) -> None:
    """splitter='punkt' offline (no NLTK data): a ValueError naming the download and the offline
    default, raised before the model runs (not nltk's LookupError at the first document)."""
    import nltk

    try:
        nltk.tokenize.sent_tokenize("A test. Another one.")
        pytest.skip("NLTK's punkt data is installed on this machine")
    except LookupError:
        pass
    _raises(metric, ["a cat"], ["A cat sat. It slept."], r"splitter='punkt' needs NLTK's punkt.*splitter='pysbd'",
            model_for, splitter="punkt")


def test_infolm_idf_table_types(tiny_bert_dir) -> None:
    """A user idf table may hold numpy scalars (ids and weights); bools, strings, NaN are rejected."""
    import numpy as np

    plain = run_metric("infolm", ["the cat"], ["the dog"], model=str(tiny_bert_dir), idf={1996: 2.0, 4937: 0.5})
    numpy_table = run_metric("infolm", ["the cat"], ["the dog"], model=str(tiny_bert_dir),
                             idf={np.int64(1996): np.float32(2.0), np.int32(4937): np.float64(0.5)})
    assert numpy_table.scores == plain.scores and numpy_table.signature == plain.signature
    for bad, pattern in (({True: 1.0}, r"keys must be token ids"), ({"the": 1.0}, r"keys must be token ids"),
                         ({1996: float("nan")}, r"weights must be finite numbers >= 0"), ({1996: "1"}, r"finite numbers")):
        with pytest.raises(ValueError, match=pattern):
            run_metric("infolm", ["the cat"], ["the dog"], model=str(tiny_bert_dir), idf=bad)


def _numpy_option_cases():
    import numpy as np

    cases = [("shannon_score", dict(token_budget=np.int64(4096), batch_size=np.int64(4), num_upstream=np.int64(1))),
             ("shannon_score", dict(max_length=np.int64(128), start_token=np.int64(0))),
             ("fflm", dict(weights=np.array([0.25, 0.25, 0.5]), max_length=np.int64(128), batch_size=np.int64(2))),
             ("fflm", dict(start_token=np.int64(0))),
             ("rouge_family", dict(beta=np.float64(1.0))),
             ("bleu", dict(smooth_value=np.float64(0.1), smooth_method="floor")),
             ("rouge_family", dict(seed=np.int64(3))),
             # were rejected with misleading messages ("`gap` must be a positive integer, got
             # np.int64(3)") before the shared checks of nlgmetrics.core.validation
             ("rouge_family", dict(n_bootstrap=np.int64(10))),
             ("rouge_family", dict(confidence=np.float32(0.5))),
             ("rouge_family", dict(rouge_w_weight=np.float32(1.5), rouge_types=["rougeW"])),
             ("bleu", dict(max_ngram_order=np.int64(4))),
             ("bleu", dict(lowercase=np.bool_(True))),
             ("chrf", dict(char_order=np.int64(4), word_order=np.int32(2), beta=np.float32(1.0))),
             ("chrf", dict(whitespace=np.bool_(True))),
             ("ter", dict(normalized=np.bool_(True), case_sensitive=np.bool_(False))),
             ("infolm", dict(token_budget=np.int64(4096))),
             ("infolm", dict(temperature=np.float32(0.5))),
             ("infolm", dict(max_length=np.int64(64))),
             ("blanc", dict(gap=np.int64(3))),
             ("blanc", dict(batch_size=np.int64(4))),
             ("blanc", dict(max_length=np.int64(64))),
             ("blanc_tune", dict(finetune_epochs=np.int64(1))),
             ("blanc_tune", dict(seed=np.int64(3)))]
    return [pytest.param(m, o, id=f"{m}-{'-'.join(o)}") for m, o in cases]


def _everything(metric: str, first: list[str], second: list[str], model_for, **options) -> dict:
    """Everything that depends on the options: per-example scores, the aggregate (ROUGE's bootstrap
    interval, corpus BLEU), the per-example details (BLANC's counts) and the signature."""
    return _run(metric, first, second, model_for, **options).to_dict()


@pytest.mark.parametrize("metric, options", _numpy_option_cases())
def test_numpy_scalar_options_are_accepted(metric, options, model_for) -> None:
    """Options computed with numpy (np.int64 from a config array, np.float32 from a sweep) are
    numbers: accepted like Python ints/floats, with the same numbers and the same signature."""
    plain = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in options.items()}
    args = (["the cat sat"], ["The cat sat on the mat. It slept."])
    got = _everything(metric, *args, model_for, **options)
    assert got == _everything(metric, *args, model_for, **plain)
    assert "np." not in repr(got), got  # plain Python values in the signature


def _numpy_wrong_kind_cases():
    import numpy as np

    return [("bleu", dict(max_ngram_order=np.bool_(True)), r"max_ngram_order=np.True_ must be a positive integer"),
            ("bleu", dict(lowercase=np.int64(1)), r"`lowercase` must be True or False, got np.int64\(1\)"),
            ("rouge_family", dict(rouge_w_weight=np.float64("nan"), rouge_types=["rougeW"]),
             r"rouge_w_weight=np.float64\(nan\) must be a finite number >= 1"),
            ("blanc", dict(gap=np.float64(3.0)), r"`gap` must be a positive integer, got np.float64\(3.0\)"),
            ("blanc", dict(max_length=True), r"`max_length` must be a positive integer or None.*got True"),
            ("shannon_score", dict(max_length=np.float64(64.0)), r"`max_length` must be a positive integer or None"),
            ("fflm", dict(start_token=np.float64(1.0)), r"start_token=np.float64\(1.0\) must be None, a non-negative token id"),
            ("blanc_tune", dict(seed=np.float32(3)), r"`seed` must be an integer")]


@pytest.mark.parametrize("metric, options, pattern", _numpy_wrong_kind_cases())
def test_numpy_scalar_options_of_the_wrong_kind(metric, options, pattern, model_for) -> None:
    """Accepting numpy scalars does not loosen the checks: a bool is not a count, an integer is
    not a switch, a float (even 3.0) is not an integer, NaN is not a weight."""
    _raises(metric, ["the cat sat"], ["The cat sat on the mat. It slept."], pattern, model_for, **options)


@pytest.mark.parametrize("metric", LM_CASES)
def test_max_length_above_the_context_is_capped(metric, model_for, request) -> None:
    """Every LM metric caps a ``max_length`` above the model's context at it (the shared engine
    option; it used to be an error for some metrics): the same numbers and signature as
    ``max_length`` = the context, which the signature records."""
    positions = model_context(request.getfixturevalue(model_fixture(REGISTRY_NAME[metric])))
    first, second = ["the cat sat"], ["The cat sat on the mat. It slept."]
    capped = _run(metric, first, second, model_for, max_length=10**6).to_dict()
    assert capped == _run(metric, first, second, model_for, max_length=positions).to_dict()
    assert capped == _run(metric, first, second, model_for).to_dict()  # the default is the context here
    assert f"|max_length:{positions}|" in capped["signature"], capped["signature"]


# ------------------------------------------------------------------------------------------------
# models


@pytest.mark.parametrize("metric", MASKED_ONLY)
def test_masked_metric_given_a_causal_model(metric, tiny_gpt2_dir, model_for) -> None:
    with pytest.raises(ValueError) as info:
        _run(metric, ["a cat"], ["A cat sat. It slept."], model_for, model=str(tiny_gpt2_dir))
    assert re.search(r"is a causal LM.*needs a masked LM.*Pass a masked model", str(info.value)), info.value


@pytest.mark.parametrize("metric", CAUSAL_ONLY)
def test_causal_metric_given_a_masked_model(metric, tiny_bert_dir) -> None:
    with pytest.raises(ValueError) as info:
        run_metric(metric, ["a cat"], ["A cat sat. It slept."], model=str(tiny_bert_dir))
    assert re.search(r"is a masked LM.*needs a causal LM.*Pass a causal model", str(info.value)), info.value


@pytest.mark.parametrize("kind, fixture", [("masked", "tiny_gpt2_dir"), ("causal", "tiny_bert_dir")])
def test_infolm_forced_kind_mismatch(kind, fixture, request) -> None:
    """InfoLM takes both kinds; forcing the other kind than the checkpoint's is a clear error."""
    path = request.getfixturevalue(fixture)
    with pytest.raises(ValueError, match=rf"needs a {kind} LM.*Pass a {kind} model"):
        run_metric("infolm", ["a cat"], ["a cat"], model=str(path), model_kind=kind)


@pytest.mark.parametrize("metric", LM_CASES)
@pytest.mark.parametrize("model", ["no-such-org/no-such-model-xyz", "/no/such/local/dir"])
def test_model_not_loadable_offline(metric, model, model_for) -> None:
    with pytest.raises(OSError) as info:
        _run(metric, ["a cat"], ["A cat sat. It slept."], model_for, model=model)
    message = str(info.value)
    assert f"Could not load model {model!r}" in message, message
    assert "Pass a local directory" in message and "smollm2-135m" in message, message


@pytest.mark.parametrize("metric", LM_CASES)
@pytest.mark.parametrize("device", ["tpu", "cuda:99"])
def test_unusable_device(metric, device, model_for) -> None:
    """A device that does not exist here is a ValueError naming it and the fix, not a torch
    RuntimeError / AssertionError from deep inside ``.to()``."""
    import torch

    if device.startswith("cuda") and torch.cuda.is_available() and torch.cuda.device_count() > 99:
        pytest.skip("this machine has that GPU")
    _raises(metric, ["a cat"], ["A cat sat. It slept."], rf"device={device!r}.*(cpu|None)", model_for, device=device)


# ------------------------------------------------------------------------------------------------
# the registry (CLI / demos / Trainer hook go through it)


def test_registry_unknown_metric_and_option() -> None:
    with pytest.raises(ValueError, match=r"Unknown metric 'rouge'; choose from \[.*'rouge_family'"):
        get_protocol("rouge")
    with pytest.raises(ValueError, match=r"bleu does not take option\(s\) \['tokenizer'\]; valid: .*'tokenize'"):
        get_protocol("bleu").run(["a"], ["a"], tokenizer="13a")
    with pytest.raises(ValueError, match=r"Option smooth_method='bogus': choose one of"):
        get_protocol("bleu").option("smooth_method").parse("bogus")
    with pytest.raises(ValueError, match=r"blanc option\(s\) \['finetune_epochs'\] apply to variant='tune' only"
                                         r".*pass variant='tune'"):
        get_protocol("blanc").run(["a"], ["a b."], model="unused", finetune_epochs=1)


@pytest.mark.parametrize("name", REFERENCE_METRICS)
def test_registry_passes_input_errors_through(name, model_for) -> None:
    with pytest.raises(ValueError, match=r"`references` has 1 items but there are 2 predictions"):
        get_protocol(name).run(["a", "b"], ["a"], **model_for(name))


# ------------------------------------------------------------------------------------------------
# model cards document their edge cases

#: Every registered metric has a card (metrics/<name>/README.md); the test-only ones have none.
CARDS = metric_names()


def _edge_case_section(text: str) -> str:
    """Text under the first heading that mentions edge cases, up to the next heading of that level
    or higher."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"^(#+)\s.*edge case", line, flags=re.I)
        if match:
            level = len(match.group(1))
            body = []
            for nxt in lines[i + 1:]:
                heading = re.match(r"^(#+)\s", nxt)
                if heading and len(heading.group(1)) <= level:
                    break
                body.append(nxt)
            return "\n".join(body)
    return ""


@pytest.mark.parametrize("name", CARDS)
def test_model_card_documents_edge_cases(name, metrics_dir: Path) -> None:
    """Each card has an edge-case section saying what empty input gives (never NaN) and, for LM
    metrics, what happens to inputs longer than the model's context."""
    card = (metrics_dir / name / "README.md").read_text(encoding="utf-8")
    section = _edge_case_section(card)
    assert len(section.split()) >= 40, f"{name}: no (or an empty) 'Edge cases' section in its card"
    assert re.search(r"\bempty\b", section, flags=re.I), f"{name}: edge cases do not cover empty input"
    if get_protocol(name).uses_model:
        assert re.search(r"long|truncat|window|context", section, flags=re.I), (
            f"{name}: edge cases do not say what happens to inputs longer than the model context")


# ------------------------------------------------------------------------------------------------
# the evaluate modules (metrics/<name>): evaluate checks features before our code runs

MODULES = harness_metric_names()


@pytest.fixture(scope="module")
def load_module(tmp_path_factory):
    import evaluate

    scratch = tmp_path_factory.mktemp("modules")
    loaded = {}

    def load(name):
        if name not in loaded:
            loaded[name] = evaluate.load(str(module_folder(name, scratch)))
        return loaded[name]
    return load


@pytest.mark.parametrize("name", MODULES)
def test_evaluate_module_bad_inputs(name, load_module, model_for) -> None:
    """Mismatched lengths and non-string items are rejected by message through ``compute``;
    messy but valid text scores finite numbers."""
    module = load_module(name)
    second = get_protocol(name).second_input
    kwargs = model_for(name)
    with pytest.raises(ValueError, match=r"Mismatch in the number of predictions \(2\) and " + second):
        module.compute(predictions=["a", "b"], **{second: ["a"]}, **kwargs)
    # nlgmetrics.apps.evaluate_adapter checks every item before evaluate's check of the first row
    with pytest.raises(ValueError, match=r"`predictions\[0\]` is int \(3\), not a string"):
        module.compute(predictions=[3, "a"], **{second: ["a. b.", "c. d."]}, **kwargs)
    with pytest.raises(ValueError, match=r"`(predictions|summaries)\[1\]` is NoneType.*not a string"):
        module.compute(predictions=["a", None], **{second: ["a. b.", "c. d."]}, **kwargs)
    out = module.compute(predictions=["", "\x00 🙂", "שלום"], **{second: [" ", "日本語。", "שלום"]}, **kwargs)
    numbers = [v for v in out.values() if isinstance(v, float)]
    numbers += [x for v in out.values() if isinstance(v, list) for x in v if isinstance(x, float)]
    assert numbers and all(math.isfinite(x) for x in numbers), out


@pytest.mark.parametrize("name", MODULES)
def test_evaluate_module_empty_input(name, load_module, model_for) -> None:
    """Not evaluate's bare IndexError (modules with several feature formats guess the format from
    the first row) but the library's message."""
    with pytest.raises(ValueError, match="`predictions` is empty; pass at least one example"):
        load_module(name).compute(predictions=[], **{get_protocol(name).second_input: []}, **model_for(name))


@pytest.mark.parametrize("name", MODULES)
def test_evaluate_module_rejects_int_after_first_row(name, load_module) -> None:
    """evaluate checks the first row only; datasets would then cast 3 to '3'. Checked before any
    model is loaded (model='unused')."""
    second = get_protocol(name).second_input
    with pytest.raises(ValueError, match=r"`predictions\[1\]` is int \(3\), not a string"):
        load_module(name).compute(predictions=["a", 3], **{second: ["a", "3"]}, model="unused")
    with pytest.raises(ValueError, match=rf"`{second}\[1\]` is float \(1.5\), not a string"):
        load_module(name).compute(predictions=["a", "b"], **{second: ["a", 1.5]}, model="unused")
    single = "reference" if second == "references" else second  # evaluate's ``add`` keywords
    with pytest.raises(ValueError, match=rf"`{single}` is int \(7\), not a string"):
        load_module(name).add(prediction="a", **{single: 7})


@pytest.mark.parametrize("name", WITHOUT_MODEL)
def test_evaluate_module_streaming_inputs_checked(name, load_module) -> None:
    """``add`` and ``add_batch`` check every item too; nested references name both indices; an
    empty batch is the library's message; streamed checked inputs give ``compute``'s result."""
    module = load_module(name)
    with pytest.raises(ValueError, match=r"`references\[0\]\[1\]` is int \(3\), not a string"):
        module.compute(predictions=["a"], references=[["a", 3]])
    with pytest.raises(ValueError, match=r"`prediction` is int \(3\), not a string"):
        module.add(prediction=3, reference="a")
    with pytest.raises(ValueError, match=r"`reference\[0\]` is NoneType"):
        module.add(prediction="a", reference=[None])
    with pytest.raises(ValueError, match=r"`predictions\[2\]` is bytes"):
        module.add_batch(predictions=["a", "b", b"c"], references=["a", "b", "c"])
    module.add_batch(predictions=["the cat sat"], references=[["the cat sat", "a cat"]])
    with pytest.raises(ValueError, match=r"`predictions` is empty; pass at least one example"):
        module.add_batch(predictions=[], references=[])
    module.add(prediction="a dog", reference=["the dog"])
    streamed = module.compute()
    direct = module.compute(predictions=["the cat sat", "a dog"], references=[["the cat sat", "a cat"], ["the dog"]])
    assert streamed == direct
