"""Ours only, chrF++ or TER over the WebNLG 2020 systems (first 20 items): median process CPU s of 5
runs after one untimed run (:func:`benchmarks.harness.interleaved`).

Run from the repository root, the side under test first on PYTHONPATH:
``PYTHONPATH=<old src>:. python benchmarks/results/house_cut_4_vs_4e18edb/ours_only_chrf_ter.py ter``.
"""
import sys

import nlgmetrics
from benchmarks.harness import data_dir, interleaved
from benchmarks.speed.text import load_webnlg

systems = load_webnlg(data_dir(), 20)
what = sys.argv[1]


def run() -> None:
    if what == "ter":
        from nlgmetrics.ter import ter
        for predictions, references in systems.values():
            ter(predictions, references)
    else:
        from nlgmetrics.chrf import chrf
        for predictions, references in systems.values():
            chrf(predictions, references, word_order=2)


print(what, nlgmetrics.__file__, interleaved({what: run}, repeats=5)[what].spread.median)
