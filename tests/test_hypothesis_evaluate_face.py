"""Generated inputs (hypothesis) over the third public face of all eight metrics: the ``evaluate``
module (``evaluate.load("metrics/<name>")``), against the library on the same batch and options.

The batches and options are those of :mod:`tests.test_hypothesis_faces` (every text shape and
Unicode class, options from their documented ranges and just outside them), with each option
under the module's name for it (the evaluate counterpart's, where the metric answers to one).
For every batch:

- where the library refuses, the module refuses too, with a clear ``ValueError``/``TypeError``;
- where the library accepts, the module's default output is a flat dict of finite numbers (lists
  of finite numbers only under the counterpart's list keys), whose headline equals the library's
  headline, and ``use_aggregator=False`` gives one finite value per example under every key, whose
  per-example headline equals the library's per-example main column.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import strategies as st

from nlgmetrics.registry import get_protocol
from tests.conftest import METRICS_DIR
from tests.hypothesis_support import LM_FACE_SETTINGS, TEXT_FACE_SETTINGS, metric_options
from tests.test_hypothesis_faces import LM_METRICS, TEXT_METRICS, _assert_clear, _draw_batch, _library_call, _run

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

#: The headline key of each counterpart's output (sacrebleu, chrf, ter: "score").
_SCORE_COUNTERPARTS = {"sacrebleu", "chrf", "ter"}

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


def check_module(metric: str, data: st.DataObject, model: str | None = None, max_rows: int = 3) -> str:
    options = data.draw(metric_options(metric), label="options")
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
    output = module.compute(**call)
    for key, value in output.items():
        values = value if isinstance(value, list) else [value]
        assert all(_is_number(v) for v in values), f"{context}: {key}={value!r} is not finite numbers"
    headline = _headline_key(metric, result)
    assert output[headline] == pytest.approx(result.main_score, rel=1e-12, abs=1e-12), context
    per_example = module.compute(**call, use_aggregator=False)
    for key, values in per_example.items():
        assert isinstance(values, list) and len(values) == len(predictions), f"{context}: {key} per example"
        assert all(_is_number(v) for v in values), f"{context}: {key} per example {values!r}"
    main_column = result.scores[result.main] if result.main in result.scores else next(iter(result.scores.values()))
    assert per_example[headline] == pytest.approx(list(main_column), rel=1e-12, abs=1e-12), context
    return "accepted"


@pytest.mark.parametrize("metric", TEXT_METRICS)
def test_text_metric_module_face(metric) -> None:
    """ROUGE family, BLEU, chrF, TER: the evaluate module equals the library on generated batches."""
    outcomes = _run(TEXT_FACE_SETTINGS, lambda data: check_module(metric, data))
    assert "accepted" in outcomes, f"{metric}: no generated batch was accepted"


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
