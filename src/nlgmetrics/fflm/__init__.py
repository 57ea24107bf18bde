"""FFLM: zero-shot faithfulness from probability changes of a causal LM (Jia et al., EMNLP 2023).

For a document X and a summary Y, one causal LM gives five per-token probability lists (``s2s``,
``lm``, ``prefix``, ``s2s_doc``, ``lm_doc``), combined into Delta_prior(Y), Delta_prior(X),
Delta_cond(Y) and their weighted sum FFLM (higher is more faithful), as the authors' released
scorer does. The formula, how inputs are built and cut, and the choices where the authors' code is
undefined: the model card, metrics/fflm/README.md.

Layout: the formula in :mod:`nlgmetrics.fflm.components`, tokens, truncation and queries in
:mod:`nlgmetrics.fflm.planning` (the ``(start, X, sep)`` prefix once per document, ``lm_doc`` once
per distinct document, ``lm`` once per distinct summary), the call and its result in
:mod:`nlgmetrics.fflm.api` (work planned ``chunk_size`` distinct documents at a time). Public API
(``__all__``): :func:`fflm` -> :class:`FFLMResult`, :func:`fflm_components` (the formula),
:func:`refusals`; the defaults are constants of :mod:`nlgmetrics.fflm.api`.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("llama", tempfile.mkdtemp(), size="tiny")
>>> result = fflm(["A cat sat."], ["The cat sat on the mat."], model=path, progress=False)
>>> sorted(result.scores), result.higher_is_better
(['delta_cond_summary', 'delta_prior_document', 'delta_prior_summary', 'fflm'], True)
>>> result.main_score == result.mean()["fflm"] == result.scores["fflm"][0]
True
"""

from nlgmetrics.fflm.api import FFLMResult, fflm, refusals
from nlgmetrics.fflm.components import fflm_components

# Not in __all__, importable here because the card, the evaluate module and the tests name them
# here; each belongs to the module it is imported from.
from nlgmetrics.fflm.api import DEFAULT_MODEL, RULES, check_weights
from nlgmetrics.fflm.components import COMPONENT_BOUND

__all__ = [
    "FFLMResult",
    "fflm",
    "fflm_components",
    "refusals",
]
