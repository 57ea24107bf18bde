"""One table of the six metrics for the command line, the Gradio demos and the Trainer hook.

Each :class:`MetricSpec` says what a metric reads (references, or source documents), which options it
takes (with types, defaults and choices, so that the CLI can build flags and the demos widgets from
the same table), and how to run it: ``spec.run(predictions, others, **options)`` calls the library
function of that metric and returns a :class:`ScoreReport` (per-example numbers, aggregate numbers,
signature). Nothing here computes a metric: this module only adapts calls and results.

>>> spec = get_spec("bleu")
>>> spec.second_input
'references'
>>> report = spec.run(["the cat sat on the mat"], [["the cat sat on the mat"]])
>>> round(report.aggregate[spec.main_score], 6)
100.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from nlgmetrics.measure_names import INFORMATION_MEASURES

SecondInput = Literal["references", "sources"]


@dataclass(frozen=True)
class OptionSpec:
    """One user-facing option of a metric (a keyword of its library function)."""

    name: str
    kind: Literal["str", "int", "float", "bool", "str_list", "float_list"]
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None

    def parse(self, text: str) -> Any:
        """Convert a command-line string to this option's type (clear error when it does not fit)."""
        if self.kind == "bool":
            lowered = text.strip().lower()
            if lowered in {"1", "true", "yes", "on"}:
                return True
            if lowered in {"0", "false", "no", "off"}:
                return False
            raise ValueError(f"Option {self.name}={text!r}: expected true/false.")
        if self.kind in {"str_list", "float_list"}:
            parts = [part.strip() for part in text.split(",") if part.strip()]
            if not parts:
                raise ValueError(f"Option {self.name}={text!r}: expected a comma-separated list.")
            if self.kind == "str_list":
                return parts
            try:
                return [float(part) for part in parts]
            except ValueError:
                raise ValueError(f"Option {self.name}={text!r}: expected comma-separated numbers.") from None
        if self.kind == "str":
            if text.strip().lower() in {"none", "null"} and self.default is None:
                return None
            value: Any = text
        else:
            if text.strip().lower() in {"none", "null"} and self.default is None:
                return None
            try:
                value = int(text) if self.kind == "int" else float(text)
            except ValueError:
                raise ValueError(f"Option {self.name}={text!r}: expected a number ({self.kind}).") from None
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"Option {self.name}={value!r}: choose one of {list(self.choices)}.")
        return value


@dataclass(frozen=True)
class ScoreReport:
    """What every metric run returns to the CLI, the demos and the Trainer hook."""

    metric: str
    per_example: dict[str, list[float]]
    aggregate: dict[str, float]
    signature: str
    main: str = ""  #: key of the headline score in ``aggregate``

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "main": self.main,
            "aggregate": dict(self.aggregate),
            "per_example": {k: list(v) for k, v in self.per_example.items()},
            "signature": self.signature,
        }


@dataclass(frozen=True)
class MetricSpec:
    """How to call one metric of the library (see the module docstring)."""

    name: str
    title: str
    second_input: SecondInput
    main_score: str
    higher_is_better: bool
    uses_model: bool
    options: tuple[OptionSpec, ...]
    runner: Callable[..., ScoreReport]
    description: str
    # Keyword names the library function uses for the model / device, when it takes one.
    default_model: str | None = None

    def option(self, name: str) -> OptionSpec:
        for option in self.options:
            if option.name == name:
                return option
        raise ValueError(
            f"{self.name} has no option {name!r}; its options are {[o.name for o in self.options]}"
            + (" (plus model, device)" if self.uses_model else "")
            + "."
        )

    def run(
        self,
        predictions: Sequence[str],
        others: Sequence[Any],
        *,
        progress: bool = False,
        **options: Any,
    ) -> ScoreReport:
        """Score ``predictions`` against ``others`` (references or sources) with ``options``."""
        allowed = {o.name for o in self.options} | ({"model", "device"} if self.uses_model else set())
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise ValueError(
                f"{self.name} does not take option(s) {unknown}; valid: {sorted(allowed)}."
            )
        return self.runner(list(predictions), list(others), progress=progress, **options)


# --------------------------------------------------------------------------------------------
# Helpers for the runners.


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _floats(values: Sequence[Any]) -> list[float]:
    return [float(v) for v in values]


def _per_example_report(metric: str, columns: Mapping[str, Sequence[Any]], signature: str, main: str) -> ScoreReport:
    """Report whose aggregates are the means of the per-example columns (metrics defined per text)."""
    per_example = {key: _floats(values) for key, values in columns.items()}
    aggregate = {key: _mean(values) for key, values in per_example.items()}
    return ScoreReport(metric, per_example, aggregate, signature, main)


# --------------------------------------------------------------------------------------------
# The table. Runners import the library lazily: `nlgmetrics --help` must not load torch.

_SPECS: dict[str, MetricSpec] = {}


def register(spec: MetricSpec) -> MetricSpec:
    _SPECS[spec.name] = spec
    return spec


def metric_names() -> list[str]:
    """Names of every metric, in the order of the design table."""
    return list(_SPECS)


def get_spec(name: str) -> MetricSpec:
    """The spec of ``name`` (clear error listing the valid names)."""
    if name not in _SPECS:
        raise ValueError(f"Unknown metric {name!r}; choose from {list(_SPECS)}.")
    return _SPECS[name]


# --------------------------------------------------------------------------------------------
# The six metrics. Library calls are imported inside the runners: `nlgmetrics --help` must not
# load torch. Library functions take (documents, summaries) for reference-free metrics; the table
# always passes (predictions, others), so the runners swap the order.

def _engine_options(token_budget: int | None = 8192, token_budget_help: str = "") -> tuple[OptionSpec, ...]:
    """The engine's options; ``token_budget`` is each metric's own default (InfoLM's depends on the device)."""
    return (
        OptionSpec("dtype", "str", None, "weights dtype: float32 (default on CPU), bfloat16 or float16 (GPU)",
                   (None, "float32", "bfloat16", "float16")),
        OptionSpec("batch_size", "int", None, "at most this many sequences per forward pass (numbers unchanged)"),
        OptionSpec("token_budget", "int", token_budget,
                   "padded tokens per forward pass (numbers unchanged)" + token_budget_help),
    )


_ENGINE_OPTIONS = _engine_options()


def _run_rouge(predictions: list[str], references: list[Any], *, progress: bool, **options: Any) -> ScoreReport:
    from nlgmetrics.rouge import rouge_scores

    result = rouge_scores(predictions, references, progress=progress, **options)
    per_example: dict[str, list[float]] = {}
    aggregate: dict[str, float] = {}
    for rouge_type, measures in result["scores"].items():
        for measure, values in measures.items():
            per_example[f"{rouge_type}_{measure}"] = _floats(values)
            stats = result.get("aggregate", {}).get(rouge_type, {}).get(measure)
            if stats is None:
                aggregate[f"{rouge_type}_{measure}"] = _mean(values)
            else:
                aggregate[f"{rouge_type}_{measure}"] = float(stats["mean"])
                aggregate[f"{rouge_type}_{measure}_low"] = float(stats["low"])
                aggregate[f"{rouge_type}_{measure}_high"] = float(stats["high"])
    types = list(result["scores"])
    main_type = "rougeL" if "rougeL" in types else types[0]
    return ScoreReport("rouge_family", per_example, aggregate, result["signature"], f"{main_type}_fmeasure")


def _run_bleu(predictions: list[str], references: list[Any], *, progress: bool, **options: Any) -> ScoreReport:
    from nlgmetrics.bleu import corpus_bleu, sentence_bleu_batch

    sentence_scores = options.pop("sentence_scores", True)
    result = corpus_bleu(predictions, references, **options)
    aggregate = {"score": float(result.score), "bp": float(result.bp)}
    for order, precision in enumerate(result.precisions, start=1):
        aggregate[f"precision_{order}"] = float(precision)
    aggregate["sys_len"] = float(result.sys_len)
    aggregate["ref_len"] = float(result.ref_len)
    per_example: dict[str, list[float]] = {}
    if sentence_scores:
        # Sentence BLEU of each example always uses effective order (sacrebleu's sentence default):
        # without it, any sentence shorter than max_ngram_order scores 0. The corpus-level
        # `effective_order` option must not leak into it.
        sentence_options = {**options, "effective_order": True}
        per_example["sentence_bleu"] = [
            float(r.score) for r in sentence_bleu_batch(predictions, references, **sentence_options)
        ]
    return ScoreReport("bleu", per_example, aggregate, result.signature, "score")


def _run_infolm(predictions: list[str], references: list[Any], *, progress: bool, **options: Any) -> ScoreReport:
    from nlgmetrics.infolm import infolm

    result = infolm(predictions, references, progress=progress, **options)
    report = ScoreReport(
        "infolm", {"infolm": _floats(result.scores)}, {"infolm": float(result.mean)}, result.signature, "infolm"
    )
    return report


def _run_shannon(predictions: list[str], sources: list[str], *, progress: bool, **options: Any) -> ScoreReport:
    from nlgmetrics.shannon import shannon_score

    result = shannon_score(sources, predictions, progress=progress, **options)
    columns = {
        name: getattr(result, name)
        for name in ("shannon_score", "information_difference", "blanc_shannon", "ll_base", "ll_help", "ll_full")
    }
    return _per_example_report("shannon_score", columns, result.signature, "shannon_score")


_BLANC_TUNE_ONLY = ("finetune_epochs", "p_mask", "learning_rate", "seed")


def _run_blanc(predictions: list[str], sources: list[str], *, progress: bool, **options: Any) -> ScoreReport:
    variant = options.pop("variant", "help")
    if variant == "help":
        from nlgmetrics.blanc import blanc_help as function

        tune_only = sorted(set(options) & set(_BLANC_TUNE_ONLY))
        if tune_only:
            raise ValueError(f"blanc options {tune_only} apply to variant='tune' only; set variant=tune.")
    else:
        from nlgmetrics.blanc_tune import blanc_tune as function
    result = function(sources, predictions, progress=progress, **options)
    return _per_example_report("blanc", {"blanc": result.scores}, result.signature, "blanc")


def _run_fflm(predictions: list[str], sources: list[str], *, progress: bool, **options: Any) -> ScoreReport:
    from nlgmetrics.fflm import fflm

    result = fflm(sources, predictions, progress=progress, **options)
    columns = {
        name: getattr(result, name)
        for name in ("fflm", "delta_prior_summary", "delta_prior_document", "delta_cond_summary")
    }
    return _per_example_report("fflm", columns, result.signature, "fflm")



register(MetricSpec(
    name="rouge_family",
    title="ROUGE family (ROUGE-N, L, Lsum, W, S, SU)",
    second_input="references",
    main_score="rougeL_fmeasure",
    higher_is_better=True,
    uses_model=False,
    options=(
        OptionSpec("rouge_types", "str_list", ["rouge1", "rouge2", "rougeL", "rougeLsum"],
                   "comma-separated: rouge1..rougeN, rougeL, rougeLsum, rougeW, rougeS*, rougeS4, rougeSU*"),
        OptionSpec("use_stemmer", "bool", False, "Porter stemming of words longer than 3 characters"),
        OptionSpec("remove_stopwords", "bool", False, "drop ROUGE-1.5.5's stopwords"),
        OptionSpec("multi_ref", "str", "best", "several references: best F, or ROUGE-1.5.5 averaging",
                   ("best", "average")),
        OptionSpec("beta", "float", 1.0, "F-beta weight of recall"),
        OptionSpec("rouge_w_weight", "float", 1.2, "ROUGE-W weight w of f(k)=k^w"),
        OptionSpec("n_bootstrap", "int", 1000, "bootstrap resamples for the confidence interval"),
    ),
    runner=_run_rouge,
    description="N-gram, longest-common-subsequence and skip-bigram overlap with the reference(s), "
    "with rouge-score / ROUGE-1.5.5 numbers. Scores in [0, 1].",
))

register(MetricSpec(
    name="bleu",
    title="BLEU",
    second_input="references",
    main_score="score",
    higher_is_better=True,
    uses_model=False,
    options=(
        OptionSpec("tokenize", "str", "13a", "tokenizer", ("13a", "intl", "char", "none", "zh")),
        OptionSpec("smooth_method", "str", "exp", "smoothing", ("exp", "floor", "add-k", "none")),
        OptionSpec("smooth_value", "float", None, "value for floor (0.1) / add-k (1) smoothing"),
        OptionSpec("lowercase", "bool", False, "lowercase before scoring"),
        OptionSpec("max_ngram_order", "int", 4, "largest n-gram order"),
        OptionSpec("effective_order", "bool", False, "corpus BLEU: stop the geometric mean at the highest order with n-grams (sentence BLEU always does)"),
        OptionSpec("sentence_scores", "bool", True, "also report sentence BLEU per example (effective order)"),
    ),
    runner=_run_bleu,
    description="Corpus BLEU (Papineni et al. 2002) with sacrebleu's numbers; score in [0, 100] "
    "(per example: sentence BLEU).",
))

register(MetricSpec(
    name="infolm",
    title="InfoLM",
    second_input="references",
    main_score="infolm",
    higher_is_better=False,
    uses_model=True,
    default_model="bert-base-uncased",
    options=(
        OptionSpec("information_measure", "str", "fisher_rao_distance", "distance between the bags of distributions",
                   INFORMATION_MEASURES),
        OptionSpec("temperature", "float", 0.25, "softmax temperature of the LM"),
        OptionSpec("idf", "bool", True, "weight positions by idf of the references"),
        OptionSpec("alpha", "float", None, "alpha of the alpha / AB / Renyi divergences"),
        OptionSpec("beta", "float", None, "beta of the beta / AB divergences"),
        OptionSpec("max_length", "int", None, "tokens per text (default: the model's positions)"),
        *_engine_options(None, "; default 2048 on CPU (memory), 8192 on a GPU"),
    ),
    runner=_run_infolm,
    description="Distance between the 'bags of distributions' a masked (or causal) LM predicts for the "
    "prediction and the reference (Colombo et al. 2022). Lower is more similar.",
))

register(MetricSpec(
    name="shannon_score",
    title="Shannon score",
    second_input="sources",
    main_score="shannon_score",
    higher_is_better=True,
    uses_model=True,
    default_model="gpt2",
    options=(
        OptionSpec("num_upstream", "int", 0, "preceding sentences given as context"),
        OptionSpec("splitter", "str", "pysbd", "sentence splitter", ("pysbd", "punkt")),
        *_ENGINE_OPTIONS,
    ),
    runner=_run_shannon,
    description="How much the summary helps a causal LM predict the document (Egan et al. 2022): "
    "Shannon score, information difference and BLANC-Shannon.",
))

register(MetricSpec(
    name="blanc",
    title="BLANC",
    second_input="sources",
    main_score="blanc",
    higher_is_better=True,
    uses_model=True,
    default_model="bert-base-uncased",
    options=(
        OptionSpec("variant", "str", "help", "BLANC-help or BLANC-tune", ("help", "tune")),
        OptionSpec("measure", "str", "relative", "relative or improve", ("relative", "improve")),
        OptionSpec("gap", "int", 2, "distance between masked tokens"),
        OptionSpec("gap_mask", "int", 1, "tokens masked per gap"),
        OptionSpec("finetune_epochs", "int", 10, "BLANC-tune: epochs of fine-tuning on the summary"),
        OptionSpec("p_mask", "float", 0.15, "BLANC-tune: probability of masking a token for tuning"),
        OptionSpec("learning_rate", "float", 5e-5, "BLANC-tune: learning rate"),
        OptionSpec("seed", "int", 0, "BLANC-tune: random seed of the tuning"),
        *_ENGINE_OPTIONS,
    ),
    runner=_run_blanc,
    description="How much the summary helps a masked LM fill in the blanks of the document "
    "(Vasilyev et al. 2020).",
))

register(MetricSpec(
    name="fflm",
    title="FFLM",
    second_input="sources",
    main_score="fflm",
    higher_is_better=True,
    uses_model=True,
    default_model="HuggingFaceTB/SmolLM2-1.7B",
    options=(
        OptionSpec("weights", "float_list", [0.25, 0.25, 0.5],
                   "a,b,d for Delta_prior(Y), Delta_prior(X), Delta_cond(Y) (sum to 1)"),
        OptionSpec("max_length", "int", 2048, "tokens per sequence"),
        *_ENGINE_OPTIONS,
    ),
    runner=_run_fflm,
    description="Faithfulness of a summary from probability changes of a causal LM (Jia et al. 2023). "
    "Higher is more faithful.",
))
