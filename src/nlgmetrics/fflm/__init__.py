"""FFLM: zero-shot faithfulness from probability changes of a causal LM (Jia et al., EMNLP 2023).

For a source document X and a summary Y, one causal language model gives five per-token
probability lists (probability of each target token given everything before it):

====================  ===========================================  ==========================
list                  condition -> target                           used by
====================  ===========================================  ==========================
``s2s``               start, X, sep  ->  Y                          every component
``lm``                start          ->  Y                          Delta_prior(Y)
``prefix``            start, tok(Y + " " + X), sep  ->  Y           Delta_cond(Y)
``s2s_doc``           start, Y, sep  ->  X                          Delta_prior(X)
``lm_doc``            start          ->  X  (cut to len(s2s_doc))   Delta_prior(X)
====================  ===========================================  ==========================

with ``sep = "TL;DR "``. Probabilities equal to 0 are floored at 1e-6 and ``loss = -log p``::

    Delta_prior(Y) = mean_i (lm_loss_i     - s2s_loss_i)     * exp(1 - s2s_i)
    Delta_cond(Y)  = mean_i (prefix_loss_i - s2s_loss_i)     * exp(1 - s2s_i)
    Delta_prior(X) = mean_i (lm_doc_loss_i - s2s_doc_loss_i) * exp(1 - s2s_doc_i)
    FFLM = a * Delta_prior(Y) + b * Delta_prior(X) + d * Delta_cond(Y),   a + b + d = 1

Higher is more faithful. Defaults follow the authors' released scorer
(github.com/JiaQiSJTU/FaithEval-FFLM, ``scorers/delta.py`` and ``summary-level-evaluation.py``):

* every text is tokenized **on its own** (``tokenizer.tokenize`` without special tokens) and the
  token lists are concatenated ``[start] + condition + sep + target``; the condition of ``prefix``
  is the single string ``Y + " " + X`` tokenized as one piece, as the authors do;
* at most ``max_length = 2048`` tokens per sequence: when the target is the summary, the condition
  is cut (its first tokens are kept); when the target is the document, the document is cut;
* weights ``(a, b, d) = (0.25, 0.25, 0.5)`` (the authors' faithfulness-rating setting).

Where the authors' code is undefined we chose (and document in the model card):

* the start token is the tokenizer's BOS token (the authors hard-coded id 0, which was the BOS of
  the LLaMA checkpoint they used); falls back to EOS; override with ``start_token`` (an id or a
  token string);
* the limit is ``min(max_length, model context)``;
* a summary too long to fit even with an empty condition (the authors' code crashes there) is cut
  to ``max_length - 1 - len(sep)`` tokens, the same cut in all three summary lists;
* a component whose target has no tokens (empty text, or a document cut to nothing) is 0.0.

Speed: the engine scores every distinct query once, batches by length, and computes the
``(start, X, sep)`` prefix once per document (KV cache) for all of its summaries; ``lm_doc`` is run
once per distinct document and ``lm`` once per distinct summary.

Memory: work is planned and run ``chunk_size`` (default 64) distinct documents at a time, each with
all of its summaries, so the reuse above is unchanged; only one chunk's queries and per-token
log-probabilities are alive at once, and only the per-example results (plus the probability lists
when ``explain=True``) are kept. The numbers do not depend on ``chunk_size``, which is
therefore not part of the signature. Warnings (truncation, empty targets) come once per call.

Layout: the formula in :mod:`nlgmetrics.fflm.components`, tokens, truncation and queries in
:mod:`nlgmetrics.fflm.planning`, the call and its result in :mod:`nlgmetrics.fflm.api`.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("llama", tempfile.mkdtemp(), size="tiny")
>>> result = fflm(["A cat sat."], ["The cat sat on the mat."], model=path, progress=False)
>>> sorted(result.scores), result.higher_is_better
(['delta_cond_summary', 'delta_prior_document', 'delta_prior_summary', 'fflm'], True)
>>> result.main_score == result.mean()["fflm"] == result.scores["fflm"][0]
True
"""

from nlgmetrics.fflm.api import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_MAX_LENGTH,
    DEFAULT_MODEL,
    DEFAULT_SEPARATOR,
    DEFAULT_TOKEN_BUDGET,
    DEFAULT_WEIGHTS,
    RULES,
    FFLMProbabilities,
    FFLMResult,
    check_weights,
    fflm,
    refusals,
)
from nlgmetrics.fflm.components import COMPONENT_BOUND, PROBABILITY_FLOOR, fflm_components

__all__ = [
    "COMPONENT_BOUND",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_MODEL",
    "DEFAULT_SEPARATOR",
    "DEFAULT_TOKEN_BUDGET",
    "DEFAULT_WEIGHTS",
    "PROBABILITY_FLOOR",
    "RULES",
    "FFLMProbabilities",
    "FFLMResult",
    "check_weights",
    "fflm",
    "fflm_components",
    "refusals",
]
