"""Metric families for the meta-evaluation runner: name -> function(examples, options) -> scores.

A *family* is one library call that yields one or more per-example score lists (ROUGE gives
rouge1/rouge2/rougeL/...; the Shannon game gives shannon_score/information_difference/
blanc_shannon). Every family returns ``({output: [score per example]}, signature)``. Library
metrics return a :class:`~nlgmetrics.core.result.MetricResult`; a family reads the columns it
needs by name and orients them by the direction the result declares, so that **higher is better**
for every output: InfoLM's divergences and distances (lower = more similar) are negated, and a
positive correlation always means agreement with humans.

A family that cannot run here (library module not there yet, model not available offline)
raises :class:`MetricUnavailable` with a one-line reason; the runner skips it and says why.

Two kinds of families:

- library metrics (``nlgmetrics.rouge``, ``nlgmetrics.bleu``, ``nlgmetrics.chrf``, ``nlgmetrics.infolm``,
  ``nlgmetrics.shannon``, ``nlgmetrics.blanc``, ``nlgmetrics.fflm``);
- anchors (PyPI ``rouge-score``, ``sacrebleu``) named ``rouge-score:*`` / ``sacrebleu:*``, as a
  cross-check of the library numbers and a baseline that is always available.

>>> from benchmarks.meta.data import Example
>>> ex = Example("k", "d", "s", "all", "the cat sat", ("the cat sat down",), "", {})
>>> scores, sig = FAMILIES["sacrebleu"].fn([ex], {})
>>> round(scores["sacrebleu:bleu"][0], 2), sig.startswith("sacrebleu")  # brevity penalty exp(1 - 4/3)
(71.65, True)
"""

from __future__ import annotations

import hashlib
import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nlgmetrics.core.result import MetricResult
from benchmarks.meta.data import Example


#: What a family returns: ``({output: [score per example]}, signature)``.
FamilyScores = tuple[dict[str, list[float]], str]


class MetricUnavailable(RuntimeError):
    """The family cannot run in this environment (the message says why, in one line)."""


@dataclass(frozen=True)
class Family:
    """One library call producing ``outputs`` (per-example score lists)."""

    name: str
    outputs: tuple[str, ...]
    needs: str  # "references" or "source": examples without it get nan for this family
    uses_model: bool
    option_names: tuple[str, ...]  # runner options that change the numbers (cache key)
    fn: Callable[[list[Example], dict[str, Any]], FamilyScores]


def _import(module: str, what: str):
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MetricUnavailable(f"{what}: cannot import {module} ({error})") from None


def _refs(examples: list[Example]) -> list[list[str]]:
    return [list(e.references) for e in examples]


# ------------------------------------------------------------------------------------------
# Anchors (PyPI packages): always available, used as cross-checks and fallback baselines.


def _rouge_score_anchor(examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    try:
        from rouge_score import rouge_scorer
    except ImportError as error:
        raise MetricUnavailable(f"rouge-score not installed ({error})") from None
    types = list(ROUGE_TYPES)
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=True)
    out = {f"rouge-score:{t}": [] for t in types}
    for e in examples:
        # score_multi takes the best reference per type (same rule as ROUGE-1.5.5 "max" here).
        scores = scorer.score_multi(list(e.references), e.prediction) if len(e.references) > 1 else scorer.score(
            e.references[0], e.prediction
        )
        for t in types:
            out[f"rouge-score:{t}"].append(scores[t].fmeasure)
    return out, "rouge-score|stem:yes|stat:F|multi:max"


def _sacrebleu_anchor(examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    try:
        import sacrebleu
    except ImportError as error:
        raise MetricUnavailable(f"sacrebleu not installed ({error})") from None
    bleu = sacrebleu.metrics.BLEU(effective_order=True)
    scores = [bleu.sentence_score(e.prediction, list(e.references)).score for e in examples]
    return {"sacrebleu:bleu": scores}, f"sacrebleu:{bleu.get_signature()}".replace("|", "/")


# ------------------------------------------------------------------------------------------
# Library metrics: each returns a MetricResult; its columns are read by name and oriented by the
# direction the result itself declares (``result.column(name).higher_is_better``).


def oriented(result: MetricResult, column: str) -> list[float]:
    """Per-example values of ``column``, negated when the metric declares lower = better.

    >>> from nlgmetrics.core.result import Column, MetricResult
    >>> class Distance(MetricResult):
    ...     metric, main = "distance", "distance"
    ...     columns = {"distance": Column(False, 0.0, 1.0, "a distance")}
    >>> oriented(Distance(scores={"distance": [0.25, 0.0]}, signature="distance"), "distance")
    [-0.25, -0.0]
    """
    values = result.scores[column]
    if result.column(column).higher_is_better:
        return [float(v) for v in values]
    return [-float(v) for v in values]


def read_outputs(result: MetricResult, outputs: dict[str, str]) -> dict[str, list[float]]:
    """``{output: oriented(result, column)}`` for ``outputs = {output name: column of result}``."""
    return {output: oriented(result, column) for output, column in outputs.items()}


#: The LM metrics' default weight dtype; scores in another dtype get their own cache key.
DEFAULT_DTYPE = "float32"


def _dtype(options: dict[str, Any]) -> dict[str, Any]:
    """``{"dtype": ...}`` for the library call (the library records it in the signature)."""
    return {"dtype": options.get("dtype") or DEFAULT_DTYPE}


def _unavailable(what: str, model: Any, error: Exception) -> MetricUnavailable:
    first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
    return MetricUnavailable(f"{what} model {model!r}: {first_line}")


ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
#: output name -> RougeResult column (F-measure per type, recall for ROUGE-1/2). The output names
#: are those of the cached scores and the committed tables: renaming one orphans both.
ROUGE_COLUMNS = {**{t: t for t in ROUGE_TYPES}, "rouge1_r": "rouge1_recall", "rouge2_r": "rouge2_recall"}
ROUGE_OUTPUTS = tuple(ROUGE_COLUMNS)


def _rouge(examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    module = _import("nlgmetrics.rouge", "ROUGE")
    # rouge-score's configuration (NLTK's Porter stemmer, use_stemmer=True), kept as it is because
    # its stored scores and committed tables name it; REALSumm's ROUGE-1.5.5 ``-m`` stemmer is the
    # ``rouge155`` family. Best reference per type for multi-reference rows.
    # n_bootstrap=0: only the per-example columns are read (the tables bootstrap over documents).
    result = module.rouge_family(
        [e.prediction for e in examples], _refs(examples), rouge_types=list(ROUGE_TYPES), use_stemmer=True,
        n_bootstrap=0,
    )
    return read_outputs(result, ROUGE_COLUMNS), result.signature


#: REALSumm's classic baselines: ROUGE-1/2/L recall, precision and F with ROUGE-1.5.5's own Porter
#: stemmer (Perl ``-m``), no stopword removal, F1. Output name -> RougeResult column. ``RL`` is
#: the summary-level LCS over sentence lines (our ``rougeLsum``), which is what the Perl script
#: calls ROUGE-L; the sentence-level ``rougeL`` of rouge-score is a different number.
ROUGE155_TYPES = ("rouge1", "rouge2", "rougeLsum")
ROUGE155_COLUMNS = {
    f"{short}-{measure}": f"{rouge_type}{suffix}"
    for short, rouge_type in (("R1", "rouge1"), ("R2", "rouge2"), ("RL", "rougeLsum"))
    for measure, suffix in (("R", "_recall"), ("P", "_precision"), ("F", ""))
}
#: What the ``rouge155`` outputs are, for table headers.
ROUGE155_DESCRIPTION = (
    "R1/R2/RL-R/P/F = ROUGE-1, ROUGE-2, ROUGE-L recall / precision / F1 from nlgmetrics.rouge.rouge_family("
    "use_stemmer='rouge155' (ROUGE-1.5.5's Porter variant, Perl -m, without WordNet exceptions), "
    "remove_stopwords=False, beta=1, rouge-score tokenisation, best reference per type); "
    "RL = summary-level union LCS over the sentence lines (rougeLsum = Perl ROUGE-L)"
)


def _rouge155(examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    module = _import("nlgmetrics.rouge", "ROUGE")
    result = module.rouge_family(
        [e.prediction for e in examples], _refs(examples), rouge_types=list(ROUGE155_TYPES), use_stemmer="rouge155",
        remove_stopwords=False, n_bootstrap=0,
    )
    return read_outputs(result, ROUGE155_COLUMNS), result.signature


def _bleu(examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    module = _import("nlgmetrics.bleu", "BLEU")
    # Per example: sentence BLEU (effective order, sacrebleu's sentence default).
    result = module.bleu([e.prediction for e in examples], _refs(examples))
    return read_outputs(result, {"bleu": "sentence_bleu"}), result.signature


def _chrf(examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    module = _import("nlgmetrics.chrf", "chrF")
    predictions, references = [e.prediction for e in examples], _refs(examples)
    # Sentence chrF (sacrebleu's defaults: character 6-grams, beta 2) and chrF++ (word bigrams too,
    # the WebNLG 2020 organisers' chrF++), each example against its best reference.
    plain = module.chrf(predictions, references, word_order=0)
    plus = module.chrf(predictions, references, word_order=2)
    return ({**read_outputs(plain, {"chrF": "sentence_chrf"}), **read_outputs(plus, {"chrF++": "sentence_chrf"})},
            f"{plain.signature} ; {plus.signature}")


#: How the dataset idf table weighs a token that is in no reference: log(N + 1), the library's
#: idf rule (``nlgmetrics.infolm.compute_idf``). Part of the cache key: the benchmark once passed
#: the table's weights as a plain mapping, whose unseen-token weight is the largest weight instead
#: (log((N + 1) / 2)), and scores computed that way must not be read back as this rule's.
INFOLM_IDF_RULE = "unseen:log(n+1)"


def infolm_idf_key(dataset: str, texts: list[str]) -> str:
    """Cache-key description of a dataset idf table: dataset, number and hash of the reference
    texts, and :data:`INFOLM_IDF_RULE`.

    >>> infolm_idf_key("toy", ["a cat", "the dog"])
    'toy-references:2:5a89cc23:unseen:log(n+1)'
    """
    digest = hashlib.sha1("\n\x00".join(texts).encode("utf-8")).hexdigest()[:8]
    return f"{dataset}-references:{len(texts)}:{digest}:{INFOLM_IDF_RULE}"


def infolm_idf_table(module: Any, options: dict[str, Any]) -> Any:
    """idf from every distinct reference of the *whole* dataset (not of one chunk), or False.

    ``infolm(idf=True)`` would compute idf from the references of each call, so the numbers
    would depend on how the runner chunks the work and on ``--max-docs``. One table per dataset
    keeps every example's score independent of both; it is built exactly as ``idf=True`` builds
    the table of one call (distinct token sequences of the references, the library's
    :class:`~nlgmetrics.infolm.IdfTable` with its log(N + 1) weight for tokens in no reference),
    so a call whose references are the dataset's gets the ``idf=True`` numbers.
    """
    texts = options.get("infolm_idf_texts")
    if not texts:
        return False
    key = (str(options["infolm_model"]), options.get("infolm_idf"), len(texts))
    if key in _IDF_MEMO:
        return _IDF_MEMO[key]
    from nlgmetrics.engine import load_lm
    from nlgmetrics.infolm.planning import distinct_texts

    lm = load_lm(options["infolm_model"])
    strings = list(dict.fromkeys(texts))
    tokenized, _ = module.tokenize(lm, strings, module.resolve_max_length(lm, None))
    distinct, _ = distinct_texts(dict(zip(strings, tokenized)))
    _IDF_MEMO[key] = module.compute_idf(t.tokens for t in distinct)
    return _IDF_MEMO[key]


_IDF_MEMO: dict[tuple, Any] = {}


def _infolm_results(examples: list[Example], options: dict[str, Any], specs: list[tuple]) -> list[Any]:
    """``infolm_multi`` over the examples for ``specs`` ((measure, alpha, beta[, temperature]) each):
    one pass over the model for every measure and temperature."""
    module = _import("nlgmetrics.infolm", "InfoLM")
    try:
        idf = infolm_idf_table(module, options)
        return module.infolm_multi(
            [e.prediction for e in examples],
            _refs(examples),
            specs,
            model=options["infolm_model"],
            temperature=options["infolm_temperature"],
            idf=idf,
            progress=options.get("progress", False),
            **_dtype(options),
        )
    except (OSError, ImportError) as error:
        raise _unavailable("InfoLM", options["infolm_model"], error) from None


def _infolm_scores(measures: list[str], results: list[Any]) -> FamilyScores:
    out: dict[str, list[float]] = {}
    for measure, result in zip(measures, results, strict=True):
        # Divergences and distances (lower = closer) come out negated: higher = better.
        out.update(read_outputs(result, {f"infolm_{measure}": "infolm"}))
    return out, " ; ".join(result.signature for result in results)


def _infolm(examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    measures = list(options["infolm_measures"])
    specs = [(m, options.get("infolm_alpha"), options.get("infolm_beta")) for m in measures]
    return _infolm_scores(measures, _infolm_results(examples, options, specs))


def infolm_temperature_sweep(
    examples: list[Example], options: dict[str, Any], temperatures: list[float],
) -> dict[float, FamilyScores]:
    """The InfoLM family's scores at each temperature (``options["infolm_measures"]`` each), from
    one model pass: ``{temperature: (scores, signature)}``, each exactly what the family computes
    with ``infolm_temperature`` set to that temperature."""
    measures = list(options["infolm_measures"])
    temperatures = list(dict.fromkeys(temperatures))
    specs = [(m, options.get("infolm_alpha"), options.get("infolm_beta"), t) for t in temperatures for m in measures]
    results = _infolm_results(examples, options, specs)
    n = len(measures)
    return {t: _infolm_scores(measures, results[k * n : (k + 1) * n]) for k, t in enumerate(temperatures)}


SHANNON_OUTPUTS = ("shannon_score", "information_difference", "blanc_shannon")


def _on_sources(
    function: Callable[..., MetricResult], what: str, examples: list[Example], options: dict[str, Any],
    model_option: str, outputs: dict[str, str], **call_options: Any,
) -> FamilyScores:
    """A reference-free LM metric on the examples' (prediction, source) pairs, with the model of
    ``options[model_option]``; a model that cannot be loaded makes the family unavailable."""
    try:
        result = function(
            [e.prediction for e in examples],
            [e.source for e in examples],
            model=options[model_option],
            progress=options.get("progress", False),
            **_dtype(options),
            **call_options,
        )
    except (OSError, ImportError) as error:
        raise _unavailable(what, options[model_option], error) from None
    return read_outputs(result, outputs), result.signature


def _shannon(examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    module = _import("nlgmetrics.shannon", "Shannon")
    return _on_sources(module.shannon_score, "Shannon", examples, options, "shannon_model",
                       {name: name for name in SHANNON_OUTPUTS})


def _blanc(examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    module = _import("nlgmetrics.blanc", "BLANC")
    if not options.get("blanc_model"):
        raise MetricUnavailable("BLANC needs a masked LM (--blanc-model); none is available offline")
    return _on_sources(module.blanc, "BLANC", examples, options, "blanc_model", {"blanc_help": "blanc"},
                       variant="help")


def _fflm(examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    module = _import("nlgmetrics.fflm", "FFLM")
    return _on_sources(module.fflm, "FFLM", examples, options, "fflm_model", {"fflm": "fflm"})


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("rouge", ROUGE_OUTPUTS, "references", False, (), _rouge),
        Family("rouge155", tuple(ROUGE155_COLUMNS), "references", False, (), _rouge155),
        Family("bleu", ("bleu",), "references", False, (), _bleu),
        Family("chrf", ("chrF", "chrF++"), "references", False, (), _chrf),
        Family("rouge-score", tuple(f"rouge-score:{t}" for t in ROUGE_TYPES), "references", False, (), _rouge_score_anchor),
        Family("sacrebleu", ("sacrebleu:bleu",), "references", False, (), _sacrebleu_anchor),
        Family(
            "infolm", (), "references", True,
            ("infolm_model", "infolm_measures", "infolm_temperature", "infolm_alpha", "infolm_beta", "infolm_idf"), _infolm,
        ),
        Family("shannon", SHANNON_OUTPUTS, "source", True, ("shannon_model",), _shannon),
        Family("blanc", ("blanc_help",), "source", True, ("blanc_model",), _blanc),
        Family("fflm", ("fflm",), "source", True, ("fflm_model",), _fflm),
    )
}

#: ``--metrics`` shorthands.
GROUPS = {
    "text": ("rouge", "rouge155", "bleu", "chrf"),
    "anchors": ("rouge-score", "sacrebleu"),
    "lm": ("infolm", "shannon", "fflm", "blanc"),
}
GROUPS["all"] = GROUPS["text"] + GROUPS["anchors"] + GROUPS["lm"]


def family_outputs(family: Family, options: dict[str, Any]) -> tuple[str, ...]:
    """Output names of a family under ``options`` (InfoLM: one per measure)."""
    if family.name == "infolm":
        return tuple(f"infolm_{m}" for m in options["infolm_measures"])
    return family.outputs


def resolve_families(spec: str) -> list[Family]:
    """``"text,shannon"`` -> the families, in order, without duplicates (clear error if unknown).

    ``"none"``: no family (only the scores of ``--scores`` files are correlated).
    """
    if spec.strip().lower() == "none":
        return []
    names: list[str] = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        expanded = GROUPS.get(item, (item,))
        for name in expanded:
            if name not in FAMILIES:
                raise ValueError(f"Unknown metric {name!r} in --metrics; choose from {sorted(FAMILIES) + sorted(GROUPS)}.")
            if name not in names:
                names.append(name)
    if not names:
        raise ValueError("--metrics is empty; e.g. --metrics text or --metrics rouge,shannon.")
    return [FAMILIES[n] for n in names]


def is_missing(value: float) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
