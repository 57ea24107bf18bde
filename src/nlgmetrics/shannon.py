"""Shannon Score, Information Difference and BLANC-Shannon (Egan, Vasilyev & Bohannon, AAAI 2022).

A causal language model plays Shannon's guessing game on the document, sentence by sentence. Each
sentence's tokens are scored, teacher-forced, after a start token (``<|endoftext|>``) and a prompt:

============  ==============================================  ====================================
pass          prompt before the sentence                      meaning
============  ==============================================  ====================================
``base``      upstream context only                           no help
``help``      the summary, then the upstream context          the summary helps
``full``      upstream, the sentence itself, upstream again   the document "summarises itself"
============  ==============================================  ====================================

(the upstream context is the ``num_upstream`` preceding sentences; empty by default). Summed over
the document's tokens this gives the log-likelihoods ``ll_base <= ll_help <= ll_full`` (usually),
and

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
per summary.

Memory. Work is planned and run ``chunk_size`` distinct documents at a time (each with all of its
summaries, so the reuse above is unchanged): only one chunk's queries and per-token scores are
alive at once, whatever the size of the call. The numbers do not depend on ``chunk_size``.

Compatibility with the reference implementation (PyPI ``blanc`` 0.3.4, ``blanc.shannon``):

- Same prompts, same per-sentence truncation (every sentence is cut to ``max_length - 1 -
  len(summary tokens)`` tokens, so long *documents* are fine: they are scored sentence by sentence),
  same start token (the model's end-of-text token), same ``S`` counts, same token counts.
- Deliberate difference 1 (a bug in blanc): blanc reads the *first* token of every sentence from
  position 0 of the prompt's logits, i.e. predicted from the start token alone, ignoring the
  prompt (and its argmax is taken over the flattened logits of all prompt positions). We follow the
  paper: every token, the first included, is predicted after the whole prompt. With the default
  ``num_upstream=0``, ``ll_base`` is therefore identical to blanc's; ``ll_help``/``ll_full`` and
  the ``S`` cells differ only by the first token of each sentence.
- Deliberate difference 2: with ``num_upstream >= 2``, blanc's slice ``sents[i - k:i]`` is empty
  for the first ``k`` sentences (negative start); we use the available preceding sentences.
- Sequences longer than the model's context (only possible for a sentence longer than about half
  the context in the ``full`` pass, or with long upstream context): blanc slides a window over a
  stale KV cache. We score the tokens that fit exactly as blanc does, and the remaining tokens in
  one extra pass over the last ``max_length`` tokens (fresh attention over that window).
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
>>> result = shannon_score(["Jack drove to the bazaar. He bought milk."],
...                        ["Jack bought milk."], model=path, progress=False)
>>> result.num_doc_tokens, result.num_summary_tokens
([12], [4])
>>> result.s[0][0][0] + result.s[0][0][1] + result.s[0][1][0] + result.s[0][1][1]
12
"""

from __future__ import annotations

import numbers
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm.auto import tqdm

from nlgmetrics.sentences import SentenceSplitter, resolve_splitter
from nlgmetrics.signature import make_signature
from nlgmetrics.validation import as_texts, check_int, check_same_length

if TYPE_CHECKING:  # torch is imported lazily; the annotation only
    from nlgmetrics.engine.transfer import DeferredHost

__all__ = ["ShannonResult", "ShannonTokenScores", "shannon_score", "shannon_ratios"]

# The paper's "end-of-text token": GPT-2's <|endoftext|> (also present in SmolLM2's vocabulary).
_END_OF_TEXT = "<|endoftext|>"


@dataclass(frozen=True)
class ShannonTokenScores:
    """Per-token detail of one (document, summary) pair (``return_token_scores=True``).

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
class ShannonResult:
    """Per-example scores and raw components; index ``i`` is the i-th (document, summary) pair.

    ``s[i][b][h]`` counts tokens predicted right (1) / wrong (0) without (``b``) and with (``h``)
    the summary. Log-likelihoods are natural logs summed over the document's scored tokens.
    """

    shannon_score: list[float]
    information_difference: list[float]
    blanc_shannon: list[float]
    ll_base: list[float]
    ll_help: list[float]
    ll_full: list[float]
    s: list[list[list[int]]]
    num_doc_tokens: list[int]
    num_summary_tokens: list[int]
    num_sentences: list[int]
    signature: str
    token_scores: list[ShannonTokenScores] | None = field(default=None, repr=False)

    def mean(self) -> dict[str, float]:
        """Average of each score over the examples.

        >>> ShannonResult([0.5, 1.0], [1.0, 2.0], [0.0, 0.5], [], [], [], [], [], [], [], "x").mean()
        {'shannon_score': 0.75, 'information_difference': 1.5, 'blanc_shannon': 0.25}
        """
        return {
            name: float(np.mean(getattr(self, name))) if getattr(self, name) else 0.0
            for name in ("shannon_score", "information_difference", "blanc_shannon")
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain lists and numbers (no per-token detail), e.g. for ``evaluate`` or JSON."""
        return {
            "shannon_score": list(self.shannon_score),
            "information_difference": list(self.information_difference),
            "blanc_shannon": list(self.blanc_shannon),
            "ll_base": list(self.ll_base),
            "ll_help": list(self.ll_help),
            "ll_full": list(self.ll_full),
            "s": [[list(row) for row in cells] for cells in self.s],
            "num_doc_tokens": list(self.num_doc_tokens),
            "num_summary_tokens": list(self.num_summary_tokens),
            "num_sentences": list(self.num_sentences),
            "signature": self.signature,
        }


def shannon_ratios(
    ll_base: float, ll_help: float, ll_full: float, s: Sequence[Sequence[int]]
) -> tuple[float, float, float]:
    """(Shannon Score, Information Difference, BLANC-Shannon) from the raw components.

    Degenerate denominators give 0.0, never NaN: ``ll_full == ll_base`` (nothing to recover, e.g.
    an empty document) and an empty ``S`` table.

    >>> shannon_ratios(-10.0, -7.0, -4.0, [[5, 3], [1, 1]])
    (0.5, 3.0, 0.2)
    >>> shannon_ratios(0.0, 0.0, 0.0, [[0, 0], [0, 0]])
    (0.0, 0.0, 0.0)
    """
    information_difference = ll_help - ll_base
    span = ll_full - ll_base
    score = information_difference / span if span != 0 else 0.0
    total = s[0][0] + s[0][1] + s[1][0] + s[1][1]
    blanc = (s[0][1] - s[1][0]) / total if total else 0.0
    # "+ 0.0" turns -0.0 (0 / negative span) into 0.0, so equal inputs print equal results.
    return float(score) + 0.0, float(information_difference) + 0.0, float(blanc) + 0.0


# ----------------------------------------------------------------------------------------------
# Planning: which (prefix, target) pairs to score.


@dataclass(frozen=True)
class _Piece:
    """Sentence tokens ``[start, stop)`` are scored by rows ``[row, row + stop - start)`` of
    engine query number ``query``."""

    query: int
    start: int
    stop: int
    row: int = 0


def _context_pieces(
    context: tuple[int, ...], target: tuple[int, ...], max_length: int, add_query
) -> list[_Piece]:
    """Split scoring ``target`` after ``context`` into queries that fit ``max_length`` positions.

    One teacher-forced pass reads ``context + target[:-1]``. When that is too long, the first
    ``max_length - len(context) + 1`` targets (the ones blanc also scores with the whole prompt)
    keep the whole context; the others are scored in one pass over the last ``max_length`` input
    tokens (documented in the module docstring).
    """
    n = len(target)
    if len(context) + n - 1 <= max_length:
        return [_Piece(add_query(context, target), 0, n)]
    pieces = []
    fit = max(0, max_length - len(context) + 1)
    if fit:
        pieces.append(_Piece(add_query(context, target[:fit]), 0, fit))
    full = context + target
    # Inputs are full[:-1]; keep the last max_length of them. The prefix is what precedes the
    # remaining targets inside that window (at least one token since rest <= max_length - 1).
    window_start = len(full) - 1 - max_length
    prefix = full[window_start : len(context) + fit]
    pieces.append(_Piece(add_query(prefix, target[fit:]), fit, n))
    return pieces


@dataclass
class _Plan:
    """Queries for every pair, with the pieces that assemble each sentence's scores."""

    queries: list[Any] = field(default_factory=list)
    index: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = field(default_factory=dict)
    # pairs[i] = (sentences, summary_ids, [(base_pieces, help_pieces, full_pieces) per sentence])
    pairs: list[tuple[list[tuple[int, ...]], tuple[int, ...], list[tuple[list[_Piece], ...]]]] = field(
        default_factory=list
    )

    def add_query(self, prefix: tuple[int, ...], target: tuple[int, ...]) -> int:
        """Register a distinct (prefix, target) once; identical queries share one engine run."""
        key = (prefix, target)
        number = self.index.get(key)
        if number is None:
            from nlgmetrics.engine import CausalQuery

            number = len(self.queries)
            self.index[key] = number
            self.queries.append(CausalQuery(prefix_ids=prefix, target_ids=target))
        return number


def _plan_pair(
    plan: _Plan,
    sentences: list[tuple[int, ...]],
    summary: tuple[int, ...],
    start_id: int,
    num_upstream: int,
    max_length: int,
) -> None:
    """Add the base/help/full queries of one (document, summary) pair to ``plan``."""
    # blanc: every sentence is cut so that <start> + summary + sentence fits the context.
    keep = max_length - 1 - len(summary)
    sentences = [sentence[:keep] for sentence in sentences]
    start = (start_id,)
    per_sentence = []
    for j, sentence in enumerate(sentences):
        upstream = tuple(t for s in sentences[max(0, j - num_upstream) : j] for t in s)
        base_context = start + upstream
        # base and full in ONE pass: the full prompt <start> + U + sentence + U begins with the
        # base prompt <start> + U, so the target "sentence + U + sentence" yields the base rows
        # first and the full rows last (the middle U rows are unused; U is empty by default).
        merged = sentence + upstream + sentence
        n = len(sentence)
        if len(base_context) + len(merged) - 1 <= max_length:
            query = plan.add_query(base_context, merged)
            base_pieces = [_Piece(query, 0, n, 0)]
            full_pieces = [_Piece(query, 0, n, n + len(upstream))]
        else:
            base_pieces = _context_pieces(base_context, sentence, max_length, plan.add_query)
            full_pieces = _context_pieces(
                start + upstream + sentence + upstream, sentence, max_length, plan.add_query
            )
        if summary:
            help_pieces = _context_pieces(start + summary + upstream, sentence, max_length, plan.add_query)
        else:  # an empty summary: the help prompt IS the base prompt (ll_help == ll_base exactly)
            help_pieces = base_pieces
        per_sentence.append((base_pieces, help_pieces, full_pieces))
    plan.pairs.append((sentences, summary, per_sentence))


# ----------------------------------------------------------------------------------------------
# Tokenisation helpers.


def _start_token_id(lm, start_token: int | str | None) -> int:
    """The token every prompt starts with (the paper's end-of-text token)."""
    tokenizer = lm.tokenizer
    if isinstance(start_token, (bool, np.bool_)):
        raise ValueError(f"start_token must be a token id or token string, got {start_token!r}.")
    if isinstance(start_token, numbers.Integral):  # Python or numpy integer (e.g. from an array)
        if not 0 <= start_token < len(tokenizer):
            raise ValueError(
                f"start_token={start_token} is outside the vocabulary (size {len(tokenizer)})."
            )
        return int(start_token)
    if isinstance(start_token, str):
        token_id = tokenizer.convert_tokens_to_ids(start_token)
        if token_id is None or token_id == tokenizer.unk_token_id:
            raise ValueError(
                f"start_token={start_token!r} is not a single token of this tokenizer; pass a token "
                f"string from its vocabulary or a token id."
            )
        return int(token_id)
    if start_token is not None:
        raise ValueError(f"start_token must be None, a token id or a token string, got {start_token!r}.")
    vocab = tokenizer.get_vocab()
    if _END_OF_TEXT in vocab:
        return int(vocab[_END_OF_TEXT])
    eos = getattr(lm.model.config, "eos_token_id", None)
    if isinstance(eos, (list, tuple)):
        eos = eos[0] if eos else None
    for candidate in (eos, tokenizer.eos_token_id, tokenizer.bos_token_id):
        if candidate is not None:
            return int(candidate)
    raise ValueError(
        "This tokenizer has no end-of-text, EOS or BOS token to start the prompts with; pass "
        "start_token=<token id or token string>."
    )


def _encoder(tokenizer):
    """Memoised text -> token ids (no special tokens: blanc's GPT-2 encode adds none)."""
    cache: dict[str, tuple[int, ...]] = {}

    def encode(text: str) -> tuple[int, ...]:
        ids = cache.get(text)
        if ids is None:
            ids = tuple(tokenizer(text, add_special_tokens=False)["input_ids"]) if text else ()
            cache[text] = ids
        return ids

    return encode


def _target_logprob_and_argmax(logits, query) -> DeferredHost:
    """Reduce for :func:`nlgmetrics.engine.iter_causal`: log p(target) and the argmax per row.

    The engine's float32 reduction (blanc itself uses a float32 softmax; per-token error ~1e-6,
    well under the 1e-4 parity tolerance), ~2.5x cheaper than a float64 log-softmax. Deferred: the
    engine reads the numbers after launching the next batch (see nlgmetrics.engine.transfer).
    """
    from nlgmetrics.engine import target_logprobs_float32_deferred

    return target_logprobs_float32_deferred(logits, query.target_ids, with_argmax=True)


_COLUMNS = (
    "shannon_score", "information_difference", "blanc_shannon", "ll_base", "ll_help", "ll_full",
    "s", "num_doc_tokens", "num_summary_tokens", "num_sentences",
)


def _score_chunk(
    lm,
    documents: list[str],
    summaries: list[str],
    examples: list[int],
    split,
    start_id: int,
    num_upstream: int,
    max_length: int,
    counts: dict[str, int],
    token_budget: int,
    batch_size: int | None,
    prefix_cache: bool,
    return_token_scores: bool,
    bar,
):
    """Plan, run and assemble the examples ``examples`` (whole documents); yield ``(i, row)``.

    Only this chunk's queries and their per-token scores are alive at a time (issue 9: bounded
    memory on a large call). ``row`` holds the values of ``_COLUMNS`` in order, then the example's
    :class:`ShannonTokenScores` (or ``None``). ``counts`` accumulates the warnings' counts and
    ``bar`` advances by examples, in proportion to the chunk's queries done.
    """
    from nlgmetrics.engine import iter_causal

    encode = _encoder(lm.tokenizer)  # per chunk: the memo must not grow with the whole call
    doc_sentences: dict[str, list[tuple[int, ...]]] = {}
    plan = _Plan()
    for i in examples:
        document = documents[i]
        sentences = doc_sentences.get(document)
        if sentences is None:
            pieces = split(document) if document.strip() else []
            sentences = [encode(s.strip()) for s in pieces if s.strip()]
            sentences = [s for s in sentences if s]
            doc_sentences[document] = sentences
        summary_ids = encode(summaries[i].strip())
        if len(summary_ids) > max_length - 2:
            summary_ids = summary_ids[: max_length - 2]
            counts["truncated_summaries"] += 1
        # _plan_pair cuts each sentence to what the context leaves after <start> + summary.
        counts["cut_sentences"] += sum(len(s) > max_length - 1 - len(summary_ids) for s in sentences)
        _plan_pair(plan, sentences, summary_ids, start_id, num_upstream, max_length)

    scores: list[tuple[np.ndarray, np.ndarray]] = [None] * len(plan.queries)  # type: ignore[list-item]
    shown = 0
    if plan.queries:
        done = 0
        for number, value in iter_causal(
            lm,
            plan.queries,
            _target_logprob_and_argmax,
            token_budget=token_budget,
            batch_size=batch_size,
            prefix_cache=prefix_cache,
            progress=False,  # the caller's bar counts examples over the whole call
        ):
            scores[number] = value
            done += 1
            reached = len(examples) * done // len(plan.queries)
            if reached > shown:
                bar.update(reached - shown)
                shown = reached
    if shown < len(examples):
        bar.update(len(examples) - shown)

    def gather(pieces: list[_Piece], target: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        logprobs = np.empty(len(target), dtype=np.float64)
        correct = np.empty(len(target), dtype=bool)
        for piece in pieces:
            piece_logprobs, piece_argmax = scores[piece.query]
            rows = slice(piece.row, piece.row + piece.stop - piece.start)
            logprobs[piece.start : piece.stop] = piece_logprobs[rows]
            correct[piece.start : piece.stop] = piece_argmax[rows] == np.asarray(
                target[piece.start : piece.stop], dtype=np.int64
            )
        return logprobs, correct

    for i, (sentences, summary_ids, per_sentence) in zip(examples, plan.pairs):
        parts: dict[str, list[np.ndarray]] = {k: [] for k in ("base", "help", "full", "bc", "hc")}
        for sentence, (base, helped, full) in zip(sentences, per_sentence):
            base_lp, base_ok = gather(base, sentence)
            help_lp, help_ok = gather(helped, sentence)
            full_lp, _ = gather(full, sentence)
            parts["base"].append(base_lp)
            parts["help"].append(help_lp)
            parts["full"].append(full_lp)
            parts["bc"].append(base_ok)
            parts["hc"].append(help_ok)
        cat = {
            k: (np.concatenate(v) if v else np.zeros(0, dtype=bool if k in ("bc", "hc") else np.float64))
            for k, v in parts.items()
        }
        ll_base, ll_help, ll_full = (float(cat[k].sum()) for k in ("base", "help", "full"))
        b, h = cat["bc"], cat["hc"]
        s = [
            [int(np.sum(~b & ~h)), int(np.sum(~b & h))],
            [int(np.sum(b & ~h)), int(np.sum(b & h))],
        ]
        score, info_diff, blanc_shannon = shannon_ratios(ll_base, ll_help, ll_full, s)
        detail = None
        if return_token_scores:
            ids = [t for sentence in sentences for t in sentence]
            detail = ShannonTokenScores(
                token_ids=ids,
                tokens=list(lm.tokenizer.convert_ids_to_tokens(ids)),
                sentence_lengths=[len(sentence) for sentence in sentences],
                base_logprobs=cat["base"],
                help_logprobs=cat["help"],
                full_logprobs=cat["full"],
                base_correct=b,
                help_correct=h,
                summary_token_ids=list(summary_ids),
            )
        yield i, (
            score, info_diff, blanc_shannon, ll_base, ll_help, ll_full, s, int(len(b)),
            len(summary_ids), len(sentences), detail,
        )


# ----------------------------------------------------------------------------------------------
# The metric.


def shannon_score(
    documents: Sequence[str],
    summaries: Sequence[str],
    model: Any = "gpt2",
    *,
    num_upstream: int = 0,
    splitter: SentenceSplitter | str | None = None,
    start_token: int | str | None = None,
    tokenizer: Any = None,
    device: Any = None,
    dtype: Any = None,
    revision: str | None = None,
    token_budget: int = 8192,
    batch_size: int | None = None,
    prefix_cache: bool = True,
    chunk_size: int = 64,
    progress: bool = True,
    return_token_scores: bool = False,
) -> ShannonResult:
    """Score each summary by how much it helps a causal LM predict its document.

    Args:
        documents: source documents, one per example (the same document may repeat: its
            summary-independent passes run once).
        summaries: the summaries to score, aligned with ``documents``.
        model: Hub id (paper default ``"gpt2"``), local directory, the offline alias
            ``"smollm2-135m"``, a :class:`~nlgmetrics.engine.LoadedLM`, or a model instance.
        num_upstream: number of preceding sentences given as context (paper/blanc default 0).
        splitter: sentence splitter: ``None``/"pysbd" (offline default), "punkt" (blanc's, needs
            nltk data) or a callable ``str -> list[str]``.
        start_token: token starting every prompt; default ``<|endoftext|>`` when the vocabulary
            has it, else the model's EOS (blanc: ``config.eos_token_id``).
        tokenizer: the tokenizer, required when ``model`` is a model instance.
        device, dtype, revision: passed to :func:`nlgmetrics.engine.load_lm`.
        token_budget, batch_size, prefix_cache: engine batching; they do not change the numbers.
        chunk_size: distinct documents planned and scored at a time (with all their summaries);
            bounds memory on a large call, does not change the numbers.
        progress: show a progress bar over the (document, summary) pairs of the whole call.
        return_token_scores: also return per-token log-probabilities and hits.

    Returns:
        :class:`ShannonResult` with per-example scores, raw components and a signature.

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> path = build_random_model("gpt2", tempfile.mkdtemp(), size="tiny")
    >>> r = shannon_score(["A cat sat. It slept."], [""], model=path, progress=False)
    >>> r.shannon_score, r.information_difference, r.blanc_shannon   # empty summary: no help
    ([0.0], [0.0], [0.0])
    """
    from nlgmetrics.engine import is_main_process, load_lm

    documents = as_texts("documents", documents)
    summaries = as_texts("summaries", summaries)
    check_same_length(documents=documents, summaries=summaries)
    # The shared check (numpy integers accepted, bools refused), with this metric's wording.
    num_upstream = check_int("num_upstream", num_upstream, minimum=0,
                             message=f"`num_upstream` must be an integer >= 0, got {num_upstream!r}.")
    chunk_size = check_int("chunk_size", chunk_size, minimum=1,
                           message=f"`chunk_size` must be an integer >= 1, got {chunk_size!r}.")
    split, splitter_name = resolve_splitter(splitter)

    lm = load_lm(model, kind="causal", tokenizer=tokenizer, device=device, dtype=dtype, revision=revision)
    if lm.kind != "causal":
        raise ValueError(
            f"shannon_score needs a causal LM (e.g. 'gpt2' or 'smollm2-135m'); {lm.name!r} is a "
            f"{lm.kind} LM."
        )
    max_length = int(lm.max_length)
    start_id = _start_token_id(lm, start_token)

    # Examples grouped by document (first appearance order): a chunk takes whole documents, so the
    # base/full passes shared by a document's summaries and each summary's prefix cache across
    # the document's sentences are reused exactly as in one big call.
    by_document: dict[str, list[int]] = {}
    for i, document in enumerate(documents):
        by_document.setdefault(document, []).append(i)
    distinct_documents = list(by_document)

    per_example: list[tuple[Any, ...] | None] = [None] * len(documents)
    counts = {"truncated_summaries": 0, "cut_sentences": 0}
    with tqdm(
        total=len(documents), desc="shannon score", unit="pair",
        disable=not progress or not documents or not is_main_process(),
    ) as bar:
        for first in range(0, len(distinct_documents), chunk_size):
            examples = [
                i for document in distinct_documents[first : first + chunk_size] for i in by_document[document]
            ]
            for i, row in _score_chunk(
                lm, documents, summaries, examples, split, start_id, num_upstream, max_length, counts,
                token_budget, batch_size, prefix_cache, return_token_scores, bar,
            ):
                per_example[i] = row
    if counts["truncated_summaries"]:
        warnings.warn(
            f"{counts['truncated_summaries']} summaries are longer than the model context allows "
            f"({max_length - 2} tokens) and were cut to that length.",
            stacklevel=2,
        )
    if counts["cut_sentences"]:
        # One warning per call (issue 9): the cut itself is blanc's, documented in the card.
        warnings.warn(
            f"{counts['cut_sentences']} document sentence(s) do not fit the model context ({max_length} "
            f"tokens) after the start token and the summary, and were cut to their first tokens as in "
            f"blanc; their remaining tokens are not scored. Use a model with a longer context or split "
            f"such sentences.",
            stacklevel=2,
        )

    columns: dict[str, list[Any]] = {name: [] for name in _COLUMNS}
    token_scores: list[ShannonTokenScores] = []
    for row in per_example:
        for name, value in zip(_COLUMNS, row):
            columns[name].append(value)
        if return_token_scores:
            token_scores.append(row[-1])

    signature = make_signature(
        "shannon_score",
        {
            **_lm_signature_fields(lm),
            "upstream": num_upstream,
            "split": splitter_name,
            "start": start_id,
            "ctx": max_length,
            "first": "paper",
        },
    )
    return ShannonResult(
        **columns,
        signature=signature,
        token_scores=token_scores if return_token_scores else None,
    )


def _lm_signature_fields(lm) -> dict[str, str]:
    """Model name, weights fingerprint and dtype (the engine's fields when it provides them)."""
    fields = getattr(lm, "signature_fields", None)
    if fields:
        return dict(fields)
    return {
        "model": os.fspath(lm.name) if not isinstance(lm.name, str) else lm.name,
        "rev": lm.fingerprint,
        "dtype": str(lm.dtype).removeprefix("torch."),
    }
