"""The six ``evaluate`` modules: offline load, compute / add / add_batch, combine, model cards, apps.

Every module is loaded from its folder with ``evaluate.load(path)`` under HF_HUB_OFFLINE=1; its
numbers must equal a direct call of the library function on the same inputs (LM metrics on the
tiny random fixture models). Streaming the inputs with ``add`` / ``add_batch`` must give the same
result as one ``compute``. ``evaluate.combine`` is checked where the inputs fit: rouge_family + bleu
(predictions, references) and shannon_score + fflm (predictions, sources, one causal model).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest

METRICS = ("rouge_family", "bleu", "infolm", "shannon_score", "blanc", "fflm")

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


def _load(metrics_dir: Path, name: str):
    import evaluate

    path = metrics_dir / name
    if not (path / f"{name}.py").exists():
        pytest.fail(f"metrics/{name}/{name}.py is missing")
    return evaluate.load(str(path))


# --------------------------------------------------------------------------------------------
# Per metric: module inputs, compute kwargs, and the library call giving the expected values.


def _case(name: str, models: dict[str, str]):
    """(inputs, kwargs, expected {output key: value}) for metric ``name``."""
    if name == "rouge_family":
        from nlgmetrics.rouge import rouge_scores

        kwargs = {"rouge_types": ["rouge1", "rougeL", "rougeSU4"], "use_stemmer": True}
        want = rouge_scores(PREDICTIONS, REFERENCES, **kwargs)
        expected = {t: want["aggregate"][t]["fmeasure"]["mean"] for t in kwargs["rouge_types"]}
        expected["signature"] = want["signature"]
        return {"predictions": PREDICTIONS, "references": REFERENCES}, kwargs, expected
    if name == "bleu":
        from nlgmetrics.bleu import corpus_bleu

        kwargs = {"tokenize": "intl", "smooth_method": "floor"}
        want = corpus_bleu(PREDICTIONS, REFERENCES, **kwargs)
        expected = {"score": want.score, "bp": want.bp, "precisions": list(want.precisions), "signature": want.signature}
        return {"predictions": PREDICTIONS, "references": REFERENCES}, kwargs, expected
    if name == "infolm":
        from nlgmetrics.infolm import infolm

        kwargs = {"model": models["bert"], "information_measure": "ab_divergence", "alpha": 1.5, "beta": 0.5}
        want = infolm(PREDICTIONS, REFERENCES, progress=False, **kwargs)
        expected = {"scores": list(want.scores), "infolm": want.mean, "signature": want.signature}
        return {"predictions": PREDICTIONS, "references": REFERENCES}, kwargs, expected
    if name == "shannon_score":
        from nlgmetrics.shannon import shannon_score

        kwargs = {"model": models["gpt2"]}
        want = shannon_score(SOURCES, PREDICTIONS, progress=False, **kwargs)
        expected = {k: v for k, v in want.to_dict().items() if k in ("shannon_score", "ll_help", "ll_base", "s", "signature")}
        return {"predictions": PREDICTIONS, "sources": SOURCES}, kwargs, expected
    if name == "blanc":
        from nlgmetrics.blanc import blanc_help

        kwargs = {"model": models["bert"], "gap": 3}
        want = blanc_help(SOURCES, PREDICTIONS, progress=False, **kwargs)
        expected = {"blanc": list(want.scores), "signature": want.signature}
        return {"predictions": PREDICTIONS, "sources": SOURCES}, kwargs, expected
    if name == "fflm":
        from nlgmetrics.fflm import fflm

        kwargs = {"model": models["llama"], "weights": (0.5, 0.2, 0.3)}
        want = fflm(SOURCES, PREDICTIONS, progress=False, **kwargs)
        expected = {"fflm": want.fflm, "delta_cond_summary": want.delta_cond_summary, "signature": want.signature}
        return {"predictions": PREDICTIONS, "sources": SOURCES}, kwargs, expected
    raise AssertionError(name)


def _assert_matches(result: dict, expected: dict, tol: float = 1e-9):
    for key, want in expected.items():
        assert key in result, f"output has no {key!r}: {sorted(result)}"
        got = result[key]
        if isinstance(want, float):
            assert math.isclose(got, want, rel_tol=tol, abs_tol=tol), (key, got, want)
        elif isinstance(want, (list, tuple)) and want and isinstance(want[0], float):
            assert len(got) == len(want), key
            for g, w in zip(got, want):
                assert math.isclose(g, w, rel_tol=tol, abs_tol=tol), (key, got, want)
        else:
            assert got == want, (key, got, want)


@pytest.fixture(scope="module")
def models(tiny_bert_dir, tiny_gpt2_dir, tiny_llama_dir) -> dict[str, str]:
    return {"bert": str(tiny_bert_dir), "gpt2": str(tiny_gpt2_dir), "llama": str(tiny_llama_dir)}


@pytest.mark.slow
@pytest.mark.parametrize("name", METRICS)
def test_module_compute_add_and_add_batch_equal_library(name, metrics_dir, models):
    module = _load(metrics_dir, name)
    inputs, kwargs, expected = _case(name, models)
    _assert_matches(module.compute(**inputs, **kwargs), expected)

    # add_batch in two chunks, then compute with options only
    keys = list(inputs)
    module.add_batch(**{k: inputs[k][:2] for k in keys})
    module.add_batch(**{k: inputs[k][2:] for k in keys})
    _assert_matches(module.compute(**kwargs), expected)

    # add one example at a time (evaluate's singular names: prediction / reference / sources)
    for i in range(len(PREDICTIONS)):
        single = {("prediction" if k == "predictions" else "reference" if k == "references" else k): inputs[k][i]
                  for k in keys}
        module.add(**single)
    _assert_matches(module.compute(**kwargs), expected)


@pytest.mark.slow
def test_combine_reference_metrics(metrics_dir, models):
    import evaluate

    combined = evaluate.combine([_load(metrics_dir, "rouge_family"), _load(metrics_dir, "bleu")])
    result = combined.compute(predictions=PREDICTIONS, references=REFERENCES)
    _, _, rouge = _case("rouge_family", models)
    from nlgmetrics.bleu import corpus_bleu
    from nlgmetrics.rouge import rouge_scores

    want_rouge = rouge_scores(PREDICTIONS, REFERENCES)
    want_bleu = corpus_bleu(PREDICTIONS, REFERENCES)
    assert result["rougeL"] == want_rouge["aggregate"]["rougeL"]["fmeasure"]["mean"]
    assert result["score"] == want_bleu.score
    # both modules return "signature": combine prefixes duplicated keys with the module name
    assert result["bleu_signature"] == want_bleu.signature
    assert result["rouge_family_signature"] == want_rouge["signature"]


@pytest.mark.slow
def test_combine_reference_free_metrics(metrics_dir, models):
    import evaluate

    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    combined = evaluate.combine([_load(metrics_dir, "shannon_score"), _load(metrics_dir, "fflm")])
    combined.add_batch(predictions=PREDICTIONS, sources=SOURCES)
    result = combined.compute(model=models["gpt2"])
    want_shannon = shannon_score(SOURCES, PREDICTIONS, model=models["gpt2"], progress=False)
    want_fflm = fflm(SOURCES, PREDICTIONS, model=models["gpt2"], progress=False)
    _assert_matches(result, {"shannon_score": want_shannon.shannon_score, "fflm": want_fflm.fflm})


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
        if "from nlgmetrics.demo import launch_demo" not in code or f'launch_demo("{name}"' not in code:
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
    """evaluate's launch_gradio_widget uses gr.inputs, gone since Gradio 4: hence nlgmetrics.demo."""
    import evaluate

    with pytest.raises(AttributeError, match="inputs"):
        evaluate.utils.launch_gradio_widget(_load(metrics_dir, "bleu"))
    from nlgmetrics.demo import build_demo

    for name in METRICS:
        assert type(build_demo(name)).__name__ == "Blocks"
