"""A ready ``compute_metrics`` for ``Seq2SeqTrainer(predict_with_generate=True)``.

>>> from transformers import AutoTokenizer
>>> from nlgmetrics.testing import bert_tokenizer_dir
>>> tokenizer = AutoTokenizer.from_pretrained(str(bert_tokenizer_dir()))
>>> compute_metrics = build_compute_metrics(tokenizer, metrics=["bleu", "rouge_family"])
>>> import numpy as np
>>> ids = np.array([tokenizer("the cat sat on the mat")["input_ids"]])
>>> labels = ids.copy(); labels[0, -1] = -100          # -100: ignored label positions
>>> scores = compute_metrics((ids, labels))
>>> scores["bleu"] > 0, "rouge_family_rouge1" in scores, "bleu_sentence_bleu" in scores
(True, True, True)

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

from nlgmetrics.apps.registry import get_spec
from nlgmetrics.core.result import MetricResult

#: The Trainer pads predictions and labels of batches of different lengths with this id (and
#: ``DataCollatorForSeq2Seq`` pads labels with it): the one negative id that is padding.
IGNORE_INDEX = -100


def decode_ids(tokenizer: Any, ids: Any, what: str = "token ids") -> list[str]:
    """Decode a batch of token ids; -100 (:data:`IGNORE_INDEX`) is padding.

    The Trainer pads predictions and labels of different batches with -100; tokenizers cannot
    decode negative ids, so they become the pad token, which ``skip_special_tokens`` then drops.
    Any other id outside the tokenizer's vocabulary (another negative number, an id >=
    ``len(tokenizer)``: labels of another tokenizer, a model with a larger embedding than its
    tokenizer) is an error naming where it is: decoded, it would silently vanish or become some
    other text, and change the scores. ``what`` names the array in errors ("labels", ...).
    """
    if isinstance(ids, tuple):  # some models return (generated_ids, ...) from generate()
        ids = ids[0]
    array = np.asarray(ids)
    if array.ndim != 2:
        raise ValueError(
            f"Expected {what} as a 2-D array [examples, tokens], got shape {array.shape}; "
            f"use Seq2SeqTrainingArguments(predict_with_generate=True) so that predictions are ids, "
            f"not logits."
        )
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or not np.array_equal(array, np.round(array)):
            raise ValueError(
                f"{what} are floats with non-integer values ({array.dtype}); pass token ids (use "
                f"Seq2SeqTrainingArguments(predict_with_generate=True), or argmax the logits first)."
            )
        array = array.astype(np.int64)
    elif array.dtype.kind not in "iu":
        raise ValueError(f"{what} must be integer token ids, got an array of {array.dtype}.")
    pad = tokenizer.pad_token_id
    if pad is None:
        pad = tokenizer.eos_token_id
    if pad is None:
        raise ValueError("The tokenizer has no pad or eos token; set tokenizer.pad_token first.")
    vocabulary = len(tokenizer)
    outside = ((array < 0) & (array != IGNORE_INDEX)) | (array >= vocabulary)
    if outside.any():
        row, position = (int(i) for i in np.argwhere(outside)[0])
        raise ValueError(
            f"{what} hold id {int(array[row, position])} at [{row}, {position}] ({int(outside.sum())} such "
            f"ids), outside the tokenizer's vocabulary [0, {vocabulary}) and not the padding id "
            f"{IGNORE_INDEX}; pass the tokenizer that made these ids (and pad with {IGNORE_INDEX})."
        )
    array = np.where(array == IGNORE_INDEX, pad, array)
    texts = tokenizer.batch_decode(array.tolist(), skip_special_tokens=True)
    return [text.strip() for text in texts]


def result_keys(result: MetricResult) -> dict[str, float]:
    """``result.aggregate()`` under Trainer keys: ``<metric>_<key>``, or just ``<metric>`` for the
    key named like the metric (``bleu``, ``infolm``, ``shannon_score``: no ``bleu_bleu``).

    The same rule for every metric, read off the result.
    """
    return {
        (result.metric if key == result.metric else f"{result.metric}_{key}"): float(value)
        for key, value in result.aggregate().items()
    }


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

    - ``metrics``: any subset of ``nlgmetrics.apps.registry.metric_names()``.
    - ``sources``: documents for the reference-free metrics (aligned with the evaluation dataset),
      or ``"inputs"`` to decode ``eval_pred.inputs``. Required when such a metric is asked for.
    - ``metric_options``: per-metric keyword options, e.g. ``{"infolm": {"model": path}}``.
    - ``postprocess``: applied to every decoded prediction and label (e.g. sentence splitting with
      newlines for ROUGE-Lsum).
    - ``per_example``: also return per-example lists (Trainer logs only numbers, so off by default).

    Keys come from each result's ``aggregate()`` (:func:`result_keys`): ``<metric>_<key>``, or the
    metric's name alone for its own key, e.g. ``bleu``, ``bleu_bp``, ``bleu_sentence_bleu``,
    ``rouge_family_rouge1``, ``rouge_family_rouge1_low``, ``infolm``; the Trainer prefixes them with
    ``eval_``. With ``per_example``: ``<metric>_<column>_per_example`` lists. The results
    themselves (signatures, per-example columns) are kept on ``compute_metrics.last_results``.
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
        predictions = decode_ids(tokenizer, predictions_ids, "predictions")
        references = decode_ids(tokenizer, label_ids, "labels") if label_ids is not None else None
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
                docs = decode_ids(tokenizer, inputs_ids, "inputs")
            else:
                docs = fixed_sources
            if docs is not None and len(docs) != len(predictions):
                raise ValueError(
                    f"{len(docs)} sources but {len(predictions)} predictions; sources must be "
                    f"aligned with the evaluation dataset (one per example, same order)."
                )
        results: dict[str, float] = {}
        metric_results: list[MetricResult] = []
        for spec in specs:
            if spec.second_input == "references":
                if references is None:
                    raise ValueError(f"{spec.name} needs labels, but the evaluation set has none.")
                others: list[Any] = references
            else:
                others = docs  # type: ignore[assignment]
            result = spec.run(predictions, others, progress=progress, **options.get(spec.name, {}))
            metric_results.append(result)
            results.update(result_keys(result))
            if per_example:
                for key, values in result.scores.items():
                    results[f"{result.metric}_{key}_per_example"] = list(values)  # type: ignore[assignment]
        compute_metrics.last_results = metric_results  # type: ignore[attr-defined]
        compute_metrics.last_texts = {"predictions": predictions, "references": references, "sources": docs}  # type: ignore[attr-defined]
        return results

    compute_metrics.last_results = []  # type: ignore[attr-defined]
    return compute_metrics
