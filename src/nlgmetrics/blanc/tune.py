"""BLANC-tune: how much fine-tuning a masked LM on the summary helps it unmask the document.

For each summary, a *copy* of the model is fine-tuned on the summary (masked-LM training on
overlapping chunks of it), then both the original and the tuned model unmask the same even
maskings of every document sentence (no help text in the input). Each masked token falls in
``S[base correct][tuned correct]``; the score is ``relative`` or ``improve`` of S
(:mod:`nlgmetrics.blanc.counts`). The recipe and its defaults are PyPI ``blanc`` 0.3.4's
(``blanc.BlancTune``, see :class:`TuneSettings`); the user's model is never touched.

Randomness: blanc seeds only when ``random_seed`` > 0 (its default leaves its numbers changing
from run to run); we always seed, per summary, with ``seed`` (a private ``random.Random`` and
``torch.manual_seed`` inside ``torch.random.fork_rng``, so the caller's RNG state is kept):
``blanc_tune(..., seed=N)`` reproduces ``BlancTune(random_seed=N)`` for N > 0 draw for draw.

Work saved: the base pass runs once per distinct masked copy of the documents, and a summary
paired with several documents is tuned once. An empty summary yields no training data: score 0.0.

>>> from nlgmetrics.testing import build_random_model
>>> from nlgmetrics.core.signature import parse_signature
>>> import tempfile
>>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
>>> result = blanc_tune(["Jack bought apples."], ["Jack bought apples. Jill sold pears."],
...                     model=str(path), finetune_epochs=1, progress=False)
>>> parse_signature(result.signature)["variant"], len(result.counts)
('tune', 1)
"""

from __future__ import annotations

import os

import copy
import numbers
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from nlgmetrics.blanc.common import (
    BLANC_MAX_LENGTH,
    DEFAULT_MODEL,
    DEFAULT_TOKEN_BUDGET,
    TRUNCATION_WARNING,
    CopyInputs,
    MaskedCopy,
    NonFiniteLogitsError,
    blanc_signature,
    check_scoring,
    plan_copies,
    run_queries,
    special_ids,
    tally,
    tokenize_text,
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
    MaskingOptions,
    MinTokenLengths,
    even_maskings,
    random_maskings,
)
from nlgmetrics.blanc.result import BlancResult
from nlgmetrics.core.sentences import SentenceSplitter, resolve_splitter
from nlgmetrics.core.refusals import AFTER_LOADING, WHILE_SCORING, OptionError, Refusal
from nlgmetrics.core.validation import (
    SEED_RULE,
    check_int,
    check_real,
    check_seed,
    check_source_inputs,
    check_switches,
    shown_value,
    switch_rule,
)

# blanc's range of "reasonable" BERT ids for random replacement (inclusive); capped by the vocab.
TOKEN_REPLACE_RANGE = (1000, 29999)
LABEL_IGNORE = -100
# Parameters whose name contains one of these get no weight decay (blanc / BERT recipe).
NO_DECAY = ("bias", "LayerNorm.weight")

#: blanc's defaults of :func:`blanc_tune`'s main tuning settings (the rest: :class:`TuneSettings`).
DEFAULT_FINETUNE_EPOCHS = 10
DEFAULT_P_MASK = 0.15
DEFAULT_LEARNING_RATE = 5e-5
#: Always seeded (blanc's default 0 means unseeded: its numbers change from run to run).
DEFAULT_SEED = 0


TUNING_RULE = Refusal(
    ("tuning",), "a `tuning` that is not a TuneSettings",
    "its fields are the tuning recipe, and another object (a dict, blanc's keyword names) would be misread")
TUNING_COUNTS_RULE = Refusal(
    ("finetune_epochs", "tuning"),
    "a `finetune_epochs` or `tuning.warmup_steps` that is not an integer >= 0, a `tuning.batch_size`, "
    "`tuning.chunk_size` or `tuning.chunk_stride` that is not a positive integer, or a `tuning.freeze_*` "
    "that is not an integer", "they are counts of passes, steps, sequences and tokens, and parameter indices")
PROBABILITY_RULE = Refusal(
    ("p_mask", "tuning"),
    "a `p_mask`, `tuning.p_token_replace` or `tuning.p_token_original` outside [0, 1], or "
    "`tuning.p_token_replace` + `tuning.p_token_original` above 1",
    "they are probabilities of one draw per masked token")
TUNING_SWITCH_RULE = switch_rule("tuning.mask_evenly", "tuning.top_fully")
LEARNING_RATE_RULE = Refusal(
    ("learning_rate",), "a `learning_rate` that is not a finite number > 0", "the tuning must move the weights")
FREEZE_RULE = Refusal(
    ("tuning",), "a `tuning.freeze_below` / `tuning.freeze_above` pair that freezes every parameter of the "
    "model", "nothing would be tuned, and every score would be 0 for no reason", AFTER_LOADING)
TUNING_DIVERGED_RULE = Refusal(
    ("learning_rate",), "a tuning that makes the model's weights or logits NaN or infinite (e.g. a huge "
    "`learning_rate`)", "the tuned model's argmax predictions, hence the counts, would be meaningless",
    WHILE_SCORING)
#: The rules BLANC-tune's own checks apply (:func:`nlgmetrics.blanc.api.refusals` lists them).
TUNE_RULES = (TUNING_RULE, TUNING_COUNTS_RULE, TUNING_SWITCH_RULE, PROBABILITY_RULE, LEARNING_RATE_RULE,
              FREEZE_RULE, SEED_RULE, TUNING_DIVERGED_RULE)


@dataclass(frozen=True)
class TuneSettings:
    """BLANC-tune's fine-tuning recipe besides its main settings (``finetune_epochs``, ``p_mask``,
    ``learning_rate`` and ``seed`` are keywords of :func:`blanc_tune`), passed as
    ``blanc_tune(..., tuning=TuneSettings(...))``. Defaults and meaning are blanc's
    (``BlancTune``), under shorter names:

    ======================  ==================================  =================================
    field                   ``BlancTune`` option                 default
    ======================  ==================================  =================================
    ``batch_size``          ``finetune_batch_size``              1 (sequences per tuning step)
    ``chunk_size``          ``finetune_chunk_size``              64 (tokens of a summary chunk)
    ``chunk_stride``        ``finetune_chunk_stride``            32
    ``top_fully``           ``finetune_top_fully``               True (the leading partial chunk)
    ``mask_evenly``         ``finetune_mask_evenly``             True (False: random, ``p_mask``)
    ``p_token_replace``     ``p_token_replace``                  0.1 (a masked token -> random id)
    ``p_token_original``    ``p_token_original``                 0.1 (a masked token kept)
    ``warmup_steps``        ``warmup_steps``                     0
    ``freeze_below``        ``id_layer_freeze_below``            -1 (no parameter frozen)
    ``freeze_above``        ``id_layer_freeze_above``            -1
    ``gap``, ``gap_mask``,  ``gap_tune``, ``gap_mask_tune``,     None: the document masking's value
    ``min_token_length_*``  ``min_token_length_*_tune``          (blanc's -1, also accepted)
    ======================  ==================================  =================================

    The signature records every field under its ``BlancTune`` name.

    >>> TuneSettings(batch_size=4, mask_evenly=False)
    TuneSettings(batch_size=4, chunk_size=64, chunk_stride=32, top_fully=True, mask_evenly=False, p_token_replace=0.1, p_token_original=0.1, warmup_steps=0, freeze_below=-1, freeze_above=-1, gap=None, gap_mask=None, min_token_length_normal=None, min_token_length_lead=None, min_token_length_followup=None)
    """

    batch_size: int = 1
    chunk_size: int = 64
    chunk_stride: int = 32
    top_fully: bool = True
    mask_evenly: bool = True
    p_token_replace: float = 0.1
    p_token_original: float = 0.1
    warmup_steps: int = 0
    freeze_below: int = -1
    freeze_above: int = -1
    gap: int | None = None
    gap_mask: int | None = None
    min_token_length_normal: int | None = None
    min_token_length_lead: int | None = None
    min_token_length_followup: int | None = None


#: blanc's recipe (``blanc_tune``'s default ``tuning``).
DEFAULT_TUNING = TuneSettings()

#: The count fields of :class:`TuneSettings` and the least value of each (None: any integer).
TUNING_COUNTS = {"batch_size": 1, "chunk_size": 1, "chunk_stride": 1, "freeze_below": None,
                 "freeze_above": None, "warmup_steps": 0}


#: The signature's ``BlancTune`` name of each :class:`TuneOptions` field that has another name.
BLANC_NAMES = {name: f"id_layer_{name}" if name.startswith("freeze_") else f"finetune_{name}" for name in (
    "batch_size", "epochs", "mask_evenly", "chunk_size", "chunk_stride", "top_fully", "freeze_below",
    "freeze_above")}


@dataclass(frozen=True)
class TuneOptions(TuneSettings):
    """The complete, checked tuning recipe that :func:`tuning_examples` and :func:`finetune_copy`
    read: a :class:`TuneSettings` checked by :func:`resolve_tuning`, with ``epochs``, ``p_mask`` and
    ``learning_rate``; ``masking`` holds its masking (the inherited masking fields, named as
    :meth:`MaskingOptions.signature_fields` names them, stay unread)."""

    masking: MaskingOptions = field(default_factory=MaskingOptions)  # masking of the summary chunks
    epochs: int = DEFAULT_FINETUNE_EPOCHS
    p_mask: float = DEFAULT_P_MASK
    learning_rate: float = DEFAULT_LEARNING_RATE

    def signature_fields(self) -> dict[str, Any]:
        """Every tuning option under its ``BlancTune`` name (all of them change the number)."""
        unread = {*self.masking.signature_fields(), "masking"}
        return {**self.masking.signature_fields("_tune"), **{
            BLANC_NAMES.get(f.name, f.name): getattr(self, f.name) for f in fields(self)
            if f.name not in unread}}


def _tune_value(value: int | None, default: int) -> int:
    """A masking field of :class:`TuneSettings`: ``None`` (or blanc's negative "unset") takes the
    document masking's value."""
    return default if value is None or (isinstance(value, numbers.Integral) and value < 0) else value


def _probability(name: str, value: Any) -> float:
    return check_real(value, minimum=0, maximum=1,
                      message=f"`{name}` must be a probability in [0, 1], got {shown_value(value)}.")


def resolve_tuning(tuning: Any, masking: MaskingOptions, epochs: Any, p_mask: Any, learning_rate: Any) -> TuneOptions:
    """The recipe :func:`blanc_tune` tunes with, every value checked (errors name ``tuning.<field>``
    or the keyword) and made a plain Python number (numpy scalars accepted): ``tuning``'s fields,
    its unset masking fields taken from the document ``masking``, and the three keywords.

    >>> resolve_tuning(TuneSettings(gap=3), MaskingOptions(gap=2), 1, 0.15, 5e-5).masking.gap
    3
    >>> resolve_tuning(TuneSettings(chunk_stride=0), MaskingOptions(), 1, 0.15, 5e-5)
    Traceback (most recent call last):
    ...
    nlgmetrics.core.refusals.OptionError: `tuning.chunk_stride` must be a positive integer, got 0.
    """
    if not isinstance(tuning, TuneSettings):
        raise TUNING_RULE.error(
            f"`tuning` must be a TuneSettings (from nlgmetrics.blanc import TuneSettings; e.g. "
            f"tuning=TuneSettings(batch_size=4)), got {shown_value(tuning)}.")
    # The masking fields of TuneSettings are named as the document masking's signature names them.
    gap, gap_mask, *lengths = (_tune_value(getattr(tuning, name), default)
                               for name, default in masking.signature_fields().items())
    tune_masking = MaskingOptions(gap, gap_mask, MinTokenLengths(*lengths), masking.len_sent_allow_cut)
    tune_masking = tune_masking.validate("tuning.")
    with TUNING_COUNTS_RULE.enforced():
        epochs = check_int("finetune_epochs", epochs, minimum=0)
        checked: dict[str, Any] = {name: check_int(f"tuning.{name}", getattr(tuning, name), minimum=minimum)
                                   for name, minimum in TUNING_COUNTS.items()}
    switches = check_switches(TUNING_SWITCH_RULE, **{
        f"tuning.{name}": getattr(tuning, name) for name in ("mask_evenly", "top_fully")})
    checked.update({name.removeprefix("tuning."): value for name, value in switches.items()})
    with PROBABILITY_RULE.enforced():
        p_mask = _probability("p_mask", p_mask)
        for name in ("p_token_replace", "p_token_original"):
            checked[name] = _probability(f"tuning.{name}", getattr(tuning, name))
    if checked["p_token_replace"] + checked["p_token_original"] > 1.0:
        raise PROBABILITY_RULE.error("`tuning.p_token_replace` + `tuning.p_token_original` must not exceed 1.")
    with LEARNING_RATE_RULE.enforced():
        learning_rate = check_real(learning_rate, minimum=0, exclusive_minimum=True,
                                   message=f"`learning_rate` must be positive, got {shown_value(learning_rate)}.")
    return TuneOptions(masking=tune_masking, epochs=epochs, p_mask=p_mask, learning_rate=learning_rate,
                       **checked)


def tuning_examples(
    tokens: Sequence[str], options: TuneOptions, rng: random.Random, tokenizer: Any,
) -> list[tuple[list[int], list[int]]]:
    """blanc's fine-tuning data for one summary: ``(input_ids, labels)`` per masked chunk.

    Chunks ``tokens[s : s + chunk_size]`` for ``s = 0, stride, 2*stride, ...``; with
    ``top_fully``, a chunk starting inside the first chunk is followed by the leading piece
    ``tokens[:s]`` (so the first tokens get as much training as later ones). Each chunk is masked
    (evenly, or randomly with ``p_mask``); a masked token is then, by one ``rng.random()`` draw in
    position order, replaced by a random id (``p_token_replace``), restored (``p_token_original``)
    or left as the mask token. Labels are the original ids at masked positions, -100 elsewhere.
    """
    cls_id, sep_id, mask_id = special_ids(tokenizer)
    low, high = TOKEN_REPLACE_RANGE
    high = min(high, len(tokenizer) - 1)
    lengths = options.masking.lengths
    examples: list[tuple[list[int], list[int]]] = []

    def add_chunk(chunk: Sequence[str]) -> None:
        maskings = (even_maskings(chunk, options.masking.gap, options.masking.gap_mask, lengths)
                    if options.mask_evenly else random_maskings(chunk, options.p_mask, lengths, rng))
        original = [cls_id, *tokenizer.convert_tokens_to_ids(list(chunk)), sep_id]
        for positions in maskings:
            input_ids = list(original)
            labels = [LABEL_IGNORE] * len(original)
            for position in positions:
                index = position + 1  # after [CLS]
                input_ids[index] = mask_id
                labels[index] = original[index]
                draw = rng.random()
                if draw < options.p_token_replace:
                    input_ids[index] = rng.randint(low, high)
                elif draw < options.p_token_original + options.p_token_replace:
                    input_ids[index] = original[index]
            examples.append((input_ids, labels))

    for start in range(0, len(tokens), options.chunk_stride):
        add_chunk(tokens[start : start + options.chunk_size])
        if options.top_fully and 0 < start < options.chunk_size:
            add_chunk(tokens[:start])
    return examples


def is_frozen(index: int, count: int, below: int, above: int) -> bool:
    """Whether blanc's layer freezing freezes parameter ``index`` of ``count``: the first ``below``
    and the last ``above - 1`` (a value <= 0 freezes none at that end).

    >>> [is_frozen(i, 5, 2, 3) for i in range(5)]
    [True, True, False, True, True]
    """
    return index < below or (above > 0 and count - index < above)


def check_freezing(model: Any, options: TuneOptions) -> None:
    """Refuse a freezing that leaves no parameter of ``model`` to tune (blanc fails there inside
    torch, with "element 0 of tensors does not require grad")."""
    count = sum(1 for _ in model.parameters())
    if all(is_frozen(i, count, options.freeze_below, options.freeze_above) for i in range(count)):
        raise FREEZE_RULE.error(
            f"tuning.freeze_below={options.freeze_below} and tuning.freeze_above={options.freeze_above} "
            f"freeze all {count} parameter tensors of the model, so nothing would be tuned; freeze fewer "
            f"(the default -1 freezes none)."
        )


def _diverged(options: TuneOptions, what: str) -> OptionError:
    return TUNING_DIVERGED_RULE.error(
        f"BLANC-tune: fine-tuning with learning_rate={options.learning_rate:g} {what}, so the tuned model's "
        f"predictions (and the counts) would be meaningless; use a smaller learning rate (blanc's default "
        f"is {DEFAULT_LEARNING_RATE:g})."
    )


def _pad(rows: Sequence[Sequence[int]], value: int) -> Any:
    import torch

    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [value] * (width - len(r)) for r in rows], dtype=torch.long)


def finetune_copy(lm: Any, examples: Sequence[tuple[list[int], list[int]]], options: TuneOptions,
                  seed: int) -> Any:
    """A deep copy of ``lm.model`` trained on ``examples`` (blanc's loop); ``lm.model`` is untouched."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    pad_id = lm.tokenizer.pad_token_id if lm.tokenizer.pad_token_id is not None else 0
    device = lm.device
    devices = [device] if device.type == "cuda" else []
    with torch.inference_mode(False), torch.enable_grad(), torch.random.fork_rng(devices=devices):
        model = copy.deepcopy(lm.model)
        parameters = list(model.parameters())
        for index, parameter in enumerate(parameters):
            if parameter.is_inference():  # weights created under inference_mode cannot train
                parameter.data = parameter.data.clone()
            frozen = is_frozen(index, len(parameters), options.freeze_below, options.freeze_above)  # blanc's
            parameter.requires_grad_(not frozen)
        torch.manual_seed(seed)
        model.train()
        batches = [examples[i : i + options.batch_size]
                   for i in range(0, len(examples), options.batch_size)]
        named = list(model.named_parameters())
        groups = [
            {"params": [p for n, p in named if not any(k in n for k in NO_DECAY)], "weight_decay": 1e-2},
            {"params": [p for n, p in named if any(k in n for k in NO_DECAY)], "weight_decay": 0.0},
        ]
        optimizer = torch.optim.AdamW(groups, lr=options.learning_rate, eps=1e-8)
        scheduler = get_linear_schedule_with_warmup(
            optimizer, num_warmup_steps=options.warmup_steps,
            num_training_steps=len(batches) * options.epochs)
        for _epoch in range(options.epochs):
            for batch in batches:
                ids = [b[0] for b in batch]
                # Padding exactly as blanc pads: pad id, attention 0, token type 1, label -100.
                inputs = {
                    "input_ids": _pad(ids, pad_id).to(device),
                    "attention_mask": _pad([[1] * len(r) for r in ids], 0).to(device),
                    "token_type_ids": _pad([[0] * len(r) for r in ids], 1).to(device),
                    "labels": _pad([b[1] for b in batch], LABEL_IGNORE).to(device),
                }
                optimizer.zero_grad()  # the optimizer holds every parameter of the model
                output = model(**inputs)
                loss = output.loss if hasattr(output, "loss") else output[0]
                loss.backward()
                try:
                    optimizer.step()
                except RuntimeError as error:  # a step beyond the weights' dtype
                    if "overflow" not in str(error):
                        raise
                    raise _diverged(options, "overflows the weights' dtype") from None
                scheduler.step()
        model.eval()
        model.requires_grad_(False)
        if not all(bool(parameter.isfinite().all()) for parameter in model.parameters()):
            raise _diverged(options, "made some weights NaN or infinite")
    return model


def blanc_tune(
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
    splitter: SentenceSplitter | str | None = None,
    finetune_epochs: int = DEFAULT_FINETUNE_EPOCHS,
    p_mask: float = DEFAULT_P_MASK,
    learning_rate: float = DEFAULT_LEARNING_RATE,
    seed: int = DEFAULT_SEED,
    tuning: TuneSettings = DEFAULT_TUNING,
    explain: bool = False,
    cache_dir: str | os.PathLike | None = None,
) -> BlancResult:
    """BLANC-tune of each summary ``predictions[i]`` for its document ``sources[i]`` (blanc's
    ``BlancTune``).

    The options come in four groups:

    - the model options every LM metric shares (``model``, ``model_tokenizer``, ``revision``,
      ``device``, ``dtype``, ``device_map``, ``max_memory``, ``offload_folder``, ``max_length``,
      ``token_budget``, ``batch_size``, ``progress``); a model with weights offloaded to the CPU
      or the disk is refused (tuning needs every weight on a device);
    - what is scored, as in :func:`nlgmetrics.blanc.help.blanc_help`: ``measure``, the masking of
      the document sentences (``gap``, ``gap_mask``, ``min_token_length_*``,
      ``len_sent_allow_cut``) and ``splitter``;
    - the main tuning settings, blanc's names and defaults: ``finetune_epochs`` (10, an integer
      >= 0), ``learning_rate`` (5e-5, > 0), ``p_mask`` (0.15: the share of a chunk's tokens
      masked at random, read when ``tuning.mask_evenly`` is False), and ``seed`` (0, an integer in
      [0, 2**64 - 1], :func:`~nlgmetrics.core.validation.check_seed`), which seeds the tuning of
      every summary (``BlancTune(random_seed=seed)`` for seed > 0);
    - ``tuning``: the rest of blanc's recipe, a :class:`TuneSettings` (chunking, masking of the
      summary, token replacement, warmup, frozen layers), blanc's defaults.

    Fine-tuning runs in the model's dtype on its device; the progress bar counts examples as their
    summary's tuned model has unmasked them. ``explain=True`` also returns, per example, which
    masked tokens the tuned model turned right or wrong (``explanations``,
    :mod:`nlgmetrics.blanc.explain`); no number changes. ``cache_dir`` (default
    ``$NLGMETRICS_CACHE_DIR``): the engine's store, for the untuned model's passes only (each tuned
    copy is new weights, used once).

    Returns:
        :class:`~nlgmetrics.blanc.result.BlancResult` (column ``blanc``, ``counts``, ``signature``).
    """
    # The engine (and torch) load only when a metric runs: `import nlgmetrics.blanc` stays light.
    from nlgmetrics.engine.bookkeeping import ExampleProgress, WarnOnce
    from nlgmetrics.engine.call import check_call_options, lm_call
    from nlgmetrics.engine.dispatch import offloaded_readers
    from nlgmetrics.engine.planning import chunk_by_key

    summaries, documents = check_source_inputs(predictions, sources)
    call_options = check_call_options(
        model, model_tokenizer=model_tokenizer, revision=revision, device=device, dtype=dtype,
        device_map=device_map, max_memory=max_memory, offload_folder=offload_folder, max_length=max_length,
        token_budget=token_budget, batch_size=batch_size, cache_dir=cache_dir)
    measure, masking, progress, explain = check_scoring(
        measure, gap, gap_mask, min_token_length_normal, min_token_length_lead, min_token_length_followup,
        len_sent_allow_cut, progress, explain, call_options.max_length)
    options = resolve_tuning(tuning, masking, finetune_epochs, p_mask, learning_rate)
    seed = check_seed(seed)
    split, splitter_name = resolve_splitter(splitter)

    with lm_call(call_options, kind="masked", default_budget=DEFAULT_TOKEN_BUDGET,
                 default_max_length=BLANC_MAX_LENGTH, progress=progress) as call:
        lm, window = call.lm, call.max_length
        if offloaded_readers(lm.model):  # some weights live in a hook's map, not in the model
            # accelerate reloads offloaded weights from its map at each forward: a step would train a
            # throwaway copy of them, and the "tuned" model would be the untuned one.
            raise ValueError(
                f"BLANC-tune fine-tunes the model, and {lm.name!r} has weights offloaded to the CPU or the disk "
                "(device_map): give it a device_map with every module on a GPU, or use variant='help'.")
        check_freezing(lm.model, options)
        tok = lm.tokenizer
        warn = WarnOnce()
        # The queries of each distinct document, planned once: no help, so each copy needs one query.
        distinct = list(dict.fromkeys(documents))
        queries, copies = plan_copies(range(len(distinct)), [""] * len(distinct), distinct,
                                      CopyInputs(tok, split, window, masking), warn)
        per_document: dict[str, list[MaskedCopy]] = {document: [] for document in distinct}
        for masked in copies:
            per_document[distinct[masked[0]]].append(masked)
        base = run_queries(lm, queries, token_budget=call.token_budget, batch_size=call.batch_size, store=call.store)

        counts: list[Counts] = [[[0, 0], [0, 0]] for _ in summaries]
        outcomes: list[list[Outcome]] = [[] for _ in summaries] if explain else []
        with ExampleProgress(len(summaries), "BLANC-tune", enabled=call.progress, store=call.store) as bar:
            # One group per distinct summary: it is tuned once, whatever the number of its documents.
            for examples in chunk_by_key(summaries, 1):
                summary = summaries[examples[0]]
                # blanc tokenizes the raw summary for tuning (no NFKD, no sentence split).
                data = tuning_examples(tokenize_text(tok, summary), options, random.Random(seed), tok)
                needed = sorted({masked[1] for i in examples for masked in per_document[documents[i]]})
                if data and options.epochs > 0 and needed:
                    tuned_model = finetune_copy(lm, data, options, seed)
                    tuned_lm = replace(lm, model=tuned_model, fingerprint=f"{lm.fingerprint}+tuned")
                    try:
                        predicted = run_queries(tuned_lm, [queries[n] for n in needed],
                                                token_budget=call.token_budget, batch_size=call.batch_size,
                                                bar=bar, examples=len(examples))
                    except NonFiniteLogitsError:
                        raise _diverged(options, "made the model's logits NaN or infinite") from None
                    tuned = dict(zip(needed, predicted))
                    del tuned_lm, tuned_model
                else:  # nothing to learn (or nothing to unmask): the "tuned" model is the original one
                    tuned = dict(bar.track(((number, base[number]) for number in needed),
                                           examples=len(examples), queries=len(needed)))
                for i in examples:
                    for _, number, _, truth, sentence, positions in per_document[documents[i]]:
                        tally(counts[i], truth, base=base[number], helped=tuned[number], tokenizer=tok)
                        if explain:
                            outcomes[i] += masked_outcomes(sentence, positions, truth, base[number], tuned[number], tok)
    warn.emit(TRUNCATION_WARNING, window=window)

    signature = blanc_signature("tune", lm, window, measure=measure, masking=masking, splitter=splitter_name,
                                options={**options.signature_fields(), "seed": seed})
    result = BlancResult.from_counts(counts, measure, signature)
    return result.with_explanations(tok, split, summaries, documents, outcomes, "tune", measure) if explain else result
