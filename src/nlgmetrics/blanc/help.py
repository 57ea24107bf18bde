"""BLANC-help: how much a summary helps a masked LM fill in the blanks of its document.

BLANC (Vasilyev, Dharnidharka, Bohannon 2020, "Fill in the BLANC: Human-free quality estimation
of document summaries") splits the document into sentences, masks tokens of each sentence in
several even "maskings" (every ``gap``-th token, ``gap_mask`` tokens at a time, only tokens long
enough to be worth guessing: :mod:`nlgmetrics.blanc.masking`), and asks a masked LM to unmask them
twice: once with the summary in front of the sentence (*help*) and once with a filler of the same
length, ``"."`` per summary token (*base*). Each masked token falls in one cell of
``S[base correct][help correct]``, and the score is ``relative`` or ``improve`` of S
(:mod:`nlgmetrics.blanc.counts`).

Definitions and defaults follow the reference implementation, PyPI ``blanc`` 0.3.4
(``blanc.BlancHelp``) exactly; the parity tests compare the two token for token. What differs is
the execution: every masked copy of every sentence of every summary goes to the shared engine
(:func:`nlgmetrics.engine.iter_masked`), batched by length, with the LM head applied only at the
masked positions, and identical inputs run once. The base (filler) input depends on the summary
only through its *length* in tokens (the filler keeps the sentence at the same positions), so
summaries of one document with equal token lengths share their base passes automatically.

Memory: the work is planned and run :data:`DOCUMENTS_PER_CHUNK` distinct documents at a time,
each with all of its summaries (so the sharing above is the same as in one big call); only one
chunk's queries are alive at once. The numbers do not depend on the chunking.

Empty input (documented, never NaN): an empty or whitespace-only summary gives help == base, so
the score is 0.0 with S01 == S10 == 0; an empty document (or one with no maskable token) has no
masked token at all: score 0.0 and all counts 0 (the reference returns 0 too). Sentences that do
not fit the window (blanc's 512 tokens, or the model's own smaller limit) are cut the way blanc
cuts them (see :func:`~nlgmetrics.blanc.masking.fit_to_window`), with one warning per call.
"""

from __future__ import annotations

import os

from collections.abc import Sequence
from typing import Any

from nlgmetrics.blanc.common import (
    BLANC_MAX_LENGTH,
    DEFAULT_MODEL,
    DEFAULT_TOKEN_BUDGET,
    TRUNCATION_WARNING,
    CopyInputs,
    blanc_signature,
    check_scoring,
    plan_copies,
    run_queries,
    tally,
)
from nlgmetrics.blanc.counts import DEFAULT_MEASURE, Counts, Measure
from nlgmetrics.blanc.explain import Outcome, masked_outcomes
from nlgmetrics.blanc.masking import (
    DEFAULT_GAP,
    DEFAULT_GAP_MASK,
    DEFAULT_LEN_SENT_ALLOW_CUT,
    DEFAULT_MIN_TOKEN_LENGTH_FOLLOWUP,
    DEFAULT_MIN_TOKEN_LENGTH_LEAD,
    DEFAULT_MIN_TOKEN_LENGTH_NORMAL,
)
from nlgmetrics.blanc.result import BlancResult
from nlgmetrics.core.refusals import AFTER_LOADING, Refusal
from nlgmetrics.core.sentences import SentenceSplitter, resolve_splitter
from nlgmetrics.core.validation import check_source_inputs

#: blanc's filler: one "." per summary token in the base input.
DEFAULT_FILLER_TOKEN = "."
#: blanc's separator between the help and the sentence: none.
DEFAULT_HELP_SEP = ""
#: Distinct documents (each with all of its summaries) planned and run at a time: bounds the
#: queries alive at once (two per masked copy of every sentence, for every summary).
DOCUMENTS_PER_CHUNK = 16

FILLER_RULE = Refusal(
    ("filler_token", "help_sep"), "a `filler_token` or `help_sep` that is not a string",
    "they are text put into the model's input")
FILLER_VOCABULARY_RULE = Refusal(
    ("filler_token",), "a `filler_token` that is not a single token of the model's vocabulary",
    "the filler stands for one summary token per position", AFTER_LOADING)


def _check_filler(tokenizer: Any, filler_token: str) -> int:
    filler_id = tokenizer.convert_tokens_to_ids(filler_token)
    if filler_id is None or (filler_id == tokenizer.unk_token_id and filler_token != tokenizer.unk_token):
        raise FILLER_VOCABULARY_RULE.error(
            f"`filler_token` {filler_token!r} is not a token of the model's vocabulary; pass a "
            f"single vocabulary token (blanc's default is {DEFAULT_FILLER_TOKEN!r})."
        )
    return filler_id


def blanc_help(
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
    measure: Measure = DEFAULT_MEASURE,
    gap: int = DEFAULT_GAP,
    gap_mask: int = DEFAULT_GAP_MASK,
    min_token_length_normal: int = DEFAULT_MIN_TOKEN_LENGTH_NORMAL,
    min_token_length_lead: int = DEFAULT_MIN_TOKEN_LENGTH_LEAD,
    min_token_length_followup: int = DEFAULT_MIN_TOKEN_LENGTH_FOLLOWUP,
    len_sent_allow_cut: int = DEFAULT_LEN_SENT_ALLOW_CUT,
    filler_token: str = DEFAULT_FILLER_TOKEN,
    help_sep: str = DEFAULT_HELP_SEP,
    splitter: SentenceSplitter | str | None = None,
    explain: bool = False,
    cache_dir: str | os.PathLike | None = None,
) -> BlancResult:
    """BLANC-help of each summary ``predictions[i]`` for its document ``sources[i]`` (blanc's
    ``BlancHelp``).

    Args:
        predictions, sources: one summary and its document per example (same length); a document
            may repeat (several summaries of one document share its tokenization and base passes).
        model: masked LM: Hub id, local directory, ``LoadedLM`` or a model instance (then pass
            ``model_tokenizer``); default ``bert-base-uncased`` as in the paper.
        model_tokenizer: the Hugging Face tokenizer of a model instance (default: the model's own).
        revision, device, dtype: which Hub revision, where and in which precision to run (engine
            defaults: CUDA if available, float32).
        device_map, max_memory, offload_folder: a model bigger than one device, given by name or
            folder: passed to ``from_pretrained`` (e.g. ``device_map="auto"``,
            ``max_memory={0: "20GiB", "cpu": "60GiB"}``); the numbers do not change
            (:func:`nlgmetrics.engine.load_lm`).
        max_length: the window of one input ``[CLS] help sentence [SEP]``, at least 3 tokens;
            default ``None``: blanc's 512; a value above the model's positions is capped at them.
        token_budget, batch_size: engine batching (they do not change the numbers);
            ``token_budget=None`` is the default budget, 8192, as for every LM metric; ``"auto"``
            the largest that fits the free memory (:mod:`nlgmetrics.engine.budget`).
        progress: show a progress bar over the examples.
        measure: ``"relative"`` (default, in [-1, 1]) or ``"improve"`` (in [0, 1]).
        gap, gap_mask, min_token_length_*, len_sent_allow_cut, filler_token, help_sep: blanc's
            options, same meaning and defaults (gap=2 is blanc's current default; the paper used 6).
        splitter: sentence splitter: ``None``/"pysbd" (offline default), "punkt" (blanc's nltk
            splitter, needs its data) or a callable ``str -> list[str]``.
        explain: also return, per example, which masked tokens the summary turned right or wrong
            (``explanations``, :mod:`nlgmetrics.blanc.explain`); no number changes.
        cache_dir: a folder for the engine's store (default ``$NLGMETRICS_CACHE_DIR``; None: no
            store): what the model computed for each distinct input is kept there and reused by
            later calls and processes, keyed by everything that can change it (weights, tokenizer,
            dtype, device type, versions, the tokens); the numbers do not change.

    Returns:
        :class:`~nlgmetrics.blanc.result.BlancResult`: column ``blanc`` (one score per example),
        ``counts`` (``[[S00, S01], [S10, S11]]`` per example) and the ``signature``.

    >>> from nlgmetrics.testing import build_random_model
    >>> from nlgmetrics.core.signature import parse_signature
    >>> import tempfile
    >>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
    >>> result = blanc_help(["Jack bought apples."], ["Jack bought apples. Jill sold pears."],
    ...                     model=str(path), progress=False)
    >>> list(result.scores), len(result.counts), parse_signature(result.signature)["variant"]
    (['blanc'], 1, 'help')
    """
    # The engine (and torch) load only when a metric runs: `import nlgmetrics.blanc` stays light.
    from nlgmetrics.engine.bookkeeping import ExampleProgress, WarnOnce
    from nlgmetrics.engine.call import check_call_options, lm_call
    from nlgmetrics.engine.planning import chunk_by_key

    summaries, documents = check_source_inputs(predictions, sources)
    options = check_call_options(
        model, model_tokenizer=model_tokenizer, revision=revision, device=device, dtype=dtype,
        device_map=device_map, max_memory=max_memory, offload_folder=offload_folder, max_length=max_length,
        token_budget=token_budget, batch_size=batch_size, cache_dir=cache_dir)
    measure, masking, progress, explain = check_scoring(
        measure, gap, gap_mask, min_token_length_normal, min_token_length_lead, min_token_length_followup,
        len_sent_allow_cut, progress, explain, options.max_length)
    if not isinstance(filler_token, str) or not isinstance(help_sep, str):
        raise FILLER_RULE.error(
            f"`filler_token` and `help_sep` must be strings (blanc: {DEFAULT_FILLER_TOKEN!r} and "
            f"{DEFAULT_HELP_SEP!r}).")
    split, splitter_name = resolve_splitter(splitter)

    with lm_call(options, kind="masked", default_budget=DEFAULT_TOKEN_BUDGET, default_max_length=BLANC_MAX_LENGTH,
                 progress=progress) as call:
        lm, window = call.lm, call.max_length
        tok = lm.tokenizer
        sep_ids = tuple(tok.convert_tokens_to_ids(tok.tokenize(help_sep))) if help_sep else ()
        filler_id = _check_filler(tok, filler_token)
        inputs = CopyInputs(tok, split, window, masking, filler_id, sep_ids)

        counts: list[Counts] = [[[0, 0], [0, 0]] for _ in summaries]
        outcomes: list[list[Outcome]] = [[] for _ in summaries] if explain else []
        warn = WarnOnce()
        with ExampleProgress(len(summaries), "BLANC-help", enabled=call.progress, store=call.store) as bar:
            # A chunk takes whole documents, so their summaries share tokenization and base passes.
            for examples in chunk_by_key(documents, DOCUMENTS_PER_CHUNK):
                # The texts' memo lives one chunk: it must not grow with the whole call.
                queries, copies = plan_copies(examples, summaries, documents, inputs, warn)
                predicted = run_queries(lm, queries, token_budget=call.token_budget, batch_size=call.batch_size,
                                        bar=bar, examples=len(examples), store=call.store)
                for example, help_query, base_query, truth, sentence, positions in copies:
                    base, helped = predicted[base_query], predicted[help_query]
                    tally(counts[example], truth, base=base, helped=helped, tokenizer=tok)
                    if explain:
                        outcomes[example] += masked_outcomes(sentence, positions, truth, base, helped, tok)
    warn.emit(TRUNCATION_WARNING, window=window)

    signature = blanc_signature("help", lm, window, measure=measure, masking=masking, splitter=splitter_name,
                                options={"filler_token": filler_token, "help_sep": help_sep or None})
    result = BlancResult.from_counts(counts, measure, signature)
    return result.with_explanations(tok, split, summaries, documents, outcomes, "help", measure) if explain else result
