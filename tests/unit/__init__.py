"""Tests of one package each, mirroring src/nlgmetrics/<package> (benchmarks/: the benchmark scripts)."""
