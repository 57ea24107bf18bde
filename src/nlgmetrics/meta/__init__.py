"""The meta-evaluation benchmark: data sets, metric runs, score cache, tables, plots, runner.

The statistics it uses are the library's (:mod:`nlgmetrics.stats`).

- :mod:`nlgmetrics.meta.data`: REALSumm and WebNLG 2020 loaders (via ``datasets``);
- :mod:`nlgmetrics.meta.metrics`, :mod:`nlgmetrics.meta.cache`: the metric runs of the benchmark
  and their on-disk per-example cache;
- :mod:`nlgmetrics.meta.runner`: the benchmark runner (``nlgmetrics meta-eval``).
"""
