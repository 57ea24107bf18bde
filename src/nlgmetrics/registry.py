"""The registry: the list of metric protocols, one line per metric.

Each line names a metric and the module of its package that declares its
:class:`~nlgmetrics.core.protocol.MetricSpec` as ``PROTOCOL``. The module is imported on first
use, so listing the names (``nlgmetrics --help``) imports no metric and no torch. Adding a metric
is its package (with its ``protocol.py``, ``citation.bib`` and ``description.md``), its
``metrics/<name>/`` folder and one line here; the command line, the evaluate modules, the Trainer
hook, ``compare``, the demos and the tests read it from here.

>>> metric_names()[:4]
['rouge_family', 'bleu', 'chrf', 'ter']
>>> get_protocol("bleu").second_input
'references'
>>> get_protocol("blue")
Traceback (most recent call last):
...
ValueError: Unknown metric 'blue'; choose from ['rouge_family', 'bleu', 'chrf', 'ter', 'infolm', 'shannon_score', 'blanc', 'fflm'].
"""

from __future__ import annotations

import importlib

from nlgmetrics.core.protocol import MetricSpec

#: Metric name -> the module declaring its ``PROTOCOL``, in the order of the design table.
PROTOCOLS: dict[str, str] = {
    "rouge_family": "nlgmetrics.rouge.protocol",
    "bleu": "nlgmetrics.bleu.protocol",
    "chrf": "nlgmetrics.chrf.protocol",
    "ter": "nlgmetrics.ter.protocol",
    "infolm": "nlgmetrics.infolm.protocol",
    "shannon_score": "nlgmetrics.shannon.protocol",
    "blanc": "nlgmetrics.blanc.protocol",
    "fflm": "nlgmetrics.fflm.protocol",
}

#: What a front end scores when it is given no metric: the two fast ones that need no model.
DEFAULT_METRICS = ("rouge_family", "bleu")
#: What ``nlgmetrics compare`` tests when it is given no metric: sacrebleu's paired tests' metric.
DEFAULT_COMPARE_METRIC = "bleu"


def metric_names() -> list[str]:
    """Names of every metric, in the registry's order (imports nothing)."""
    return list(PROTOCOLS)


def get_protocol(name: str) -> MetricSpec:
    """The protocol of ``name`` (clear error listing the valid names)."""
    if name not in PROTOCOLS:
        raise ValueError(f"Unknown metric {name!r}; choose from {list(PROTOCOLS)}.")
    # tests/unit/core/test_registry.py checks that each line's PROTOCOL is the MetricSpec of its name
    return importlib.import_module(PROTOCOLS[name]).PROTOCOL


def protocols() -> list[MetricSpec]:
    """Every protocol, in the registry's order (imports every metric package, torch included)."""
    return [get_protocol(name) for name in PROTOCOLS]

