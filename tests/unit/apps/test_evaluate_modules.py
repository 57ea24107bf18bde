"""The eight ``evaluate`` modules: offline load, compute / add / add_batch, the output rule, combine,
model cards, apps.

Every module is loaded from its folder with ``evaluate.load(path)`` under HF_HUB_OFFLINE=1; its
numbers must equal a direct call of the library function on the same inputs (LM metrics on the
tiny random fixture models), in the module's layout: the default output (numbers), the
per-example lists (``use_aggregator=False``) and the signature (``return_signature=True``).
Streaming the inputs with ``add`` / ``add_batch`` must give the same result as one ``compute``.
``evaluate.combine`` is checked where the inputs fit: rouge_family + bleu, bleu + chrf + ter
(predictions, references) and shannon_score + fflm (predictions, sources, one causal model); a
module answering to an evaluate counterpart is named as evaluate names the counterpart, so that
combining ours gives the keys that combining evaluate's gives (checked against stand-ins named as
evaluate's modules, tests/support/evaluate_counterparts.py). The drop-in checks against evaluate's own
modules are in tests/contract/test_dropin.py.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlgmetrics.registry import get_protocol, metric_names, protocols
from tests.support.evaluate_counterparts import EVALUATE_CLASS_NAMES, counterpart_stand_in, evaluate_module_name
from tests.support.harness import (
    TEST_ONLY_METRICS,
    harness_metric_names,
    library_function,
    model_fixture,
    module_folder,
    module_options,
    options_to_compare,
    registering_test_metrics,
)

#: The registered metrics (their modules live in metrics/<name>).
METRICS = metric_names()

PREDICTIONS = ["the cat sat on the mat", "a dog barked at night", "rain fell all day long"]
REFERENCES = [["the cat was on the mat", "a cat sat on a mat"], ["the dog barked at night"], ["it rained all day"]]
SOURCES = [
    "The cat sat on the mat all afternoon. It did not move when the dog came in.",
    "A dog barked at night. The neighbours complained to the owner the next morning.",
    "Rain fell all day long. The river rose and the bridge was closed.",
]


@pytest.fixture(scope="module", autouse=True)
def _offline():
    assert os.environ.get("HF_HUB_OFFLINE") == "1", "tests/conftest.py sets HF_HUB_OFFLINE=1"


def _load(metrics_dir: Path, name: str, scratch: Path | None = None):
    """The evaluate module of ``name``: metrics/<name>, or a test-only metric's, written under
    ``scratch`` (tests/support/harness.py)."""
    import evaluate

    path = metrics_dir / name if scratch is None else module_folder(name, scratch)
    if not (path / f"{name}.py").exists():
        pytest.fail(f"metrics/{name}/{name}.py is missing")
    return evaluate.load(str(path))


# --------------------------------------------------------------------------------------------
# Per metric: module inputs, compute kwargs (the module's names), and the library call giving the
# expected values (the library's names), all read from the protocol and tests/support/harness.py.


def _library_case(name: str, model_options: dict):
    """(inputs, module kwargs, the library's result on them) for metric ``name``: the options that
    change its number (tests/support/harness.py), under the module's names for the module."""
    second = get_protocol(name).second_input
    others = SOURCES if second == "sources" else REFERENCES
    options = options_to_compare(name)
    library = library_function(name)(PREDICTIONS, **{second: others}, **options, **model_options,
                                     **({"progress": False} if model_options else {}))
    inputs = {"predictions": PREDICTIONS, second: others}
    return inputs, {**module_options(name, options), **model_options}, library


@dataclass(frozen=True)
class ModuleOutputs:
    """What a module's ``compute()`` gives: by default, with ``use_aggregator=False``, and each of
    those with ``return_details=True``."""

    default: dict
    each: dict
    default_details: dict
    each_details: dict


def expected_outputs(name: str, result, options: dict) -> ModuleOutputs:
    """The outputs of module ``name`` for the library's ``result`` with the module's ``options``,
    as the module docstrings and cards state them (key order included): the counterpart's layout
    where the module answers to one."""
    face = get_protocol(name).evaluate
    counterpart = face.counterpart if face is not None else None
    if counterpart == "sacrebleu":  # evaluate's sacrebleu keys, then ours; nothing held back
        aggregated = {"score": result.bleu, "counts": list(result.counts), "totals": list(result.totals),
                      "precisions": list(result.precisions), "bp": result.bp, "sys_len": result.sys_len,
                      "ref_len": result.ref_len, "ratio": result.sys_len / result.ref_len,
                      "sentence_bleu": result.mean()["sentence_bleu"]}
        each = {"score": result.scores["sentence_bleu"], "sys_len": list(result.sentence_sys_len),
                "ref_len": list(result.sentence_ref_len)}
        return ModuleOutputs(aggregated, each, aggregated, each)
    if counterpart == "chrf":  # evaluate's chrf keys, then ours; nothing held back
        aggregated = {"score": result.chrf, "char_order": result.char_order, "word_order": result.word_order,
                      "beta": options.get("beta", 2), "sentence_chrf": result.mean()["sentence_chrf"]}
        each = {"score": result.scores["sentence_chrf"]}
        return ModuleOutputs(aggregated, each, aggregated, each)
    if counterpart == "ter":  # evaluate's ter keys, then ours; nothing held back
        aggregated = {"score": result.ter, "num_edits": result.num_edits, "ref_length": result.ref_length,
                      "sentence_ter": result.mean()["sentence_ter"]}
        each = {"score": result.scores["sentence_ter"], "num_edits": list(result.sentence_num_edits),
                "ref_length": list(result.sentence_ref_length)}
        return ModuleOutputs(aggregated, each, aggregated, each)
    aggregate = result.aggregate()
    if counterpart == "rouge":
        # evaluate's rouge keys (one F per type) only; return_details=True: then the precision and
        # recall columns and, aggregated, the bounds
        types = result.rouge_types
        return ModuleOutputs({t: aggregate[t] for t in types}, {t: result.scores[t] for t in types},
                             {**{t: aggregate[t] for t in types}, **aggregate},
                             {**{t: result.scores[t] for t in types}, **result.scores})
    # no counterpart: the library's headline numbers, main key first; its per-example columns
    headline = {result.main: aggregate[result.main], **aggregate}
    return ModuleOutputs(headline, dict(result.scores), headline, dict(result.scores))


def _assert_same(got, want, tol: float = 1e-9, path: str = "output"):
    """``got`` equals ``want`` key by key, in order, with the same types (an int stays an int);
    floats to ``tol``."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), (path, list(got), list(want))
        for key in want:
            _assert_same(got[key], want[key], tol, f"{path}[{key!r}]")
    elif isinstance(want, (list, tuple)):
        assert type(got) is list and len(got) == len(want), (path, got, want)
        for index, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, tol, f"{path}[{index}]")
    elif isinstance(want, float):
        assert type(got) is float and math.isclose(got, want, rel_tol=tol, abs_tol=tol), (path, got, want)
    else:
        assert type(got) is type(want) and got == want, (path, got, want)


@pytest.fixture(scope="module")
def models(tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir) -> dict[str, str]:
    return {"bert": str(tiny_bert_dir), "gpt2": str(tiny_gpt2_dir), "llama": str(tiny_llama_dir)}


@pytest.fixture(scope="module", autouse=True)
def _test_metrics_registered():
    with registering_test_metrics():
        yield


def _model_options(name: str, request) -> dict:
    fixture = model_fixture(name)
    return {} if fixture is None else {"model": str(request.getfixturevalue(fixture))}


@pytest.mark.slow
@pytest.mark.parametrize("name", harness_metric_names())
def test_module_compute_add_and_add_batch_equal_library(name, metrics_dir, request, tmp_path):
    module = _load(metrics_dir, name, tmp_path if name in TEST_ONLY_METRICS else None)
    inputs, kwargs, library = _library_case(name, _model_options(name, request))
    want = expected_outputs(name, library, kwargs)
    aggregated = want.default
    _assert_same(module.compute(**inputs, **kwargs), aggregated)
    _assert_same(module.compute(**inputs, **kwargs, return_details=True), want.default_details)
    _assert_same(module.compute(**inputs, **kwargs, use_aggregator=False, return_details=True), want.each_details)
    signed = {**want.each, "signature": library.signature}

    # add_batch in two chunks, then compute with options only
    keys = list(inputs)
    module.add_batch(**{k: inputs[k][:2] for k in keys})
    module.add_batch(**{k: inputs[k][2:] for k in keys})
    _assert_same(module.compute(**kwargs, use_aggregator=False, return_signature=True), signed)

    # add one example at a time (evaluate's singular names: prediction / reference / sources)
    for i in range(len(PREDICTIONS)):
        single = {("prediction" if k == "predictions" else "reference" if k == "references" else k): inputs[k][i]
                  for k in keys}
        module.add(**single)
    _assert_same(module.compute(**kwargs, return_signature=True), {**aggregated, "signature": library.signature})


@pytest.mark.parametrize("name", harness_metric_names())
def test_module_name_is_its_counterparts_else_its_folder_name(name, metrics_dir, tmp_path):
    """``combine`` prefixes shared keys with the module's name: a module answering to an evaluate
    counterpart bears the name evaluate gives that counterpart (evaluate's naming rule applied to
    the counterpart's class name), the others their folder name. The cache directory stays under
    the folder name, apart from evaluate's modules' own."""
    module = _load(metrics_dir, name, tmp_path if name in TEST_ONLY_METRICS else None)
    face = get_protocol(name).evaluate
    assert module.name == (name if face is None else evaluate_module_name(face.counterpart))
    assert Path(module.data_dir).parts[-2:] == (name, "default")


def test_every_counterpart_has_the_name_evaluate_gives_it():
    """The protocol's record of evaluate's module names agrees with evaluate's naming rule on the
    counterparts' class names, for every counterpart a protocol declares (all four of them)."""
    faces = [protocol.evaluate for protocol in protocols() if protocol.evaluate is not None]
    assert sorted(face.counterpart for face in faces) == sorted(EVALUATE_CLASS_NAMES)
    for face in faces:
        assert face.module_name == evaluate_module_name(face.counterpart), face.counterpart


@pytest.mark.parametrize("switch, value", [("use_aggregator", "no"), ("return_signature", 1), ("use_aggregator", None),
                                           ("return_details", "yes")])
def test_output_switches_are_checked(switch, value, metrics_dir):
    with pytest.raises(ValueError, match=rf"`{switch}` must be True or False"):
        _load(metrics_dir, "chrf").compute(predictions=["a"], references=["a"], **{switch: value})


#: Every option a module renames (its counterpart's name, the library's), from the protocols.
RENAMED = [(protocol.name, library, module) for protocol in protocols() if protocol.evaluate is not None
           for module, library in protocol.evaluate.renamed.items()]


def test_the_renamed_options_are_the_known_ones():
    """The protocols' renames are found (the test below is not empty)."""
    assert {("bleu", "effective_order", "use_effective_order"), ("ter", "no_punct", "ignore_punct"),
            ("ter", "asian_support", "support_zh_ja_chars")} <= set(RENAMED)


@pytest.mark.parametrize("name, library_name, module_name", RENAMED)
def test_the_library_name_of_a_renamed_option_is_refused(name, library_name, module_name, metrics_dir):
    """One name per option: the module's is evaluate's; the library's is refused with the fix."""
    with pytest.raises(TypeError, match=rf"no option `{library_name}`; it is named `{module_name}` here.*"
                                        rf"pass {module_name}=True"):
        _load(metrics_dir, name).compute(predictions=["a"], references=["a"], **{library_name: True})


@pytest.mark.slow
def test_combine_reference_metrics(metrics_dir, models):
    import evaluate

    from nlgmetrics.bleu import bleu
    from nlgmetrics.rouge import rouge_family

    combined = evaluate.combine([_load(metrics_dir, "rouge_family"), _load(metrics_dir, "bleu")])
    result = combined.compute(predictions=PREDICTIONS, references=REFERENCES, return_signature=True)
    want_rouge = rouge_family(PREDICTIONS, REFERENCES)
    want_bleu = bleu(PREDICTIONS, REFERENCES)
    assert result["rougeL"] == want_rouge.aggregate()["rougeL"]
    assert result["rouge1"] == want_rouge.main_score
    assert result["score"] == want_bleu.bleu  # no other module has "score": not prefixed
    # both modules return "signature": combine prefixes a shared key with the module's name,
    # evaluate's name of its counterpart (rouge, sacrebleu)
    assert result["sacrebleu_signature"] == want_bleu.signature
    assert result["rouge_signature"] == want_rouge.signature
    assert "signature" not in result


def _sacrebleu_family_output(counterpart: str, predictions: list[str], references: list[list[str]]) -> dict:
    """evaluate's sacrebleu / chrf / ter output with their defaults, as they compute it: sacrebleu
    on reference streams."""
    import sacrebleu
    from sacrebleu.metrics import CHRF, TER

    from tests.support.evaluate_support import sacrebleu_streams

    streams = sacrebleu_streams(references)
    if counterpart == "sacrebleu":
        out = sacrebleu.corpus_bleu(predictions, streams)
        return {"score": out.score, "counts": out.counts, "totals": out.totals, "precisions": out.precisions,
                "bp": out.bp, "sys_len": out.sys_len, "ref_len": out.ref_len}
    if counterpart == "chrf":
        out = CHRF().corpus_score(predictions, streams)
        return {"score": out.score, "char_order": out.char_order, "word_order": out.word_order, "beta": out.beta}
    out = TER().corpus_score(predictions, streams)
    return {"score": out.score, "num_edits": out.num_edits, "ref_length": out.ref_length}


#: The keys our bleu, chrf and ter modules give beyond their counterparts' (documented in the cards).
OUR_EXTRA_KEYS = {"ratio", "sentence_bleu", "sentence_chrf", "sentence_ter"}


def test_combine_of_the_sacrebleu_family_gives_evaluates_keys(metrics_dir, tmp_path):
    """``combine([bleu, chrf, ter])`` on ours gives every key that ``combine`` of evaluate's
    sacrebleu, chrf and ter gives (``sacrebleu_score``, ``chr_f_score``, ``ter_score``: each
    module's name prefixes the shared ``score``), with their values; our extra keys come beside
    them, unprefixed (no other module has them)."""
    import functools

    import evaluate

    counterparts = ("sacrebleu", "chrf", "ter")
    theirs = evaluate.combine([
        counterpart_stand_in(c, functools.partial(_sacrebleu_family_output, c), tmp_path) for c in counterparts
    ]).compute(predictions=PREDICTIONS, references=REFERENCES)
    ours = evaluate.combine([_load(metrics_dir, name) for name in ("bleu", "chrf", "ter")]).compute(
        predictions=PREDICTIONS, references=REFERENCES)
    assert {"sacrebleu_score", "chr_f_score", "ter_score"} <= set(theirs) and "score" not in theirs  # the oracle
    assert set(theirs) <= set(ours), sorted(set(theirs) - set(ours))
    assert set(ours) - set(theirs) == OUR_EXTRA_KEYS
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, abs=1e-9), key


def test_combine_passes_return_details_to_every_module(metrics_dir):
    """``combine`` passes one set of options to all its modules: every module takes
    ``return_details``; ROUGE then adds its precision, recall and bounds, the others are as without."""
    import evaluate

    names = ("rouge_family", "bleu", "chrf", "ter")
    combined = evaluate.combine([_load(metrics_dir, name) for name in names])
    plain = combined.compute(predictions=PREDICTIONS, references=REFERENCES)
    detailed = combined.compute(predictions=PREDICTIONS, references=REFERENCES, return_details=True)
    rouge_details = {key: value for key, value in detailed.items() if key not in plain}
    assert {"rouge1_precision", "rouge1_recall", "rouge1_low", "rougeLsum_recall_high"} <= set(rouge_details)
    assert all(key.startswith("rouge") for key in rouge_details)
    assert {key: detailed[key] for key in plain} == plain


def _rouge_score_columns(predictions: list[str], references: list[list[str]], types: list[str]
                         ) -> dict[str, list[float]]:
    """The F, precision and recall of every type per example, from rouge-score (``score_multi``:
    the best reference by F, as evaluate's rouge with lists of references)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(types)
    scores = [scorer.score_multi(r, p) for p, r in zip(predictions, references)]
    return {t + suffix: [float(getattr(s[t], field)) for s in scores]
            for t in types for suffix, field in (("", "fmeasure"), ("_precision", "precision"), ("_recall", "recall"))}


@pytest.mark.parametrize("rouge_types", [None, ["rougeL", "rouge1"]])
def test_rouge_default_output_is_evaluates_keys_and_return_details_adds_the_rest(rouge_types, metrics_dir):
    """By default the ROUGE module gives evaluate's rouge keys only, one F-measure per requested
    type (evaluate's default types when None), aggregated and per example, so that code logging
    every key (the transformers summarization example in a Seq2SeqTrainer) logs evaluate's;
    ``return_details=True`` adds the precision and recall of every type (rouge-score's numbers)
    and, aggregated, the confidence bounds."""
    types = rouge_types or ["rouge1", "rouge2", "rougeL", "rougeLsum"]  # evaluate's rouge default
    rouge = _load(metrics_dir, "rouge_family")
    call = dict(predictions=PREDICTIONS, references=REFERENCES, rouge_types=rouge_types)
    columns = _rouge_score_columns(PREDICTIONS, REFERENCES, types)
    means = {name: math.fsum(values) / len(values) for name, values in columns.items()}

    default = rouge.compute(**call)
    assert list(default) == types
    each = rouge.compute(**call, use_aggregator=False)
    assert list(each) == types
    for t in types:
        assert default[t] == pytest.approx(means[t], abs=1e-12)
        assert each[t] == pytest.approx(columns[t], abs=1e-12)

    detailed = rouge.compute(**call, return_details=True)
    each_detailed = rouge.compute(**call, use_aggregator=False, return_details=True)
    bounds = [column + side for column in columns for side in ("_low", "_high")]
    assert list(detailed)[:len(types)] == types and sorted(detailed) == sorted([*columns, *bounds])
    assert list(each_detailed)[:len(types)] == types and sorted(each_detailed) == sorted(columns)
    for column in columns:
        assert detailed[column] == pytest.approx(means[column], abs=1e-12), column
        assert detailed[column + "_low"] <= detailed[column] <= detailed[column + "_high"], column
        assert each_detailed[column] == pytest.approx(columns[column], abs=1e-12), column


@pytest.mark.slow
def test_combine_reference_free_metrics(metrics_dir, models):
    import evaluate

    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    combined = evaluate.combine([_load(metrics_dir, "shannon_score"), _load(metrics_dir, "fflm")])
    combined.add_batch(predictions=PREDICTIONS, sources=SOURCES)
    result = combined.compute(model=models["gpt2"], use_aggregator=False, return_signature=True)
    want_shannon = shannon_score(PREDICTIONS, sources=SOURCES, model=models["gpt2"], progress=False)
    want_fflm = fflm(PREDICTIONS, sources=SOURCES, model=models["gpt2"], progress=False)
    _assert_same(result["shannon_score"], want_shannon.scores["shannon_score"])
    _assert_same(result["fflm"], want_fflm.scores["fflm"])
    assert result["shannon_score_signature"] == want_shannon.signature
    assert result["fflm_signature"] == want_fflm.signature


# --------------------------------------------------------------------------------------------
# Model cards, app.py, requirements.txt (no model work).

CARD_HEADER_KEYS = ("title", "emoji", "colorFrom", "colorTo", "sdk", "sdk_version", "app_file", "pinned", "tags", "description")
# Sections of evaluate's own cards; each entry: alternatives accepted in a heading.
CARD_SECTIONS = {
    "description": ("description",),
    "how to use": ("how to use",),
    "inputs": ("inputs",),
    "output values": ("output values", "outputs"),
    "limitations and bias": ("limitations and bias", "limitations"),
    "citation": ("citation",),
}


def card_problems(metric_dir: Path) -> list[str]:
    """What is missing in ``metric_dir``'s README.md, app.py and requirements.txt (empty: fine)."""
    import yaml

    name = metric_dir.name
    problems: list[str] = []
    card = metric_dir / "README.md"
    if not card.exists():
        return ["README.md missing"]
    text = card.read_text(encoding="utf-8")
    match = re.match(r"\A---\s*\n(.*?)\n---\s*\n", text, re.DOTALL)
    if not match:
        problems.append("no YAML header (--- ... ---) at the top of README.md")
        header: dict = {}
    else:
        header = yaml.safe_load(match.group(1)) or {}
    for key in CARD_HEADER_KEYS:
        if key not in header:
            problems.append(f"YAML header lacks {key!r}")
    if header.get("sdk", "gradio") != "gradio":
        problems.append(f"sdk is {header.get('sdk')!r}, not gradio")
    if header.get("app_file", "app.py") != "app.py":
        problems.append("app_file is not app.py")
    if header.get("pinned", False) is not False:
        problems.append("pinned is not false")
    tags = header.get("tags") or []
    for tag in ("evaluate", "metric"):
        if tag not in tags:
            problems.append(f"tags lack {tag!r}")
    headings = [h.strip().lower() for h in re.findall(r"(?m)^#{1,6}\s+(.*)$", text)]
    for section, accepted in CARD_SECTIONS.items():
        if not any(any(a in h for a in accepted) for h in headings):
            problems.append(f"no section heading for {section!r}")
    if not re.search(r"```(?:python|py)\n(?:(?!```).)*evaluate\.load\(", text, re.DOTALL):
        problems.append("no runnable ```python example calling evaluate.load(...)")
    app = metric_dir / "app.py"
    if not app.exists():
        problems.append("app.py missing")
    else:
        code = app.read_text(encoding="utf-8")
        if "from nlgmetrics.apps.demo import launch_demo" not in code or f'launch_demo("{name}"' not in code:
            problems.append(f'app.py does not call launch_demo("{name}")')
    requirements = metric_dir / "requirements.txt"
    if not requirements.exists():
        problems.append("requirements.txt missing")
    else:
        pins = re.findall(r"(?m)^gradio==([0-9.]+)\s*$", requirements.read_text(encoding="utf-8"))
        if not pins:
            problems.append("requirements.txt does not pin gradio (gradio==X.Y.Z)")
        elif str(header.get("sdk_version")) != pins[0]:
            problems.append(f"sdk_version {header.get('sdk_version')} != requirements gradio=={pins[0]}")
    return problems


@pytest.mark.parametrize("name", METRICS)
def test_model_card_and_space_files(name, metrics_dir):
    problems = card_problems(metrics_dir / name)
    assert not problems, f"metrics/{name}: " + "; ".join(problems)


def test_pinned_gradio_is_the_installed_one(metrics_dir):
    """The pinned Gradio is the one the browser tests run (so the pin is known to work)."""
    import gradio

    for name in METRICS:
        requirements = metrics_dir / name / "requirements.txt"
        if requirements.exists():
            pins = re.findall(r"(?m)^gradio==([0-9.]+)\s*$", requirements.read_text(encoding="utf-8"))
            assert pins == [gradio.__version__], (name, pins, gradio.__version__)


def test_evaluate_widget_is_replaced_by_our_blocks(metrics_dir):
    """evaluate's launch_gradio_widget uses gr.inputs, gone since Gradio 4: hence nlgmetrics.apps.demo."""
    import evaluate

    with pytest.raises(AttributeError, match="inputs"):
        evaluate.utils.launch_gradio_widget(_load(metrics_dir, "bleu"))
    from nlgmetrics.apps.demo import build_demo

    for name in METRICS:
        assert type(build_demo(name)).__name__ == "Blocks"


# --------------------------------------------------------------------------------------------
# Inputs that evaluate would mis-read: normalised to plain lists, or refused with the fix.


def _input_forms(texts: list, index: list[int]):
    """The same column as a list, tuple, generator, numpy array and pandas Series (labels ``index``)."""
    import numpy as np
    import pandas as pd

    return {
        "list": list(texts),
        "tuple": tuple(texts),
        "generator": (t for t in texts),
        "numpy": np.array(texts, dtype=object),
        "series": pd.Series(texts, index=index),
    }


#: The modules that take references and no model (scored here without a fixture model).
TEXT_REFERENCE_METRICS = [p.name for p in protocols() if p.second_input == "references" and not p.uses_model]


@pytest.mark.parametrize("name", TEXT_REFERENCE_METRICS)
@pytest.mark.parametrize("form", ["tuple", "generator", "numpy", "series"])
@pytest.mark.parametrize("index", [[10, 11, 12], [2, 0, 1]], ids=["offset-index", "shuffled-index"])
def test_module_normalises_containers(name, form, index, metrics_dir):
    """A generator is read once, a numpy array and a pandas Series by position (a Series index that
    does not start at 0 made evaluate fail with KeyError: 0; a shuffled one checked another row)."""
    module = _load(metrics_dir, name)
    want = module.compute(predictions=PREDICTIONS, references=[r[0] for r in REFERENCES])
    predictions = _input_forms(PREDICTIONS, index)[form]
    references = _input_forms([r[0] for r in REFERENCES], index)[form]
    assert module.compute(predictions=predictions, references=references) == want
    module.add_batch(predictions=_input_forms(PREDICTIONS, index)[form],
                     references=_input_forms([r[0] for r in REFERENCES], index)[form])
    assert module.compute() == want


def test_module_reads_a_2d_numpy_array_of_references(metrics_dir):
    import numpy as np

    module = _load(metrics_dir, "bleu")
    pairs = [["the cat was on the mat", "a cat sat on a mat"], ["the dog barked", "a dog barked"],
             ["it rained", "rain fell all day"]]
    want = module.compute(predictions=PREDICTIONS, references=pairs)
    assert module.compute(predictions=np.array(PREDICTIONS), references=np.array(pairs)) == want


@pytest.mark.parametrize(
    "predictions, references, message",
    [
        ("dataframe", None, r"`predictions` is a pandas DataFrame \(columns \['p', 'r'\]\).*df\[\"predictions\"\]\.tolist\(\)"),
        (3, ["a"], r"`predictions` is int \(3\), not a list of texts"),
        (["a"], 2.5, r"`references` is float \(2.5\), not a list of texts"),
        (b"a b", ["a"], r"`predictions` is bytes; decode it"),
        (["a"], None, r"`references` is None"),
        ("series-a", "series-b", r"`predictions` and `references` are pandas Series with different indexes"),
    ],
)
def test_module_refuses_unreadable_inputs(predictions, references, message, metrics_dir):
    import pandas as pd

    frame = pd.DataFrame({"p": ["a", "b"], "r": ["a", "c"]})
    given = {"dataframe": frame, "series-a": pd.Series(["a", "b"], index=[0, 1]),
             "series-b": pd.Series(["a", "c"], index=[1, 0])}
    predictions = given.get(predictions, predictions) if isinstance(predictions, str) else predictions
    references = given.get(references, references) if isinstance(references, str) else references
    if references is None and isinstance(predictions, pd.DataFrame):
        references = ["a", "b"]
    with pytest.raises(ValueError, match=message):
        _load(metrics_dir, "bleu").compute(predictions=predictions, references=references)


def test_reference_free_module_normalises_sources(metrics_dir, models):
    """``sources`` (a column passed through evaluate's ``**kwargs``) is normalised too."""
    import pandas as pd

    module = _load(metrics_dir, "shannon_score")
    want = module.compute(predictions=PREDICTIONS, sources=SOURCES, model=models["gpt2"])
    got = module.compute(predictions=pd.Series(PREDICTIONS, index=[7, 8, 9]),
                         sources=(s for s in SOURCES), model=models["gpt2"])
    assert got == want


class _Recorder:
    """Stands in for ``evaluate.Metric``: records what reaches it after the checks."""

    features = None

    def __init__(self, features):
        self.features = features
        self.batches = []

    def _feature_names(self):
        return list(self.features)

    def add_batch(self, **batch):
        self.batches.append(batch)


def _module(features):
    from nlgmetrics.apps.evaluate_adapter import CheckedTextInputs

    class Module(CheckedTextInputs, _Recorder):
        pass

    return Module(features)


_TEXTS = st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=8), min_size=1, max_size=6)


@settings(max_examples=80, deadline=None)
@given(texts=_TEXTS, form=st.sampled_from(["list", "tuple", "generator", "numpy", "series"]),
       index=st.randoms(use_true_random=False))
def test_every_container_reaches_evaluate_as_the_same_plain_list_property(texts, form, index):
    """Whatever the container (and a Series' index labels), evaluate receives ``list(texts)`` in
    positional order, and references become one list of references per example."""
    import datasets

    labels = list(range(100, 100 + len(texts)))
    index.shuffle(labels)
    features = datasets.Features({"predictions": datasets.Value("string"),
                                  "references": datasets.Sequence(datasets.Value("string"))})
    module = _module(features)
    module.add_batch(predictions=_input_forms(texts, labels)[form], references=_input_forms(texts, labels)[form])
    (batch,) = module.batches
    assert batch["predictions"] == list(texts) and type(batch["predictions"]) is list
    assert batch["references"] == [[t] for t in texts]


@settings(max_examples=40, deadline=None)
@given(texts=_TEXTS, position=st.integers(min_value=0, max_value=5),
       bad=st.one_of(st.integers(), st.floats(allow_nan=False), st.none(), st.binary(max_size=3)))
def test_a_non_text_anywhere_is_named_property(texts, position, bad):
    import datasets

    position = min(position, len(texts) - 1)
    items = list(texts)
    items[position] = bad
    module = _module(datasets.Features({"predictions": datasets.Value("string"), "sources": datasets.Value("string")}))
    with pytest.raises(ValueError, match=rf"`predictions\[{position}\]` is {type(bad).__name__}"):
        module.add_batch(predictions=(x for x in items), sources=list(texts))
    assert not module.batches
