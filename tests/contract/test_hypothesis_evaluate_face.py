"""Generated inputs (hypothesis) over the third public face of all eight metrics: the ``evaluate``
module (``evaluate.load("metrics/<name>")``), against the library on the same batch and options.

The batches and options are those of :mod:`tests.contract.test_hypothesis_faces` (every text shape and
Unicode class, options from their documented ranges and just outside them), with each option
under the module's name for it (the evaluate counterpart's, where the metric answers to one).
For every batch:

- where the library refuses, the module refuses too, with a clear ``ValueError``/``TypeError``;
- where the library accepts, the module's default output is a flat dict of finite numbers (lists
  of finite numbers only under the counterpart's list keys), whose headline equals the library's
  headline, and ``use_aggregator=False`` gives one finite value per example under every key, whose
  per-example headline equals the library's per-example main column;
- with the output switches drawn too (:func:`tests.support.hypothesis_support.module_switches`): ROUGE's
  output holds evaluate's rouge keys only (one F-measure per requested type, aggregated or per
  example), and with ``return_details=True`` then the library's other numbers (precision and
  recall; aggregated, the bounds) with their values; a module without a counterpart gives the
  library's aggregate, main key first, and its columns; ``return_details`` changes nothing else;
  ``return_signature`` adds the library's signature, last.

And ``evaluate.combine`` of any list of the four modules answering to evaluate's (repeats
included) writes the keys that ``combine`` writes for evaluate's own modules giving the same
outputs (stand-ins named as evaluate's, tests/support/evaluate_counterparts.py): shared keys prefixed with
evaluate's names (``sacrebleu_score``, ``chr_f_score``, ``rouge_signature``...).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import strategies as st

from nlgmetrics.registry import get_protocol
from tests.conftest import METRICS_DIR
from tests.support.evaluate_counterparts import counterpart_stand_in, returning
from tests.support.hypothesis_support import (
    LM_FACE_SETTINGS,
    TEXT_FACE_SETTINGS,
    face_text,
    metric_options,
    module_switches,
)
from tests.support.properties_support import reference_batches
from tests.contract.test_hypothesis_faces import (
    LM_METRICS,
    TEXT_METRICS,
    _assert_clear,
    _draw_batch,
    _library_call,
    _run,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

#: The headline key of each counterpart's output (sacrebleu, chrf, ter: "score").
_SCORE_COUNTERPARTS = {"sacrebleu", "chrf", "ter"}
#: evaluate's rouge types when ``rouge_types`` is not given (its docstring).
_EVALUATE_ROUGE_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]

_MODULES: dict[str, Any] = {}


def _module(metric: str) -> Any:
    """The metric's evaluate module, loaded once per process from its folder."""
    if metric not in _MODULES:
        import evaluate

        _MODULES[metric] = evaluate.load(str(METRICS_DIR / metric))
    return _MODULES[metric]


def _module_options(metric: str, options: dict[str, Any]) -> dict[str, Any]:
    """The library's options under the module's names (its counterpart's, where renamed)."""
    face = get_protocol(metric).evaluate
    to_module = {library: module for module, library in (face.renamed.items() if face else ())}
    return {to_module.get(name, name): value for name, value in options.items()}


def _headline_key(metric: str, result: Any) -> str:
    face = get_protocol(metric).evaluate
    return "score" if face is not None and face.counterpart in _SCORE_COUNTERPARTS else result.main


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _split_signature(output: dict[str, Any], switches: dict[str, bool], result: Any, context: str) -> dict[str, Any]:
    """``output`` without its signature, which is there, last and the library's, exactly when
    asked for."""
    if not switches.get("return_signature"):
        assert "signature" not in output, context
        return output
    assert list(output)[-1] == "signature" and output["signature"] == result.signature, context
    return {key: value for key, value in output.items() if key != "signature"}


def _check_default_keys(metric: str, output: dict[str, Any], result: Any, options: dict[str, Any],
                        details: bool, context: str) -> None:
    """The aggregated output's keys, where they follow from the library's result alone: ROUGE
    gives evaluate's keys, then with ``details`` the rest of the library's aggregate; a module
    without a counterpart gives the library's aggregate, main key first."""
    face = get_protocol(metric).evaluate
    aggregate = result.aggregate()
    if face is not None and face.counterpart == "rouge":
        types = list(options.get("rouge_types") or _EVALUATE_ROUGE_TYPES)
        assert list(result.rouge_types) == types, context
        rest = [key for key in aggregate if key not in types] if details else []
        assert list(output) == types + rest, f"{context}: {list(output)}"
    elif face is None:
        assert list(output) == list(dict.fromkeys([result.main, *aggregate])), f"{context}: {list(output)}"
    else:
        return
    for key, value in output.items():
        assert value == pytest.approx(aggregate[key], rel=1e-12, abs=1e-12), f"{context}: {key}"


def _check_per_example_keys(metric: str, per_example: dict[str, Any], result: Any, details: bool,
                            context: str) -> None:
    """The ``use_aggregator=False`` keys where they follow from the library's result alone: ROUGE
    gives evaluate's keys (each type's F-measure column), then with ``details`` the library's
    other columns; a module without a counterpart gives the library's columns."""
    face = get_protocol(metric).evaluate
    if face is not None and face.counterpart == "rouge":
        types = list(result.rouge_types)
        rest = [key for key in result.scores if key not in types] if details else []
        assert list(per_example) == types + rest, f"{context}: {list(per_example)}"
    elif face is None:
        assert list(per_example) == list(result.scores), f"{context}: {list(per_example)}"
    else:
        return
    for key, values in per_example.items():
        assert values == pytest.approx(list(result.scores[key]), rel=1e-12, abs=1e-12), f"{context}: {key}"


def check_module(metric: str, data: st.DataObject, model: str | None = None, max_rows: int = 3) -> str:
    options = data.draw(metric_options(metric), label="options")
    switches = data.draw(module_switches(), label="switches")
    predictions, others = _draw_batch(data, metric, max_rows, options)
    protocol = get_protocol(metric)
    result, error = _library_call(metric, predictions, others, options, model)
    given = _module_options(metric, options)
    if model is not None:
        given["model"] = model
    if "progress" in protocol.accepted_options():
        given["progress"] = False
    module = _module(metric)
    context = f"{metric} {options}"
    call = {"predictions": predictions, protocol.second_input: others, **given}
    if error is not None:
        with pytest.raises(Exception) as refused:
            module.compute(**call)
        _assert_clear(refused.value, f"{context} (evaluate module)")
        return "refused"
    context = f"{context} {switches}"
    output = _split_signature(module.compute(**call, **switches), switches, result, context)
    for key, value in output.items():
        values = value if isinstance(value, list) else [value]
        assert all(_is_number(v) for v in values), f"{context}: {key}={value!r} is not finite numbers"
    headline = _headline_key(metric, result)
    assert output[headline] == pytest.approx(result.main_score, rel=1e-12, abs=1e-12), context
    _check_default_keys(metric, output, result, options, bool(switches.get("return_details")), context)
    face = protocol.evaluate
    if switches.get("return_details") and face is not None and face.details is None:
        # nothing held back: the same output as without the switch (text metrics: cheap to repeat)
        assert output == module.compute(**call), context
    per_example = _split_signature(module.compute(**call, **switches, use_aggregator=False), switches, result,
                                   context)
    for key, values in per_example.items():
        assert isinstance(values, list) and len(values) == len(predictions), f"{context}: {key} per example"
        assert all(_is_number(v) for v in values), f"{context}: {key} per example {values!r}"
    _check_per_example_keys(metric, per_example, result, bool(switches.get("return_details")), context)
    main_column = result.scores[result.main] if result.main in result.scores else next(iter(result.scores.values()))
    assert per_example[headline] == pytest.approx(list(main_column), rel=1e-12, abs=1e-12), context
    return "accepted"


@pytest.mark.parametrize("metric", TEXT_METRICS)
def test_text_metric_module_face(metric) -> None:
    """ROUGE family, BLEU, chrF, TER: the evaluate module equals the library on generated batches."""
    outcomes = _run(TEXT_FACE_SETTINGS, lambda data: check_module(metric, data))
    assert "accepted" in outcomes, f"{metric}: no generated batch was accepted"


#: The modules answering to evaluate's own (the text metrics): what ``combine`` is checked on.
_COUNTERPART_METRICS = [metric for metric in TEXT_METRICS if get_protocol(metric).evaluate is not None]


def check_combine(data: st.DataObject, cache_dir: Any) -> str:
    """``evaluate.combine`` of drawn modules writes the keys (and values) it writes for stand-ins
    named as evaluate's counterparts that give our modules' outputs on the same batch."""
    import evaluate

    names = data.draw(st.lists(st.sampled_from(_COUNTERPART_METRICS), min_size=1, max_size=4), label="modules")
    predictions, references = data.draw(reference_batches(text=face_text, max_rows=3, max_refs=2), label="batch")
    switches = data.draw(module_switches(), label="switches")
    call = {"predictions": predictions, "references": references, **switches}
    try:
        outputs = [_module(name).compute(**call) for name in names]
    except (ValueError, TypeError) as refused:  # a batch one metric refuses: combine refuses it too
        _assert_clear(refused, f"combine {names}")
        with pytest.raises((ValueError, TypeError)):
            evaluate.combine([_module(name) for name in names]).compute(**call)
        return "refused"
    stand_ins = [counterpart_stand_in(get_protocol(name).evaluate.counterpart, returning([output]), cache_dir)
                 for name, output in zip(names, outputs)]
    theirs = evaluate.combine(stand_ins).compute(predictions=predictions, references=references)
    ours = evaluate.combine([_module(name) for name in names]).compute(**call)
    assert list(ours) == list(theirs), f"combine {names} {switches}"
    assert ours == theirs, f"combine {names} {switches}"
    return "accepted"


def test_combine_writes_evaluates_keys(tmp_path) -> None:
    """Any list of the four modules answering to evaluate's, combined, gives the keys evaluate's
    own modules would give for the same outputs."""
    outcomes = _run(TEXT_FACE_SETTINGS, lambda data: check_combine(data, tmp_path))
    assert "accepted" in outcomes, "no generated batch was accepted"


@pytest.mark.parametrize("metric", LM_METRICS)
def test_lm_metric_module_face(metric, tiny_bert_dir, tiny_gpt2_dir) -> None:
    """InfoLM, Shannon score, BLANC, FFLM on the tiny models: the evaluate module equals the library."""
    models = {"infolm": [tiny_bert_dir, tiny_gpt2_dir], "shannon_score": [tiny_gpt2_dir],
              "blanc": [tiny_bert_dir], "fflm": [tiny_gpt2_dir]}[metric]

    def check(data) -> str:
        model = data.draw(st.sampled_from([str(m) for m in models]), label="model")
        return check_module(metric, data, model=model, max_rows=2)

    outcomes = _run(LM_FACE_SETTINGS, check)
    assert "accepted" in outcomes, f"{metric}: no generated batch was accepted"
