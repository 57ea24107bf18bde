"""A ready ``compute_metrics`` for ``Seq2SeqTrainer(predict_with_generate=True)``.

>>> from transformers import AutoTokenizer
>>> from nlgmetrics.testing import bert_tokenizer_dir
>>> tokenizer = AutoTokenizer.from_pretrained(str(bert_tokenizer_dir()))
>>> compute_metrics = build_compute_metrics(tokenizer, metrics=["bleu", "rouge_family"])
>>> import numpy as np
>>> ids = np.array([tokenizer("the cat sat on the mat")["input_ids"]])
>>> labels = ids.copy(); labels[0, -1] = -100          # -100: ignored label positions
>>> scores = compute_metrics((ids, labels))
>>> scores["bleu_score"] > 0, "rouge_family_rouge1_fmeasure" in scores
(True, True)

Typical use::

    trainer = Seq2SeqTrainer(
        model=model, args=Seq2SeqTrainingArguments(..., predict_with_generate=True),
        compute_metrics=build_compute_metrics(tokenizer, metrics=["rouge_family", "bleu", "infolm"],
                                              metric_options={"infolm": {"model": "bert-base-uncased"}}),
        ...)

Reference-free metrics (``shannon_score``, ``blanc``, ``fflm``) score a summary against its source
document. Give the sources either as a list of strings aligned with the evaluation dataset
(``sources=[...]``), or ``sources="inputs"`` to decode the model inputs, which the Trainer passes when
``Seq2SeqTrainingArguments(include_for_metrics=["inputs"])``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from nlgmetrics.registry import ScoreReport, get_spec

IGNORE_INDEX = -100


def decode_ids(tokenizer: Any, ids: Any) -> list[str]:
    """Decode a batch of token ids, treating -100 (and any negative id) as padding.

    The Trainer pads predictions and labels of different batches with -100; tokenizers cannot
    decode negative ids, so they become the pad token, which ``skip_special_tokens`` then drops.
    """
    if isinstance(ids, tuple):  # some models return (generated_ids, ...) from generate()
        ids = ids[0]
    array = np.asarray(ids)
    if array.ndim != 2:
        raise ValueError(
            f"Expected a 2-D array of token ids [examples, tokens], got shape {array.shape}; "
            f"use Seq2SeqTrainingArguments(predict_with_generate=True) so that predictions are ids, "
            f"not logits."
        )
    pad = tokenizer.pad_token_id
    if pad is None:
        pad = tokenizer.eos_token_id
    if pad is None:
        raise ValueError("The tokenizer has no pad or eos token; set tokenizer.pad_token first.")
    array = np.where(array < 0, pad, array)
    texts = tokenizer.batch_decode(array.tolist(), skip_special_tokens=True)
    return [text.strip() for text in texts]


def build_compute_metrics(
    tokenizer: Any,
    metrics: Sequence[str] = ("rouge_family", "bleu"),
    sources: Sequence[str] | str | None = None,
    metric_options: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    postprocess: Callable[[str], str] | None = None,
    per_example: bool = False,
    progress: bool = False,
) -> Callable[[Any], dict[str, float]]:
    """Return ``compute_metrics(eval_pred) -> {name: float}`` scoring decoded generations.

    - ``metrics``: any subset of ``nlgmetrics.registry.metric_names()``.
    - ``sources``: documents for the reference-free metrics (aligned with the evaluation dataset),
      or ``"inputs"`` to decode ``eval_pred.inputs``. Required when such a metric is asked for.
    - ``metric_options``: per-metric keyword options, e.g. ``{"infolm": {"model": path}}``.
    - ``postprocess``: applied to every decoded prediction and label (e.g. sentence splitting with
      newlines for ROUGE-Lsum).
    - ``per_example``: also return per-example lists (Trainer logs only numbers, so off by default).

    Keys are ``<metric>_<score>`` (e.g. ``rouge_family_rouge1_fmeasure``, ``bleu_score``); the
    Trainer prefixes them with ``eval_``. Signatures are kept on ``compute_metrics.last_reports``.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    specs = [get_spec(name) for name in metrics]
    if not specs:
        raise ValueError("`metrics` is empty; pass at least one metric name, e.g. ['rouge_family'].")
    options = {name: dict(opts) for name, opts in (metric_options or {}).items()}
    unknown = sorted(set(options) - {spec.name for spec in specs})
    if unknown:
        raise ValueError(
            f"metric_options names {unknown}, which are not in metrics={list(metrics)}; "
            f"add them to `metrics` or drop their options."
        )
    needs_sources = [spec.name for spec in specs if spec.second_input == "sources"]
    if needs_sources and sources is None:
        raise ValueError(
            f"{needs_sources} score summaries against source documents; pass sources=[...] "
            f"(aligned with the eval dataset) or sources='inputs' with "
            f"Seq2SeqTrainingArguments(include_for_metrics=['inputs'])."
        )
    if isinstance(sources, str) and sources != "inputs":
        raise ValueError("`sources` must be a list of documents or the string 'inputs'.")
    fixed_sources = None if sources is None or isinstance(sources, str) else list(sources)

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        if isinstance(eval_pred, tuple):
            predictions_ids, label_ids, inputs_ids = (*eval_pred, None)[:3]
        else:
            predictions_ids = eval_pred.predictions
            label_ids = eval_pred.label_ids
            inputs_ids = getattr(eval_pred, "inputs", None)
        predictions = decode_ids(tokenizer, predictions_ids)
        references = decode_ids(tokenizer, label_ids) if label_ids is not None else None
        if postprocess is not None:
            predictions = [postprocess(text) for text in predictions]
            references = None if references is None else [postprocess(t) for t in references]
        docs: list[str] | None = None
        if needs_sources:
            if sources == "inputs":
                if inputs_ids is None:
                    raise ValueError(
                        "sources='inputs' but the Trainer passed no inputs; set "
                        "Seq2SeqTrainingArguments(include_for_metrics=['inputs'])."
                    )
                docs = decode_ids(tokenizer, inputs_ids)
            else:
                docs = fixed_sources
            if docs is not None and len(docs) != len(predictions):
                raise ValueError(
                    f"{len(docs)} sources but {len(predictions)} predictions; sources must be "
                    f"aligned with the evaluation dataset (one per example, same order)."
                )
        results: dict[str, float] = {}
        reports: list[ScoreReport] = []
        for spec in specs:
            if spec.second_input == "references":
                if references is None:
                    raise ValueError(f"{spec.name} needs labels, but the evaluation set has none.")
                others: list[Any] = references
            else:
                others = docs  # type: ignore[assignment]
            report = spec.run(predictions, others, progress=progress, **options.get(spec.name, {}))
            reports.append(report)
            for key, value in report.aggregate.items():
                results[f"{spec.name}_{key}"] = value
            if per_example:
                for key, values in report.per_example.items():
                    results[f"{spec.name}_{key}_per_example"] = values  # type: ignore[assignment]
        compute_metrics.last_reports = reports  # type: ignore[attr-defined]
        compute_metrics.last_texts = {"predictions": predictions, "references": references, "sources": docs}  # type: ignore[attr-defined]
        return results

    compute_metrics.last_reports = []  # type: ignore[attr-defined]
    return compute_metrics
