"""BLANC-help: how much a summary helps a masked LM fill in the blanks of its document.

BLANC (Vasilyev, Dharnidharka, Bohannon 2020, "Fill in the BLANC: Human-free quality estimation
of document summaries") splits the document into sentences, masks tokens of each sentence in
several even "maskings" (every ``gap``-th token, ``gap_mask`` tokens at a time, only tokens long
enough to be worth guessing), and asks a masked LM to unmask them twice: once with the summary
in front of the sentence (*help*) and once with a filler of the same length, ``"."`` per summary
token (*base*). Each masked token falls in one cell of ``S[base correct][help correct]``:

- ``relative`` (default): ``(S01 - S10) / (S00 + S01 + S10 + S11)``, in [-1, 1];
- ``improve``: ``S01 / (S00 + S01 + S11)``, in [0, 1].

Definitions and defaults follow the reference implementation, PyPI ``blanc`` 0.3.4
(``blanc.BlancHelp``) exactly; the parity tests compare the two token for token. What differs is
the execution: every masked copy of every sentence of every summary goes to the shared engine
(:func:`nlgmetrics.engine.iter_masked`) at once, batched by length, with the LM head applied only
at the masked positions, and identical inputs run once. The base (filler) input depends on the
summary only through its *length* in tokens (the filler keeps the sentence at the same positions),
so summaries of one document with equal token lengths share their base passes automatically.

Empty input (documented, never NaN): an empty or whitespace-only summary gives help == base, so
the score is 0.0 with S01 == S10 == 0; an empty document (or one with no maskable token) has no
masked token at all: score 0.0 and all counts 0 (the reference returns 0 too). Sentences that do
not fit the model's window (512 tokens like BERT, or the model's own smaller limit) are cut the
way blanc cuts them (see :func:`fit_to_window`), with one warning per call.

>>> from nlgmetrics.blanc import relative_score, improve_score
>>> relative_score([[5, 3], [1, 1]]), improve_score([[5, 3], [1, 1]])
(0.2, 0.3333333333333333)
"""

from __future__ import annotations

import random
import unicodedata
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from nlgmetrics.sentences import SentenceSplitter, resolve_splitter
from nlgmetrics.signature import make_signature
from nlgmetrics.validation import as_texts, check_choice, check_int, check_same_length

if TYPE_CHECKING:  # pragma: no cover
    from nlgmetrics.engine import LoadedLM

Measure = Literal["relative", "improve"]
MEASURES = ("relative", "improve")

# blanc's window: [CLS] help + sentence [SEP] never exceeds BERT's 512 positions (it uses 512
# whatever the model; we use min(512, model positions) so that small models do not crash).
BLANC_MAX_TOKENS = 512
WORDPIECE_CONTINUATION = "##"
# Queries built before each engine call; bounds host memory on corpora of thousands of pairs.
_QUERIES_PER_CHUNK = 32_768

Counts = list[list[int]]  # [[S00, S01], [S10, S11]], as blanc's "relative-counts"


# ----------------------------------------------------------------------------------------------
# scores from counts


def relative_score(counts: Counts) -> float:
    """``(S01 - S10) / total``; 0.0 when no token was masked (blanc's convention).

    >>> relative_score([[0, 0], [0, 0]])
    0.0
    """
    total = counts[0][0] + counts[0][1] + counts[1][0] + counts[1][1]
    return 0.0 if total == 0 else (counts[0][1] - counts[1][0]) / total


def improve_score(counts: Counts) -> float:
    """``S01 / (S00 + S01 + S11)``; 0.0 when that denominator is 0 (blanc's convention).

    >>> improve_score([[1, 1], [4, 0]])
    0.5
    """
    denominator = counts[0][0] + counts[0][1] + counts[1][1]
    return 0.0 if denominator == 0 else counts[0][1] / denominator


def score_from_counts(counts: Counts, measure: str) -> float:
    """Apply ``measure`` ('relative' or 'improve') to ``[[S00, S01], [S10, S11]]``."""
    return relative_score(counts) if measure == "relative" else improve_score(counts)


# ----------------------------------------------------------------------------------------------
# which tokens are masked


@dataclass(frozen=True)
class MinTokenLengths:
    """Shortest tokens (in characters, without ``##``) worth masking.

    ``normal``: a whole word; ``lead``: the first piece of a word split in pieces; ``followup``: a
    ``##`` continuation piece (blanc's default 100 means: never).
    """

    normal: int = 4
    lead: int = 2
    followup: int = 100

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.normal, self.lead, self.followup)


def is_maskable(token: str, next_token: str, lengths: MinTokenLengths) -> bool:
    """Whether ``token`` (followed by ``next_token``, '' at the end) is long enough to mask.

    >>> is_maskable("house", "", MinTokenLengths()), is_maskable("the", "", MinTokenLengths())
    (True, False)
    >>> is_maskable("re", "##use", MinTokenLengths()), is_maskable("##use", "", MinTokenLengths())
    (True, False)
    """
    if token.startswith(WORDPIECE_CONTINUATION):
        return len(token) - len(WORDPIECE_CONTINUATION) >= lengths.followup
    if next_token.startswith(WORDPIECE_CONTINUATION):
        return len(token) >= lengths.lead
    return len(token) >= lengths.normal


def maskable_flags(tokens: Sequence[str], lengths: MinTokenLengths) -> list[bool]:
    """``is_maskable`` for every token of a sentence."""
    return [
        is_maskable(token, tokens[i + 1] if i + 1 < len(tokens) else "", lengths)
        for i, token in enumerate(tokens)
    ]


def even_maskings(
    tokens: Sequence[str], gap: int, gap_mask: int, lengths: MinTokenLengths
) -> list[tuple[int, ...]]:
    """blanc's even masking: one masking per offset ``0 .. gap-1`` (gap capped at the length).

    Masking ``m`` covers the positions whose ``index % gap`` lies in the window of ``gap_mask``
    offsets starting at ``m`` (wrapping around), restricted to maskable tokens; maskings that
    would mask nothing are dropped. Every maskable token is masked in exactly one masking when
    ``gap_mask == 1``.

    >>> even_maskings(["alpha", "beta", "the", "gamma"], 2, 1, MinTokenLengths())
    [(0,), (1, 3)]
    """
    gap = min(gap, len(tokens))
    flags = maskable_flags(tokens, lengths)
    maskings: list[tuple[int, ...]] = []
    for start in range(gap):
        end = start + gap_mask
        chosen = []
        for index, flag in enumerate(flags):
            offset = index % gap
            if gap == 1:
                in_window = True
            elif end >= gap:  # the window wraps around past gap - 1
                in_window = offset >= start or offset < end % gap
            else:
                in_window = start <= offset < end
            if in_window and flag:
                chosen.append(index)
        if chosen:
            maskings.append(tuple(chosen))
    return maskings


def random_maskings(
    tokens: Sequence[str], p_mask: float, lengths: MinTokenLengths, rng: random.Random
) -> list[tuple[int, ...]]:
    """blanc's random masking: shuffle the maskable positions with ``rng``, cut them in groups of
    ``max(int(len(tokens) * p_mask), 1)``; each group is one masking (positions sorted).

    >>> random_maskings(["alpha", "beta", "gamma"], 0.5, MinTokenLengths(), random.Random(0))
    [(0,), (2,), (1,)]
    """
    per_masking = max(int(len(tokens) * p_mask), 1)
    positions = [i for i, flag in enumerate(maskable_flags(tokens, lengths)) if flag]
    rng.shuffle(positions)
    return [
        tuple(sorted(positions[i : i + per_masking]))
        for i in range(0, len(positions), per_masking)
    ]


# ----------------------------------------------------------------------------------------------
# fitting a sentence and its help into the model's window


def _keep_leading_sentences(sentences: Sequence[Sequence[str]], room: int) -> list[str]:
    """The leading whole sentences that fit in ``room`` tokens; if not even the first one fits,
    the *last* ``room`` tokens of the first sentence (blanc's ``truncate_list_of_lists``)."""
    kept: list[str] = []
    kept_sentences = 0
    for sentence in sentences:
        if len(kept) + len(sentence) > room:
            break
        kept.extend(sentence)
        kept_sentences += 1
        if len(kept) == room:
            break
    if kept_sentences:
        return kept
    first = list(sentences[0])
    return first[len(first) - room :] if len(first) > room else first


def fit_to_window(
    sentence: Sequence[str],
    summary_sentences: Sequence[Sequence[str]],
    *,
    len_sep: int,
    len_sent_allow_cut: int,
    max_tokens: int,
) -> tuple[list[str], list[str], bool]:
    """Cut ``[CLS] summary sep sentence [SEP]`` to ``max_tokens`` as blanc does.

    First the sentence loses tokens from its end, but is not cut below ``len_sent_allow_cut``
    tokens; if that is not enough, the summary keeps only its leading whole sentences that fit
    (or, when even its first sentence is too long, that sentence's last tokens). Beyond blanc, a
    sentence that cannot fit even with no summary is cut to the window (blanc would fail an
    assertion; this needs a model window under ``len_sent_allow_cut`` + 2 tokens).
    Returns ``(sentence_tokens, summary_tokens, truncated)``.

    >>> fit_to_window(["a"] * 8, [["b"] * 3, ["c"] * 3], len_sep=0, len_sent_allow_cut=4, max_tokens=12)
    (['a', 'a', 'a', 'a'], ['b', 'b', 'b', 'c', 'c', 'c'], True)
    >>> fit_to_window(["a"] * 8, [["b"] * 3, ["c"] * 3], len_sep=0, len_sent_allow_cut=4, max_tokens=10)
    (['a', 'a', 'a', 'a'], ['b', 'b', 'b'], True)
    """
    sentence = list(sentence)
    summary_tokens = [token for part in summary_sentences for token in part]
    excess = 2 + len(summary_tokens) + len_sep + len(sentence) - max_tokens
    if excess <= 0:
        return sentence, summary_tokens, False
    cut = min(excess, len(sentence) - len_sent_allow_cut)
    # A negative cut keeps the sentence whole (slicing past its end), as in blanc.
    sentence = sentence[: len(sentence) - cut]
    if excess > cut:
        room = max_tokens - 2 - len_sep - len(sentence)
        if room < 0 or not summary_tokens:
            # Only reachable with tiny windows: drop the help, cut the sentence to what is left.
            sentence = sentence[: max(max_tokens - 2 - len_sep, 0)]
            return sentence, [], True
        summary_tokens = _keep_leading_sentences(summary_sentences, room)
    return sentence, summary_tokens, True


# ----------------------------------------------------------------------------------------------
# shared preparation (BLANC-help and BLANC-tune)


@dataclass(frozen=True)
class MaskingOptions:
    """Options that decide which tokens of the document are masked (blanc's names)."""

    gap: int = 2
    gap_mask: int = 1
    lengths: MinTokenLengths = field(default_factory=MinTokenLengths)
    len_sent_allow_cut: int = 100

    def validate(self) -> MaskingOptions:
        """Check every option; return a copy holding plain Python ints (numpy ints accepted)."""
        gap = check_int("gap", self.gap, minimum=1)
        gap_mask = check_int("gap_mask", self.gap_mask, minimum=1)
        lengths = MinTokenLengths(*(
            check_int(f"min_token_length_{name}", value, minimum=0)
            for name, value in zip(("normal", "lead", "followup"), self.lengths.as_tuple())))
        cut = check_int("len_sent_allow_cut", self.len_sent_allow_cut, minimum=0)
        return MaskingOptions(gap, gap_mask, lengths, cut)


def clean_text(text: str) -> str:
    """blanc's only normalisation: Unicode NFKD (accents become combining marks)."""
    return unicodedata.normalize("NFKD", text)


def tokenize_text(tokenizer: Any, text: str) -> list[str]:
    """``tokenizer.tokenize(text)`` without transformers' "Token indices sequence length is longer
    than the specified maximum sequence length ... will result in indexing errors" log.

    BLANC tokenizes whole sentences (and BLANC-tune whole summaries) and then cuts them to its
    window itself (:func:`fit_to_window`, with its own warning; tuning chunks of
    ``finetune_chunk_size`` tokens), so that log is false here, and alarming. Fast tokenizers take
    ``verbose=False`` for exactly this check; slow ones never run it in ``tokenize`` (and older
    transformers would log "Keyword arguments not recognized" for the keyword).
    """
    if getattr(tokenizer, "is_fast", False):
        return tokenizer.tokenize(text, verbose=False)
    return tokenizer.tokenize(text)


class TextPreparer:
    """Splits and tokenizes texts once per distinct text (one document, many summaries)."""

    def __init__(self, tokenizer: Any, splitter: SentenceSplitter):
        self.tokenizer = tokenizer
        self.splitter = splitter
        self._sentences: dict[str, list[list[str]]] = {}

    def sentences(self, text: str) -> list[list[str]]:
        """WordPiece tokens of each sentence of ``clean_text(text)`` (cached; do not mutate)."""
        cached = self._sentences.get(text)
        if cached is None:
            if text:
                cached = [tokenize_text(self.tokenizer, s) for s in self.splitter(clean_text(text))]
            else:
                cached = []
            self._sentences[text] = cached
        return cached

    def help_sentences(self, summary: str) -> list[list[str]]:
        """Summary sentences as blanc uses them: ``[[]]`` (no help) when it has no sentence."""
        return self.sentences(summary) or [[]]


def resolve_max_tokens(lm: LoadedLM, max_tokens: int | None) -> int:
    """blanc's 512-token window, or less when the model has fewer positions."""
    limit = min(BLANC_MAX_TOKENS, int(lm.max_length))
    if max_tokens is None:
        return limit
    return check_int("max_tokens", max_tokens, minimum=3, maximum=int(lm.max_length), message=(
        f"`max_tokens` must be an integer between 3 and the model's {lm.max_length} "
        f"positions, got {max_tokens!r}."))


def special_ids(tokenizer: Any) -> tuple[int, int, int]:
    """``(cls, sep, mask)`` token ids; a clear error for tokenizers without them."""
    ids = []
    for name in ("cls_token", "sep_token", "mask_token"):
        token = getattr(tokenizer, name, None)
        if token is None:
            raise ValueError(
                f"BLANC needs a masked-LM tokenizer with a {name} (BERT-like); "
                f"{type(tokenizer).__name__} has none. Pass a masked LM such as 'bert-base-uncased'."
            )
        ids.append(tokenizer.convert_tokens_to_ids(token))
    return ids[0], ids[1], ids[2]


def argmax_ids(logits: Any, _query: Any) -> list[int]:
    """Engine reduce: the predicted token id at each masked position (ties: lowest id, as torch)."""
    return logits.argmax(dim=-1).tolist()


@dataclass
class _Masked:
    """One masked copy of one sentence, for one pair: its queries and the true tokens."""

    pair: int
    queries: tuple[int, ...]  # query index per variant (help, base) or (tuned,)
    truth: tuple[str, ...]


def tally(
    records: Sequence[_Masked],
    predictions: Sequence[list[int]],
    tokenizer: Any,
    counts: list[Counts],
    base_variant: int,
    help_variant: int,
) -> None:
    """Add each masked token to ``counts[pair][base correct][help correct]``.

    Correctness compares token *strings* (predicted id -> token), exactly like blanc.
    """
    to_token = tokenizer.convert_ids_to_tokens
    for record in records:
        base = to_token(predictions[record.queries[base_variant]])
        helped = to_token(predictions[record.queries[help_variant]])
        cell = counts[record.pair]
        for truth, b, h in zip(record.truth, base, helped):
            cell[int(b == truth)][int(h == truth)] += 1


def run_queries(lm: LoadedLM, queries: list, *, token_budget: int, batch_size: int | None,
                progress: bool, desc: str) -> list[list[int]]:
    """Argmax predictions of every query, aligned with ``queries``."""
    from nlgmetrics.engine import iter_masked

    out: list[Any] = [None] * len(queries)
    for index, result in iter_masked(lm, queries, argmax_ids, token_budget=token_budget,
                                     batch_size=batch_size, progress=progress, desc=desc):
        out[index] = result
    return out


def check_inputs(documents: Any, summaries: Any) -> tuple[list[str], list[str]]:
    """Validated copies of the inputs (lists of strings of one length)."""
    docs = as_texts("documents", documents)
    sums = as_texts("summaries", summaries)
    check_same_length(documents=docs, summaries=sums)
    return docs, sums


def check_engine_options(token_budget: Any, batch_size: Any) -> tuple[int, int | None]:
    """``(token_budget, batch_size)`` as plain ints (numpy ints accepted); clear errors otherwise."""
    return (check_int("token_budget", token_budget, minimum=1),
            check_int("batch_size", batch_size, minimum=1, allow_none=True))


def load_masked_lm(model: Any, device: Any, dtype: Any, revision: str | None = None) -> LoadedLM:
    """The engine's masked LM (cached per process); clear errors for causal or missing models."""
    from nlgmetrics.engine import load_lm

    if isinstance(model, str) and not model.strip():
        raise ValueError("`model` is an empty string; pass a Hub id or a local model directory.")
    return load_lm(model, kind="masked", device=device, dtype=dtype, revision=revision)


def lm_signature_fields(lm: LoadedLM) -> dict[str, str]:
    fields = getattr(lm, "signature_fields", None)
    if isinstance(fields, dict):
        return dict(fields)
    return {"model": lm.name, "rev": lm.fingerprint, "dtype": str(lm.dtype).removeprefix("torch.")}


def warn_truncated(count: int, max_tokens: int) -> None:
    if count:
        warnings.warn(
            f"BLANC: {count} sentence input(s) exceeded the {max_tokens}-token window and were cut "
            f"as blanc cuts them (sentence tail first, down to len_sent_allow_cut tokens, then the "
            f"summary's trailing sentences); their cut-off tokens are not scored.",
            stacklevel=3,
        )


@dataclass(frozen=True)
class BlancResult:
    """Per-pair BLANC scores, their ``[[S00, S01], [S10, S11]]`` counts, and the signature.

    ``S[b][h]`` counts masked tokens by whether they were predicted right without (b) and with
    (h) the summary's help (BLANC-help) or the summary-tuned model (BLANC-tune).
    """

    scores: list[float]
    counts: list[Counts]
    signature: str

    def as_dict(self) -> dict[str, Any]:
        return {"scores": list(self.scores), "counts": [[list(r) for r in c] for c in self.counts],
                "signature": self.signature}


# ----------------------------------------------------------------------------------------------
# BLANC-help


def blanc_help(
    documents: Sequence[str],
    summaries: Sequence[str],
    model: Any = "bert-base-uncased",
    *,
    measure: Measure = "relative",
    gap: int = 2,
    gap_mask: int = 1,
    min_token_length_normal: int = 4,
    min_token_length_lead: int = 2,
    min_token_length_followup: int = 100,
    len_sent_allow_cut: int = 100,
    filler_token: str = ".",
    help_sep: str = "",
    max_tokens: int | None = None,
    splitter: SentenceSplitter | str | None = None,
    device: Any = None,
    dtype: Any = None,
    revision: str | None = None,
    token_budget: int = 8192,
    batch_size: int | None = None,
    progress: bool = True,
) -> BlancResult:
    """BLANC-help of each ``summaries[i]`` for ``documents[i]`` (blanc's ``BlancHelp``).

    Args:
        documents, summaries: one document and one summary per example (same length); a document
            may repeat (several summaries of one document share its tokenization and base passes).
        model: masked LM: Hub id, local directory, ``LoadedLM`` or a loaded model (see
            :func:`nlgmetrics.engine.load_lm`); default ``bert-base-uncased`` as in the paper.
        measure: ``"relative"`` (default) or ``"improve"``.
        gap, gap_mask, min_token_length_*, len_sent_allow_cut, filler_token, help_sep: blanc's
            options, same meaning and defaults (gap=2 is blanc's current default; the paper used 6).
        max_tokens: window for ``[CLS] help sentence [SEP]``; default min(512, model positions).
        splitter: sentence splitter: ``None``/"pysbd" (offline default), "punkt" (blanc's nltk
            splitter, needs its data) or a callable ``str -> list[str]``.
        device, dtype, revision: where and in which precision to run, which Hub revision
            (engine defaults: CUDA if available, float32).
        token_budget, batch_size: engine batching (do not change the numbers).
        progress: show a progress bar.

    Returns:
        :class:`BlancResult` with ``scores`` (floats), ``counts`` and ``signature``.

    >>> from nlgmetrics.testing import build_random_model
    >>> import tempfile
    >>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
    >>> result = blanc_help(["Jack bought apples. Jill sold pears."], ["Jack bought apples."],
    ...                     model=str(path), progress=False)
    >>> len(result.scores), result.signature.split("|")[0]
    (1, 'blanc-help')
    """
    docs, sums = check_inputs(documents, summaries)
    check_choice("measure", measure, MEASURES)
    options = MaskingOptions(gap, gap_mask, MinTokenLengths(
        min_token_length_normal, min_token_length_lead, min_token_length_followup),
        len_sent_allow_cut).validate()
    # Plain ints from here on (numpy ints accepted): the signature does not depend on the type.
    gap, gap_mask, len_sent_allow_cut = options.gap, options.gap_mask, options.len_sent_allow_cut
    if not isinstance(filler_token, str) or not isinstance(help_sep, str):
        raise ValueError("`filler_token` and `help_sep` must be strings (blanc: '.' and '').")
    token_budget, batch_size = check_engine_options(token_budget, batch_size)
    split, splitter_name = resolve_splitter(splitter)

    lm = load_masked_lm(model, device, dtype, revision)
    tokenizer = lm.tokenizer
    cls_id, sep_id, _ = special_ids(tokenizer)
    window = resolve_max_tokens(lm, max_tokens)
    filler_id = tokenizer.convert_tokens_to_ids(filler_token)
    if filler_id is None or (filler_id == tokenizer.unk_token_id and filler_token != tokenizer.unk_token):
        raise ValueError(
            f"`filler_token` {filler_token!r} is not a token of the model's vocabulary; pass a "
            f"single vocabulary token (blanc's default is '.')."
        )
    sep_ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(help_sep)) if help_sep else []
    prep = TextPreparer(tokenizer, split)

    counts: list[Counts] = [[[0, 0], [0, 0]] for _ in docs]
    truncated = 0
    # Pairs grouped by document, so one chunk holds all summaries of a document (shared bases).
    by_doc: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        by_doc.setdefault(doc, []).append(i)

    queries: list = []
    query_index: dict[tuple, int] = {}
    records: list[_Masked] = []

    def add_query(ids: tuple[int, ...], positions: tuple[int, ...]) -> int:
        from nlgmetrics.engine import MaskedQuery

        key = (ids, positions)
        index = query_index.get(key)
        if index is None:
            index = query_index[key] = len(queries)
            queries.append(MaskedQuery(input_ids=ids, mask_positions=positions))
        return index

    def flush() -> None:
        if not records:
            return
        predictions = run_queries(lm, queries, token_budget=token_budget, batch_size=batch_size,
                                  progress=progress, desc="BLANC-help")
        # variant 0 = help, 1 = base (filler)
        tally(records, predictions, tokenizer, counts, base_variant=1, help_variant=0)
        queries.clear()
        query_index.clear()
        records.clear()

    to_ids = tokenizer.convert_tokens_to_ids
    for doc, pairs in by_doc.items():
        doc_sentences = prep.sentences(doc)
        for pair in pairs:
            help_sentences = prep.help_sentences(sums[pair])
            for sentence in doc_sentences:
                sent, help_tokens, cut = fit_to_window(
                    sentence, help_sentences, len_sep=len(sep_ids),
                    len_sent_allow_cut=len_sent_allow_cut, max_tokens=window)
                truncated += cut
                maskings = even_maskings(sent, gap, gap_mask, options.lengths)
                if not maskings:
                    continue
                sent_ids = tuple(to_ids(sent))
                help_ids = (cls_id, *to_ids(help_tokens), *sep_ids)
                base_ids = (cls_id, *([filler_id] * len(help_tokens)), *sep_ids)
                offset = len(help_ids)
                help_full = help_ids + sent_ids + (sep_id,)
                base_full = base_ids + sent_ids + (sep_id,)
                for positions in maskings:
                    shifted = tuple(p + offset for p in positions)
                    records.append(_Masked(
                        pair=pair,
                        queries=(add_query(help_full, shifted), add_query(base_full, shifted)),
                        truth=tuple(sent[p] for p in positions),
                    ))
        if len(queries) >= _QUERIES_PER_CHUNK:
            flush()
    flush()
    warn_truncated(truncated, window)

    signature = make_signature("blanc-help", {
        **lm_signature_fields(lm),
        "measure": measure, "gap": gap, "gap_mask": gap_mask,
        "min_len": options.lengths.as_tuple(), "allow_cut": len_sent_allow_cut,
        "filler": filler_token, "sep": help_sep or "none", "window": window,
        "split": splitter_name, "mask": "even",
    })
    return BlancResult(
        scores=[float(score_from_counts(c, measure)) for c in counts],
        counts=counts,
        signature=signature,
    )
