"""Front ends over the metrics: the metric registry, the command line, the Gradio demos, the
Trainer hook, file input, the ``evaluate`` adapter and the example script.

Layering: ``apps`` imports the metrics, the metrics import the engine and ``core``; nothing below
imports ``apps``.
"""
