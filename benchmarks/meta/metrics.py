"""What the meta-evaluation runs: its families, name -> function(examples, options) -> scores.

A *family* is a configuration of one metric that yields one or more per-example score lists
(ROUGE gives rouge1/rouge2/rougeL/...; the Shannon game gives shannon_score/information_difference/
blanc_shannon). Every family returns ``({output: [score per example]}, signature)``. This module
is the experiment's table: which registered metric each family runs (through its protocol,
:mod:`nlgmetrics.registry`), with which options, which result columns become which outputs, and
which runner option holds its model. One function runs every such family (:func:`library_scores`);
the metric's protocol says what it reads (references or sources) and whether it runs a model.
Library metrics return a :class:`~nlgmetrics.core.result.MetricResult`; a family reads the columns
it needs by name and orients them by the direction the result declares, so that **higher is
better** for every output: InfoLM's divergences and distances (lower = more similar) are negated,
and a positive correlation always means agreement with humans.

A family that cannot run here (library module not there yet, model not available offline)
raises :class:`MetricUnavailable` with a one-line reason; the runner skips it and says why.

Three kinds of families:

- registered metrics, declared as data (:func:`library_family`);
- InfoLM, whose experiment is its own: one model pass for every information measure and
  temperature (``infolm_multi``), and idf weights from the whole dataset's references;
- anchors (PyPI ``rouge-score``, ``sacrebleu``) named ``rouge-score:*`` / ``sacrebleu:*``, as a
  cross-check of the library numbers and a baseline that is always available.

>>> from benchmarks.meta.data import Example
>>> ex = Example(("d", "s"), "d", "s", "all", "the cat sat", ("the cat sat down",), "", {})
>>> scores, sig = FAMILIES["sacrebleu"].fn([ex], {})
>>> round(scores["sacrebleu:bleu"][0], 2), sig.startswith("sacrebleu")  # brevity penalty exp(1 - 4/3)
(71.65, True)
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nlgmetrics.core.result import MetricResult
from nlgmetrics.registry import get_protocol
from benchmarks.meta.data import Example


#: What a family returns: ``({output: [score per example]}, signature)``.
FamilyScores = tuple[dict[str, list[float]], str]


class MetricUnavailable(RuntimeError):
    """The family cannot run in this environment (the message says why, in one line)."""


@dataclass(frozen=True)
class Family:
    """One configuration of a metric producing ``outputs`` (per-example score lists).

    ``metric``: the registered metric it runs (None: an anchor package, which reads references
    and runs no model); its protocol says what the family needs and whether it runs a model.
    ``option_names``: the runner options that change its numbers (its cache key).
    ``model_option``, ``model_default``, ``model_help``: the runner option (``--<name>``) that
    holds its model. ``note``: what its outputs are, for the report.
    """

    name: str
    outputs: tuple[str, ...]
    fn: Callable[[list[Example], dict[str, Any]], FamilyScores]
    metric: str | None = None
    option_names: tuple[str, ...] = ()
    model_option: str | None = None
    model_default: str | None = None
    model_help: str = ""
    note: str = ""

    @property
    def needs(self) -> str:
        """``"references"`` or ``"sources"``: examples without it get nan for this family."""
        return "references" if self.metric is None else get_protocol(self.metric).second_input

    @property
    def uses_model(self) -> bool:
        return self.metric is not None and get_protocol(self.metric).uses_model


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


@dataclass(frozen=True)
class Run:
    """One library call of a family: the metric's ``options`` and ``outputs``, output name ->
    column of the result."""

    outputs: Mapping[str, str]
    options: Mapping[str, Any] = field(default_factory=dict)


def library_scores(metric: str, runs: tuple[Run, ...], model_option: str | None, no_model: str,
                   examples: list[Example], options: dict[str, Any]) -> FamilyScores:
    """Every run of ``metric`` (through its protocol) on the examples' predictions and references
    or sources, with the model of ``options[model_option]`` for an LM metric; the outputs read
    from each result (oriented higher = better) and the runs' signatures joined by " ; ".

    A package that cannot be imported, a model that is not given (``no_model`` says why) or
    cannot be loaded make the family unavailable.
    """
    try:
        protocol = get_protocol(metric)
    except ImportError as error:
        raise MetricUnavailable(f"{metric}: cannot import its package ({error})") from None
    predictions = [e.prediction for e in examples]
    others = _refs(examples) if protocol.second_input == "references" else [e.source for e in examples]
    model_options: dict[str, Any] = {}
    if model_option is not None:
        if not options.get(model_option):
            raise MetricUnavailable(no_model)
        model_options = {"model": options[model_option], "progress": options.get("progress", False), **_dtype(options)}
    scores: dict[str, list[float]] = {}
    signatures = []
    for run in runs:
        try:
            result = protocol.run(predictions, others, **model_options, **run.options)
        except (OSError, ImportError) as error:
            if model_option is None:
                raise
            raise _unavailable(protocol.title, model_options["model"], error) from None
        scores.update(read_outputs(result, run.outputs))
        signatures.append(result.signature)
    return scores, " ; ".join(signatures)


def library_family(name: str, metric: str, *runs: Run, model_default: str | None = None, model_help: str = "",
                   no_model: str = "", note: str = "") -> Family:
    """A family running the registered ``metric`` once per run (see :func:`library_scores`); an LM
    metric takes its model from the runner option ``--<name>-model`` (default ``model_default``).

    >>> family = library_family("bleu", "bleu", Run({"bleu": "sentence_bleu"}))
    >>> family.outputs, family.needs, family.uses_model
    (('bleu',), 'references', False)
    """
    model_option = f"{name}_model" if get_protocol(metric).uses_model else None
    outputs = tuple(output for run in runs for output in run.outputs)
    return Family(
        name, outputs, functools.partial(library_scores, metric, runs, model_option,
                                         no_model or f"{name} needs a model (--{name}-model)"),
        metric=metric, option_names=(model_option,) if model_option else (), model_option=model_option,
        model_default=model_default, model_help=model_help, note=note,
    )


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


#: The families, in the order of the tables. The output names are those of the cached scores and
#: the committed tables: renaming one orphans both.
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        # rouge-score's configuration (NLTK's Porter stemmer, use_stemmer=True), kept as it is because
        # its stored scores and committed tables name it; REALSumm's ROUGE-1.5.5 ``-m`` stemmer is the
        # ``rouge155`` family. Best reference per type for multi-reference rows. n_bootstrap=0: only
        # the per-example columns are read (the tables bootstrap over documents).
        library_family(
            "rouge", "rouge_family",
            Run(ROUGE_COLUMNS, {"rouge_types": list(ROUGE_TYPES), "use_stemmer": True, "n_bootstrap": 0}),
            note="`rouge1` ... `rougeLsum`, `rouge1_r`, `rouge2_r`: rouge-score's configuration (NLTK's Porter "
            "stemmer, F1 unless `_r` = recall; `rougeL` sentence-level LCS, `rougeLsum` summary-level).",
        ),
        library_family(
            "rouge155", "rouge_family",
            Run(ROUGE155_COLUMNS, {"rouge_types": list(ROUGE155_TYPES), "use_stemmer": "rouge155",
                                   "remove_stopwords": False, "n_bootstrap": 0}),
            note=f"ROUGE as REALSumm: {ROUGE155_DESCRIPTION}.",
        ),
        # Per example: sentence BLEU (effective order, sacrebleu's sentence default).
        library_family("bleu", "bleu", Run({"bleu": "sentence_bleu"})),
        # Sentence chrF (sacrebleu's defaults: character 6-grams, beta 2) and chrF++ (word bigrams too,
        # the WebNLG 2020 organisers' chrF++), each example against its best reference.
        library_family(
            "chrf", "chrf", Run({"chrF": "sentence_chrf"}, {"word_order": 0}), Run({"chrF++": "sentence_chrf"}, {"word_order": 2}),
            note="`chrF` / `chrF++`: sentence chrF of nlgmetrics.chrf.chrf (sacrebleu's numbers: character 6-grams, "
            "beta 2, word_order 0 / 2), best reference per output; chrF++ is the WebNLG 2020 organisers' metric.",
        ),
        Family("rouge-score", tuple(f"rouge-score:{t}" for t in ROUGE_TYPES), _rouge_score_anchor),
        Family("sacrebleu", ("sacrebleu:bleu",), _sacrebleu_anchor),
        Family(
            "infolm", (), _infolm, metric="infolm",
            option_names=("infolm_model", "infolm_measures", "infolm_temperature", "infolm_alpha", "infolm_beta",
                          "infolm_idf"),
            model_option="infolm_model", model_default="smollm2-135m",
            model_help="masked or causal LM for InfoLM (paper: bert-base-uncased)",
        ),
        library_family("shannon", "shannon_score", Run({name: name for name in SHANNON_OUTPUTS}),
                       model_default="smollm2-135m", model_help="causal LM (paper: gpt2)"),
        library_family("blanc", "blanc", Run({"blanc_help": "blanc"}, {"variant": "help"}),
                       model_help="masked LM for BLANC (none offline: skipped unless given)",
                       no_model="BLANC needs a masked LM (--blanc-model); none is available offline"),
        library_family("fflm", "fflm", Run({"fflm": "fflm"}), model_default="smollm2-135m", model_help="causal LM"),
    )
}

#: ``--metrics`` shorthands.
GROUPS = {
    "text": ("rouge", "rouge155", "bleu", "chrf"),
    "anchors": ("rouge-score", "sacrebleu"),
    "lm": ("infolm", "shannon", "fflm", "blanc"),
}
GROUPS["all"] = GROUPS["text"] + GROUPS["anchors"] + GROUPS["lm"]


def add_family_arguments(parser: argparse.ArgumentParser) -> None:
    """The runner options of the families: each LM family's ``--<name>-model``, and InfoLM's
    experiment (its measures, temperature, alpha and beta)."""
    for family in FAMILIES.values():
        if family.model_option is None:
            continue
        parser.add_argument(f"--{family.model_option.replace('_', '-')}", default=family.model_default,
                            help=family.model_help)
        if family.name == "infolm":
            parser.add_argument("--infolm-measures", default="fisher_rao_distance,js_divergence,l1_distance",
                                help="comma list of nlgmetrics.information_measures names")
            parser.add_argument("--infolm-temperature", type=float, default=0.25, help="library default 0.25 (torchmetrics')")
            parser.add_argument("--infolm-alpha", type=float, default=None, help="alpha for alpha/AB/Renyi divergences")
            parser.add_argument("--infolm-beta", type=float, default=None, help="beta for beta/AB divergences")


def family_options(args: argparse.Namespace) -> dict[str, Any]:
    """The families' options from the parsed runner arguments (:func:`add_family_arguments`)."""
    options = {family.model_option: getattr(args, family.model_option)
               for family in FAMILIES.values() if family.model_option is not None}
    options.update(
        infolm_measures=[m.strip() for m in args.infolm_measures.split(",") if m.strip()],
        infolm_temperature=args.infolm_temperature, infolm_alpha=args.infolm_alpha, infolm_beta=args.infolm_beta,
    )
    return options


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
