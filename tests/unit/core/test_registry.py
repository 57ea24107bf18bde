"""The registry and the metric protocol.

- Adding a metric is its package (with its ``protocol.py``), its ``metrics/<name>/`` folder and
  one registry line: a toy metric registered that way runs through ``compare``, the Trainer hook
  and the demo here, and through every check of the harness (tests/support/harness.py: the command line,
  its evaluate module, its options, its columns, its input checks), none of which has a line for it.
- No front end names a metric or imports a metric package: they read the protocol.
- What a protocol declares agrees with its library: every option is a keyword of the library
  call, a value just outside a declared range is refused by the library, a declared signature key
  is the key the option changes, and the card cites what the protocol cites.
"""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from nlgmetrics import registry
from nlgmetrics.core.protocol import MODEL_OPTIONS, MetricProtocol, Option
from nlgmetrics.core.signature import parse_signature
from nlgmetrics.registry import get_protocol, metric_names
from tests.support.harness import model_fixture, registering_test_metrics

REPO = Path(__file__).resolve().parents[3]
#: The metrics that run without a model.
TEXT_METRICS = [name for name in metric_names() if not get_protocol(name).uses_model]
#: The metrics that run on a model (each on its fixture model of tests/support/harness.py).
LM_METRICS = [name for name in metric_names() if get_protocol(name).uses_model]

# ------------------------------------------------------------------------------------------------
# the registry: one line per metric, each naming its package's protocol


def _imported_modules(tree: ast.AST) -> set[str]:
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("name", metric_names())
def test_each_registry_line_names_its_packages_light_protocol_module(name):
    module = registry.PROTOCOLS[name]
    package, _, leaf = module.rpartition(".")
    assert leaf == "protocol" and package.count(".") == 1 and package.startswith("nlgmetrics."), module
    tree = ast.parse((REPO / "src" / f"{module.replace('.', '/')}.py").read_text(encoding="utf-8"))
    ours = {m for m in _imported_modules(tree) if m.split(".")[0] == "nlgmetrics"}
    # the core and its own package only: never another metric, the engine or a front end
    assert all(m.startswith(("nlgmetrics.core", f"{package}.")) or m == package for m in ours), ours
    assert not {m.split(".")[0] for m in _imported_modules(tree)} & {"torch", "transformers"}
    protocol = get_protocol(name)
    assert isinstance(protocol, MetricProtocol) and protocol.name == name


def test_listing_the_metrics_imports_none():
    """``metric_names()`` (the CLI's choices) reads the registry lines only."""
    import subprocess
    import sys

    code = "import sys; from nlgmetrics.registry import metric_names; metric_names(); print(sorted(m for m in sys.modules if m.startswith('nlgmetrics.')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['nlgmetrics.core', 'nlgmetrics.core.protocol', 'nlgmetrics.registry']"


@pytest.mark.parametrize("name", metric_names())
def test_each_metric_has_its_thin_module_folder(name):
    import evaluate.naming

    folder = REPO / "metrics" / name
    assert (folder / "README.md").is_file() and (folder / "app.py").is_file()
    source = (folder / f"{name}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    assert f"from {registry.PROTOCOLS[name]} import PROTOCOL" in source
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    assert len(classes) == 1 and [ast.unparse(b) for b in classes[0].bases] == ["ProtocolModule", "evaluate.Metric"]
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)], "a module holds no code"
    # The class name gives the folder's name (evaluate's default); a module answering to an evaluate
    # counterpart then takes the counterpart's name for evaluate.combine's key prefix (EvaluateFace).
    assert evaluate.naming.camelcase_to_snakecase(classes[0].name) == name
    # the card cites what the protocol cites (BibTeX keys)
    keys = re.findall(r"@\w+\{([^,\s]+),", get_protocol(name).citation)
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert keys and all(key in card for key in keys), (keys, name)


# ------------------------------------------------------------------------------------------------
# no front end names a metric

#: The front ends. The meta-evaluation's runner is one; its table of families
#: (benchmarks/meta/metrics.py) is not: it is the experiment's declaration of which metric runs
#: in which configuration (as data, each run through its protocol).
FRONT_ENDS = [*sorted((REPO / "src" / "nlgmetrics" / "apps").glob("*.py")),
              *sorted((REPO / "src" / "nlgmetrics" / "compare").glob("*.py")),
              *sorted(p for p in (REPO / "benchmarks" / "meta").glob("*.py") if p.name != "metrics.py")]
#: (file, name): why that front end names it. The Trainer's presets reproduce the transformers
#: examples, which load evaluate's ``rouge`` and ``sacrebleu`` and log BLEU under ``"bleu"``.
NAMED_FOR_A_REASON = {
    ("src/nlgmetrics/apps/trainer.py", "rouge"): "the summarization example loads evaluate's rouge",
    ("src/nlgmetrics/apps/trainer.py", "sacrebleu"): "the translation example loads evaluate's sacrebleu",
    ("src/nlgmetrics/apps/trainer.py", "bleu"): "the translation example's key",
    ("benchmarks/meta/runner.py", "bleu"): "WebNLG's baseline: the output of the family of that name",
    ("benchmarks/meta/runner.py", "infolm"): "the InfoLM temperature sweep (--temperatures), the paper's figure",
    ("benchmarks/meta/runner.py", "sacrebleu"): "a package whose version each result records",
    ("benchmarks/meta/runner.py", "rouge"): "the plots leave rouge-score's configuration out next to REALSumm's ROUGE",
}


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def named_metrics(path: Path, names: set[str], packages: set[str]) -> list[str]:
    """Where ``path`` names a metric (a string constant that is a metric's name, outside
    docstrings) or imports a metric package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
                and id(node) not in docstrings):
            found.append(f"line {node.lineno}: {node.value!r}")
    for module in _imported_modules(tree):
        parts = module.split(".")
        if parts[0] == "nlgmetrics" and len(parts) > 1 and parts[1] in packages:
            found.append(f"imports {module}")
    return found


def test_the_check_finds_a_named_metric(tmp_path):
    path = tmp_path / "front.py"
    path.write_text('"""Docs may say "bleu"."""\nfrom nlgmetrics.bleu import bleu\nDEFAULT = "bleu"\n')
    assert named_metrics(path, {"bleu"}, {"bleu"}) == ["line 3: 'bleu'", "imports nlgmetrics.bleu"]


def test_no_front_end_names_a_metric():
    protocols = registry.protocols()
    names = {p.name for p in protocols} | {p.evaluate.counterpart for p in protocols if p.evaluate}
    packages = {module.split(".")[1] for module in registry.PROTOCOLS.values()}
    wrong = {}
    for path in FRONT_ENDS:
        relative = str(path.relative_to(REPO))
        found = [f for f in named_metrics(path, names, packages)
                 if not any((relative, name) in NAMED_FOR_A_REASON and f.endswith(f"{name!r}") for name in names)]
        if found:
            wrong[relative] = found
    assert not wrong, f"front ends naming metrics (read the protocol through nlgmetrics.registry): {wrong}"


# ------------------------------------------------------------------------------------------------
# adding a metric: its package, its module folder, one registry line

PREDICTIONS = ["The cat sat on the mat", "a dog barked", "rain fell"]
REFERENCES = [["the cat sat on a mat", "a cat"], ["the dog barked loudly"], ["it rained"]]


@pytest.fixture
def toy():
    """The toy metric of tests/support/toy_metric.py, registered with its one registry line (as the
    harness registers it: tests/support/harness.py runs it through every check of
    tests/contract/test_one_contract.py)."""
    with registering_test_metrics():
        from tests.support.toy_metric import toy_overlap

        yield toy_overlap


def _write_lines(path: Path, lines: list[Any]) -> str:
    path.write_text("".join((json.dumps({"refs": line}) if isinstance(line, list) else line) + "\n"
                            for line in lines), encoding="utf-8")
    return str(path)


def test_a_registered_metric_is_listed_on_the_command_line(toy, capsys):
    """Its scores, options and evaluate module agree with the library in the harness
    (tests/contract/test_one_contract.py runs every check on it); here: ``nlgmetrics metrics`` lists it."""
    from nlgmetrics.apps.cli import main

    assert main(["metrics"]) == 0
    assert "toy_overlap: Toy overlap. Needs predictions + references" in capsys.readouterr().out


def test_a_registered_metric_is_compared(toy, tmp_path):
    from nlgmetrics.apps.cli import main
    from nlgmetrics.compare import compare_systems

    systems = {"a": PREDICTIONS, "b": ["the cat sat", "a dog", "rain"]}
    result = compare_systems(systems, REFERENCES, metric="toy_overlap", n_bootstrap=20, n_permutations=20)
    assert result["b"].score == toy(systems["b"], REFERENCES).mean()["toy_overlap"] and not result.corpus_level
    files = [_write_lines(tmp_path / f"{name}.txt", outputs) for name, outputs in systems.items()]
    references = _write_lines(tmp_path / "r.jsonl", REFERENCES)
    assert main(["compare", "-r", references, "--reference-column", "refs", *files, "-m", "toy_overlap",
                 "--n-bootstrap", "20", "--n-permutations", "20", "--quiet", "--no-progress"]) == 0


def test_a_registered_metric_runs_in_the_trainer_hook_and_the_demo(toy):
    import numpy as np
    from transformers import AutoTokenizer

    from nlgmetrics.apps.trainer import build_compute_metrics
    from nlgmetrics.testing import bert_tokenizer_dir

    tokenizer = AutoTokenizer.from_pretrained(str(bert_tokenizer_dir()))
    ids = np.array([tokenizer("the cat sat on the mat")["input_ids"]])
    labels = np.array([tokenizer("the cat sat")["input_ids"]])
    scores = build_compute_metrics(tokenizer, metrics=["toy_overlap"])((ids, labels))
    assert scores == {"toy_overlap": toy(["the cat sat on the mat"], [["the cat sat"]]).main_score}

    pytest.importorskip("gradio")
    from nlgmetrics.apps.demo import build_demo, run_pair

    assert type(build_demo("toy_overlap")).__name__ == "Blocks"
    result = run_pair(get_protocol("toy_overlap"), "a b", "a c", {"lowercase": True})
    assert result.main_score == 0.5 and result.signature.startswith("toy_overlap|case:lc")


# ------------------------------------------------------------------------------------------------
# what a protocol declares agrees with its library

#: Model options in a call that must refuse an option value before loading any model.
UNLOADABLE = {"model": "a model that is never loaded"}


def _call_options(protocol: MetricProtocol, option: Option) -> dict[str, Any]:
    """What a call needs besides ``option``: a model for an LM metric; BLANC-tune for its options."""
    options: dict[str, Any] = dict(UNLOADABLE) if protocol.uses_model else {}
    if protocol.name == "blanc":
        options["variant"] = "tune"  # every BLANC option is one of BLANC-tune's
    return options


def _outside(option: Option) -> list[float]:
    """Values just outside the option's declared range."""
    bounds = option.range
    assert bounds is not None
    step = 1 if option.kind == "int" else 1e-9
    values = []
    if math.isfinite(bounds.low):
        values.append(bounds.low if bounds.open_low else bounds.low - step)
    if math.isfinite(bounds.high):
        values.append(bounds.high if bounds.open_high else bounds.high + max(step, abs(bounds.high) * 1e-9))
    return [int(v) if option.kind == "int" else v for v in values]


RANGED = [(p.name, o.name) for p in registry.protocols() for o in p.options if o.range is not None]


@pytest.mark.parametrize(("name", "option_name"), RANGED)
def test_a_value_outside_a_declared_range_is_refused_by_the_library(name, option_name):
    protocol = get_protocol(name)
    option = next(o for o in protocol.options if o.name == option_name)
    others = [["a b c"]] if protocol.second_input == "references" else ["A b c. D e f."]
    for value in _outside(option):
        with pytest.raises(ValueError, match=option_name):
            protocol.run(["a b c"], others, **_call_options(protocol, option), **{option_name: value})


@pytest.mark.parametrize("name", metric_names())
def test_every_declared_option_is_a_keyword_of_the_library_call(name):
    protocol = get_protocol(name)
    accepted = protocol.accepted_options()
    assert {option.name for option in protocol.options} <= accepted
    assert all(option.signature_key is None or re.fullmatch(r"[a-z][a-z0-9_]*", option.signature_key)
               for option in protocol.options)
    if protocol.uses_model:  # the shared model options, declared once
        assert {option.name for option in MODEL_OPTIONS} <= {option.name for option in protocol.options}


#: A value other than the default for options whose other value cannot be derived, and the
#: options a value needs to show (ROUGE-W's weight shows with rougeW only).
OTHER_VALUE = {"rouge_types": ["rouge1"], "smooth_value": 0.2, "max_length": 16, "dtype": "bfloat16",
               "weights": [0.5, 0.2, 0.3], "separator": "Summary: ", "alpha": 0.5, "beta": 0.5,
               "num_upstream": 1, "finetune_epochs": 2}
CONTEXT = {("rouge_family", "rouge_w_weight"): {"rouge_types": ["rougeW"]},
           ("bleu", "smooth_value"): {"smooth_method": "floor"},
           ("infolm", "alpha"): {"information_measure": "alpha_divergence", "alpha": 0.25},
           ("infolm", "beta"): {"information_measure": "beta_divergence", "beta": 0.25},
           ("ter", "normalize_references_twice"): {"normalized": True}}
#: Keys whose value depends on the model or the environment, not shown by a changed value here
#: (InfoLM's kind is detected from the model: naming the detected kind changes nothing).
NOT_SHOWN_HERE = {"model", "model_tokenizer", "revision", "splitter", "start_token", "model_kind"}


def _other_value(option: Option) -> Any:
    if option.name in OTHER_VALUE:
        return OTHER_VALUE[option.name]
    if option.kind == "bool":
        return not option.default
    allowed = [c for c in option.allowed() or () if c is not None and c != option.default]
    if allowed:
        return allowed[0]
    if option.kind == "int":
        return option.default + 1
    return option.default * 2


def _signature_key_cases(names: list[str]) -> list[tuple[str, str]]:
    return [(p.name, o.name) for p in map(get_protocol, names) for o in p.options
            if o.signature_key is not None and o.name not in NOT_SHOWN_HERE]


def _check_signature_key(protocol: MetricProtocol, option_name: str, base: dict[str, Any], others: Any) -> None:
    option = protocol.option(option_name)
    context = {**base, **CONTEXT.get((protocol.name, option_name), {})}
    before = parse_signature(protocol.run(["a b c d", "e f"], others, **context).signature)
    context[option_name] = _other_value(option)
    after = parse_signature(protocol.run(["a b c d", "e f"], others, **context).signature)
    changed = {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}
    assert option.signature_key in changed, (option_name, option.signature_key, changed)


@pytest.mark.parametrize(("name", "option_name"), _signature_key_cases(TEXT_METRICS))
def test_a_text_metric_option_writes_its_declared_signature_key(name, option_name):
    _check_signature_key(get_protocol(name), option_name, {}, [["a b x d"], ["e g"]])


@pytest.mark.integration
@pytest.mark.parametrize(("name", "option_name"), _signature_key_cases(LM_METRICS))
def test_an_lm_metric_option_writes_its_declared_signature_key(name, option_name, request):
    protocol = get_protocol(name)
    base: dict[str, Any] = {"model": str(request.getfixturevalue(model_fixture(name))), "progress": False}
    if name == "blanc" and option_name in {"finetune_epochs", "p_mask", "learning_rate", "seed"}:
        base.update(variant="tune", finetune_epochs=1)
    others = ["A b c d. E f g.", "E f. G h."] if protocol.second_input == "sources" else [["a b x d"], ["e g"]]
    _check_signature_key(protocol, option_name, base, others)
