"""One table of the metrics for the command line, the Gradio demos and the Trainer hook.

Each :class:`MetricSpec` says what a metric *is* to a front end: its name and title, what it reads
besides the predictions (``"references"`` or ``"sources"``), which library function computes it
(an import path, resolved lazily so that ``nlgmetrics --help`` does not load torch), and which
options the command line and the demos offer (type, help text, choices). Nothing else is stated
here:

- every option default is read from the library function's signature (:meth:`MetricSpec.default`),
  so each default is defined once, in the library;
- the main score, its direction and range come from the result
  (:class:`~nlgmetrics.core.result.MetricResult`: ``result.main``, ``result.higher_is_better``,
  ``result.column(name)``);
- ``spec.run(predictions, others, **options)`` is the same call for every metric,
  ``function(predictions, **{spec.second_input: others}, **options)``, and returns the library's
  result unchanged.

>>> spec = get_spec("bleu")
>>> spec.second_input
'references'
>>> result = spec.run(["the cat sat on the mat"], [["the cat sat on the mat"]])
>>> result.main, round(result.main_score, 6), result.higher_is_better
('bleu', 100.0, True)
"""

from __future__ import annotations

import functools
import importlib
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from nlgmetrics.core.result import MetricResult

SecondInput = Literal["references", "sources"]
OptionKind = Literal["str", "int", "float", "bool", "str_list", "float_list", "token"]


class _FromLibrary:
    """Marker: the default of an option not yet read from the library function's signature."""

    def __repr__(self) -> str:
        return "<library default>"


FROM_LIBRARY: Any = _FromLibrary()

#: What the front ends pass to every metric; a metric without a progress bar (BLEU, ROUGE when it
#: has none) simply does not receive it.
FRONT_END_OPTIONS = frozenset({"progress"})


@functools.cache
def resolve(path: str) -> Any:
    """Import ``"package.module:attribute"`` (lazily: importing an LM metric imports torch)."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


_NONE_WORDS = {"none", "null"}


@dataclass(frozen=True)
class OptionSpec:
    """One user-facing option of a metric (a keyword of its library function).

    ``choices``: a tuple, the import path of a library constant (``"nlgmetrics.bleu:SMOOTH_METHODS"``),
    or None (free value; a ``Literal`` annotation in the library signature still gives the choices).
    ``default`` is filled from the library signature by :meth:`MetricSpec.option`.
    """

    name: str
    kind: OptionKind
    help: str
    choices: tuple[Any, ...] | str | None = None
    default: Any = FROM_LIBRARY
    #: whether None is a valid value (``none`` on the command line): filled from the library
    #: signature (a None default, or an annotation admitting None) by :meth:`MetricSpec.option`.
    nullable: bool = False

    def allowed(self) -> tuple[Any, ...] | None:
        """The valid values, or None when any value of the right type is allowed."""
        if isinstance(self.choices, str):
            return tuple(resolve(self.choices))
        return self.choices

    def parse(self, text: str) -> Any:
        """Convert a command-line string to this option's type (clear error when it does not fit).

        ``none``/``null`` is None where the library accepts None.
        """
        stripped = text.strip()
        if stripped.lower() in _NONE_WORDS and (self.nullable or self.default is None):
            return None
        if self.kind == "bool":
            lowered = stripped.lower()
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
        value: Any
        if self.kind == "str":
            value = text
        elif self.kind == "token":  # a token id (digits) or a token string
            value = int(stripped) if stripped.isdigit() else text
        else:
            try:
                value = int(stripped) if self.kind == "int" else float(stripped)
            except ValueError:
                raise ValueError(f"Option {self.name}={text!r}: expected a number ({self.kind}).") from None
        allowed = self.allowed()
        if allowed is not None and value not in allowed:
            shown = [c for c in allowed if c is not None]
            raise ValueError(f"Option {self.name}={value!r}: choose one of {shown}.")
        return value


def _option_parameters(function: Callable[..., Any]) -> tuple[dict[str, inspect.Parameter], bool]:
    """The keyword options of a library function (everything after the two inputs), and whether it
    also takes ``**options`` (which it forwards elsewhere)."""
    parameters = list(inspect.signature(function).parameters.values())
    options = {
        p.name: p
        for p in parameters[2:]
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    forwards = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    return options, forwards


def _annotation(function: Callable[..., Any], name: str) -> Any:
    """The evaluated annotation of parameter ``name`` (or ``"return"``), None when it cannot be
    evaluated here (names only a type checker imports): one annotation at a time, so that one
    such name elsewhere in the signature does not hide the others."""
    function = inspect.unwrap(function)
    hint = getattr(function, "__annotations__", {}).get(name)
    if not isinstance(hint, str):
        return hint

    class _One:  # typing resolves a string annotation of an object that holds just this one
        __annotations__ = {name: hint}

    try:
        return typing.get_type_hints(_One, globalns=getattr(function, "__globals__", {}))[name]
    except Exception:
        return None


def _literal_choices(function: Callable[..., Any], name: str) -> tuple[Any, ...] | None:
    """The values of a ``Literal[...]`` (or ``Literal[...] | None``) annotation, if any."""
    hint = _annotation(function, name)
    if typing.get_origin(hint) is Literal:
        return typing.get_args(hint)
    literals = [a for a in typing.get_args(hint) if typing.get_origin(a) is Literal]
    values = tuple(v for a in literals for v in typing.get_args(a))
    if values and type(None) in typing.get_args(hint):
        values = (None, *values)
    return values or None


@dataclass(frozen=True)
class MetricSpec:
    """What one metric is to the front ends (see the module docstring)."""

    name: str
    title: str
    second_input: SecondInput
    #: ``"module:function"``: the library call, ``function(predictions, <second_input>=..., **options)``.
    function: str
    options: tuple[OptionSpec, ...]
    description: str
    #: Library functions the call forwards its ``**options`` to (BLANC: its two variants); their
    #: keywords are options of this metric too, with their defaults.
    forwards_to: tuple[str, ...] = ()

    # ---- the library function and its signature

    def library_function(self) -> Callable[..., MetricResult]:
        return resolve(self.function)

    def parameters(self) -> dict[str, inspect.Parameter]:
        """Every keyword option of the library call (with the forwarded functions' ones)."""
        own, forwards = _option_parameters(self.library_function())
        merged = dict(own)
        if forwards:
            for path in self.forwards_to:
                for name, parameter in _option_parameters(resolve(path))[0].items():
                    merged.setdefault(name, parameter)
        return merged

    def accepted_options(self) -> frozenset[str]:
        return frozenset(self.parameters())

    def default(self, name: str) -> Any:
        """The library's default of option ``name`` (read from the signature, never restated).

        For a call that forwards its options (BLANC), the first forwarded function taking the
        option gives it: the default variant's, else the one variant that has it.
        """
        parameters = self.parameters()
        if name not in parameters:
            raise ValueError(self._unknown_option_message([name]))
        default = parameters[name].default
        return None if default is inspect.Parameter.empty else default

    @property
    def uses_model(self) -> bool:
        """Whether the metric runs a language model (its library call takes ``model``)."""
        return "model" in self.parameters()

    @property
    def default_model(self) -> str | None:
        return self.default("model") if self.uses_model else None

    def result_class(self) -> type[MetricResult] | None:
        """The :class:`MetricResult` subclass the library call returns (its return annotation)."""
        hint = _annotation(self.library_function(), "return")
        return hint if isinstance(hint, type) and issubclass(hint, MetricResult) else None

    # ---- the options offered by the command line and the demos

    def option(self, name: str) -> OptionSpec:
        """Option ``name`` with its library default (clear error listing the offered options)."""
        for option in self.options:
            if option.name == name:
                choices = option.choices
                if choices is None:
                    for function in (self.library_function(), *map(resolve, self.forwards_to)):
                        choices = _literal_choices(function, name)
                        if choices is not None:
                            break
                default = self.default(name)
                return replace(option, default=default, choices=choices,
                               nullable=default is None or self._admits_none(name))
        extra = " (plus model, device)" if self.uses_model else ""
        raise ValueError(
            f"{self.name} has no option {name!r}; its options are {[o.name for o in self.options]}{extra}."
        )

    def _admits_none(self, name: str) -> bool:
        for function in (self.library_function(), *map(resolve, self.forwards_to)):
            hint = _annotation(function, name)
            if hint is not None and type(None) in typing.get_args(hint):
                return True
        return False

    def resolved_options(self) -> tuple[OptionSpec, ...]:
        """Every offered option with its library default and choices."""
        return tuple(self.option(option.name) for option in self.options)

    # ---- the call

    def _unknown_option_message(self, unknown: Sequence[str]) -> str:
        return f"{self.name} does not take option(s) {sorted(unknown)}; valid: {sorted(self.accepted_options())}."

    def run(self, predictions: Sequence[str], others: Sequence[Any], **options: Any) -> MetricResult:
        """Score ``predictions`` against ``others`` (references or sources): the library call
        ``function(predictions, **{second_input: others}, **options)``, its result unchanged.

        ``progress`` is accepted for every metric and passed only where the library draws a bar.
        """
        accepted = self.accepted_options()
        options = {k: v for k, v in options.items() if k in accepted or k not in FRONT_END_OPTIONS}
        unknown = [name for name in options if name not in accepted]
        if unknown:
            raise ValueError(self._unknown_option_message(unknown))
        result = self.library_function()(predictions, **{self.second_input: others}, **options)
        if not isinstance(result, MetricResult):
            raise TypeError(
                f"{self.function} returned {type(result).__name__}, not a MetricResult; this is a bug "
                f"in nlgmetrics, please report it."
            )
        return result


# --------------------------------------------------------------------------------------------
# The table.

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


def all_specs() -> Mapping[str, MetricSpec]:
    return dict(_SPECS)


#: The model options every LM metric shares (same names and meaning everywhere).
_ENGINE_OPTIONS = (
    OptionSpec("max_length", "int", "tokens per sequence (none: the model's context; capped at it)"),
    OptionSpec("dtype", "str", "weights dtype: float32 (CPU default), bfloat16 or float16 (GPU)",
               (None, "float32", "bfloat16", "float16")),
    OptionSpec("revision", "str", "Hub revision (branch, tag or commit) of the model"),
    OptionSpec("batch_size", "int", "at most this many sequences per forward pass (numbers unchanged)"),
    OptionSpec("token_budget", "int", "padded tokens per forward pass (numbers unchanged)"),
)

register(MetricSpec(
    name="rouge_family",
    title="ROUGE family (ROUGE-N, L, Lsum, W, S, SU)",
    second_input="references",
    function="nlgmetrics.rouge:rouge_family",
    options=(
        OptionSpec("rouge_types", "str_list",
                   "comma-separated: rouge1..rougeN, rougeL, rougeLsum, rougeW, rougeS*, rougeS4, rougeSU*; "
                   "the first is the main score"),
        OptionSpec("tokenizer", "str",
                   "word splitting: default (rouge-score, ASCII only), whitespace (pre-tokenized), unicode "
                   "(any script written with spaces), cjk (Chinese/Japanese characters), char (every letter)",
                   "nlgmetrics.rouge:TOKENIZER_NAMES"),
        OptionSpec("use_stemmer", "bool", "Porter stemming of words longer than 3 characters"),
        OptionSpec("remove_stopwords", "bool", "drop ROUGE-1.5.5's stopwords"),
        OptionSpec("multi_ref", "str", "several references: best F, or ROUGE-1.5.5 averaging",
                   "nlgmetrics.rouge:MULTI_REF_MODES"),
        OptionSpec("beta", "float", "F-beta weight of recall"),
        OptionSpec("rouge_w_weight", "float", "ROUGE-W weight w of f(k)=k^w"),
        OptionSpec("n_bootstrap", "int", "bootstrap resamples for the confidence interval"),
    ),
    description="N-gram, longest-common-subsequence and skip-bigram overlap with the reference(s), "
    "with rouge-score / ROUGE-1.5.5 numbers.",
))

register(MetricSpec(
    name="bleu",
    title="BLEU",
    second_input="references",
    function="nlgmetrics.bleu:bleu",
    options=(
        OptionSpec("tokenize", "str", "tokenizer", "nlgmetrics.bleu:TOKENIZER_NAMES"),
        OptionSpec("smooth_method", "str", "smoothing", "nlgmetrics.bleu:SMOOTH_METHODS"),
        OptionSpec("smooth_value", "float", "value for floor / add-k smoothing (none: the method's own)"),
        OptionSpec("lowercase", "bool", "lowercase before scoring"),
        OptionSpec("max_ngram_order", "int", "largest n-gram order"),
        OptionSpec("effective_order", "bool",
                   "corpus BLEU: stop the geometric mean at the highest order with n-grams "
                   "(sentence BLEU always does)"),
    ),
    description="Corpus BLEU (Papineni et al. 2002) with sacrebleu's numbers; per example: sentence BLEU.",
))

register(MetricSpec(
    name="chrf",
    title="chrF / chrF++",
    second_input="references",
    function="nlgmetrics.chrf:chrf",
    options=(
        OptionSpec("char_order", "int", "largest character n-gram order"),
        OptionSpec("word_order", "int", "largest word n-gram order (0: chrF, 2: chrF++)"),
        OptionSpec("beta", "float", "recall is beta times as important as precision"),
        OptionSpec("lowercase", "bool", "lowercase before scoring"),
        OptionSpec("whitespace", "bool", "keep whitespace in character n-grams"),
        OptionSpec("eps_smoothing", "bool",
                   "mean of per-order F-scores with epsilon smoothing (chrF++.py) instead of "
                   "sacrebleu's effective-order average"),
    ),
    description="Corpus chrF (Popović 2015) / chrF++ (word_order=2, Popović 2017) with sacrebleu's "
    "numbers; per example: sentence chrF.",
))

register(MetricSpec(
    name="ter",
    title="TER",
    second_input="references",
    function="nlgmetrics.ter:ter",
    options=(
        OptionSpec("normalized", "bool", "Tercom normalisation (punctuation split off, XML entities)"),
        OptionSpec("no_punct", "bool", "remove punctuation"),
        OptionSpec("asian_support", "bool", "CJK characters as words / CJK punctuation removed"),
        OptionSpec("case_sensitive", "bool", "keep case (default: lowercase, as Tercom)"),
        OptionSpec("normalize_references_twice", "bool",
                   "with normalized: normalise references twice, as sacrebleu 2.x (its numbers)"),
    ),
    description="Translation edit rate (Snover et al. 2006) with sacrebleu's numbers, lower is better; "
    "per example: sentence TER.",
))

register(MetricSpec(
    name="infolm",
    title="InfoLM",
    second_input="references",
    function="nlgmetrics.infolm:infolm",
    options=(
        OptionSpec("information_measure", "str", "distance between the bags of distributions",
                   "nlgmetrics.core.measure_names:INFORMATION_MEASURES"),
        OptionSpec("temperature", "float", "softmax temperature of the LM"),
        OptionSpec("idf", "bool", "weight positions by idf of the references"),
        OptionSpec("alpha", "float", "alpha of the alpha / AB / Renyi divergences"),
        OptionSpec("beta", "float", "beta of the beta / AB divergences"),
        *_ENGINE_OPTIONS,
    ),
    description="Distance between the 'bags of distributions' a masked (or causal) LM predicts for the "
    "prediction and the reference (Colombo et al. 2022).",
))

register(MetricSpec(
    name="shannon_score",
    title="Shannon score",
    second_input="sources",
    function="nlgmetrics.shannon:shannon_score",
    options=(
        OptionSpec("num_upstream", "int", "preceding sentences given as context"),
        OptionSpec("splitter", "str", "sentence splitter: pysbd (none: the default) or punkt (needs nltk data)"),
        OptionSpec("start_token", "token", "first token of every prompt: an id or a token string"),
        *_ENGINE_OPTIONS,
    ),
    description="How much the summary helps a causal LM predict the document (Egan et al. 2022): "
    "Shannon score, information difference and BLANC-Shannon.",
))

register(MetricSpec(
    name="blanc",
    title="BLANC",
    second_input="sources",
    function="nlgmetrics.blanc:blanc",
    forwards_to=("nlgmetrics.blanc:blanc_help", "nlgmetrics.blanc:blanc_tune"),
    options=(
        OptionSpec("variant", "str", "BLANC-help or BLANC-tune"),
        OptionSpec("measure", "str", "relative or improve"),
        OptionSpec("gap", "int", "distance between masked tokens"),
        OptionSpec("gap_mask", "int", "tokens masked per gap"),
        OptionSpec("finetune_epochs", "int", "BLANC-tune: epochs of fine-tuning on the summary"),
        OptionSpec("p_mask", "float", "BLANC-tune: probability of masking a token for tuning"),
        OptionSpec("learning_rate", "float", "BLANC-tune: learning rate"),
        OptionSpec("seed", "int", "BLANC-tune: random seed of the tuning"),
        *_ENGINE_OPTIONS,
    ),
    description="How much the summary helps a masked LM fill in the blanks of the document "
    "(Vasilyev et al. 2020).",
))

register(MetricSpec(
    name="fflm",
    title="FFLM",
    second_input="sources",
    function="nlgmetrics.fflm:fflm",
    options=(
        OptionSpec("weights", "float_list",
                   "a,b,d for Delta_prior(Y), Delta_prior(X), Delta_cond(Y) (sum to 1)"),
        OptionSpec("separator", "str", "text between condition and target"),
        OptionSpec("start_token", "token", "first token of every sequence: an id or a token string"),
        *_ENGINE_OPTIONS,
    ),
    description="Faithfulness of a summary from probability changes of a causal LM (Jia et al. 2023).",
))
