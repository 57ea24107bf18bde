"""InfoLM (Colombo, Clavel, Piantanida, AAAI 2022): a divergence or distance between the bags of
distributions a masked (or causal) LM predicts for a candidate and a reference. Lower = more similar.

- :mod:`nlgmetrics.infolm.api`: :func:`infolm`, :func:`infolm_multi`, :class:`InfoLMResult`, and
  :func:`refusals` (what InfoLM refuses and why, from the rules its checks raise);
- :mod:`nlgmetrics.infolm.measures`: the information measures (the formula,
  :func:`information_measure`), their ranges and parameter checks;
- :mod:`nlgmetrics.infolm.distributions`: tokenization, idf, the text distributions;
- :mod:`nlgmetrics.infolm.planning`: distinct texts, chunks of bounded memory, pair scoring.

Public API (``__all__``): :func:`infolm`, :func:`infolm_multi`, :class:`InfoLMResult`,
:func:`information_measure`, :func:`refusals`; the rest stays in its module.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
>>> result = infolm(["a cat"], ["a cat"], model=path, progress=False)
>>> result.mean(), result.main_score, result.information_measure
({'infolm': 0.0}, 0.0, 'fisher_rao_distance')
"""

from nlgmetrics.infolm.api import InfoLMResult, infolm, infolm_multi, refusals
from nlgmetrics.infolm.measures import information_measure

# Not in __all__, importable here because the benchmarks and the tests name them here; each
# belongs to the module it is imported from.
from nlgmetrics.infolm.api import DEFAULT_MODEL, RULES
from nlgmetrics.infolm.distributions import (
    IdfTable, compute_idf, default_token_budget, resolve_max_length, text_distributions, tokenize,
)
from nlgmetrics.infolm.measures import ALPHA_DIVERGENCE_FINITE_RANGE, INFORMATION_MEASURES, check_measure

__all__ = [
    "InfoLMResult",
    "infolm",
    "infolm_multi",
    "information_measure",
    "refusals",
]
