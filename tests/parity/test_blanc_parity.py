"""Parity of nlgmetrics.blanc with the reference implementation, PyPI blanc 0.3.4.

Random weights make BLANC degenerate (nothing is ever unmasked right, every score is 0), so the
model here (the ``copy_bert_dir`` fixture, tests/support/oracles/copy_bert.py) is *built* to copy tokens from its
context: a summary that repeats a word helps unmask it (S01) and a summary full of other words
hurts (S10); small noise on every weight makes an off-by-one in the inputs show. Both sides load
the same directory; blanc's nltk splitter is replaced by ours.
Every compared case asserts non-zero counts in the cells it compares, so the tests can fail.
"""

from __future__ import annotations

import pytest
import torch

from nlgmetrics.core.sentences import split_sentences


@pytest.fixture(scope="session")
def blanc_module():
    """blanc.blanc with our offline splitter in place of nltk's punkt (restored afterwards)."""
    from tests.support.oracles.blanc_reference import import_blanc

    import_blanc()
    import blanc.blanc as reference

    original = reference.sent_tokenize
    reference.sent_tokenize = split_sentences
    try:
        yield reference
    finally:
        reference.sent_tokenize = original


_LONG_SENTENCE = " ".join(
    f"the {w} committee reviewed {w} reports and" for w in
    ["budget", "harbour", "railway", "library", "hospital", "museum", "airport", "stadium"] * 8
) + " finally approved everything."

DOCS = [
    "Potatoes potatoes potatoes potatoes grow slowly in winter. The farmer planted tomatoes near "
    "the river. Tomatoes need sunshine and tomatoes need water.",
    "Stocks rallied strongly today. Investors bought technology shares while banks struggled. "
    "Technology companies reported record earnings, and technology investors cheered loudly.",
    "Café owners in Zürich complained about tourists. Naïve visitors photographed everything!",
    _LONG_SENTENCE,  # one sentence of ~450 tokens: blanc's window truncation with a summary
    _LONG_SENTENCE.replace("finally", "and the mayor " * 70 + "finally"),  # alone > 512 tokens
    "",
]
SUMMARIES = [
    ["Tomatoes tomatoes tomatoes everywhere tomatoes.", "Potatoes grow slowly.",
     "Winter winter winter winter sunshine.", ""],
    ["Technology technology stocks rallied.", "Banks banks banks struggled badly banks.", "   "],
    ["Tourists tourists photographed Zürich cafés.", "Owners complained complained."],
    ["The committee approved reports. " * 20, "Budget budget harbour reports.",
     "The committee approved reports. " * 120,  # > 410 tokens: keeps its leading sentences
     "budget harbour railway " * 200],  # one 600-token sentence: keeps its last tokens
    ["Mayor mayor committee."],
    ["Empty documents have nothing to mask."],
]


def _pairs():
    docs, sums = [], []
    for doc, summaries in zip(DOCS, SUMMARIES):
        for summary in summaries:
            docs.append(doc)
            sums.append(summary)
    return docs, sums


@pytest.fixture(scope="session")
def reference_default(blanc_module, copy_bert_dir):
    """BlancHelp with default options (counts included) on every pair, computed once."""
    reference = blanc_module.BlancHelp(model_name=str(copy_bert_dir), measure="relative-counts",
                                       show_progress_bar=False, inference_batch_size=8)
    docs, sums = _pairs()
    return reference.eval_pairs(docs, sums)


def _nonzero_cells(counts_list):
    return [[sum(c[b][h] for c in counts_list) for h in (0, 1)] for b in (0, 1)]


def test_copy_model_is_not_degenerate(reference_default):
    """The reference itself finds help and harm on these texts (else parity would be vacuous)."""
    totals = _nonzero_cells([counts for _, counts in reference_default])
    assert all(totals[b][h] > 0 for b in (0, 1) for h in (0, 1)), totals


@pytest.mark.parametrize("measure", ["relative", "improve"])
def test_blanc_help_equals_reference(blanc_module, reference_default, copy_bert_dir, measure):
    from blanc.utils import measure_improve, measure_relative

    from nlgmetrics.blanc import blanc_help

    docs, sums = _pairs()
    reference_measure = measure_relative if measure == "relative" else measure_improve
    with pytest.warns(UserWarning, match="exceeded the 512-token window"):
        ours = blanc_help(sums, docs, model=str(copy_bert_dir), measure=measure, progress=False,
                          token_budget=2048)
    assert ours.counts == [counts for _, counts in reference_default]
    assert ours.scores["blanc"] == [float(reference_measure(counts)) for _, counts in reference_default]
    assert ours.scores["blanc"][0] == pytest.approx(float(reference_default[0][0]))  # relative as returned


def test_blanc_help_options_equal_reference(blanc_module, copy_bert_dir):
    """Non-default gap / gap_mask / lengths / filler / separator / allow-cut, incl. the wrap-around window."""
    from nlgmetrics.blanc import blanc_help

    options = dict(gap=3, gap_mask=2, min_token_length_normal=3, min_token_length_lead=1,
                   min_token_length_followup=2, filler_token="[UNK]", help_sep="so,",
                   len_sent_allow_cut=50)
    docs, sums = _pairs()
    # The short documents only (the long ones are covered above; they cost blanc the most time).
    short = [i for i, doc in enumerate(docs) if len(doc) < 1000]
    docs, sums = [docs[i] for i in short], [sums[i] for i in short]
    reference = blanc_module.BlancHelp(model_name=str(copy_bert_dir), measure="relative-counts",
                                       show_progress_bar=False, inference_batch_size=8, **options)
    expected = reference.eval_pairs(docs, sums)
    ours = blanc_help(sums, docs, model=str(copy_bert_dir), progress=False, **options)
    assert ours.counts == [counts for _, counts in expected]
    assert ours.scores["blanc"] == [float(score) for score, _ in expected]
    totals = _nonzero_cells(ours.counts)
    assert totals[0][1] > 0 and totals[1][1] > 0, totals


# ----------------------------------------------------------------------------------------------
# BLANC-tune: same seed -> the same draws, the same dropout masks, the same weights, bit for bit.


@pytest.mark.parametrize("even, batch", [(True, 1), (False, 3)])
def test_tuned_weights_equal_reference(blanc_module, copy_bert_dir, even, batch):
    """blanc's own ``finetune`` and ours give bitwise-equal weights (random replacement, dropout,
    random masking and padding included); a different seed gives different weights."""
    import copy
    import random

    from nlgmetrics.blanc.masking import MaskingOptions
    from nlgmetrics.blanc.tune import TuneOptions, finetune_copy, tuning_examples
    from nlgmetrics.engine import load_lm

    summary = "The committee approved reports. " * 7 + "Budget budget harbour."
    reference = blanc_module.BlancTune(model_name=str(copy_bert_dir), show_progress_bar=False,
                                       random_seed=5, finetune_epochs=2,
                                       finetune_mask_evenly=even, finetune_batch_size=batch)
    expected_model = copy.deepcopy(reference.base_model)
    reference.finetune(expected_model, summary)
    expected = expected_model.state_dict()

    lm = load_lm(str(copy_bert_dir), kind="masked", device="cpu")
    options = TuneOptions(masking=MaskingOptions(), epochs=2, mask_evenly=even, batch_size=batch)
    tokens = lm.tokenizer.tokenize(summary)
    for seed, equal in ((5, True), (6, False)):
        examples = tuning_examples(tokens, options, random.Random(seed), lm.tokenizer)
        assert len(examples) > 2
        tuned = finetune_copy(lm, examples, options, seed).state_dict()
        same = all(torch.equal(expected[k], tuned[k]) for k in expected)
        assert same is equal, (seed, max((expected[k] - tuned[k]).abs().max() for k in expected))


def test_blanc_tune_equals_reference(blanc_module, copy_bert_dir):
    from nlgmetrics.blanc import blanc_tune

    docs = [DOCS[0], DOCS[0], DOCS[1], DOCS[1], DOCS[0], DOCS[2]]
    sums = [SUMMARIES[0][0], SUMMARIES[0][2], SUMMARIES[1][0], SUMMARIES[1][1], "",
            SUMMARIES[2][0]]
    # A high learning rate so that 3 epochs of tuning change predictions (both ways).
    options = dict(finetune_epochs=3, learning_rate=1e-2)
    reference = blanc_module.BlancTune(model_name=str(copy_bert_dir), measure="relative-counts",
                                       show_progress_bar=False, random_seed=3, **options)
    expected = reference.eval_pairs(docs, sums)
    ours = blanc_tune(sums, docs, model=str(copy_bert_dir), seed=3, progress=False, **options)
    assert ours.counts == [counts for _, counts in expected]
    assert ours.scores["blanc"] == [float(score) for score, _ in expected]
    totals = _nonzero_cells(ours.counts)
    assert totals[0][1] > 0 and totals[1][0] > 0 and totals[1][1] > 0, totals
