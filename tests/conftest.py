"""Shared fixtures: tiny random models of real architectures with real tokenizers, on disk.

Each fixture is session-scoped: a model is built once and saved to a temporary directory, so every
test loads it through the real ``from_pretrained`` path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The helpers under tests/support assert like test modules do (pytest explains a failed assert).
pytest.register_assert_rewrite("tests.support")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parent.parent
METRICS_DIR = REPO_ROOT / "metrics"
SHARED_DATA = Path(os.environ.get("NLGMETRICS_DATA", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> Path:
    """A tiny random ``BertForMaskedLM`` (hidden 32, 2 layers, 128 positions), BERT uncased vocab."""
    from nlgmetrics.testing import build_random_model

    return build_random_model("bert", tmp_path_factory.mktemp("tiny-bert"), size="tiny")


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory) -> Path:
    """A tiny random ``GPT2LMHeadModel`` (hidden 32, 2 layers, 256 positions), SmolLM2 BPE vocab."""
    from nlgmetrics.testing import build_random_model

    return build_random_model("gpt2", tmp_path_factory.mktemp("tiny-gpt2"), size="tiny")


@pytest.fixture(scope="session")
def tiny_llama_dir(tmp_path_factory) -> Path:
    """A tiny random ``LlamaForCausalLM`` (hidden 32, 2 layers, 256 positions), SmolLM2 BPE vocab."""
    from nlgmetrics.testing import build_random_model

    return build_random_model("llama", tmp_path_factory.mktemp("tiny-llama"), size="tiny")


@pytest.fixture(scope="session")
def copy_bert_dir(tmp_path_factory) -> Path:
    """A 1-layer BERT that copies frequent context tokens, so BLANC counts are not all 0
    (tests/support/oracles/copy_bert.py)."""
    from tests.support.oracles.copy_bert import build_copy_bert

    return build_copy_bert(tmp_path_factory.mktemp("copy-bert"))


@pytest.fixture(scope="session")
def metrics_dir() -> Path:
    """The folder holding the evaluate modules (``metrics/<name>``)."""
    return METRICS_DIR


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """../shared/data (or $NLGMETRICS_DATA); tests needing it skip with a reason when absent."""
    if not SHARED_DATA.exists():
        pytest.skip(f"human-judgment data not found at {SHARED_DATA} (set NLGMETRICS_DATA)")
    return SHARED_DATA


@pytest.fixture()
def segments_per_packed_row(monkeypatch) -> list[int]:
    """The number of targets in each row of every packed pass the engine runs."""
    import nlgmetrics.engine.causal as causal

    seen: list[int] = []
    packed = causal._forward_packed

    def counting(lm, distinct, rows, *args):
        seen.extend(len(row) for row in rows)
        return packed(lm, distinct, rows, *args)

    monkeypatch.setattr(causal, "_forward_packed", counting)
    return seen


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (selenium driver), one per test module; skips when it is not installed."""
    from tests.support.browser_support import chromium

    yield from chromium()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    """Where the browser tests save their screenshots: a temporary folder, or $NLGMETRICS_SCREENSHOTS
    (e.g. benchmarks/results/screenshots, to refresh the committed ones on purpose)."""
    from tests.support.browser_support import screenshots_folder

    return screenshots_folder(tmp_path_factory.mktemp("screenshots"))


@pytest.fixture
def serve():
    """serve(name, **kwargs) -> URL of that metric's demo, served in this process on a free port;
    every server is closed afterwards."""
    from nlgmetrics.apps.demo import launch_demo
    from tests.support.browser_support import free_port

    demos = []

    def start(name: str, **kwargs) -> str:
        port = free_port()
        demo = launch_demo(name, server_port=port, server_name="127.0.0.1", block=False, quiet=True, **kwargs)
        demos.append(demo)
        return f"http://127.0.0.1:{port}/"

    yield start
    for demo in demos:
        demo.close()


#: Folders whose tests drive something beyond the library on small inputs: reference
#: implementations and naive oracles on models (parity/), several processes, a browser, a Space
#: build, the benchmark scripts, wheels, servers and the README run end to end (e2e/). They carry
#: the ``integration`` marker, so that ``bash scripts/test.sh -m "not integration"`` is the quick
#: unit part (CI runs everything). A module elsewhere opts in with ``pytestmark``.
INTEGRATION_FOLDERS = frozenset({"parity", "e2e"})
TESTS_DIR = Path(__file__).resolve().parent

#: Fixtures that mean the same: a browser, a served demo, the human-judgment data.
INTEGRATION_FIXTURES = frozenset({"browser", "serve", "shared_data_dir"})


def pytest_collection_modifyitems(config, items):
    """Mark integration tests (see :data:`INTEGRATION_FOLDERS`); tests marked ``slow`` and tests of
    the offline SmolLM2 model count too."""
    integration = pytest.mark.integration
    for item in items:
        if (
            _top_folder(item.path) in INTEGRATION_FOLDERS
            or INTEGRATION_FIXTURES.intersection(getattr(item, "fixturenames", ()))
            or item.get_closest_marker("slow") is not None
            or "smollm2" in item.name.lower()  # the offline 135M model: a real model, seconds a call
        ):
            item.add_marker(integration)


def _top_folder(path: Path) -> str | None:
    """The folder right under tests/ that holds ``path`` (``unit``, ``parity``, ...), if any."""
    try:
        parts = path.resolve().relative_to(TESTS_DIR).parts
    except ValueError:  # a test file outside tests/, e.g. a path given on the command line
        return None
    return parts[0] if len(parts) > 1 else None
