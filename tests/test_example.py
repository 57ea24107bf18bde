"""The README's main job (`python -m nlgmetrics.apps.example`): prints each metric's number and signature."""

from __future__ import annotations

import re

from nlgmetrics.apps.example import EXAMPLE, main
from nlgmetrics.bleu import bleu
from nlgmetrics.rouge import rouge_family


def test_example_prints_library_numbers_and_signatures(capsys):
    assert main(["--metrics", "rouge_family,bleu"]) == 0
    out = capsys.readouterr().out
    rouge = rouge_family(EXAMPLE["predictions"], EXAMPLE["references"])
    # the main score is the first requested type (rouge1 by default), a mean over the examples
    expected_1 = sum(rouge.scores["rouge1"]) / 3
    printed_1 = float(re.search(r"rouge_family\s+rouge1 = ([0-9.]+) \(higher is better\)", out).group(1))
    assert abs(printed_1 - expected_1) < 5e-5
    printed_each = re.search(r"rouge1 = .*per example: \[([0-9., ]+)\]", out).group(1)
    assert [float(v) for v in printed_each.split(", ")] == [round(v, 4) for v in rouge.scores["rouge1"]]
    corpus = bleu(EXAMPLE["predictions"], EXAMPLE["references"])
    printed_bleu = float(re.search(r"bleu\s+bleu = ([0-9.]+) \(higher is better\)", out).group(1))
    assert abs(printed_bleu - corpus.main_score) < 5e-5
    assert out.count("signature: ") == 2
    assert corpus.signature in out and rouge.signature in out


def test_example_skips_a_metric_whose_model_kind_is_wrong_with_one_line(capsys, tiny_gpt2_dir):
    assert main(["--metrics", "blanc", "--model", str(tiny_gpt2_dir)]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("blanc"))
    assert "skipped:" in line and "is a causal LM" in line
