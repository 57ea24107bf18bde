"""Studies of the LM engine (one question each, run as ``python -m benchmarks.studies.<name>``):
what each speed mechanism gains (``engine.py``, also against an earlier commit), how close each
metric comes to the machine's matmul rate (``limits.py``), what the store saves (``store.py``,
``store_writes.py``, ``store_nodes.py``), what fingerprinting a model costs (``fingerprint.py``,
``fingerprint_cost.py``), peak memory against the token budget (``memory_budget.py``) and the
offline models side by side (``models.py``). Each writes its report into
``benchmarks/results/<report>/`` through :mod:`benchmarks.harness`."""
