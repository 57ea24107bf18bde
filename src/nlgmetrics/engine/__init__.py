"""The shared LM scoring engine: load a model once, score each distinct input once, fast.

Every LM metric (InfoLM, BLANC, Shannon, FFLM) goes through these functions; none runs its own
forward passes. One module per job:

- loading a model: ``loading`` (``load_lm``, ``LoadedLM``, the in-process cache), ``devices``
  (device and dtype strings), ``fingerprints`` (weights hashes, change stamps), ``kinds`` (masked
  or causal), ``checkpoint`` (what a model folder holds), ``tokenizer_probe`` (a tokenizer that
  really tokenizes), ``smollm2`` (the offline GGUF model), ``errors``;
- planning the work: ``planning`` (dedupe, token-budget batches, chunks by document, OOM
  back-off), ``bookkeeping`` (distinct queries, the per-example progress bar, warn-once counters);
- running it: ``masked`` / ``causal`` (the two scoring passes), ``heads`` (LM head at the needed
  rows only), ``transfer`` (host<->device copies), ``runner`` / ``distributed`` (progress,
  accelerate).

>>> from nlgmetrics.engine import load_lm, CausalQuery, causal_target_scores
>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> lm = load_lm(build_random_model("llama", tempfile.mkdtemp(), size="tiny"))
>>> q = CausalQuery(prefix_ids=(lm.tokenizer.bos_token_id,), target_ids=(10, 11, 12))
>>> causal_target_scores(lm, [q], progress=False)[0].logprobs.shape
(3,)
"""

from nlgmetrics.engine.causal import (
    CausalQuery,
    TargetScores,
    causal_target_scores,
    iter_causal,
    target_logprobs_float32,
    target_logprobs_float32_deferred,
)
from nlgmetrics.engine.distributed import distributed_map, is_main_process
from nlgmetrics.engine.errors import ModelKindError, ModelNotFoundError
from nlgmetrics.engine.loading import LoadedLM, clear_cache, load_lm
from nlgmetrics.engine.masked import MaskedQuery, iter_masked
from nlgmetrics.engine.planning import dedupe, plan_batches, run_with_backoff
from nlgmetrics.engine.smollm2 import SMOLLM2_ALIAS, default_cache_dir, smollm2_dir
from nlgmetrics.engine.transfer import DeferredHost, resolve, to_device

__all__ = [
    "SMOLLM2_ALIAS",
    "CausalQuery",
    "DeferredHost",
    "LoadedLM",
    "MaskedQuery",
    "ModelKindError",
    "ModelNotFoundError",
    "TargetScores",
    "causal_target_scores",
    "clear_cache",
    "dedupe",
    "default_cache_dir",
    "distributed_map",
    "is_main_process",
    "iter_causal",
    "iter_masked",
    "load_lm",
    "plan_batches",
    "resolve",
    "run_with_backoff",
    "smollm2_dir",
    "target_logprobs_float32",
    "target_logprobs_float32_deferred",
    "to_device",
]
