"""Generated inputs (hypothesis) over two public faces of all eight metrics: the library function
and the ``nlgmetrics score`` command line (driven in-process, as ``tests/unit/apps/test_cli.py`` does).

Inputs (:mod:`tests.support.hypothesis_support`): texts of every shape (empty, whitespace only, one
character, long, many lines) and Unicode class (CJK, emoji, combining marks, right-to-left,
control characters), ragged references, shared documents; every option the command line offers,
drawn from its documented range, its edges, and (one batch in four) values just outside it. The
LM metrics run on the tiny random models of ``tests/conftest.py``, loaded once per process (the
engine's model cache) and shared by every example and both faces.

Properties, for every generated batch:

- the library gives either finite numbers in each column's declared range (and finite,
  unsaturated headline numbers), one per example, or a clear ``ValueError``/``TypeError``;
  never another exception type, never NaN, an infinity or the largest float;
- the command line gives exactly the library's result (the JSON entry equals ``to_dict()``), or,
  where the library refuses, exit status 2 with the library's message as its one error line;
- the library leaves its inputs and options as it found them.

With one option set just outside its documented range (``tests.support.hypothesis_support.OUTSIDE``),
both faces must refuse, with the same message. The tests inside the ranges check that some batch
was accepted, so the scoring path is walked. Derandomized and small
(``tests.support.hypothesis_support``'s settings): the same examples every run, within a minute for the
whole module on two CPU cores.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlgmetrics.apps.cli import one_line
from nlgmetrics.registry import get_protocol, metric_names
from tests.support.hypothesis_support import (
    LM_FACE_SETTINGS,
    OUTSIDE,
    REFUSAL_SETTINGS,
    TEXT_FACE_SETTINGS,
    assert_finite_unsaturated,
    face_text,
    library_function,
    metric_options,
    outside_setting,
    run_cli,
    short_face_text,
    summary_batches,
)
from tests.support.properties_support import assert_all_finite, assert_in_declared_range, reference_batches

# Truncation warnings of the LM metrics and the default ROUGE tokenizer's "no token" warning are
# expected on these texts (each has its own tests).
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

# The registry's metrics, split by whether they run a model (read from each protocol).
TEXT_METRICS = [name for name in metric_names() if not get_protocol(name).uses_model]
LM_METRICS = [name for name in metric_names() if get_protocol(name).uses_model]

#: Messages that say nothing about what to fix: Python's own, from deep inside a library.
_UNCLEAR = re.compile(
    r"^(list index out of range|division by zero|float division by zero|math domain error|"
    r"'?\w+'? object (is not|has no)|unsupported operand|can't multiply|Exceeds the limit|"
    r"invalid literal for int|could not convert|Overflow when unpacking|too many values to unpack|"
    r"not enough values to unpack|index \d+ is out of bounds)", re.IGNORECASE)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """Where the command line reads its batch and writes its JSON (one file each, rewritten)."""
    return tmp_path_factory.mktemp("faces")


@pytest.fixture(scope="module")
def lm_models(tiny_bert_dir, tiny_gpt2_dir) -> dict[str, list[str]]:
    """The tiny models each LM metric takes: one per model kind its protocol declares."""
    by_kind = {"masked": str(tiny_bert_dir), "causal": str(tiny_gpt2_dir)}
    return {name: [by_kind[kind] for kind in get_protocol(name).model_kinds] for name in LM_METRICS}


def _draw_batch(data: st.DataObject, metric: str, max_rows: int, options: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """Predictions and references (ragged, duplicated rows), or summaries and documents."""
    if get_protocol(metric).second_input == "references":
        return data.draw(reference_batches(text=face_text, max_rows=max_rows, max_refs=2), label="batch")
    # BLANC-tune fine-tunes a model copy on every summary: long summaries would cost minutes.
    summary = short_face_text if options.get("variant") == "tune" else face_text
    return data.draw(summary_batches(summary=summary, max_rows=max_rows), label="batch")


def _assert_clear(error: BaseException, context: str) -> None:
    """A refusal the user can act on: ValueError or TypeError, a message of some length that is
    not one of Python's generic ones."""
    assert isinstance(error, (ValueError, TypeError)), (
        f"{context}: {type(error).__name__} ({error}) instead of a ValueError/TypeError")
    message = str(error).strip()
    assert len(message) >= 20 and not _UNCLEAR.search(message), f"{context}: unclear error {message!r}"


def _library_call(metric: str, predictions: list[str], others: list[Any], options: dict[str, Any],
                  model: str | None) -> tuple[Any, BaseException | None]:
    """(result, None) or (None, error) of the library function; asserts the inputs and options
    are left as they were, on either path."""
    spec = get_protocol(metric)
    function = library_function(metric)
    assert function is spec.library_function()  # the registry calls the public function
    kwargs: dict[str, Any] = {spec.second_input: others, **options}
    if model is not None:
        kwargs["model"] = model
    if "progress" in spec.accepted_options():
        kwargs["progress"] = False  # as the command line's --no-progress
    before = copy.deepcopy((predictions, kwargs))
    try:
        return function(predictions, **kwargs), None
    except Exception as error:  # noqa: BLE001 - the property is about which exceptions come out
        return None, error
    finally:
        assert (predictions, kwargs) == before, f"{metric}: the library mutated its inputs or options"


def check_batch(metric: str, predictions: list[str], others: list[Any], options: dict[str, Any], folder: Path,
                *, model: str | None = None, outside: bool = False) -> str:
    """One batch through both faces; returns ``"accepted"`` or ``"refused"``. With ``outside``
    one option is outside its documented range: it must be refused."""
    context = f"{metric} {options}"
    result, error = _library_call(metric, predictions, others, options, model)
    cli = run_cli(metric, get_protocol(metric).second_input, predictions, others, options, model, folder)
    if error is not None:
        _assert_clear(error, context)
        lines = cli.stderr.strip().splitlines()
        assert cli.status == 2 and lines, f"{context}: the library refused ({error}) but the CLI gave {cli}"
        assert lines[-1] == f"nlgmetrics score: error: {one_line(error)}", f"{context}: {lines[-1]!r}"
        return "refused"
    assert not outside, f"{context}: a value outside the documented range was accepted"
    for name, values in result.scores.items():
        assert len(values) == len(predictions), f"{context}: {name} has {len(values)} values"
    assert_all_finite(result.scores, context)
    assert_in_declared_range(result, context)
    assert_finite_unsaturated({f"{k}[{i}]": v for k, vs in result.scores.items() for i, v in enumerate(vs)}, context)
    assert_finite_unsaturated(result.aggregate(), context)
    assert cli.status == 0, f"{context}: the library accepted but the CLI failed: {cli.stderr}"
    assert cli.payload == json.loads(json.dumps(result.to_dict())), f"{context}: CLI and library differ"
    return "accepted"


def check_faces(metric: str, data: st.DataObject, folder: Path, *, model: str | None = None, max_rows: int = 3,
                outside: bool = False) -> str:
    """One generated option set and batch (:func:`check_batch`)."""
    options = data.draw(metric_options(metric, outside=outside), label="options")
    predictions, others = _draw_batch(data, metric, max_rows, options)
    return check_batch(metric, predictions, others, options, folder, model=model, outside=outside)


def _run(settings_: Any, check: Any) -> list[str]:
    """Run ``check(data)`` under ``settings_`` and return the outcomes of the examples it saw."""
    outcomes: list[str] = []

    @settings_
    @given(data=st.data())
    def run(data) -> None:
        outcomes.append(check(data))

    run()
    return outcomes


@pytest.mark.parametrize("metric", TEXT_METRICS)
def test_text_metric_faces(metric, folder) -> None:
    """ROUGE family, BLEU, chrF, TER: library and command line agree on generated batches with
    options inside their documented ranges, and some batch is accepted."""
    outcomes = _run(TEXT_FACE_SETTINGS, lambda data: check_faces(metric, data, folder))
    assert "accepted" in outcomes, f"{metric}: no generated batch was accepted"


@pytest.mark.parametrize("metric", [m for m in TEXT_METRICS if OUTSIDE[m]])
def test_text_metric_refusals(metric, folder) -> None:
    """Every option value outside its documented range is refused, the same way by both faces
    (TER has switches only)."""
    _run(REFUSAL_SETTINGS, lambda data: check_faces(metric, data, folder, outside=True))


def test_spbleu_faces(folder, tmp_path_factory) -> None:
    """BLEU with ``tokenize="flores101"`` / ``"flores200"`` (spBLEU, left out of the drawn options:
    it needs a model file) on tiny SentencePiece models where sacrebleu looks
    (tests/support/spm_support.py): library and command line agree on generated batches and options."""
    from tests.support.spm_support import tiny_flores_models

    def check(data) -> str:
        options = data.draw(metric_options("bleu"), label="options")
        options["tokenize"] = data.draw(st.sampled_from(["flores101", "flores200"]), label="tokenize")
        predictions, others = _draw_batch(data, "bleu", 3, options)
        return check_batch("bleu", predictions, others, options, folder)

    with tiny_flores_models(tmp_path_factory.mktemp("sacrebleu")):
        outcomes = _run(TEXT_FACE_SETTINGS, check)
    assert "accepted" in outcomes, "spBLEU: no generated batch was accepted"


@pytest.mark.parametrize("metric", LM_METRICS)
def test_lm_metric_faces(metric, folder, lm_models) -> None:
    """InfoLM, Shannon score, BLANC (help and tune), FFLM on the tiny models: library and command
    line agree on generated batches with options inside their documented ranges, and some batch
    is accepted."""
    def check(data) -> str:
        model = data.draw(st.sampled_from(lm_models[metric]), label="model")
        return check_faces(metric, data, folder, model=model, max_rows=2)

    outcomes = _run(LM_FACE_SETTINGS, check)
    assert "accepted" in outcomes, f"{metric}: no generated batch was accepted"


@pytest.mark.parametrize("metric", LM_METRICS)
def test_lm_metric_refusals(metric, folder, lm_models) -> None:
    """Every option value outside its documented range is refused, the same way by both faces."""
    def check(data) -> str:
        model = data.draw(st.sampled_from(lm_models[metric]), label="model")
        return check_faces(metric, data, folder, model=model, max_rows=2, outside=True)

    _run(REFUSAL_SETTINGS, check)


#: A small batch of mixed scripts and lines, for the explicit list of refused settings.
_MIXED = (["The cat sat.\n猫が好き 😀", "مرحبا"],
          ["A cat sat on the mat.\n猫が好きです。", "שלום עולם"])


@pytest.mark.parametrize("metric", [m for m in TEXT_METRICS + LM_METRICS if OUTSIDE[m]])
def test_every_outside_setting_is_refused(metric, folder, request) -> None:
    """Each setting of ``OUTSIDE`` (not only those the generated batches happen to draw) is
    refused by both faces with the same message; cheap, as a refusal comes before any scoring."""
    predictions, others = _MIXED
    if get_protocol(metric).second_input == "references":
        others = [[text] for text in others]
    models = request.getfixturevalue("lm_models")[metric] if metric in LM_METRICS else [None]
    for model in models:
        for patch in OUTSIDE[metric]:
            options = outside_setting({}, patch)
            outcome = check_batch(metric, predictions, others, options, folder, model=model, outside=True)
            assert outcome == "refused"
