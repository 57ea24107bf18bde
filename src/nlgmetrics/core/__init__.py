"""Shared basics of every metric, without torch: the result base, the signature vocabulary,
input and option validation, sentence splitting, the InfoLM measure names.

Layering: ``core`` imports nothing else of nlgmetrics; the engine, the metrics and the front ends
(``apps``) import ``core``.
"""
