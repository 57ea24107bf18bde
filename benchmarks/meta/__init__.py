"""The meta-evaluation benchmark: data sets, metric runs, score cache, tables, plots, runner.

The statistics it uses are the library's (:mod:`nlgmetrics.stats`).

- :mod:`benchmarks.meta.data`: REALSumm and WebNLG 2020 loaders (via ``datasets``);
- :mod:`benchmarks.meta.metrics`, :mod:`benchmarks.meta.cache`: the metric runs of the benchmark
  and their on-disk per-example cache;
- :mod:`benchmarks.meta.runner`: the benchmark runner (``nlgmetrics meta-eval``).
"""
