"""BLANC-help on the speed benchmark's CPU pairs (2 REALSumm documents x 4 summaries, bert-tiny),
ours only: one warm-up, then five timed calls in one process; prints the median and which
``nlgmetrics`` ran (put another tree's ``src/`` first on PYTHONPATH to time it)."""

import time
import warnings

from benchmarks import harness
from benchmarks.random_models import cached_random_model
from benchmarks.realsumm_slices import realsumm_pairs

import nlgmetrics
from nlgmetrics.blanc import blanc_help
from nlgmetrics.engine import load_lm

docs, sums = realsumm_pairs(harness.realsumm_file(), 2, 4)
lm = load_lm(str(cached_random_model("bert", "tiny")[0]), kind="masked")
warnings.simplefilter("ignore")


def run():
    return blanc_help(sums, docs, model=lm, progress=False)


run()
times = []
for _ in range(5):
    start = time.perf_counter()
    run()
    times.append(time.perf_counter() - start)
print(nlgmetrics.__file__, "median %.3f" % sorted(times)[2], " ".join("%.3f" % t for t in times))
