"""Metric families for the meta-evaluation runner: name -> function(examples, options) -> scores.

A *family* is one library call that yields one or more per-example score lists (ROUGE gives
rouge1/rouge2/rougeL/...; the Shannon game gives shannon_score/information_difference/
blanc_shannon). Every family returns ``({output: [score per example]}, signature)``. Scores are
oriented so that **higher is better** for every output: InfoLM's divergences and distances (lower
= more similar) are negated, so that a positive correlation always means agreement with humans.

A family that cannot run here (library module not there yet, model not available offline)
raises :class:`MetricUnavailable` with a one-line reason; the runner skips it and says why.

Two kinds of families:

- library metrics (``nlgmetrics.rouge``, ``nlgmetrics.bleu``, ``nlgmetrics.infolm``,
  ``nlgmetrics.shannon``, ``nlgmetrics.blanc``, ``nlgmetrics.fflm``);
- anchors (PyPI ``rouge-score``, ``sacrebleu``) named ``rouge-score:*`` / ``sacrebleu:*``, as a
  cross-check of the library numbers and a baseline that is always available.

>>> from nlgmetrics.meta.data import Example
>>> ex = Example("k", "d", "s", "all", "the cat sat", ("the cat sat down",), "", {})
>>> scores, sig = FAMILIES["sacrebleu"].fn([ex], {})
>>> round(scores["sacrebleu:bleu"][0], 2), sig.startswith("sacrebleu")  # brevity penalty exp(1 - 4/3)
(71.65, True)
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nlgmetrics.meta.data import Example


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
    fn: Callable[[list[Example], dict[str, Any]], tuple[dict[str, list[float]], str]]


def _import(module: str, what: str):
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MetricUnavailable(f"{what}: cannot import {module} ({error})") from None


def _refs(examples: list[Example]) -> list[list[str]]:
    return [list(e.references) for e in examples]


# ------------------------------------------------------------------------------------------
# Anchors (PyPI packages): always available, used as cross-checks and fallback baselines.


def _rouge_score_anchor(examples, options):
    try:
        from rouge_score import rouge_scorer
    except ImportError as error:
        raise MetricUnavailable(f"rouge-score not installed ({error})") from None
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
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


def _sacrebleu_anchor(examples, options):
    try:
        import sacrebleu
    except ImportError as error:
        raise MetricUnavailable(f"sacrebleu not installed ({error})") from None
    bleu = sacrebleu.metrics.BLEU(effective_order=True)
    scores = [bleu.sentence_score(e.prediction, list(e.references)).score for e in examples]
    return {"sacrebleu:bleu": scores}, f"sacrebleu:{bleu.get_signature()}".replace("|", "/")


# ------------------------------------------------------------------------------------------
# Library metrics.

ROUGE_OUTPUTS = ("rouge1", "rouge2", "rougeL", "rougeLsum", "rouge1_r", "rouge2_r")


def _rouge(examples, options):
    module = _import("nlgmetrics.rouge", "ROUGE")
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    # Stemming as in REALSumm / ROUGE-1.5.5 -m; best reference per type for multi-reference rows.
    result = module.rouge_scores(
        [e.prediction for e in examples], _refs(examples), rouge_types=types, use_stemmer=True, aggregate=False
    )
    out = {t: [float(v) for v in result["scores"][t]["fmeasure"]] for t in types}
    for t in ("rouge1", "rouge2"):
        out[f"{t}_r"] = [float(v) for v in result["scores"][t]["recall"]]
    return out, result["signature"]


def _bleu(examples, options):
    module = _import("nlgmetrics.bleu", "BLEU")
    results = module.sentence_bleu_batch([e.prediction for e in examples], _refs(examples))
    signature = results[0].signature if results else ""
    return {"bleu": [float(r.score) for r in results]}, signature


def _infolm_idf(module, options) -> dict[int, float] | bool:
    """idf weights from every distinct reference of the *whole* dataset (not of one chunk).

    ``infolm(idf=True)`` would compute idf from the references of each call, so the numbers
    would depend on how the runner chunks the work and on ``--max-docs``. One table per dataset
    keeps every example's score independent of both.
    """
    texts = options.get("infolm_idf_texts")
    if not texts:
        return False
    key = (str(options["infolm_model"]), options.get("infolm_idf"), len(texts))
    if key in _IDF_MEMO:
        return _IDF_MEMO[key]
    from nlgmetrics.engine import load_lm

    lm = load_lm(options["infolm_model"])
    tokenized, _ = module.tokenize(lm, list(texts), module.resolve_max_length(lm, None))
    _IDF_MEMO[key] = dict(module.compute_idf(dict.fromkeys(t.tokens for t in tokenized)).weights)
    return _IDF_MEMO[key]


_IDF_MEMO: dict[tuple, dict[int, float]] = {}


def _infolm(examples, options):
    module = _import("nlgmetrics.infolm", "InfoLM")
    out, signatures = {}, []
    preds = [e.prediction for e in examples]
    try:
        idf = _infolm_idf(module, options)
        for measure in options["infolm_measures"]:
            result = module.infolm(
                preds,
                _refs(examples),
                model=options["infolm_model"],
                information_measure=measure,
                alpha=options.get("infolm_alpha"),
                beta=options.get("infolm_beta"),
                temperature=options["infolm_temperature"],
                idf=idf,
                progress=options.get("progress", False),
            )
            # InfoLM measures are divergences / distances (lower = closer): negate, higher = better.
            out[f"infolm_{measure}"] = [-float(v) for v in result.scores]
            signatures.append(result.signature)
    except (OSError, ImportError) as error:
        raise MetricUnavailable(f"InfoLM model {options['infolm_model']!r}: {str(error).splitlines()[0]}") from None
    return out, " ; ".join(signatures)


def _shannon(examples, options):
    module = _import("nlgmetrics.shannon", "Shannon")
    try:
        result = module.shannon_score(
            [e.source for e in examples],
            [e.prediction for e in examples],
            model=options["shannon_model"],
            progress=options.get("progress", False),
        )
    except (OSError, ImportError) as error:
        raise MetricUnavailable(f"Shannon model {options['shannon_model']!r}: {str(error).splitlines()[0]}") from None
    return {
        "shannon_score": list(result.shannon_score),
        "information_difference": list(result.information_difference),
        "blanc_shannon": list(result.blanc_shannon),
    }, result.signature


def _blanc(examples, options):
    module = _import("nlgmetrics.blanc", "BLANC")
    if not options.get("blanc_model"):
        raise MetricUnavailable("BLANC needs a masked LM (--blanc-model); none is available offline")
    try:
        result = module.blanc_help([e.source for e in examples], [e.prediction for e in examples], model=options["blanc_model"], progress=options.get("progress", False))
    except (OSError, ImportError) as error:
        raise MetricUnavailable(f"BLANC model {options['blanc_model']!r}: {str(error).splitlines()[0]}") from None
    return {"blanc_help": [float(v) for v in result.scores]}, result.signature


def _fflm(examples, options):
    module = _import("nlgmetrics.fflm", "FFLM")
    try:
        result = module.fflm([e.source for e in examples], [e.prediction for e in examples], model=options["fflm_model"], progress=options.get("progress", False))
    except (OSError, ImportError) as error:
        raise MetricUnavailable(f"FFLM model {options['fflm_model']!r}: {str(error).splitlines()[0]}") from None
    return {"fflm": [float(v) for v in result.fflm]}, result.signature


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("rouge", ROUGE_OUTPUTS, "references", False, (), _rouge),
        Family("bleu", ("bleu",), "references", False, (), _bleu),
        Family("rouge-score", tuple(f"rouge-score:{t}" for t in ("rouge1", "rouge2", "rougeL", "rougeLsum")), "references", False, (), _rouge_score_anchor),
        Family("sacrebleu", ("sacrebleu:bleu",), "references", False, (), _sacrebleu_anchor),
        Family(
            "infolm", (), "references", True,
            ("infolm_model", "infolm_measures", "infolm_temperature", "infolm_alpha", "infolm_beta", "infolm_idf"), _infolm,
        ),
        Family("shannon", ("shannon_score", "information_difference", "blanc_shannon"), "source", True, ("shannon_model",), _shannon),
        Family("blanc", ("blanc_help",), "source", True, ("blanc_model",), _blanc),
        Family("fflm", ("fflm",), "source", True, ("fflm_model",), _fflm),
    )
}

#: ``--metrics`` shorthands.
GROUPS = {
    "text": ("rouge", "bleu"),
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
    """``"text,shannon"`` -> the families, in order, without duplicates (clear error if unknown)."""
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
