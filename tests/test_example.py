"""The README's main job (`python -m nlgmetrics.example`): prints each metric's number and signature."""

from __future__ import annotations

import re

from nlgmetrics.bleu import corpus_bleu
from nlgmetrics.example import EXAMPLE, main
from nlgmetrics.rouge import rouge_scores


def test_example_prints_library_numbers_and_signatures(capsys):
    assert main(["--metrics", "rouge_family,bleu"]) == 0
    out = capsys.readouterr().out
    rouge = rouge_scores(EXAMPLE["predictions"], EXAMPLE["references"])
    expected_l = sum(rouge["scores"]["rougeL"]["fmeasure"]) / 3
    printed_l = float(re.search(r"rougeL_fmeasure = ([0-9.]+)", out).group(1))
    assert abs(printed_l - expected_l) < 5e-5
    bleu = corpus_bleu(EXAMPLE["predictions"], EXAMPLE["references"])
    printed_bleu = float(re.search(r"bleu\s+score = ([0-9.]+)", out).group(1))
    assert abs(printed_bleu - bleu.score) < 5e-5
    assert out.count("signature: ") == 2
    assert bleu.signature in out


def test_example_skips_a_metric_whose_model_kind_is_wrong_with_one_line(capsys, tiny_gpt2_dir):
    assert main(["--metrics", "blanc", "--model", str(tiny_gpt2_dir)]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("blanc"))
    assert "skipped:" in line and "is a causal LM" in line
