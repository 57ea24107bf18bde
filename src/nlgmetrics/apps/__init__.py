"""Front ends over the metrics: the command line, the Gradio demos, the Trainer hook, file input
and the ``evaluate`` adapter. Each reads what a metric is from its protocol, through
:mod:`nlgmetrics.registry`, and holds no code of its own for any one metric. What only this
repository runs (the example script; the release script, which writes each Space's ``app.py``)
lives in ``scripts/``.

Layering: ``apps`` imports the registry, ``compare``, the metrics, the engine and ``core``;
nothing below imports ``apps``.
"""
