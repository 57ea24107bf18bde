"""The shared LM scoring engine: load a model once, score each distinct input once, fast.

Every LM metric (InfoLM, BLANC, Shannon, FFLM) goes through these functions; none runs its own
forward passes; each enters it through ``call`` (:func:`lm_call`: shared options checked, model
loaded, store opened and closed). One plain path per model kind, each readable top to bottom in
its module: ``masked`` (:func:`iter_masked`) and ``causal`` (:func:`iter_causal`): plan the distinct queries
into length-sorted batches within a token budget (``planning``; a shared prefix cache for the
causal kind), run the forward passes (``runner`` / ``distributed``: progress, accelerate;
``transfer``: host<->device copies), apply the LM head at the needed rows only and reduce them
on the fly (``heads``). Loading a model: ``loading`` (:func:`load_lm`, :class:`LoadedLM`, the
in-process cache), ``devices``, ``dispatch`` (models accelerate spread over devices, the CPU and
the disk), ``fingerprints``, ``kinds``, ``checkpoint`` (files and tokenizer),
``smollm2`` (the offline GGUF model), ``errors``; :func:`release` empties that cache. Across calls and processes: ``store`` (what
the engine computed for each distinct query, on disk, keyed by everything that can change it). Around the engine, each metric's per-call
bookkeeping: ``bookkeeping`` (distinct queries, the per-example progress bar, warn-once counters).

>>> from nlgmetrics.engine import load_lm, CausalQuery, causal_target_scores
>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> lm = load_lm(build_random_model("llama", tempfile.mkdtemp(), size="tiny"))
>>> q = CausalQuery(prefix_ids=(lm.tokenizer.bos_token_id,), target_ids=(10, 11, 12))
>>> causal_target_scores(lm, [q], progress=False)[0].logprobs.shape
(3,)
"""

from nlgmetrics.engine.causal import (
    TARGET_LOGPROBS,
    TARGET_LOGPROBS_ARGMAX,
    CausalQuery,
    causal_target_scores,
    iter_causal,
    target_logprobs_float32,
)
from nlgmetrics.engine.distributed import distributed_map
from nlgmetrics.engine.errors import ModelKindError, ModelNotFoundError
from nlgmetrics.engine.allocator import keep_freed_memory
from nlgmetrics.engine.loading import LoadedLM, clear_cache, load_lm, release
from nlgmetrics.engine.masked import MaskedQuery, iter_masked
from nlgmetrics.engine.smollm2 import SMOLLM2_ALIAS
from nlgmetrics.engine.store import StoredReduction, StoreWarning
from nlgmetrics.engine.store_sharing import open_store
from nlgmetrics.engine.call import check_call_options, lm_call

# The public API: what a user calls (load a model, release it, the errors and the store's
# warning) and what a metric builds on (the queries, the two scoring paths, the store). The other
# names imported above are here for the metric packages and the tests, not in ``__all__``.
__all__ = [
    "CausalQuery",
    "LoadedLM",
    "MaskedQuery",
    "ModelKindError",
    "ModelNotFoundError",
    "StoreWarning",
    "causal_target_scores",
    "check_call_options",
    "iter_causal",
    "iter_masked",
    "keep_freed_memory",
    "lm_call",
    "load_lm",
    "open_store",
    "release",
]
