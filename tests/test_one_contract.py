"""One contract for every metric: the library call, the ``evaluate`` module and the command line
give the same numbers and the same signature, and every result says what its columns mean.

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
from pathlib import Path
from typing import ClassVar

import pytest

from nlgmetrics.core import protocol as protocol_module
from nlgmetrics.core.protocol import FROM_LIBRARY, MetricProtocol, Option
from nlgmetrics.registry import get_protocol, metric_names
from nlgmetrics.core.result import Column, MetricResult

REPO_ROOT = Path(__file__).resolve().parent.parent
METRICS = ("infolm", "shannon_score", "blanc", "fflm", "rouge_family", "bleu", "chrf", "ter")

# Words repeated in a summary and its document: the copy-BERT of BLANC finds help and harm on them.
PREDICTIONS = ["Tomatoes tomatoes tomatoes everywhere tomatoes.", "Technology technology stocks rallied.",
               "Banks banks banks struggled badly banks."]
# ragged: one example has two references
REFERENCES = [["The farmer planted tomatoes near the river.", "Tomatoes need sunshine and water."],
              ["Technology stocks rallied strongly today."],
              ["Banks struggled while investors bought technology shares."]]
SOURCES = [
    "Potatoes potatoes potatoes potatoes grow slowly in winter. The farmer planted tomatoes near the river. "
    "Tomatoes need sunshine and tomatoes need water.",
    "Stocks rallied strongly today. Investors bought technology shares while banks struggled. Technology "
    "companies reported record earnings, and technology investors cheered loudly.",
    "Stocks rallied strongly today. Investors bought technology shares while banks struggled. Technology "
    "companies reported record earnings, and technology investors cheered loudly.",
]

#: Per metric: options that change the number (so that passing them through is tested), as Python
#: values for the library and the module; the command line gets them as METRIC.NAME=TEXT.
OPTIONS = {
    "infolm": {"information_measure": "ab_divergence", "alpha": 1.5, "beta": 0.5, "temperature": 0.5},
    "shannon_score": {"num_upstream": 1},
    "blanc": {"gap": 3},
    "fflm": {"weights": [0.5, 0.2, 0.3]},
    "rouge_family": {"rouge_types": ["rougeL", "rouge2", "rougeSU4"], "use_stemmer": True, "n_bootstrap": 200},
    "bleu": {"tokenize": "intl", "smooth_method": "floor"},
    "chrf": {"word_order": 2, "beta": 1},
    "ter": {"normalized": True, "case_sensitive": True},
}
#: Which fixture model each LM metric runs on (copy-BERT: BLANC counts are not all 0 on it).
MODEL_FIXTURE = {"infolm": "tiny_bert_dir", "shannon_score": "tiny_gpt2_dir", "blanc": "copy_bert_dir",
                 "fflm": "tiny_llama_dir"}
#: The modules that answer to evaluate's sacrebleu, chrf and ter give the headline (the library's
#: main) under "score" and, with use_aggregator=False, this per-example column under "score".
SCORE_COLUMN = {"bleu": "sentence_bleu", "chrf": "sentence_chrf", "ter": "sentence_ter"}


def _module_main(name: str, result: MetricResult) -> str:
    """The key of the headline number in a module's output."""
    return "score" if name in SCORE_COLUMN else result.main


def _library_call(name: str):
    """The library function of ``name``, imported the way a user does (not through the registry)."""
    if name == "infolm":
        from nlgmetrics.infolm import infolm

        return infolm
    if name == "shannon_score":
        from nlgmetrics.shannon import shannon_score

        return shannon_score
    if name == "blanc":
        from nlgmetrics.blanc import blanc

        return blanc
    if name == "fflm":
        from nlgmetrics.fflm import fflm

        return fflm
    if name == "rouge_family":
        from nlgmetrics.rouge import rouge_family

        return rouge_family
    if name == "bleu":
        from nlgmetrics.bleu import bleu

        return bleu
    if name == "chrf":
        from nlgmetrics.chrf import chrf

        return chrf
    if name == "ter":
        from nlgmetrics.ter import ter

        return ter
    raise AssertionError(name)


def _second(name: str) -> tuple[str, list]:
    return ("sources", SOURCES) if name in ("shannon_score", "blanc", "fflm") else ("references", REFERENCES)


def _cli_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


@pytest.fixture(scope="module")
def model_options(request):
    """{metric: {"model": path, "device": "cpu"}} for the LM metrics (fixtures built on demand)."""
    def options(name: str) -> dict:
        if name not in MODEL_FIXTURE:
            return {}
        return {"model": str(request.getfixturevalue(MODEL_FIXTURE[name])), "device": "cpu"}
    return options


@pytest.fixture(scope="module")
def library_results(model_options):
    """The library's result per metric, computed once for the module."""
    cache: dict[str, MetricResult] = {}

    def result(name: str) -> MetricResult:
        if name not in cache:
            second, others = _second(name)
            kwargs = {**OPTIONS[name], **model_options(name)}
            if name in MODEL_FIXTURE:
                kwargs["progress"] = False
            cache[name] = _library_call(name)(PREDICTIONS, **{second: others}, **kwargs)
        return cache[name]
    return result


@pytest.fixture(scope="module")
def module_outputs(model_options):
    """``evaluate.load("metrics/<name>").compute(...)`` per metric, from the repository root:
    ``{"default": the default output, "each": with use_aggregator=False, return_signature=True}``."""
    import os

    import evaluate

    cache: dict[str, dict] = {}

    def output(name: str) -> dict:
        if name not in cache:
            second, others = _second(name)
            here = os.getcwd()
            os.chdir(REPO_ROOT)
            try:
                module = evaluate.load(f"metrics/{name}")
            finally:
                os.chdir(here)
            inputs = {"predictions": PREDICTIONS, second: others, **OPTIONS[name], **model_options(name)}
            cache[name] = {"default": module.compute(**inputs),
                           "each": module.compute(**inputs, use_aggregator=False, return_signature=True)}
        return cache[name]
    return output


def _run_cli(name: str, folder: Path, model_options: dict) -> dict:
    from nlgmetrics.apps.cli import main

    predictions = folder / "predictions.txt"
    predictions.write_text("".join(f"{p}\n" for p in PREDICTIONS), encoding="utf-8")
    second, others = _second(name)
    if second == "sources":
        path = folder / "sources.txt"
        path.write_text("".join(f"{s}\n" for s in others), encoding="utf-8")
        inputs = ["-s", str(path)]
    else:  # several references per example: a JSON Lines column of lists
        path = folder / "references.jsonl"
        path.write_text("".join(json.dumps({"refs": r}) + "\n" for r in others), encoding="utf-8")
        inputs = ["-r", str(path), "--reference-column", "refs"]
    argv = ["score", "-p", str(predictions), *inputs, "-m", name]
    for key, value in OPTIONS[name].items():
        argv += ["--option", f"{name}.{key}={_cli_text(value)}"]
    if model_options:
        argv += ["--model", f"{name}={model_options['model']}", "--device", model_options["device"]]
    out = folder / "scores.json"
    assert main([*argv, "--json", str(out), "--quiet", "--no-progress"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))["metrics"][name]


# ------------------------------------------------------------------------------------------------
# the same numbers and signature everywhere


@pytest.mark.slow
@pytest.mark.parametrize("name", METRICS)
def test_library_module_and_cli_agree(name, library_results, module_outputs, model_options, tmp_path):
    want = library_results(name)
    assert isinstance(want, MetricResult) and want.metric == name
    assert want.signature.startswith(f"{name}|")
    values = [v for column in want.scores.values() for v in column]
    assert len(want) == len(PREDICTIONS) and any(v != 0 for v in values), want.scores  # the test can fail

    # the evaluate module (the sacrebleu family in its evaluate counterpart's layout: "score")
    out, each = module_outputs(name)["default"], module_outputs(name)["each"]
    assert out[_module_main(name, want)] == want.main_score
    for column, values in want.scores.items():  # every column, every example, exactly
        assert each["score" if column == SCORE_COLUMN.get(name) else column] == values, column
    assert each["signature"] == want.signature
    if name not in SCORE_COLUMN:
        assert out == want.aggregate()

    # the command line (the protocol's run underneath)
    cli = _run_cli(name, tmp_path, model_options(name))
    assert cli["main"] == want.main
    assert cli["aggregate"][want.main] == want.main_score
    assert cli["aggregate"] == want.aggregate()
    assert cli["scores"] == want.scores
    assert cli["signature"] == want.signature

    # the protocol itself, as the demos and the Trainer hook call it
    second, others = _second(name)
    kwargs = {**OPTIONS[name], **model_options(name)}
    got = get_protocol(name).run(PREDICTIONS, others, progress=False, **kwargs)
    assert type(got) is type(want) and got.scores == want.scores and got.signature == want.signature


@pytest.mark.slow
@pytest.mark.parametrize("name", METRICS)
def test_options_reach_the_number(name, library_results, model_options):
    """The options of OPTIONS change the result (so agreeing above means they were passed on)."""
    second, others = _second(name)
    kwargs = dict(model_options(name))
    if name in MODEL_FIXTURE:
        kwargs["progress"] = False
    default = _library_call(name)(PREDICTIONS, **{second: others}, **kwargs)
    with_options = library_results(name)
    assert default.signature != with_options.signature
    assert default.scores != with_options.scores or default.main != with_options.main


# ------------------------------------------------------------------------------------------------
# what every result and every module output declares


@pytest.mark.slow
@pytest.mark.parametrize("name", METRICS)
def test_result_declares_direction_and_range_of_every_column(name, library_results):
    result = library_results(name)
    cls = type(result)
    assert issubclass(cls, MetricResult) and cls is not MetricResult
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    assert cls.metric == name
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


@pytest.mark.slow
@pytest.mark.parametrize("name", METRICS)
def test_module_output_has_the_shared_layout(name, library_results, module_outputs):
    """The default output: the main key first, numbers only (a list of numbers only where the
    evaluate counterpart has one). ``use_aggregator=False``: a list per key, one number per
    example, under keys of the default output; ``return_signature=True``: ``signature`` last."""
    out, each = module_outputs(name)["default"], module_outputs(name)["each"]
    result = library_results(name)

    def number(value):
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    assert list(out)[0] == _module_main(name, result) and isinstance(next(iter(out.values())), float)
    assert all(number(v) or (isinstance(v, list) and all(map(number, v))) for v in out.values()), out
    assert list(each)[-1] == "signature" and isinstance(each["signature"], str) and each["signature"]
    assert set(each) - {"signature"} <= set(out)
    for key, values in each.items():
        if key != "signature":
            assert isinstance(values, list) and len(values) == len(PREDICTIONS) and all(map(number, values)), key


@pytest.mark.parametrize("name", METRICS)
def test_module_passes_options_through(name):
    """Each default is defined once, in the library: a module defines no code of its own (its
    ``_compute`` is the adapter's, which takes ``**options`` and restates no default)."""
    import ast

    from nlgmetrics.apps.evaluate_adapter import ProtocolModule

    source = (REPO_ROOT / "metrics" / name / f"{name}.py").read_text(encoding="utf-8")
    functions = [node.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)]
    assert not functions, f"metrics/{name} defines {functions}; its protocol and the adapter say what it does"
    compute = next(node for node in ast.walk(ast.parse(inspect.getsource(ProtocolModule)))
                   if isinstance(node, ast.FunctionDef) and node.name == "_compute")
    assert compute.args.kwarg is not None, "ProtocolModule._compute takes no **options"
    assert not compute.args.defaults and not compute.args.kw_defaults, "ProtocolModule._compute restates defaults"


# ------------------------------------------------------------------------------------------------
# the registry: the list of protocols (what each metric is), one way to call them


def test_registry_is_a_list_of_protocols():
    assert metric_names() == ["rouge_family", "bleu", "chrf", "ter", "infolm", "shannon_score", "blanc", "fflm"]
    fields = {f.name for f in dataclasses.fields(MetricProtocol)}
    assert fields == {"name", "title", "description", "citation", "second_input", "compute", "options",
                      "forwards_to", "resampling", "evaluate", "codebase_urls", "reference_urls"}
    for name in metric_names():
        protocol = get_protocol(name)
        # no default restated in a protocol: each is read from the library signature
        assert all(option.default is FROM_LIBRARY for option in protocol.options), name


@pytest.mark.parametrize("name", METRICS)
def test_library_call_follows_the_contract(name):
    """Candidate first, the second input named as the registry says, everything else keyword-only;
    every offered option is a keyword of the call; the return annotation is the result class."""
    spec = get_protocol(name)
    function = _library_call(name)
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
    assert spec.default("variant") == inspect.signature(_library_call("blanc")).parameters["variant"].default
    assert set(spec.option("variant").allowed()) == {"help", "tune"}
    assert {"finetune_epochs", "gap", "model"} <= spec.accepted_options()
