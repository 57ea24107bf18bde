"""Shannon Score, Information Difference and BLANC-Shannon (Egan, Vasilyev & Bohannon, AAAI 2022).

A causal language model plays Shannon's guessing game on the document, sentence by sentence. Each
sentence's tokens are scored, teacher-forced, after a start token (``<|endoftext|>``; for a model
without it, the model's BOS: :func:`nlgmetrics.shannon.scoring.default_start_tokens`) and a prompt:

============  ==============================================  ====================================
pass          prompt before the sentence                      meaning
============  ==============================================  ====================================
``base``      upstream context only                           no help
``help``      the summary, then the upstream context          the summary helps
``full``      upstream, the sentence itself, upstream again   the document "summarises itself"
============  ==============================================  ====================================

(the upstream context is the ``num_upstream`` preceding sentences; empty by default). Summed over
the document's tokens this gives the log-likelihoods ``ll_base <= ll_help <= ll_full`` (usually),
and (:func:`nlgmetrics.shannon.ratios.shannon_ratios`)

- Shannon Score          = (ll_help - ll_base) / (ll_full - ll_base)   (0: no help, 1: as good as the document)
- Information Difference = ll_help - ll_base                           (nats the summary saves)
- BLANC-Shannon          = (S01 - S10) / (S00 + S01 + S10 + S11)

where ``S[b][h]`` counts the document tokens whose argmax prediction is right (1) or wrong (0)
without (``b``) and with (``h``) the summary.

Speed. Each (prompt, sentence) is one teacher-forced pass, not a token-by-token loop. ``base`` and
``full`` do not depend on the summary: the queries are identical for every summary of a document,
so the engine runs them once and reuses them; they even share one pass (the full prompt starts
with the base prompt, so ``<start> + sentence + sentence`` gives both). All ``help`` queries of a
summary share the prefix ``<start> + summary``, so the engine's prefix KV cache computes it once
per summary (:mod:`nlgmetrics.shannon.planning`).

Memory. Work is planned and run ``chunk_size`` distinct documents at a time (each with all of its
summaries, so the reuse above is unchanged; :mod:`nlgmetrics.shannon.scoring`): only one chunk's
queries and per-token scores are alive at once, whatever the size of the call. The numbers do not
depend on ``chunk_size``.

Compatibility with the reference implementation (PyPI ``blanc`` 0.3.4, ``blanc.shannon``):

- Same prompts, same per-sentence truncation (every sentence is cut to ``max_length - 1 -
  len(summary tokens)`` tokens, so long *documents* are fine: they are scored sentence by sentence),
  same start token for GPT-2 (``<|endoftext|>``, its EOS), same ``S`` counts, same token counts.
- Deliberate difference 1 (a bug in blanc): blanc reads the *first* token of every sentence from
  position 0 of the prompt's logits, i.e. predicted from the start token alone, ignoring the
  prompt (and its argmax is taken over the flattened logits of all prompt positions). We follow the
  paper: every token, the first included, is predicted after the whole prompt. With the default
  ``num_upstream=0``, ``ll_base`` is therefore identical to blanc's; ``ll_help``/``ll_full`` and
  the ``S`` cells differ only by the first token of each sentence.
- Deliberate difference 2: with ``num_upstream >= 2``, blanc's slice ``sents[i - k:i]`` is empty
  for the first ``k`` sentences (negative start); we use the available preceding sentences.
- Deliberate difference 3: a model whose vocabulary has no ``<|endoftext|>`` starts with its own
  BOS token where it has one (a model trained to see ``<bos>`` first scores its text far worse
  after ``<eos>``); blanc starts every model with ``config.eos_token_id``.
- Sequences longer than ``max_length`` (only possible for a sentence longer than about half
  of it in the ``full`` pass, or with long upstream context): blanc slides a window over a stale
  KV cache. We score the tokens that fit exactly as blanc does, and the remaining tokens in one
  extra pass over the last ``max_length`` tokens (fresh attention over that window).
- Summaries are stripped of surrounding whitespace (blanc would score those whitespace tokens),
  and cut to ``max_length - 2`` tokens with a warning (blanc fails there).
- The sentence splitter defaults to ``pysbd`` (offline); pass ``splitter="punkt"`` for blanc's.

Degenerate cases (never NaN): an empty or whitespace-only summary gives ``ll_help == ll_base``
(the help prompt is empty), hence Shannon Score 0, Information Difference 0, BLANC-Shannon 0. An
empty or whitespace-only document has no tokens: every log-likelihood and count is 0 and every
score is 0.0. Whenever ``ll_full == ll_base`` the Shannon Score is defined as 0.0.

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
    check_engine_options,
    check_int,
    check_model_tokenizer,
    check_source_inputs,
    check_switches,
    resolve_token_budget,
    shown_value,
    switch_rule,
)
from nlgmetrics.shannon.explain import shannon_breakdowns
from nlgmetrics.shannon.ratios import shannon_ratios
from nlgmetrics.shannon.scoring import (
    CUT_SENTENCES,
    TRUNCATED_SUMMARIES,
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


#: One warning per kind per call (:class:`nlgmetrics.engine.bookkeeping.WarnOnce`).
WARNINGS = {
    TRUNCATED_SUMMARIES: (
        "{count} summaries are longer than max_length allows ({summary_limit} tokens) and were cut "
        "to that length."
    ),
    # The cut itself is blanc's, documented in the model card.
    CUT_SENTENCES: (
        "{count} document sentence(s) do not fit max_length ({max_length} tokens) after the start "
        "token and the summary, and were cut to their first tokens as in blanc; their remaining "
        "tokens are not scored. Use a model with a longer context or split such sentences."
    ),
}


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
            "(S01 - S10) / (S00 + S01 + S10 + S11): tokens the summary makes right minus those it "
            "makes wrong, per document token",
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
        return {
            "s": [[list(row) for row in cells] for cells in self.s],
            "num_doc_tokens": list(self.num_doc_tokens),
            "num_summary_tokens": list(self.num_summary_tokens),
            "num_sentences": list(self.num_sentences),
        }


def _token_scores(tokenizer: Any, pair: PairScores) -> ShannonTokenScores:
    ids = [t for sentence in pair.sentences for t in sentence]
    return ShannonTokenScores(
        token_ids=ids,
        tokens=list(tokenizer.convert_ids_to_tokens(ids)),
        sentence_lengths=[len(sentence) for sentence in pair.sentences],
        base_logprobs=pair.base_logprobs,
        help_logprobs=pair.help_logprobs,
        full_logprobs=pair.full_logprobs,
        base_correct=pair.base_correct,
        help_correct=pair.help_correct,
        summary_token_ids=list(pair.summary_ids),
    )


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
    token_budget: int | None = DEFAULT_TOKEN_BUDGET,
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
            (``token_budget=None``: the default budget, as for every LM metric).
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
    from nlgmetrics.engine import is_main_process, load_lm, open_store
    from nlgmetrics.engine.bookkeeping import ExampleProgress, WarnOnce
    from nlgmetrics.engine.planning import chunk_by_key

    summaries, documents = check_source_inputs(predictions, sources)
    # Every option is checked before the model loads (a wrong type would fail deep in the engine).
    token_budget, batch_size, max_length = check_engine_options(token_budget, batch_size, max_length)
    token_budget = resolve_token_budget(token_budget, DEFAULT_TOKEN_BUDGET)
    if max_length is not None and max_length < MIN_MAX_LENGTH:
        raise MAX_LENGTH_ROOM_RULE.error(
            f"`max_length`={max_length} leaves no room for the start token, a summary token and a "
            f"document token; pass max_length >= {MIN_MAX_LENGTH} (or None: the model's context)."
        )
    with NUM_UPSTREAM_RULE.enforced():
        num_upstream = check_int("num_upstream", num_upstream, minimum=0, message=(
            f"`num_upstream` must be an integer >= 0 (preceding sentences given as context; the paper "
            f"uses 0), got {shown_value(num_upstream)}."))
    with CHUNK_SIZE_RULE.enforced():
        chunk_size = check_int("chunk_size", chunk_size, minimum=1, message=(
            f"`chunk_size` must be an integer >= 1 (distinct documents scored at a time; it does not "
            f"change the numbers), got {shown_value(chunk_size)}."))
    switches = check_switches(SWITCH_RULE, prefix_cache=prefix_cache, explain=explain, progress=progress)
    prefix_cache, explain, progress = switches.values()
    split, splitter_name = resolve_splitter(splitter)
    start_token = check_start_token(start_token)
    store = open_store(cache_dir)

    check_model_tokenizer(model, model_tokenizer)
    lm = load_lm(model, kind="causal", model_tokenizer=model_tokenizer, device=device, dtype=dtype, revision=revision,
                 device_map=device_map, max_memory=max_memory, offload_folder=offload_folder)
    if lm.kind != "causal":
        raise ValueError(
            f"shannon_score needs a causal LM (e.g. 'gpt2' or 'smollm2-135m'); {lm.name!r} is a "
            f"{lm.kind} LM."
        )
    max_length = int(lm.max_length) if max_length is None else min(max_length, int(lm.max_length))
    setup = ScoringSetup(
        lm=lm, split=split,
        start_id=resolve_start_token(lm.tokenizer, start_token, default_start_tokens(lm), metric="Shannon Score"),
        num_upstream=num_upstream, max_length=max_length, token_budget=token_budget,
        batch_size=batch_size, prefix_cache=prefix_cache, store=store,
    )

    n = len(documents)
    columns: dict[str, list[float]] = {name: [0.0] * n for name in ShannonResult.columns}
    s: list[list[list[int]]] = [[]] * n
    num_doc_tokens, num_summary_tokens, num_sentences = [0] * n, [0] * n, [0] * n
    token_scores: list[ShannonTokenScores | None] = [None] * n
    explained: dict[int, PairScores] = {}
    counts = WarnOnce()
    with ExampleProgress(n, "shannon score", enabled=progress and is_main_process(), store=store) as bar:
        # A chunk takes whole documents, so the base/full passes shared by a document's summaries
        # and each summary's prefix cache are reused exactly as in one big call.
        for chunk in chunk_by_key(documents, chunk_size):
            for i, pair in score_chunk(setup, summaries, documents, chunk, counts, bar):
                score, information_difference, blanc_shannon = shannon_ratios(
                    pair.ll_base, pair.ll_help, pair.ll_full, pair.s
                )
                for name, value in (
                    ("shannon_score", score), ("information_difference", information_difference),
                    ("blanc_shannon", blanc_shannon), ("ll_base", pair.ll_base),
                    ("ll_help", pair.ll_help), ("ll_full", pair.ll_full),
                ):
                    columns[name][i] = value
                s[i] = pair.s
                num_doc_tokens[i] = len(pair.base_correct)
                num_summary_tokens[i] = len(pair.summary_ids)
                num_sentences[i] = len(pair.sentences)
                if explain:
                    token_scores[i] = _token_scores(lm.tokenizer, pair)
                    explained[i] = pair
    if store is not None:
        store.close()  # written through already; the file stays for the next call
    counts.emit(WARNINGS, max_length=max_length, summary_limit=max_length - 2)

    signature = make_signature(
        "shannon_score",
        {
            "num_upstream": num_upstream,
            "splitter": splitter_name,
            "start_token": setup.start_id,
            "first_token": FIRST_TOKEN,
        },
        model=lm.signature_fields(max_length),
    )
    explanations = None
    if explain:
        explanations = [
            shannon_breakdowns(lm.tokenizer, setup.split, summaries[i], documents[i], explained[i],
                               {name: columns[name][i] for name in columns}, signature)
            for i in range(n)
        ]
    return ShannonResult(
        scores=columns,
        signature=signature,
        s=s,
        num_doc_tokens=num_doc_tokens,
        num_summary_tokens=num_summary_tokens,
        num_sentences=num_sentences,
        token_scores=token_scores if explain else None,  # type: ignore[arg-type]
        explanations=explanations,
    )
