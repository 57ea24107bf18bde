"""Shared fixtures: tiny random models of real architectures with real tokenizers, on disk.

Each fixture is session-scoped: a model is built once and saved to a temporary directory, so every
test loads it through the real ``from_pretrained`` path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
    """A 1-layer BERT that copies frequent context tokens, so BLANC counts are not all 0 (tests/oracles/copy_bert.py)."""
    from tests.oracles.copy_bert import build_copy_bert

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


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (selenium driver), one per test module; skips when it is not installed."""
    from tests.browser_support import chromium

    yield from chromium()


@pytest.fixture
def serve():
    """serve(name, **kwargs) -> URL of that metric's demo, served in this process on a free port;
    every server is closed afterwards."""
    from nlgmetrics.apps.demo import launch_demo
    from tests.browser_support import free_port

    demos = []

    def start(name: str, **kwargs) -> str:
        port = free_port()
        demo = launch_demo(name, server_port=port, server_name="127.0.0.1", block=False, quiet=True, **kwargs)
        demos.append(demo)
        return f"http://127.0.0.1:{port}/"

    yield start
    for demo in demos:
        demo.close()


@pytest.fixture
def leaky_packing(monkeypatch):
    """Call it to make the engine's packed rows leak: every segment of a row then sees the
    segments before it (a plain causal mask over the row), which the packing check must refuse."""
    import torch

    import nlgmetrics.engine.packing as packing

    honest = packing.packed_inputs

    def leaky(rows, cached, dtype):
        ids, positions, mask, head_rows, head_cols = honest(rows, cached, dtype)
        causal = torch.ones(ids.shape[1], ids.shape[1]).tril().bool()
        mask[:, 0, :, cached:] = torch.where(causal, torch.zeros((), dtype=dtype), mask[:, 0, :, cached:])
        return ids, positions, mask, head_rows, head_cols

    return lambda: monkeypatch.setattr(packing, "packed_inputs", leaky)
