"""One contract for every metric: the library call, the ``evaluate`` module and the command line
give the same numbers and the same signature, and every result says what its columns mean.

These are the harness's checks, run on every metric the registry lists and on the test-only toy
metric (registered with one registry line, tests/support/harness.py): what each check reads comes from the
metric's protocol or from the few facts declared in tests/support/harness.py, so that a new metric gets
them by being registered.

For each metric, on the same inputs and options (the LM metrics on the tiny fixture models of
tests/conftest.py):

- the library function, called directly (candidate first, ``references=`` or ``sources=``);
- ``evaluate.load("metrics/<name>")`` from the repository root, whose output follows the one rule
  of :func:`nlgmetrics.apps.evaluate_adapter.evaluate_output` (numbers; per-example lists with
  ``use_aggregator=False``; the signature with ``return_signature=True``);
- ``nlgmetrics score ... --json``, i.e. the metric's protocol's ``run``;

must agree on the main score, every per-example column and the signature. Then: every result class
declares direction and range for every column it returns (and the values respect the range), every
module's output has the same key layout, and the registry is a list of protocols (what each metric
is), with one way of calling them all.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import os
from pathlib import Path
from typing import ClassVar

import pytest

from nlgmetrics import registry
from nlgmetrics.core import protocol as protocol_module
from nlgmetrics.core.protocol import FROM_LIBRARY, MetricProtocol, Option
from nlgmetrics.core.result import Column, MetricResult
from nlgmetrics.registry import get_protocol, metric_names
from tests.support import harness
from tests.support.harness import (
    PREDICTIONS,
    REPO_ROOT,
    TEST_ONLY_METRICS,
    harness_metric_names,
    library_function,
    model_fixture,
    module_column_key,
    module_folder,
    module_main_key,
    module_options,
    option_text,
    options_that_change_the_number,
    options_to_compare,
    registering_test_metrics,
    second_input,
    write_cli_inputs,
)

METRICS = harness_metric_names()


def _lm_slow(names: list[str]) -> list:
    """``names`` as pytest params, the LM metrics marked slow (their models make them integration
    tests; the others are cheap enough for the unit part)."""
    with registering_test_metrics():
        return [pytest.param(name, marks=pytest.mark.slow) if get_protocol(name).uses_model else name
                for name in names]


SLOW_LM = _lm_slow(METRICS)


@pytest.fixture(scope="module", autouse=True)
def _test_metrics_registered():
    with registering_test_metrics():
        yield


@pytest.fixture(scope="module")
def model_options(request):
    """name -> {"model": path, "device": "cpu"} for an LM metric (its fixture built on demand), {}
    for the others."""
    def options(name: str) -> dict:
        fixture = model_fixture(name)
        if fixture is None:
            return {}
        return {"model": str(request.getfixturevalue(fixture)), "device": "cpu"}
    return options


def _progress_off(name: str) -> dict:
    """``progress=False`` where the library draws a bar (it takes the option)."""
    return {"progress": False} if "progress" in get_protocol(name).accepted_options() else {}


@pytest.fixture(scope="module")
def library_results(model_options):
    """The library's result per metric (with the options that change it), computed once."""
    cache: dict[str, MetricResult] = {}

    def result(name: str) -> MetricResult:
        if name not in cache:
            second, others = second_input(name)
            kwargs = {**options_to_compare(name), **model_options(name), **_progress_off(name)}
            cache[name] = library_function(name)(PREDICTIONS, **{second: others}, **kwargs)
        return cache[name]
    return result


@pytest.fixture(scope="module")
def module_outputs(model_options, tmp_path_factory):
    """``evaluate.load(<the module's folder>).compute(...)`` per metric, from the repository root,
    with the options under the module's names: ``{"default": the default output, "each": with
    use_aggregator=False, return_signature=True, "each_details": also with return_details=True}``
    (every column, also those ROUGE holds back by default to give evaluate's keys only)."""
    import evaluate

    scratch = tmp_path_factory.mktemp("modules")
    cache: dict[str, dict] = {}

    def output(name: str) -> dict:
        if name not in cache:
            second, others = second_input(name)
            folder = module_folder(name, scratch)
            here = os.getcwd()
            os.chdir(REPO_ROOT)
            try:
                module = evaluate.load(str(folder))
            finally:
                os.chdir(here)
            options = module_options(name, options_to_compare(name))
            inputs = {"predictions": PREDICTIONS, second: others, **options, **model_options(name)}
            cache[name] = {"default": module.compute(**inputs),
                           "each": module.compute(**inputs, use_aggregator=False, return_signature=True),
                           "each_details": module.compute(**inputs, use_aggregator=False, return_details=True,
                                                          return_signature=True),
                           "citation": module.citation}
        return cache[name]
    return output


def _run_cli(name: str, folder: Path, model_options: dict) -> dict:
    from nlgmetrics.apps.cli import main

    argv = ["score", *write_cli_inputs(name, folder), "-m", name]
    for key, value in options_to_compare(name).items():
        argv += ["--option", f"{name}.{key}={option_text(value)}"]
    if model_options:
        argv += ["--model", f"{name}={model_options['model']}", "--device", model_options["device"]]
    out = folder / "scores.json"
    assert main([*argv, "--json", str(out), "--quiet", "--no-progress"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))["metrics"][name]


# ------------------------------------------------------------------------------------------------
# the same numbers and signature everywhere


@pytest.mark.parametrize("name", SLOW_LM)
def test_library_module_and_cli_agree(name, library_results, module_outputs, model_options, tmp_path):
    want = library_results(name)
    assert isinstance(want, MetricResult) and want.metric == name
    assert want.signature.startswith(f"{name}|")
    values = [v for column in want.scores.values() for v in column]
    assert len(want) == len(PREDICTIONS) and any(v != 0 for v in values), want.scores  # the test can fail

    # the evaluate module (in its evaluate counterpart's layout where it has one: "score")
    out, each = module_outputs(name)["default"], module_outputs(name)["each_details"]
    assert out[module_main_key(name, want)] == want.main_score
    for column, values in want.scores.items():  # every column, every example, exactly
        assert each[module_column_key(name, column)] == values, column
    assert each["signature"] == want.signature
    assert module_outputs(name)["citation"] == get_protocol(name).citation
    if get_protocol(name).evaluate is None:  # no counterpart: the library's headline numbers
        assert out == want.aggregate()

    # the command line (the protocol's run underneath)
    cli = _run_cli(name, tmp_path, model_options(name))
    assert cli["main"] == want.main
    assert cli["aggregate"][want.main] == want.main_score
    assert cli["aggregate"] == want.aggregate()
    assert cli["scores"] == want.scores
    assert cli["signature"] == want.signature

    # the protocol itself, as the demos and the Trainer hook call it
    second, others = second_input(name)
    kwargs = {**options_to_compare(name), **model_options(name)}
    got = get_protocol(name).run(PREDICTIONS, others, progress=False, **kwargs)
    assert type(got) is type(want) and got.scores == want.scores and got.signature == want.signature


@pytest.mark.parametrize("name", SLOW_LM)
def test_options_reach_the_number(name, library_results, model_options):
    """The declared options change the result (so agreeing above means they were passed on)."""
    options_that_change_the_number(name)  # declared, or a failure saying where to declare them
    second, others = second_input(name)
    kwargs = {**model_options(name), **_progress_off(name)}
    default = library_function(name)(PREDICTIONS, **{second: others}, **kwargs)
    with_options = library_results(name)
    assert default.signature != with_options.signature
    assert default.scores != with_options.scores or default.main != with_options.main


# ------------------------------------------------------------------------------------------------
# what every result and every module output declares


@pytest.mark.parametrize("name", SLOW_LM)
def test_result_declares_direction_and_range_of_every_column(name, library_results):
    result = library_results(name)
    cls = type(result)
    assert cls is get_protocol(name).result_class()  # the class the protocol says the call returns
    assert issubclass(cls, MetricResult) and cls is not MetricResult
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    assert cls.metric == name
    assert get_protocol(name).main in (None, result.main)  # None: the options choose it (ROUGE)
    for column_name, values in result.scores.items():
        column = result.column(column_name)
        assert isinstance(column, Column), column_name
        assert isinstance(column.higher_is_better, bool), column_name
        assert column.minimum <= column.maximum, column_name
        assert column.description.strip(), column_name
        assert all(column.minimum <= v <= column.maximum for v in values), (column_name, values, column)
    assert isinstance(result.higher_is_better, bool)
    assert result.main in result.aggregate()
    assert all(isinstance(v, float) and math.isfinite(v) for v in result.aggregate().values())
    assert result.mean() == {k: math.fsum(v) / len(v) for k, v in result.scores.items()}
    json.dumps(result.to_dict(), allow_nan=False)  # plain, finite values


@pytest.mark.parametrize("name", SLOW_LM)
def test_module_output_has_the_shared_layout(name, library_results, module_outputs):
    """The default output: the main key first, numbers only (a list of numbers only where the
    evaluate counterpart has one). ``use_aggregator=False``: a list per key, one number per
    example, under keys of the default output; ``return_signature=True``: ``signature`` last."""
    out, each = module_outputs(name)["default"], module_outputs(name)["each"]
    result = library_results(name)

    def number(value):
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    assert list(out)[0] == module_main_key(name, result) and isinstance(next(iter(out.values())), float)
    assert all(number(v) or (isinstance(v, list) and all(map(number, v))) for v in out.values()), out
    assert list(each)[-1] == "signature" and isinstance(each["signature"], str) and each["signature"]
    assert set(each) - {"signature"} <= set(out)
    for key, values in each.items():
        if key != "signature":
            assert isinstance(values, list) and len(values) == len(PREDICTIONS) and all(map(number, values)), key


@pytest.mark.parametrize("name", METRICS)
def test_module_passes_options_through(name, tmp_path):
    """Each default is defined once, in the library: a module defines no code of its own (its
    ``_compute`` is the adapter's, which takes ``**options`` and restates no default)."""
    import ast

    from nlgmetrics.apps.evaluate_adapter import ProtocolModule

    source = (module_folder(name, tmp_path) / f"{name}.py").read_text(encoding="utf-8")
    functions = [node.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)]
    assert not functions, f"metrics/{name} defines {functions}; its protocol and the adapter say what it does"
    compute = next(node for node in ast.walk(ast.parse(inspect.getsource(ProtocolModule)))
                   if isinstance(node, ast.FunctionDef) and node.name == "_compute")
    assert compute.args.kwarg is not None, "ProtocolModule._compute takes no **options"
    assert not compute.args.defaults and not compute.args.kw_defaults, "ProtocolModule._compute restates defaults"


def test_an_undeclared_fact_fails_saying_where_to_declare_it(monkeypatch):
    """A registered metric missing from the harness's tables still runs the checks that do not
    need the fact (its front ends are compared on the defaults); a check that needs it fails
    naming the table and the file, never skips."""
    monkeypatch.delitem(harness.MODEL_FIXTURE, "infolm")
    monkeypatch.delitem(harness.OPTIONS_THAT_CHANGE_THE_NUMBER, "bleu")
    with pytest.raises(pytest.fail.Exception,
                       match=r"declare MODEL_FIXTURE for metric 'infolm' in tests/support/harness.py"):
        model_fixture("infolm")
    with pytest.raises(pytest.fail.Exception,
                       match=r"declare OPTIONS_THAT_CHANGE_THE_NUMBER for metric 'bleu' in tests/support/harness.py"):
        options_that_change_the_number("bleu")
    assert options_to_compare("bleu") == {} and model_fixture("bleu") is None  # bleu runs no model


# ------------------------------------------------------------------------------------------------
# the registry: the list of protocols (what each metric is), one way to call them


def test_registry_is_a_list_of_protocols():
    shipped = [name for name in metric_names() if name not in TEST_ONLY_METRICS]  # the toy is registered here
    assert shipped == ["rouge_family", "bleu", "chrf", "ter", "infolm", "shannon_score", "blanc", "fflm"]
    fields = {f.name for f in dataclasses.fields(MetricProtocol)}
    assert fields == {"name", "title", "description", "citation", "second_input", "compute", "options",
                      "model_kinds", "forwards_to", "resampling", "evaluate", "codebase_urls", "reference_urls"}
    for name in metric_names():
        protocol = get_protocol(name)
        # no default restated in a protocol: each is read from the library signature
        assert all(option.default is FROM_LIBRARY for option in protocol.options), name


@pytest.mark.parametrize("name", METRICS)
def test_library_call_follows_the_contract(name):
    """The library function is its package's (imported as a user imports it); candidate first, the
    second input named as the registry says, everything else keyword-only;
    every offered option is a keyword of the call; the return annotation is the result class."""
    spec = get_protocol(name)
    function = library_function(name)
    assert spec.compute.partition(":")[0] == registry.PROTOCOLS[name].removesuffix(".protocol")
    assert protocol_module.resolve(spec.compute) is function
    parameters = list(inspect.signature(function).parameters.values())
    assert [p.name for p in parameters[:2]] == ["predictions", spec.second_input]
    assert all(p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) for p in parameters[2:]), parameters
    accepted = spec.accepted_options()
    for option in spec.options:
        assert option.name in accepted, (name, option.name)
    result_class = spec.result_class()
    assert result_class is not None and issubclass(result_class, MetricResult) and result_class.metric == name
    if spec.uses_model:
        for shared in ("model", "model_tokenizer", "revision", "device", "dtype", "max_length", "token_budget",
                       "batch_size", "progress"):
            assert shared in accepted, (name, shared)


def test_protocol_run_is_one_call_for_every_metric(monkeypatch):
    """``protocol.run(predictions, others, **options)`` is ``function(predictions, <second_input>=others,
    **options)``, returning the result unchanged; ``progress`` only where the function takes it."""
    @dataclasses.dataclass(frozen=True)
    class FakeResult(MetricResult):
        metric: ClassVar[str] = "fake"
        main: ClassVar[str] = "fake"
        columns: ClassVar[dict] = {"fake": Column(True, 0.0, 1.0, "a fake score")}

    calls = []

    def with_progress(predictions, sources, *, alpha: float = 0.5, progress: bool = True) -> FakeResult:
        calls.append((predictions, sources, alpha, progress))
        return FakeResult(scores={"fake": [alpha] * len(predictions)}, signature="fake")

    def without_progress(predictions, references, *, alpha: float = 0.5) -> FakeResult:
        calls.append((predictions, references, alpha))
        return FakeResult(scores={"fake": [alpha] * len(predictions)}, signature="fake")

    functions = {"fake:with": with_progress, "fake:without": without_progress}
    monkeypatch.setattr(protocol_module, "resolve", lambda path: functions[path])
    option = Option("alpha", "float", "a weight")
    free = MetricProtocol("fake", "Fake", "a fake metric", "", "sources", "fake:with", (option,))
    result = free.run(["a", "b"], ["x", "y"], alpha=0.25, progress=False)
    assert calls[-1] == (["a", "b"], ["x", "y"], 0.25, False) and result.scores == {"fake": [0.25, 0.25]}
    based = MetricProtocol("fake", "Fake", "a fake metric", "", "references", "fake:without", (option,))
    based.run(["a"], [["x"]], progress=True)
    assert calls[-1] == (["a"], [["x"]], 0.5)
    assert based.option("alpha").default == 0.5 and based.default("alpha") == 0.5
    with pytest.raises(ValueError, match=r"fake does not take option\(s\) \['beta'\]; valid: \['alpha'\]"):
        based.run(["a"], ["x"], beta=1.0)


def test_forwarded_options_take_the_forwarded_defaults():
    """BLANC's call forwards ``**options`` to its variants: their keywords are its options, with
    their defaults (a tune-only option shows BLANC-tune's default)."""
    from nlgmetrics.blanc import blanc_help, blanc_tune

    spec = get_protocol("blanc")
    help_defaults = inspect.signature(blanc_help).parameters
    tune_defaults = inspect.signature(blanc_tune).parameters
    assert spec.default("gap") == help_defaults["gap"].default
    assert spec.default("finetune_epochs") == tune_defaults["finetune_epochs"].default
    assert spec.default("variant") == inspect.signature(library_function("blanc")).parameters["variant"].default
    assert set(spec.option("variant").allowed()) == {"help", "tune"}
    assert {"finetune_epochs", "gap", "model"} <= spec.accepted_options()
