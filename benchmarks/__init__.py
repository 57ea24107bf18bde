"""Benchmarks of nlgmetrics: run each as a module from the repository root, e.g.
``python -m benchmarks.meta_eval --help`` or ``python -m benchmarks.speed --only text``."""
