"""Front ends over the metrics: the command line, the Gradio demos, the Trainer hook, file input,
the ``evaluate`` adapter and the example script. Each reads what a metric is from its protocol,
through :mod:`nlgmetrics.registry`, and holds no code of its own for any one metric.

Layering: ``apps`` imports the registry, ``compare``, the metrics, the engine and ``core``;
nothing below imports ``apps``.
"""
