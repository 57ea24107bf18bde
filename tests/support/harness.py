"""The one test harness: what the checks of every metric read, fed by the registry.

The metric list is ``nlgmetrics.registry.metric_names()`` plus the metrics the tests register
themselves (:data:`TEST_ONLY_METRICS`, the toy metric of tests/support/toy_metric.py, registered with the
one registry line a new metric adds). Everything that can be read from a metric's protocol is read
from it: its second input (references or sources), whether it runs a model and of which kinds
(``model_kinds``), its main column, its evaluate module's names and layout
(:class:`~nlgmetrics.core.protocol.EvaluateFace`), its options.

What cannot be read from a protocol is declared here, once:

- :data:`MODEL_FIXTURE`: the tiny fixture model (tests/conftest.py) an LM metric runs on;
- :data:`OPTIONS_THAT_CHANGE_THE_NUMBER`: option values known to change a metric's result, so that
  agreeing front ends show the options were passed on;
- :data:`VARIANT_CASES`: a metric's variants that the error checks run as cases of their own
  (BLANC-tune);
- :data:`SCORE_KEY_COUNTERPARTS`: which evaluate modules report under "score" (a fact about
  evaluate, keyed by the counterpart a protocol's EvaluateFace names).

A registered metric missing from these tables still runs every check that does not need the fact;
a check that needs it fails with "declare X for metric Y in tests/support/harness.py" (:func:`declared`).

Imported by test modules as ``from tests.support.harness import ...`` (a test module never imports
another test module).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pytest

from nlgmetrics import registry
from nlgmetrics.core.protocol import MetricProtocol
from nlgmetrics.core.result import MetricResult
from nlgmetrics.registry import get_protocol, metric_names

REPO_ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------------------------------------
# the metrics: the registry's, and the ones the tests register

#: Registry lines the tests add (name -> module declaring its ``PROTOCOL``), as a new metric adds
#: one; the module also holds its evaluate module's source as ``MODULE`` (no metrics/ folder).
TEST_ONLY_METRICS: dict[str, str] = {"toy_overlap": "tests.support.toy_metric"}

#: Test-only metrics that do not check their inputs (the toy is as short as a metric can be): the
#: harness's input checks must fail on them, which shows that a new metric gets those checks.
INPUTS_UNCHECKED = frozenset({"toy_overlap"})


@contextmanager
def registering_test_metrics() -> Iterator[None]:
    """The test-only metrics in the registry for the duration (one registry line each)."""
    with pytest.MonkeyPatch.context() as patch:
        for name, module in TEST_ONLY_METRICS.items():
            patch.setitem(registry.PROTOCOLS, name, module)
        yield


def harness_metric_names() -> list[str]:
    """Every metric the harness checks: the registry's, then the test-only ones (once, also while
    they are registered)."""
    registered = metric_names()
    return [*registered, *(name for name in TEST_ONLY_METRICS if name not in registered)]


def input_checked_params(names: list[str]) -> list[Any]:
    """``names`` as pytest params; a metric that does not check its inputs is an expected (strict)
    failure: the check is there for it, and finds what is missing."""
    reason = "this test-only metric does not check its inputs: the harness's input checks catch that"
    return [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason)) if name in INPUTS_UNCHECKED
            else name for name in names]


# ------------------------------------------------------------------------------------------------
# what cannot be derived: declared once

#: The fixture model (tests/conftest.py) each LM metric runs on. BLANC runs on copy-BERT, on which
#: its counts are not all 0.
MODEL_FIXTURE: dict[str, str] = {"infolm": "tiny_bert_dir", "shannon_score": "tiny_gpt2_dir",
                                 "blanc": "copy_bert_dir", "fflm": "tiny_llama_dir"}

#: Per metric: options that change its result on :data:`PREDICTIONS` (library names, Python
#: values); the command line gets them as METRIC.NAME=TEXT, a module under its own names.
OPTIONS_THAT_CHANGE_THE_NUMBER: dict[str, dict[str, Any]] = {
    "infolm": {"information_measure": "ab_divergence", "alpha": 1.5, "beta": 0.5, "temperature": 0.5},
    "shannon_score": {"num_upstream": 1},
    "blanc": {"gap": 3},
    "fflm": {"weights": [0.5, 0.2, 0.3]},
    "rouge_family": {"rouge_types": ["rougeL", "rouge2", "rougeSU4"], "use_stemmer": True, "n_bootstrap": 200},
    "bleu": {"tokenize": "intl", "smooth_method": "floor", "effective_order": True},
    "chrf": {"word_order": 2, "beta": 1},
    "ter": {"normalized": True, "case_sensitive": True, "no_punct": True, "asian_support": True},
    "toy_overlap": {"lowercase": True},
}

#: Variants of a metric that the error checks run as cases of their own: case -> (registry name,
#: the options that select the variant).
VARIANT_CASES: dict[str, tuple[str, dict[str, Any]]] = {"blanc_tune": ("blanc", {"variant": "tune",
                                                                                  "finetune_epochs": 1})}

#: evaluate's modules that give their headline under "score" and, with ``use_aggregator=False``,
#: their one per-example column under "score" too (a fact about evaluate, not about our metrics).
SCORE_KEY_COUNTERPARTS = frozenset({"sacrebleu", "chrf", "ter"})


def declared(table: Mapping[str, Any], table_name: str, name: str) -> Any:
    """``table[name]``, or a loud failure saying where to declare it (never a silent skip)."""
    if name not in table:
        fail_undeclared(table_name, name)
    return table[name]


def fail_undeclared(table_name: str, name: str) -> NoReturn:
    pytest.fail(f"declare {table_name} for metric {name!r} in tests/support/harness.py", pytrace=False)


def model_fixture(name: str) -> str | None:
    """The fixture model of LM metric ``name`` (None for a metric without a model)."""
    return declared(MODEL_FIXTURE, "MODEL_FIXTURE", name) if get_protocol(name).uses_model else None


def options_that_change_the_number(name: str) -> dict[str, Any]:
    """The declared options of ``name`` (a loud failure where none are declared)."""
    return dict(declared(OPTIONS_THAT_CHANGE_THE_NUMBER, "OPTIONS_THAT_CHANGE_THE_NUMBER", name))


def options_to_compare(name: str) -> dict[str, Any]:
    """The options the front ends are compared on: the declared ones, else the defaults (the
    agreement checks run for an undeclared metric too; only the check that the options reach the
    number needs them)."""
    return dict(OPTIONS_THAT_CHANGE_THE_NUMBER.get(name, {}))


# ------------------------------------------------------------------------------------------------
# what is derived from the protocol

#: Words repeated in a summary and its document: the copy-BERT of BLANC finds help and harm on them.
PREDICTIONS = ["Tomatoes tomatoes tomatoes everywhere tomatoes.", "Technology technology stocks rallied.",
               "Banks banks banks struggled badly banks."]
#: ragged: one example has two references
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


def second_input(name: str) -> tuple[str, list]:
    """(the library's name of the second input, the harness's inputs for it)."""
    second = get_protocol(name).second_input
    return second, (SOURCES if second == "sources" else REFERENCES)


def library_function(name: str):
    """The library function of ``name``, imported the way a user does (``from package import
    function``), not through the registry."""
    module, _, function = get_protocol(name).compute.partition(":")
    return getattr(importlib.import_module(module), function)


def counterpart(protocol: MetricProtocol) -> str | None:
    return protocol.evaluate.counterpart if protocol.evaluate is not None else None


def module_main_key(name: str, result: MetricResult) -> str:
    """The key of the headline number in a module's default output."""
    return "score" if counterpart(get_protocol(name)) in SCORE_KEY_COUNTERPARTS else result.main


def module_column_key(name: str, column: str) -> str:
    """The key of per-example ``column`` in a module's ``use_aggregator=False`` output: "score"
    for the one column of a module whose counterpart reports under "score", else its own name."""
    protocol = get_protocol(name)
    if counterpart(protocol) in SCORE_KEY_COUNTERPARTS:
        columns = list(protocol.columns)
        assert len(columns) == 1, f"{name}: {counterpart(protocol)} reports one per-example column; {columns}"
        return "score"
    return column


def module_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Library options under the module's names (the counterpart's, where its face renames them)."""
    face = get_protocol(name).evaluate
    to_module = {library: module for module, library in face.renamed.items()} if face is not None else {}
    return {to_module.get(key, key): value for key, value in options.items()}


def module_folder(name: str, scratch: Path) -> Path:
    """The folder of ``name``'s evaluate module: metrics/<name>, or for a test-only metric its
    ``MODULE`` source written under ``scratch``."""
    if name not in TEST_ONLY_METRICS:
        return REPO_ROOT / "metrics" / name
    folder = scratch / name
    folder.mkdir(parents=True, exist_ok=True)
    source = importlib.import_module(TEST_ONLY_METRICS[name]).MODULE
    (folder / f"{name}.py").write_text(source, encoding="utf-8")
    return folder


def option_text(value: Any) -> str:
    """``value`` as the command line's ``--option NAME=VALUE`` writes it (parsed back exactly:
    ``repr`` of a float round-trips)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(option_text(item) for item in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def write_cli_inputs(name: str, folder: Path) -> list[str]:
    """The harness's inputs as files, and the ``score`` arguments reading them."""
    predictions = folder / "predictions.txt"
    predictions.write_text("".join(f"{p}\n" for p in PREDICTIONS), encoding="utf-8")
    second, others = second_input(name)
    if second == "sources":
        path = folder / "sources.txt"
        path.write_text("".join(f"{s}\n" for s in others), encoding="utf-8")
        return ["-p", str(predictions), "-s", str(path)]
    # several references per example: a JSON Lines column of lists
    path = folder / "references.jsonl"
    path.write_text("".join(json.dumps({"refs": r}) + "\n" for r in others), encoding="utf-8")
    return ["-p", str(predictions), "-r", str(path), "--reference-column", "refs"]



def model_context(model_dir: Path) -> int:
    """The positions of a fixture model (its config's ``max_position_embeddings`` or GPT-2's
    ``n_positions``): the context a ``max_length`` is capped at."""
    config = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))
    return int(config.get("max_position_embeddings") or config["n_positions"])
