"""What the text metrics are checked for alike, written once: each evaluate module of the sacrebleu
family (BLEU, chrF, TER) gives sacrebleu's numbers on a corpus of mixed reference shapes and
counts, whichever shape comes first and however it is batched; no face of theirs (the metric, the
sufficient statistics, sacrebleu's names) changes its inputs; and every example of the text
metrics' model cards and module docstrings (BLEU, chrF, TER, ROUGE) prints what it shows.

Expected numbers come from sacrebleu with the same options (the oracle), never from nlgmetrics.
What is specific to one metric (parity on real text, hand cases, its options) stays in its file.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from nlgmetrics.bleu import BleuScorer, bleu, corpus_bleu
from nlgmetrics.chrf import chrf, chrf_statistics
from nlgmetrics.core.result import MetricResult
from nlgmetrics.ter import ter, ter_statistics
from tests.support.evaluate_support import (
    FIRST_SHAPES,
    compute_in_two_batches,
    mixed_shapes_first,
    reference_lists,
    sacrebleu_streams,
)
from tests.support.markdown_examples import REPO_ROOT, run_examples

pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU, CHRF, TER  # noqa: E402

# Example 0 has a list of references and example 1 a single string (mixed_shapes_first swaps
# them); reference counts vary (nrefs:var); punctuation, an empty hypothesis and CJK text reach
# every tokenizer.
MIXED_HYPOTHESES = ["the cat is on the mat", "there is a dog", "a bird sings today", "",
                    "It's 3.5% of U.S. sales, isn't it?", "\u4f60\u597d\u4e16\u754c\u3002"]
MIXED_REFERENCES = [["the cat is on the mat", "a cat is on the mat"], "there is a big dog",
                    ["a bird sang today", "the bird is singing"], ["something"],
                    ["it is 3.5 % of US sales , is it not ?", "Its 3.5% of U.S. sales."],
                    ["\u4f60\u597d\u3002", "\u4e16\u754c"]]


@dataclass(frozen=True)
class SacrebleuFamily:
    """One module of the family: its library function, its sacrebleu class (the oracle), options
    that are not the defaults, and how close its numbers must be to sacrebleu's (BLEU's
    ``exp(log(...))`` may differ in the last bits; chrF and TER must be equal)."""

    library: Callable[..., MetricResult]
    oracle: type
    options: Mapping[str, Any] = field(default_factory=dict)
    sentence_options: Mapping[str, Any] = field(default_factory=dict)
    tolerance: float = 0.0

    def corpus_score(self, hyps: list[str], refs: list[list[str]]) -> float:
        return self.oracle(**self.options).corpus_score(hyps, sacrebleu_streams(refs)).score

    def sentence_scores(self, hyps: list[str], refs: list[list[str]]) -> list[float]:
        anchor = self.oracle(**self.options, **self.sentence_options)
        return [anchor.sentence_score(h, r).score for h, r in zip(hyps, refs)]


FAMILY = {
    # sentence BLEU per example always uses effective order (sacrebleu's sentence default)
    "bleu": SacrebleuFamily(bleu, BLEU, {"tokenize": "intl"}, {"effective_order": True}, tolerance=1e-9),
    "chrf": SacrebleuFamily(chrf, CHRF, {"word_order": 2}),
    "ter": SacrebleuFamily(ter, TER, {"normalized": True}),
}


@pytest.mark.parametrize("first", FIRST_SHAPES)
@pytest.mark.parametrize("name", sorted(FAMILY))
def test_module_gives_sacrebleus_numbers_on_mixed_reference_shapes(name, first, metrics_dir, monkeypatch):
    """evaluate casts a batch to the shape of its first row: a list of references first and a
    single string first must both give sacrebleu's numbers, in one call and in two batches."""
    evaluate = pytest.importorskip("evaluate")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the module loads from its folder, offline
    family = FAMILY[name]
    hyps, refs = mixed_shapes_first(MIXED_HYPOTHESES, MIXED_REFERENCES, first)
    lists = reference_lists(refs)
    corpus, sentences = family.corpus_score(hyps, lists), family.sentence_scores(hyps, lists)
    library = family.library(hyps, refs, **family.options)
    [column] = library.scores
    module = evaluate.load(str(metrics_dir / name))
    for out in (compute_in_two_batches(module, hyps, refs, 1, **family.options),
                module.compute(predictions=hyps, references=refs, **family.options)):
        assert list(out)[0] == "score" and type(out["score"]) is float
        assert out["score"] == pytest.approx(corpus, rel=0, abs=family.tolerance)
        assert out[column] == library.aggregate()[column]
    options = {**family.options, "use_aggregator": False, "return_signature": True}
    for each in (compute_in_two_batches(module, hyps, refs, 3, **options),
                 module.compute(predictions=hyps, references=refs, **options)):
        assert each["score"] == pytest.approx(sentences, rel=0, abs=family.tolerance)
        assert each["signature"] == library.signature and "nrefs:var" in each["signature"]


#: Each family's faces besides the metric, called as ``face(predictions, references per example,
#: sacrebleu's reference streams)``.
OTHER_FACES: dict[str, tuple[Callable[[list[str], list[Any], list[Any]], Any], ...]] = {
    "bleu": (lambda hyps, refs, streams: corpus_bleu(hyps, streams),
             lambda hyps, refs, streams: BleuScorer().sentences(hyps, refs)),
    "chrf": (lambda hyps, refs, streams: chrf_statistics(hyps, refs, word_order=2),),
    "ter": (lambda hyps, refs, streams: ter_statistics(hyps, refs, normalized=True),),
}


@pytest.mark.parametrize("name", sorted(FAMILY))
def test_no_face_changes_its_inputs(name):
    hyps, refs = list(MIXED_HYPOTHESES), copy.deepcopy(MIXED_REFERENCES)
    streams = sacrebleu_streams(reference_lists(refs))
    before = copy.deepcopy((hyps, refs, streams))
    FAMILY[name].library(hyps, refs, **FAMILY[name].options)
    for face in OTHER_FACES[name]:
        face(hyps, refs, streams)
    assert (hyps, refs, streams) == before


#: Each text metric's card and evaluate module, with the fewest examples each must hold (so that
#: a card whose examples were lost, not just broken, fails).
EXAMPLES = [
    ("metrics/bleu/README.md", 14), ("metrics/bleu/bleu.py", 4),
    ("metrics/chrf/README.md", 10), ("metrics/chrf/chrf.py", 4),
    ("metrics/ter/README.md", 10), ("metrics/ter/ter.py", 4),
    ("metrics/rouge_family/README.md", 15), ("metrics/rouge_family/rouge_family.py", 4),
]


@pytest.mark.parametrize("path, minimum", EXAMPLES)
def test_card_and_module_examples_print_what_they_show(path, minimum):
    pytest.importorskip("evaluate")
    result, _ = run_examples(REPO_ROOT / path)
    assert result.attempted >= minimum and result.failed == 0, f"{result.failed} of {result.attempted} examples of {path} failed"
