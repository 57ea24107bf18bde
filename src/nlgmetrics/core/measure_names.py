"""Names of InfoLM's information measures, importable without torch.

The measures themselves live in :mod:`nlgmetrics.information_measures` (which needs torch); the
command line, the demos and the metric table list the names without loading torch.

>>> INFORMATION_MEASURES[-1]
'js_divergence'
"""

from __future__ import annotations

from typing import Literal, get_args

InformationMeasureName = Literal[
    "kl_divergence",
    "alpha_divergence",
    "beta_divergence",
    "ab_divergence",
    "renyi_divergence",
    "l1_distance",
    "l2_distance",
    "l_infinity_distance",
    "fisher_rao_distance",
    "js_divergence",
]

#: Every measure name, in the order above.
INFORMATION_MEASURES: tuple[str, ...] = get_args(InformationMeasureName)
