"""A ready ``compute_metrics`` for ``Seq2SeqTrainer(predict_with_generate=True)``, which logs each
key as ``eval_<key>``: :func:`build_compute_metrics` (its docstring: metrics, evaluate's names for
them, presets, sources, the store); the rest decodes the Trainer's token ids and names the keys.

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

An LM metric's model is one of its options in ``metric_options``: a Hub id, a local folder or an
offline alias (``"smollm2-135m"``); here a small random BERT built offline:

>>> import tempfile
>>> from nlgmetrics.testing import build_random_model
>>> folder = tempfile.TemporaryDirectory()
>>> bert = str(build_random_model("bert", folder.name, size="tiny"))
>>> with_infolm = build_compute_metrics(tokenizer, metrics=["rouge_family", "infolm"],
...                                     metric_options={"infolm": {"model": bert, "device": "cpu"}})
>>> scores = with_infolm((ids, labels))
>>> "infolm" in scores, "rouge_family_rouge1" in scores
(True, True)
>>> folder.cleanup()
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from nlgmetrics.apps.evaluate_adapter import OutputSwitches, module_output
from nlgmetrics.core.protocol import MetricSpec
from nlgmetrics.core.validation import check_bool, check_cache_dir
from nlgmetrics.registry import DEFAULT_METRICS, get_protocol, metric_names, protocols
from nlgmetrics.core.result import MetricResult

#: The Trainer pads predictions and labels of batches of different lengths with this id (and
#: ``DataCollatorForSeq2Seq`` pads labels with it): the one negative id that is padding.
IGNORE_INDEX = -100

#: The transformers examples' ``compute_metrics``, as presets (see :func:`build_compute_metrics`):
#: preset -> the evaluate module the example loads, run here as the metric answering to it.
PRESET_COUNTERPARTS: Mapping[str, str] = {"summarization": "rouge", "translation": "sacrebleu"}
PRESETS = tuple(PRESET_COUNTERPARTS)

#: The summarization preset's ROUGE types: evaluate's ``rouge`` defaults, the example's keys.
SUMMARIZATION_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

#: The summarization preset's sentence splitter (``"punkt"``: ``nltk.sent_tokenize``, the example's).
DEFAULT_PRESET_SPLITTER = "punkt"


def _pad_id(tokenizer: Any) -> int:
    """The id that padding becomes: the pad token, else eos (decoder-only tokenizers)."""
    pad = tokenizer.eos_token_id if tokenizer.pad_token_id is None else tokenizer.pad_token_id
    if pad is None:
        raise ValueError("The tokenizer has no pad or eos token; set tokenizer.pad_token first.")
    return int(pad)


def padded_ids(tokenizer: Any, ids: Any, what: str = "token ids") -> np.ndarray:
    """A batch of token ids as a 2-D integer array, -100 (:data:`IGNORE_INDEX`) replaced by the pad
    id (as the transformers examples do before decoding and counting ``gen_len``).

    Any other id outside the tokenizer's vocabulary (another negative number, an id >=
    ``len(tokenizer)``: labels of another tokenizer, a model with a larger embedding than its
    tokenizer) is an error naming where it is: decoded, it would silently vanish or become some
    other text, and change the scores. ``what`` names the array in errors ("labels", ...).
    """
    if isinstance(ids, tuple):  # some models return (generated_ids, ...) from generate()
        ids = ids[0]
    array = np.asarray(ids)
    if array.ndim != 2:
        raise ValueError(f"Expected {what} as a 2-D array [examples, tokens], got shape {array.shape}; use "
                         "Seq2SeqTrainingArguments(predict_with_generate=True) so that predictions are "
                         "ids, not logits.")
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or not np.array_equal(array, np.round(array)):
            raise ValueError(f"{what} are floats with non-integer values ({array.dtype}); pass token ids "
                             "(use Seq2SeqTrainingArguments(predict_with_generate=True), or argmax the "
                             "logits first).")
        array = array.astype(np.int64)
    elif array.dtype.kind not in "iu":
        raise ValueError(f"{what} must be integer token ids, got an array of {array.dtype}.")
    vocabulary = len(tokenizer)
    outside = ((array < 0) & (array != IGNORE_INDEX)) | (array >= vocabulary)
    if outside.any():
        row, position = (int(i) for i in np.argwhere(outside)[0])
        raise ValueError(f"{what} hold id {int(array[row, position])} at [{row}, {position}] "
                         f"({int(outside.sum())} such ids), outside the tokenizer's vocabulary [0, "
                         f"{vocabulary}) and not the padding id {IGNORE_INDEX}; pass the tokenizer that "
                         f"made these ids (and pad with {IGNORE_INDEX}).")
    return np.where(array == IGNORE_INDEX, _pad_id(tokenizer), array)


def decode_ids(tokenizer: Any, ids: Any, what: str = "token ids") -> list[str]:
    """Decode a batch of token ids (:func:`padded_ids`: -100 is padding, other ids outside the
    vocabulary are an error), without special tokens, each text stripped."""
    texts = tokenizer.batch_decode(padded_ids(tokenizer, ids, what).tolist(), skip_special_tokens=True)
    return [text.strip() for text in texts]


def result_keys(result: MetricResult) -> dict[str, float]:
    """``result.aggregate()`` under Trainer keys: ``<metric>_<key>``, or just ``<metric>`` for the
    key named like the metric (``bleu``, ``infolm``, ``shannon_score``: no ``bleu_bleu``).

    The same rule for every metric, read off the result.
    """
    return {(result.metric if key == result.metric else f"{result.metric}_{key}"): float(value)
            for key, value in result.aggregate().items()}


# ------------------------------------------------------------------------------------------------
# metric names


def evaluate_names() -> dict[str, str]:
    """evaluate's module names accepted in ``metrics`` and ``metric_options`` for ours (each
    metric's protocol names its evaluate counterpart): the same metric with the same options; a
    name that is evaluate's only (``rouge``, ``sacrebleu``) logs its evaluate module's keys
    (:func:`~nlgmetrics.apps.evaluate_adapter.module_output`), a name that is also ours (``chrf``,
    ``ter``) ours.

    >>> evaluate_names()
    {'rouge': 'rouge_family', 'sacrebleu': 'bleu', 'chrf': 'chrf', 'ter': 'ter'}
    """
    return {p.evaluate.counterpart: p.name for p in protocols() if p.evaluate is not None}


def merged_keys(keys_by_prefix: Sequence[tuple[str, Mapping[str, float]]]) -> dict[str, float]:
    """Several metrics' keys in one dict, as ``evaluate.combine`` merges its modules' outputs: a
    key that two of them give is prefixed with its own metric's prefix (``chr_f_score``).

    >>> merged_keys([("sacrebleu", {"score": 30.0, "bp": 1.0}), ("chr_f", {"score": 50.0})])
    {'sacrebleu_score': 30.0, 'bp': 1.0, 'chr_f_score': 50.0}
    """
    counts = Counter(key for _, keys in keys_by_prefix for key in keys)
    return {(key if counts[key] == 1 else f"{prefix}_{key}"): value
            for prefix, keys in keys_by_prefix for key, value in keys.items()}


def _our_name(name: Any) -> str:
    """Our name of a metric given by ours or evaluate's (:func:`evaluate_names`)."""
    if not isinstance(name, str):
        raise ValueError(f"Metric names are strings, got {type(name).__name__} ({name!r:.40}).")
    return name if name in metric_names() else evaluate_names().get(name, name)


def _by_our_name(names: Sequence[Any], argument: str, fix: str) -> dict[str, str]:
    """Our name -> the name given (ours or evaluate's), for each metric of ``names`` (given once)."""
    given_as: dict[str, str] = {}
    for name in names:
        ours = _our_name(name)
        if ours in given_as:
            raise ValueError(f"{argument} names {ours} twice ({given_as[ours]!r} and {name!r}); {fix}")
        given_as[ours] = name
    return given_as


def _resolve_metrics(metrics: Sequence[str]) -> dict[str, str]:
    """Our name -> the name given, for the named metrics, each once (``rouge`` and ``rouge_family``
    are one metric)."""
    for name in metrics:
        if _our_name(name) not in metric_names():
            raise ValueError(f"Unknown metric {name!r}; choose from {metric_names()}, or evaluate's names "
                             f"for them {list(evaluate_names())}.")
    return _by_our_name(metrics, "metrics", "evaluate's name is the same metric as ours, give it once.")


def _resolve_options(metric_options: Mapping[str, Mapping[str, Any]] | None,
                     protocols: Sequence[MetricSpec], metrics: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``metric_options`` keyed by our names (evaluate's names accepted), checked against ``metrics``."""
    given = metric_options or {}
    given_as = _by_our_name(given, "metric_options", "merge the options.")
    options = {ours: dict(given[name]) for ours, name in given_as.items()}
    unknown = sorted(given_as[name] for name in set(options) - {protocol.name for protocol in protocols})
    if unknown:
        raise ValueError(f"metric_options names {unknown}, which are not in metrics={list(metrics)}; "
                         f"add them to `metrics` or drop their options.")
    return options


def _unpack(eval_pred: Any) -> tuple[Any, Any, Any]:
    """(predictions, label ids, input ids or None) of an ``EvalPrediction`` or a plain tuple."""
    if isinstance(eval_pred, tuple):
        return (*eval_pred, None)[:3]  # type: ignore[return-value]
    return eval_pred.predictions, eval_pred.label_ids, getattr(eval_pred, "inputs", None)


# ------------------------------------------------------------------------------------------------
# the transformers examples' settings


def _preset_splitter(preset: str | None, sentence_splitter: Any) -> Callable[[str], Sequence[str]] | None:
    """The sentence splitter of the summarization preset (checked now, before any training)."""
    if preset != "summarization":
        if sentence_splitter is not None:
            raise ValueError("sentence_splitter is an option of preset='summarization' (rougeLsum's "
                             f"sentence lines), not of preset={preset!r}; for other metrics pass "
                             "postprocess=.")
        return None
    from nlgmetrics.core.refusals import OptionError
    from nlgmetrics.core.sentences import resolve_splitter

    requested = DEFAULT_PRESET_SPLITTER if sentence_splitter is None else sentence_splitter
    try:
        splitter, _ = resolve_splitter(requested)
    except OptionError as error:
        if requested != "punkt":
            raise
        # The shared refusal names the metrics' own argument and default (splitter='pysbd'); here
        # the argument is sentence_splitter and punkt is the default, so name the fix in these terms.
        raise OptionError(
            "preset='summarization' splits sentences with NLTK's punkt (the example's nltk.sent_tokenize), "
            "whose data is not installed here; with a network run `python -m nltk.downloader punkt_tab`, "
            "or pass sentence_splitter='pysbd' (works offline; may split some sentences differently).",
            error.refusal,
        ) from None
    return splitter


def _preset_compute_metrics(tokenizer: Any, preset: str,
                            split: Callable[[str], Sequence[str]] | None) -> Callable[[Any], dict[str, float]]:
    """The transformers example's ``compute_metrics`` (:func:`build_compute_metrics`, ``preset``):
    the general hook with the example's metric and options, then the example's keys.

    Summarization: each text (decoded and stripped) has its sentences (``split``) joined with
    newlines (for ``rougeLsum``); ROUGE-1/2/L/Lsum with the Porter stemmer; each key the mean
    F-measure over the examples, times 100, rounded to 4 places (numpy's rounding, as the example
    rounds numpy floats). Translation: ``bleu``, sacrebleu's corpus score with its defaults, one
    reference per example. ``gen_len``: the examples' mean of
    ``np.count_nonzero(pred != tokenizer.pad_token_id)``.
    """
    counterpart = PRESET_COUNTERPARTS[preset]
    if split is None:  # translation
        scored = build_compute_metrics(tokenizer, [counterpart])
    else:
        options = {"rouge_types": SUMMARIZATION_ROUGE_TYPES, "use_stemmer": True, "n_bootstrap": 0}
        scored = build_compute_metrics(tokenizer, [counterpart], metric_options={counterpart: options},
                                       postprocess=lambda text: "\n".join(split(text)))

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        scored(eval_pred)
        (result,) = compute_metrics.last_results = scored.last_results  # type: ignore[attr-defined]
        compute_metrics.last_texts = scored.last_texts  # type: ignore[attr-defined]
        generated = padded_ids(tokenizer, _unpack(eval_pred)[0], "predictions") != _pad_id(tokenizer)
        gen_len = np.mean(np.count_nonzero(generated, axis=1))
        if split is None:  # the translation example's keys ({"bleu": result["score"]}), every value rounded
            return {"bleu": round(float(result.main_score), 4), "gen_len": float(round(gen_len, 4))}
        means = {name: float(round(np.mean(result.scores[name]) * 100, 4))
                 for name in SUMMARIZATION_ROUGE_TYPES}
        return {**means, "gen_len": float(gen_len)}  # the example adds gen_len after rounding the rest

    compute_metrics.last_results = []  # type: ignore[attr-defined]
    return compute_metrics


def _check_preset(preset: Any, **others: Any) -> None:
    """A preset fixes the metrics and their options: refuse it with any of them."""
    if preset not in PRESETS:
        raise ValueError(f"Unknown preset={preset!r}; choose one of {list(PRESETS)}, or None.")
    given = [name for name, value in others.items() if value]
    if given:
        raise ValueError(f"preset={preset!r} fixes the metrics and how texts are prepared, so it takes none "
                         f"of {given}; drop them, or drop the preset and choose metrics=.")


# ------------------------------------------------------------------------------------------------


def build_compute_metrics(tokenizer: Any, metrics: Sequence[str] | str | None = None,
                          sources: Sequence[str] | str | None = None,
                          metric_options: Mapping[str, Mapping[str, Any]] | None = None, *,
                          preset: str | None = None,
                          sentence_splitter: str | Callable[[str], Sequence[str]] | None = None,
                          postprocess: Callable[[str], str] | None = None, per_example: bool = False,
                          progress: bool = False, cache_dir: str | os.PathLike[str] | None = None,
                          release_models: bool = False) -> Callable[[Any], dict[str, float]]:
    """Return ``compute_metrics(eval_pred) -> {name: float}`` scoring decoded generations.

    Predictions and labels are decoded without special tokens (-100 is padding) and stripped.

    - ``metrics``: any subset of ``nlgmetrics.registry.metric_names()``, or evaluate's names
      for them (:func:`evaluate_names`: ``rouge``, ``sacrebleu``, ``chrf``, ``ter``); default
      :data:`nlgmetrics.registry.DEFAULT_METRICS` (``rouge_family``, ``bleu``).
    - ``sources``: documents for the reference-free metrics (aligned with the evaluation dataset),
      or ``"inputs"`` to decode ``eval_pred.inputs`` (which the Trainer passes with
      ``Seq2SeqTrainingArguments(include_for_metrics=["inputs"])``). Required when such a metric
      is asked for.
    - ``metric_options``: per-metric keyword options of the library functions, e.g. an LM
      metric's model ``{"infolm": {"model": path}}`` (keyed by our or evaluate's name).
    - ``postprocess``: applied to every decoded prediction and label (e.g. sentence splitting with
      newlines for ROUGE-Lsum).
    - ``per_example``: also return per-example lists (Trainer logs only numbers, so off by default).
    - ``cache_dir``: the store folder of every LM metric asked for (``metric_options``' own
      ``cache_dir`` wins; None: ``$NLGMETRICS_CACHE_DIR``, else no store). The references scored
      at each evaluation are then computed once and read back afterwards; numbers unchanged.
      The other metrics have no model and ignore it.
    - ``release_models``: after each evaluation, drop every scoring model the engine cached in
      this process and return its memory (:func:`nlgmetrics.engine.release`), for a GPU shared
      with the model being trained. Off by default: the model then stays loaded, and the next
      evaluation does not load it again. The numbers are the same either way.
    - ``preset``: instead of the above, the transformers examples' own ``compute_metrics``:

      * ``"summarization"`` (``run_summarization.py``): texts stripped, sentences split
        (``sentence_splitter``) and joined with newlines for ``rougeLsum``; ROUGE-1/2/L/Lsum with
        the Porter stemmer; keys ``rouge1``, ``rouge2``, ``rougeL``, ``rougeLsum`` (mean
        F-measure x 100, rounded to 4 places) and ``gen_len`` (mean count of non-pad generated
        ids, not rounded). The example's evaluate ``rouge`` reports the median of 1000 unseeded
        bootstrap means where we report the exact mean: equal up to that noise.
      * ``"translation"`` (``run_translation.py``): keys ``bleu`` (sacrebleu's corpus BLEU with
        its defaults, one reference per example) and ``gen_len``, both rounded to 4 places.

    - ``sentence_splitter`` (summarization preset only): ``"punkt"`` (default:
      ``nltk.sent_tokenize``, the example's; needs NLTK's punkt data, checked here with the fix
      named), ``"pysbd"`` (offline, rule-based; may split differently, which changes only
      ``rougeLsum``) or a callable ``str -> list[str]``.

    Keys come from each result's ``aggregate()`` (:func:`result_keys`): ``<metric>_<key>``, or the
    metric's name alone for its own key, e.g. ``bleu``, ``bleu_bp``, ``bleu_sentence_bleu``,
    ``rouge_family_rouge1``, ``rouge_family_rouge1_low``, ``infolm``. A metric named by evaluate's
    name only (``rouge``, ``sacrebleu``) gives its evaluate module's numbers instead
    (:func:`~nlgmetrics.apps.evaluate_adapter.module_output`: ``rouge1``...``rougeLsum``; ``score``,
    ``bp``, ...; its lists left out), a key two
    metrics share prefixed as ``evaluate.combine`` does (:func:`merged_keys`). The Trainer
    prefixes every key with ``eval_``. With ``per_example``:
    ``<metric>_<column>_per_example`` lists. The results themselves (signatures, per-example
    columns) are kept on ``compute_metrics.last_results``.

    >>> import numpy as np
    >>> from transformers import AutoTokenizer
    >>> from nlgmetrics.testing import bert_tokenizer_dir
    >>> tokenizer = AutoTokenizer.from_pretrained(str(bert_tokenizer_dir()))
    >>> ids = np.array([tokenizer("the cat sat on the mat")["input_ids"]])
    >>> sorted(build_compute_metrics(tokenizer, metrics=["rouge"])((ids, ids)))
    ['rouge1', 'rouge2', 'rougeL', 'rougeLsum']
    >>> sorted(build_compute_metrics(tokenizer, preset="summarization", sentence_splitter="pysbd")((ids, ids)))
    ['gen_len', 'rouge1', 'rouge2', 'rougeL', 'rougeLsum']
    """
    if preset is not None:
        _check_preset(preset, metrics=metrics is not None, sources=sources is not None,
                      metric_options=metric_options is not None, postprocess=postprocess is not None,
                      per_example=per_example, cache_dir=cache_dir is not None, release_models=release_models)
        return _preset_compute_metrics(tokenizer, preset, _preset_splitter(preset, sentence_splitter))
    _preset_splitter(None, sentence_splitter)  # refuses a splitter without the preset that uses it
    check_bool("release_models", release_models)
    metrics = DEFAULT_METRICS if metrics is None else [metrics] if isinstance(metrics, str) else metrics
    given_as = _resolve_metrics(metrics)
    protocols = [get_protocol(ours) for ours in given_as]
    if not protocols:
        raise ValueError("`metrics` is empty; pass at least one metric name, e.g. ['rouge_family'].")
    options = _resolve_options(metric_options, protocols, metrics)
    if cache_dir is not None:
        check_cache_dir(cache_dir)  # now, not at the first evaluation after hours of training
        for protocol in protocols:
            if protocol.uses_model:
                options.setdefault(protocol.name, {}).setdefault("cache_dir", cache_dir)
    needs_sources = [protocol.name for protocol in protocols if protocol.second_input == "sources"]
    if needs_sources and sources is None:
        raise ValueError(f"{needs_sources} score summaries against source documents; pass sources=[...] "
                         f"(aligned with the eval dataset) or sources='inputs' with "
                         f"Seq2SeqTrainingArguments(include_for_metrics=['inputs']).")
    if isinstance(sources, str) and sources != "inputs":
        raise ValueError("`sources` must be a list of documents or the string 'inputs'.")
    fixed_sources = None if sources is None or isinstance(sources, str) else list(sources)

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        try:
            predictions_ids, label_ids, inputs_ids = _unpack(eval_pred)
            predictions = decode_ids(tokenizer, predictions_ids, "predictions")
            references = decode_ids(tokenizer, label_ids, "labels") if label_ids is not None else None
            if postprocess is not None:
                predictions = [postprocess(text) for text in predictions]
                references = None if references is None else [postprocess(t) for t in references]
            docs = fixed_sources if needs_sources else None
            if needs_sources and sources == "inputs":
                if inputs_ids is None:
                    raise ValueError("sources='inputs' but the Trainer passed no inputs; set "
                                     "Seq2SeqTrainingArguments(include_for_metrics=['inputs']).")
                docs = decode_ids(tokenizer, inputs_ids, "inputs")
            if docs is not None and len(docs) != len(predictions):
                raise ValueError(f"{len(docs)} sources but {len(predictions)} predictions; sources must be "
                                 f"aligned with the evaluation dataset (one per example, same order).")
            keys_by_prefix: list[tuple[str, dict[str, float]]] = []
            metric_results: list[MetricResult] = []
            for protocol in protocols:
                if protocol.second_input == "references" and references is None:
                    raise ValueError(f"{protocol.name} needs labels, but the evaluation set has none.")
                others = references if protocol.second_input == "references" else docs
                options_of_metric = options.get(protocol.name, {})
                result = protocol.run(predictions, others, progress=progress, **options_of_metric)
                metric_results.append(result)
                # a metric named by evaluate's name only (not also ours) logs its evaluate module's keys
                if given_as[protocol.name] != protocol.name and protocol.evaluate is not None:
                    # the evaluate module's default output, less its lists: a Trainer logs numbers
                    output = module_output(protocol, result, options_of_metric, OutputSwitches())
                    keys = {key: float(value) for key, value in output.items() if not isinstance(value, list)}
                    keys_by_prefix.append((protocol.evaluate.module_name, keys))
                else:
                    keys_by_prefix.append((protocol.name, result_keys(result)))
            results: dict[str, Any] = merged_keys(keys_by_prefix)
            if per_example:
                results.update({f"{result.metric}_{key}_per_example": list(values)
                                for result in metric_results for key, values in result.scores.items()})
            compute_metrics.last_results = metric_results  # type: ignore[attr-defined]
            compute_metrics.last_texts = {  # type: ignore[attr-defined]
                "predictions": predictions, "references": references, "sources": docs}
            return results
        finally:
            if release_models:
                from nlgmetrics.engine.loading import release  # torch only where a model was used

                release()

    compute_metrics.last_results = []  # type: ignore[attr-defined]
    return compute_metrics
