"""BLANC-tune: how much fine-tuning a masked LM on the summary helps it unmask the document.

For each summary, a *copy* of the model is fine-tuned on the summary (masked-LM training on
overlapping chunks of it, blanc's recipe), then both the original and the tuned model unmask the
same even maskings of every document sentence (no help text in the input). Each masked token
falls in ``S[base correct][tuned correct]``; the score is ``relative`` or ``improve`` of S as in
:mod:`nlgmetrics.blanc`.

Definitions and defaults follow PyPI ``blanc`` 0.3.4 (``blanc.BlancTune``): chunks of 64 tokens
with stride 32 (plus the leading partial chunk, ``finetune_top_fully``), even masking of the
chunks, 10% of masked tokens replaced by a random id in [1000, 29999] and 10% kept, AdamW
(lr 5e-5, eps 1e-8, weight decay 0.01 except biases and LayerNorm weights), linear schedule with
``warmup_steps`` 0, 10 epochs, batch size 1. The user's model is never touched: training happens
on a deep copy, one summary at a time.

Randomness: blanc seeds Python's ``random`` and torch with ``random_seed`` only when it is > 0 (its
default 0 leaves both unseeded, so its BLANC-tune numbers change from run to run). We always seed,
per summary, with ``seed`` (default 0), using a private ``random.Random(seed)`` (same stream as
``random.seed(seed)``) and ``torch.manual_seed(seed)`` inside ``torch.random.fork_rng`` so the
caller's global RNG state is left as it was. ``blanc_tune(..., seed=N)`` reproduces
``BlancTune(random_seed=N)`` for N > 0 draw for draw (same masking choices, same dropout masks).

Work saved: the base pass runs once per distinct document (it does not depend on the summary),
and a summary paired with several documents is tuned once (blanc re-tunes per pair, with the same
seed, i.e. the same model). An empty or whitespace-only summary yields no training data, so the
tuned model equals the original: score 0.0, S01 == S10 == 0 (as in blanc).

>>> from nlgmetrics.testing import build_random_model
>>> import tempfile
>>> path = build_random_model("bert", tempfile.mkdtemp(), size="tiny")
>>> result = blanc_tune(["Jack bought apples. Jill sold pears."], ["Jack bought apples."],
...                     model=str(path), finetune_epochs=1, progress=False)
>>> result.signature.split("|")[0], len(result.counts)
('blanc-tune', 1)
"""

from __future__ import annotations

import copy
import dataclasses
import numbers
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nlgmetrics.blanc import (
    MEASURES,
    BlancResult,
    Counts,
    MaskingOptions,
    Measure,
    MinTokenLengths,
    TextPreparer,
    check_engine_options,
    check_inputs,
    even_maskings,
    fit_to_window,
    lm_signature_fields,
    load_masked_lm,
    random_maskings,
    resolve_max_tokens,
    run_queries,
    score_from_counts,
    special_ids,
    tokenize_text,
    warn_truncated,
)
from nlgmetrics.sentences import SentenceSplitter, resolve_splitter
from nlgmetrics.signature import make_signature
from nlgmetrics.validation import check_bool, check_choice, check_int, check_real

# blanc's range of "reasonable" BERT ids for random replacement (inclusive); capped by the vocab.
TOKEN_REPLACE_RANGE = (1000, 29999)
LABEL_IGNORE = -100
# Parameters whose name contains one of these get no weight decay (blanc / BERT recipe).
NO_DECAY = ("bias", "LayerNorm.weight")


@dataclass(frozen=True)
class TuneOptions:
    """blanc's fine-tuning options (names and defaults of ``BlancTune``)."""

    masking: MaskingOptions  # masking of the summary chunks (gap_tune, gap_mask_tune, *_tune)
    batch_size: int = 1
    epochs: int = 10
    mask_evenly: bool = True
    chunk_size: int = 64
    chunk_stride: int = 32
    top_fully: bool = True
    freeze_below: int = -1
    freeze_above: int = -1
    p_mask: float = 0.15
    p_token_replace: float = 0.1
    p_token_original: float = 0.1
    learning_rate: float = 5e-5
    warmup_steps: int = 0

    def validate(self) -> TuneOptions:
        """Check every option; return a copy holding plain Python numbers (numpy scalars accepted)."""
        masking = self.masking.validate()
        batch_size, chunk_size, chunk_stride = (
            check_int(f"finetune_{name}", getattr(self, name), minimum=1)
            for name in ("batch_size", "chunk_size", "chunk_stride"))
        epochs = check_int("finetune_epochs", self.epochs, minimum=0)
        freeze_below = check_int("id_layer_freeze_below", self.freeze_below)
        freeze_above = check_int("id_layer_freeze_above", self.freeze_above)
        p_mask, p_token_replace, p_token_original = (
            check_real(name, getattr(self, name), minimum=0, maximum=1,
                       message=f"`{name}` must be a probability in [0, 1], got {getattr(self, name)!r}.")
            for name in ("p_mask", "p_token_replace", "p_token_original"))
        if p_token_replace + p_token_original > 1.0:
            raise ValueError("`p_token_replace` + `p_token_original` must not exceed 1.")
        learning_rate = check_real("learning_rate", self.learning_rate, minimum=0, exclusive_minimum=True,
                                   message=f"`learning_rate` must be positive, got {self.learning_rate!r}.")
        warmup_steps = check_int("warmup_steps", self.warmup_steps, minimum=0)
        return dataclasses.replace(
            self, masking=masking, batch_size=batch_size, epochs=epochs, chunk_size=chunk_size,
            chunk_stride=chunk_stride, freeze_below=freeze_below, freeze_above=freeze_above,
            p_mask=p_mask, p_token_replace=p_token_replace, p_token_original=p_token_original,
            learning_rate=learning_rate, warmup_steps=warmup_steps)


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
        if options.mask_evenly:
            maskings = even_maskings(chunk, options.masking.gap, options.masking.gap_mask, lengths)
        else:
            maskings = random_maskings(chunk, options.p_mask, lengths, rng)
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


def _freeze(model: Any, below: int, above: int) -> None:
    """blanc's layer freezing by parameter index (first ``below``; last ``above - 1``)."""
    if below <= 0 and above <= 0:
        return
    parameters = list(model.parameters())
    for index, parameter in enumerate(parameters):
        if index < below:
            parameter.requires_grad_(False)
        elif above < 0:
            break
        elif len(parameters) - index < above:
            parameter.requires_grad_(False)


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
        for parameter in model.parameters():
            if parameter.is_inference():  # weights created under inference_mode cannot train
                parameter.data = parameter.data.clone()
        model.requires_grad_(True)
        torch.manual_seed(seed)
        model.train()
        _freeze(model, options.freeze_below, options.freeze_above)
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
                model.zero_grad()
                optimizer.zero_grad()
                output = model(**inputs)
                loss = output.loss if hasattr(output, "loss") else output[0]
                loss.backward()
                optimizer.step()
                scheduler.step()
        model.eval()
        model.requires_grad_(False)
    return model


def blanc_tune(
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
    gap_tune: int | None = None,
    gap_mask_tune: int | None = None,
    min_token_length_normal_tune: int | None = None,
    min_token_length_lead_tune: int | None = None,
    min_token_length_followup_tune: int | None = None,
    len_sent_allow_cut: int = 100,
    finetune_batch_size: int = 1,
    finetune_epochs: int = 10,
    finetune_mask_evenly: bool = True,
    finetune_chunk_size: int = 64,
    finetune_chunk_stride: int = 32,
    finetune_top_fully: bool = True,
    id_layer_freeze_below: int = -1,
    id_layer_freeze_above: int = -1,
    p_mask: float = 0.15,
    p_token_replace: float = 0.1,
    p_token_original: float = 0.1,
    learning_rate: float = 5e-5,
    warmup_steps: int = 0,
    seed: int = 0,
    max_tokens: int | None = None,
    splitter: SentenceSplitter | str | None = None,
    device: Any = None,
    dtype: Any = None,
    revision: str | None = None,
    token_budget: int = 8192,
    batch_size: int | None = None,
    progress: bool = True,
) -> BlancResult:
    """BLANC-tune of each ``summaries[i]`` for ``documents[i]`` (blanc's ``BlancTune``).

    Options keep blanc's names and defaults; ``*_tune`` options left at ``None`` take the value of
    the inference option (blanc's ``-1``). ``seed`` seeds the fine-tuning of every summary
    (``BlancTune(random_seed=seed)`` for seed > 0). ``max_tokens``, ``splitter``, ``device``,
    ``dtype``, ``token_budget``, ``batch_size``, ``progress``: as in
    :func:`nlgmetrics.blanc.blanc_help`. Fine-tuning runs in the model's dtype on its device.
    """
    docs, sums = check_inputs(documents, summaries)
    check_choice("measure", measure, MEASURES)
    masking = MaskingOptions(gap, gap_mask, MinTokenLengths(
        min_token_length_normal, min_token_length_lead, min_token_length_followup),
        len_sent_allow_cut).validate()
    # Plain Python numbers from here on (numpy scalars accepted): the signature does not depend
    # on the type.
    gap, gap_mask, lengths = masking.gap, masking.gap_mask, masking.lengths
    len_sent_allow_cut = masking.len_sent_allow_cut

    def pick(value: int | None, default: int) -> int:
        return default if value is None or (isinstance(value, numbers.Integral) and value < 0) else value

    options = TuneOptions(
        MaskingOptions(
            pick(gap_tune, gap), pick(gap_mask_tune, gap_mask),
            MinTokenLengths(pick(min_token_length_normal_tune, lengths.normal),
                            pick(min_token_length_lead_tune, lengths.lead),
                            pick(min_token_length_followup_tune, lengths.followup)),
            len_sent_allow_cut),
        finetune_batch_size, finetune_epochs, check_bool("finetune_mask_evenly", finetune_mask_evenly),
        finetune_chunk_size, finetune_chunk_stride, check_bool("finetune_top_fully", finetune_top_fully),
        id_layer_freeze_below, id_layer_freeze_above, p_mask, p_token_replace, p_token_original,
        learning_rate, warmup_steps).validate()
    tune_masking = options.masking
    seed = check_int("seed", seed)
    token_budget, batch_size = check_engine_options(token_budget, batch_size)
    split, splitter_name = resolve_splitter(splitter)

    from nlgmetrics.engine import MaskedQuery

    lm = load_masked_lm(model, device, dtype, revision)
    tokenizer = lm.tokenizer
    cls_id, sep_id, _ = special_ids(tokenizer)
    window = resolve_max_tokens(lm, max_tokens)
    prep = TextPreparer(tokenizer, split)

    # Base queries, once per distinct document: [CLS] masked sentence [SEP], no help.
    doc_queries: dict[str, list[tuple[MaskedQuery, tuple[str, ...]]]] = {}
    truncated = 0
    for doc in docs:
        if doc in doc_queries:
            continue
        items = []
        for sentence in prep.sentences(doc):
            sent, _, cut = fit_to_window(sentence, [[]], len_sep=0,
                                         len_sent_allow_cut=len_sent_allow_cut, max_tokens=window)
            truncated += cut
            ids = (cls_id, *tokenizer.convert_tokens_to_ids(sent), sep_id)
            for positions in even_maskings(sent, gap, gap_mask, lengths):
                items.append((MaskedQuery(ids, tuple(p + 1 for p in positions)),
                              tuple(sent[p] for p in positions)))
        doc_queries[doc] = items
    warn_truncated(truncated, window)

    def predict(model_lm: Any, doc_list: Sequence[str], desc: str) -> dict[str, list[list[int]]]:
        flat = [query for doc in doc_list for query, _ in doc_queries[doc]]
        if not flat:
            return {doc: [] for doc in doc_list}
        predictions = run_queries(model_lm, flat, token_budget=token_budget, batch_size=batch_size,
                                  progress=False, desc=desc)
        out, start = {}, 0
        for doc in doc_list:
            out[doc] = predictions[start : start + len(doc_queries[doc])]
            start += len(doc_queries[doc])
        return out

    base = predict(lm, list(doc_queries), "BLANC-tune base")

    by_summary: dict[str, list[int]] = {}
    for i, summary in enumerate(sums):
        by_summary.setdefault(summary, []).append(i)
    counts: list[Counts] = [[[0, 0], [0, 0]] for _ in docs]
    to_token = tokenizer.convert_ids_to_tokens

    from tqdm.auto import tqdm

    for summary, pairs in tqdm(by_summary.items(), total=len(by_summary), disable=not progress,
                               desc="BLANC-tune"):
        # blanc tokenizes the raw summary for tuning (no NFKD, no sentence split).
        examples = tuning_examples(tokenize_text(tokenizer, summary), options, random.Random(seed), tokenizer)
        pair_docs = list(dict.fromkeys(docs[i] for i in pairs))
        if examples and options.epochs > 0:
            tuned_model = finetune_copy(lm, examples, options, seed)
            tuned_lm = dataclasses.replace(lm, model=tuned_model, fingerprint=f"{lm.fingerprint}+tuned")
            tuned = predict(tuned_lm, pair_docs, "BLANC-tune tuned")
            del tuned_lm, tuned_model
        else:  # nothing to learn: the "tuned" model is the original one
            tuned = {doc: base[doc] for doc in pair_docs}
        for i in pairs:
            cell = counts[i]
            for (_, truth), b_ids, t_ids in zip(doc_queries[docs[i]], base[docs[i]], tuned[docs[i]]):
                for true, b, t in zip(truth, to_token(b_ids), to_token(t_ids)):
                    cell[int(b == true)][int(t == true)] += 1

    signature = make_signature("blanc-tune", {
        **lm_signature_fields(lm),
        "measure": measure, "gap": gap, "gap_mask": gap_mask, "min_len": lengths.as_tuple(),
        "tune_gap": (tune_masking.gap, tune_masking.gap_mask),
        "tune_min_len": tune_masking.lengths.as_tuple(), "allow_cut": len_sent_allow_cut,
        "window": window, "split": splitter_name,
        "ft": (options.batch_size, options.epochs, options.chunk_size, options.chunk_stride),
        "ft_even": finetune_mask_evenly, "ft_top": finetune_top_fully,
        "freeze": (options.freeze_below, options.freeze_above),
        "p": (options.p_mask, options.p_token_replace, options.p_token_original),
        "lr": options.learning_rate, "warmup": options.warmup_steps, "seed": seed,
    })
    return BlancResult(
        scores=[float(score_from_counts(c, measure)) for c in counts],
        counts=counts,
        signature=signature,
    )
