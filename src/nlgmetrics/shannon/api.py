"""Shannon Score, Information Difference and BLANC-Shannon (Egan, Vasilyev & Bohannon, AAAI 2022):
the library call :func:`shannon_score`.

A causal LM scores every document sentence after a start token and one of three prompts (base:
no help; help: the summary; full: the sentence itself); the scores come from the summed
log-likelihoods and argmax hits (:func:`nlgmetrics.shannon.ratios.shannon_ratios`). What the
passes, scores, edge cases and the differences from PyPI ``blanc`` 0.3.4 are: the model card,
metrics/shannon_score/README.md.

Layout: :mod:`~nlgmetrics.shannon.planning` turns (document, summary) pairs into the engine's
queries (``base`` and ``full`` once per document, in one pass; ``help`` behind the cached
``<start> + summary`` prefix), :mod:`~nlgmetrics.shannon.scoring` runs them ``chunk_size`` distinct
documents at a time, and this module checks the options, loads the model, opens the store and
lays out the :class:`ShannonResult`.

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("gpt2", tempfile.mkdtemp(), size="tiny")
>>> result = shannon_score(["Jack bought milk."], ["Jack drove to the bazaar. He bought milk."],
...                        model=path, progress=False)
>>> result.num_doc_tokens, result.num_summary_tokens, result.num_sentences
([12], [4], [2])
>>> sum(map(sum, result.s[0]))   # every document token lands in one cell of S
12
>>> list(result.scores)
['shannon_score', 'information_difference', 'blanc_shannon', 'll_base', 'll_help', 'll_full']
"""

from __future__ import annotations

import os

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from nlgmetrics.core.explanations import TokenBreakdown
from nlgmetrics.core.result import Column, MetricResult
from nlgmetrics.core.sentences import SPLITTER_OUTPUT_RULE, SPLITTER_RULE, SentenceSplitter, resolve_splitter
from nlgmetrics.core.signature import make_signature
from nlgmetrics.core.refusals import Refusal, refusal_sentences
from nlgmetrics.core.tokens import (
    START_TOKEN_RULE,
    START_TOKEN_VOCABULARY_RULE,
    check_start_token,
    resolve_start_token,
)
from nlgmetrics.core.validation import (
    CACHE_DIR_RULE,
    BATCH_SIZE_RULE,
    CHUNK_SIZE_RULE,
    MAX_LENGTH_RULE,
    TOKEN_BUDGET_RULE,
    check_int,
    check_source_inputs,
    check_switches,
    shown_value,
    switch_rule,
)
from nlgmetrics.shannon.explain import shannon_breakdowns
from nlgmetrics.shannon.ratios import shannon_ratios
from nlgmetrics.shannon.scoring import (
    WARNINGS,
    PairScores,
    ScoringSetup,
    default_start_tokens,
    score_chunk,
)

#: The paper's model.
DEFAULT_MODEL = "gpt2"
#: Padded tokens per forward pass (speed and memory only).
DEFAULT_TOKEN_BUDGET = 8192
#: Preceding sentences given as context to every pass (the paper and blanc: none).
DEFAULT_NUM_UPSTREAM = 0
#: Distinct documents planned and scored at a time (memory only).
DEFAULT_CHUNK_SIZE = 64
#: The smallest ``max_length``: the start token, one summary token and one document token.
MIN_MAX_LENGTH = 3
#: Signature value of ``first_token``: the first token of each sentence is predicted after the
#: whole prompt, as the paper defines (blanc predicts it from the start token alone).
FIRST_TOKEN = "paper"

SWITCH_RULE = switch_rule("progress", "explain", "prefix_cache")
MAX_LENGTH_ROOM_RULE = Refusal(
    ("max_length",), f"a `max_length` below {MIN_MAX_LENGTH}",
    "every sequence holds the start token, a summary token and a document token")
NUM_UPSTREAM_RULE = Refusal(
    ("num_upstream",), "a `num_upstream` that is not an integer >= 0",
    "it is a count of preceding sentences given as context")
#: Every rule the Shannon score's checks apply, in the order of its options (:func:`refusals`).
RULES: tuple[Refusal, ...] = (
    TOKEN_BUDGET_RULE, BATCH_SIZE_RULE, MAX_LENGTH_RULE, MAX_LENGTH_ROOM_RULE, NUM_UPSTREAM_RULE,
    CHUNK_SIZE_RULE, SWITCH_RULE, SPLITTER_RULE, SPLITTER_OUTPUT_RULE, START_TOKEN_RULE,
    START_TOKEN_VOCABULARY_RULE, CACHE_DIR_RULE,
)


def refusals() -> list[str]:
    """What the Shannon score refuses and why, one plain sentence per rule its option checks
    enforce (the checks raise these very rules, so the list cannot drift from them).

    >>> any("`num_upstream`" in sentence for sentence in refusals())
    True
    """
    return refusal_sentences(RULES)


@dataclass(frozen=True)
class ShannonTokenScores:
    """The per-token numbers of one (document, summary) pair (``explain=True``).

    Arrays are aligned with ``token_ids`` (the document's tokens after per-sentence truncation,
    sentences concatenated); ``sentence_lengths`` gives each sentence's share.
    """

    token_ids: list[int]
    tokens: list[str]
    sentence_lengths: list[int]
    base_logprobs: np.ndarray
    help_logprobs: np.ndarray
    full_logprobs: np.ndarray
    base_correct: np.ndarray
    help_correct: np.ndarray
    summary_token_ids: list[int]


@dataclass(frozen=True)
class ShannonResult(MetricResult):
    """Per-example Shannon scores (``scores``), their means (``mean()``), raw counts and a signature.

    Columns (all higher is better): ``shannon_score`` (the headline), ``information_difference``
    (nats), ``blanc_shannon`` in [-1, 1], and the summed log-likelihoods ``ll_base``, ``ll_help``,
    ``ll_full`` (<= 0). Details, one item per example: ``s[i][b][h]`` counts tokens predicted
    right (1) / wrong (0) without (``b``) and with (``h``) the summary; ``num_doc_tokens``,
    ``num_summary_tokens``, ``num_sentences`` say what was scored. With ``explain=True`` (else
    None): ``token_scores``, per example the per-token log-probabilities and hits
    (:class:`ShannonTokenScores`), and ``explanations``, per example the per-token breakdown of each
    score.

    >>> r = ShannonResult(scores={"shannon_score": [0.5, 1.0], "blanc_shannon": [0.0, 0.5]}, signature="x")
    >>> r.mean(), r.main_score, r.column("ll_base").range_text()
    ({'shannon_score': 0.75, 'blanc_shannon': 0.25}, 0.75, '(-inf, 0]')
    """

    metric: ClassVar[str] = "shannon_score"
    main: ClassVar[str] = "shannon_score"
    columns: ClassVar[Mapping[str, Column]] = {
        "shannon_score": Column(
            True, -math.inf, math.inf,
            "(ll_help - ll_base) / (ll_full - ll_base): the share of what the document tells about "
            "itself that the summary tells; 0 = no help, 1 = as helpful as the document (usually in "
            "[0, 1]; a misleading summary goes below 0; 0 when ll_full == ll_base)",
        ),
        "information_difference": Column(
            True, -math.inf, math.inf,
            "ll_help - ll_base: nats of the document the summary saves (negative when it misleads)",
        ),
        "blanc_shannon": Column(
            True, -1.0, 1.0,
            "document tokens the summary makes right minus those it makes wrong, as a share of all "
            "scored document tokens",
        ),
        "ll_base": Column(True, -math.inf, 0.0, "summed log-likelihood of the document tokens, no help"),
        "ll_help": Column(True, -math.inf, 0.0, "summed log-likelihood of the document tokens after the summary"),
        "ll_full": Column(True, -math.inf, 0.0, "summed log-likelihood of each sentence after itself"),
    }

    s: list[list[list[int]]] = field(default_factory=list)
    num_doc_tokens: list[int] = field(default_factory=list)
    num_summary_tokens: list[int] = field(default_factory=list)
    num_sentences: list[int] = field(default_factory=list)
    #: ``explain=True``: per example the per-token log-probabilities and hits.
    token_scores: list[ShannonTokenScores] | None = field(default=None, repr=False)
    #: ``explain=True``: per example ``{column: TokenBreakdown}`` (:mod:`nlgmetrics.shannon.explain`).
    explanations: list[dict[str, TokenBreakdown]] | None = field(default=None, repr=False)

    def details(self) -> dict[str, Any]:
        """``s``, ``num_doc_tokens``, ``num_summary_tokens``, ``num_sentences`` as plain lists."""
        return {"s": [[list(row) for row in cells] for cells in self.s],
                **{name: list(getattr(self, name)) for name in ("num_doc_tokens", "num_summary_tokens",
                                                                "num_sentences")}}


def _token_scores(tokenizer: Any, pair: PairScores) -> ShannonTokenScores:
    ids = [t for sentence in pair.sentences for t in sentence]
    arrays = ("base_logprobs", "help_logprobs", "full_logprobs", "base_correct", "help_correct")
    return ShannonTokenScores(
        token_ids=ids, tokens=list(tokenizer.convert_ids_to_tokens(ids)),
        sentence_lengths=[len(sentence) for sentence in pair.sentences],
        summary_token_ids=list(pair.summary_ids), **{name: getattr(pair, name) for name in arrays})


def shannon_score(
    predictions: Sequence[str],
    sources: Sequence[str],
    *,
    model: Any = DEFAULT_MODEL,
    model_tokenizer: Any = None,
    revision: str | None = None,
    device: Any = None,
    dtype: Any = None,
    device_map: str | dict[str, int | str] | None = None,
    max_memory: dict[int | str, int | str] | None = None,
    offload_folder: str | os.PathLike | None = None,
    max_length: int | None = None,
    token_budget: int | str | None = DEFAULT_TOKEN_BUDGET,
    batch_size: int | None = None,
    progress: bool = True,
    num_upstream: int = DEFAULT_NUM_UPSTREAM,
    splitter: SentenceSplitter | str | None = None,
    start_token: int | str | None = None,
    prefix_cache: bool = True,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    explain: bool = False,
    cache_dir: str | os.PathLike | None = None,
) -> ShannonResult:
    """Score each summary by how much it helps a causal LM predict its source document.

    Args:
        predictions: the summaries to score.
        sources: the source document of each summary, aligned with ``predictions`` (the same
            document may repeat: its summary-independent passes run once).
        model: Hub id (paper default ``"gpt2"``), local directory, the offline alias
            ``"smollm2-135m"``, a :class:`~nlgmetrics.engine.LoadedLM`, or a model instance.
        model_tokenizer: the Hugging Face tokenizer of a model instance (required then; default:
            the model's own).
        revision, device, dtype: passed to :func:`nlgmetrics.engine.load_lm`.
        device_map, max_memory, offload_folder: a model bigger than one device, given by name or
            folder: passed to ``from_pretrained`` (e.g. ``device_map="auto"``,
            ``max_memory={0: "20GiB", "cpu": "60GiB"}``); the numbers do not change
            (:func:`nlgmetrics.engine.load_lm`).
        max_length: tokens per sequence (at least 3); None: the model's context; a larger value
            is capped at it. Every sentence is cut to ``max_length - 1 - len(summary tokens)``
            tokens and every summary to ``max_length - 2`` (as blanc does with the context).
        token_budget, batch_size: engine batching; they do not change the numbers
            (``token_budget=None``: the default budget, as for every LM metric; ``"auto"``: the largest
            that fits the free memory, :mod:`nlgmetrics.engine.budget`).
        progress: show a progress bar over the (summary, document) pairs of the whole call.
        num_upstream: number of preceding sentences given as context (paper/blanc default 0).
        splitter: sentence splitter: ``None``/"pysbd" (offline default), "punkt" (blanc's, needs
            nltk data) or a callable ``str -> list[str]``.
        start_token: token starting every prompt (an id or a token string of the vocabulary, even
            one that is also the unknown token: :mod:`nlgmetrics.core.tokens`); None:
            ``<|endoftext|>`` when the vocabulary has it (the paper's, GPT-2), else the tokenizer's
            BOS, else the model's EOS (``config.eos_token_id``, blanc's choice for every model).
            The signature records the id used (``start_token:<id>``).
        prefix_cache: reuse the ``<start> + summary`` KV cache across a summary's sentences
            (speed only).
        chunk_size: distinct documents planned and scored at a time (with all their summaries);
            bounds memory on a large call, does not change the numbers.
        explain: also return everything per token: the per-document-token breakdowns of the three
            scores (``explanations``, :mod:`nlgmetrics.shannon.explain`) and the per-token
            log-probabilities and hits they come from (``token_scores``); no number changes.
        cache_dir: a folder for the engine's store (default ``$NLGMETRICS_CACHE_DIR``; None: no
            store): what the model computed for each distinct input is kept there and reused by
            later calls and processes, keyed by everything that can change it (weights, tokenizer,
            dtype, device type, versions, the tokens); the numbers do not change.

    Returns:
        :class:`ShannonResult`: the six columns per example, the details and a signature.

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> path = build_random_model("gpt2", tempfile.mkdtemp(), size="tiny")
    >>> r = shannon_score([""], ["A cat sat. It slept."], model=path, progress=False)
    >>> r.scores["shannon_score"], r.scores["information_difference"], r.scores["blanc_shannon"]  # no help
    ([0.0], [0.0], [0.0])
    >>> r.signature.split("|")[6:11]
    ['max_length:256', 'first_token:paper', 'num_upstream:0', 'splitter:pysbd', 'start_token:0']
    """
    from nlgmetrics.engine.bookkeeping import ExampleProgress, WarnOnce
    from nlgmetrics.engine.call import check_call_options, lm_call
    from nlgmetrics.engine.planning import chunk_by_key

    summaries, documents = check_source_inputs(predictions, sources)
    # Every option is checked before the model loads (a wrong type would fail deep in the engine).
    options = check_call_options(
        model, model_tokenizer=model_tokenizer, revision=revision, device=device, dtype=dtype,
        device_map=device_map, max_memory=max_memory, offload_folder=offload_folder, max_length=max_length,
        token_budget=token_budget, batch_size=batch_size, chunk_size=chunk_size, cache_dir=cache_dir)
    if options.max_length is not None and options.max_length < MIN_MAX_LENGTH:
        raise MAX_LENGTH_ROOM_RULE.error(
            f"`max_length`={options.max_length} leaves no room for the start token, a summary token and a "
            f"document token; pass max_length >= {MIN_MAX_LENGTH} (or None: the model's context)."
        )
    with NUM_UPSTREAM_RULE.enforced():
        num_upstream = check_int("num_upstream", num_upstream, minimum=0, message=(
            f"`num_upstream` must be an integer >= 0 (preceding sentences given as context; the paper "
            f"uses 0), got {shown_value(num_upstream)}."))
    prefix_cache, explain, progress = check_switches(
        SWITCH_RULE, prefix_cache=prefix_cache, explain=explain, progress=progress).values()
    split, splitter_name = resolve_splitter(splitter)
    start_token = check_start_token(start_token)

    with lm_call(options, kind="causal", default_budget=DEFAULT_TOKEN_BUDGET, progress=progress) as call:
        lm, max_length = call.lm, call.max_length
        start_id = resolve_start_token(lm.tokenizer, start_token, default_start_tokens(lm),
                                       metric="Shannon Score")
        setup = ScoringSetup(call, split, start_id, num_upstream, prefix_cache)
        signature = make_signature("shannon_score", {
            "num_upstream": num_upstream, "splitter": splitter_name, "start_token": start_id,
            "first_token": FIRST_TOKEN}, model=lm.signature_fields(max_length))
        n = len(documents)
        columns: dict[str, list[float]] = {name: [0.0] * n for name in ShannonResult.columns}
        s: list[list[list[int]]] = [[]] * n
        num_doc_tokens, num_summary_tokens, num_sentences = [0] * n, [0] * n, [0] * n
        # explain=True: per example its ShannonTokenScores and its breakdowns.
        token_scores, explanations = ([None] * n, [None] * n) if explain else (None, None)
        counts = WarnOnce()
        with ExampleProgress(n, "shannon score", enabled=call.progress, store=call.store) as bar:
            # A chunk takes whole documents, so the base/full passes shared by a document's summaries
            # and each summary's prefix cache are reused exactly as in one big call.
            for chunk in chunk_by_key(documents, call.chunk_size):
                for i, pair in score_chunk(setup, summaries, documents, chunk, counts, bar):
                    ratios = shannon_ratios(pair.ll_base, pair.ll_help, pair.ll_full, pair.s)
                    # In the order of ShannonResult.columns: the three scores, then the three sums.
                    for name, value in zip(columns, (*ratios, pair.ll_base, pair.ll_help, pair.ll_full)):
                        columns[name][i] = value
                    s[i] = pair.s
                    num_doc_tokens[i] = len(pair.base_correct)
                    num_summary_tokens[i] = len(pair.summary_ids)
                    num_sentences[i] = len(pair.sentences)
                    if explain:
                        token_scores[i] = _token_scores(lm.tokenizer, pair)
                        explanations[i] = shannon_breakdowns(
                            lm.tokenizer, split, summaries[i], documents[i], pair,
                            {name: columns[name][i] for name in columns}, signature)
    counts.emit(WARNINGS, max_length=max_length, summary_limit=max_length - 2)
    return ShannonResult(
        scores=columns, signature=signature, token_scores=token_scores, explanations=explanations,
        s=s, num_doc_tokens=num_doc_tokens, num_summary_tokens=num_summary_tokens,
        num_sentences=num_sentences)
