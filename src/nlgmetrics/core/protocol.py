"""The metric spec: what one metric *is*, declared once, for every face that runs it.

In the spirit of sacrebleu's ``metrics/base.py``, but as plain data: each metric package declares
one :class:`MetricSpec` (a frozen dataclass: a declaration the front ends read, not a
:class:`typing.Protocol` a metric implements; ``MetricProtocol`` is its former name, kept as an
alias) as ``PROTOCOL`` in its own ``protocol.py`` (e.g. :mod:`nlgmetrics.bleu.protocol`), and
:mod:`nlgmetrics.registry` is the list of them. The command line, the evaluate modules, the
Trainer hook, ``compare``, the demos and the meta-evaluation read the spec and hold no code of
their own for any one metric.

Layout: :class:`MetricSpec` (its fields, in its docstring); :class:`Option` and :class:`Range` (an
option and its values; the LM metrics share :data:`MODEL_OPTIONS`); :class:`Resampling` (how
``compare`` resamples a corpus-level score); :class:`EvaluateFace` (how an evaluate module answers
to its counterpart); :func:`resolve` and :func:`read_citation`.

Nothing here imports torch or any metric package.
"""

from __future__ import annotations

import functools
import importlib
import importlib.resources
import inspect
import math
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np

    from nlgmetrics.core.result import Column, MetricResult

SecondInput = Literal["references", "sources"]
OptionKind = Literal["str", "int", "float", "bool", "str_list", "float_list", "token"]


class _FromLibrary:
    """Marker: the default of an option not yet read from the library function's signature."""

    def __repr__(self) -> str:
        return "<library default>"


FROM_LIBRARY: Any = _FromLibrary()

#: What the front ends pass to every metric; a metric without a progress bar (BLEU) simply does
#: not receive it.
FRONT_END_OPTIONS = frozenset({"progress"})


def read_citation(package: str, name: str = "citation.bib") -> str:
    """The BibTeX a package ships beside its protocol (``<package>/citation.bib``): citations are
    data, kept in a file of their own.

    >>> read_citation("nlgmetrics.core", "sacrebleu.bib").splitlines()[0]
    '@inproceedings{post-2018-call,'
    """
    return importlib.resources.files(package).joinpath(name).read_text(encoding="utf-8")


def read_description(package: str) -> str:
    """The description a package ships beside its protocol (``<package>/description.md``), shown by
    the evaluate module, the demo and the command line: prose is data too, kept in a file of its own."""
    return read_citation(package, "description.md")


#: sacrebleu's citation (Post, 2018), which every metric with sacrebleu's numbers cites after its own.
SACREBLEU_CITATION = read_citation(__package__, "sacrebleu.bib")


@functools.cache
def resolve(path: str) -> Any:
    """Import ``"package.module:attribute"`` (lazily: importing an LM metric imports torch).

    >>> resolve("math:pi") == math.pi
    True
    >>> resolve("math.pi")
    Traceback (most recent call last):
    ...
    ValueError: 'math.pi' is not an import path 'package.module:attribute'.
    """
    module, colon, attribute = path.partition(":")
    if not colon or not module or not attribute:
        raise ValueError(f"{path!r} is not an import path 'package.module:attribute'.")
    return getattr(importlib.import_module(module), attribute)


_NONE_WORDS = {"none", "null"}
_BOOL_WORDS = {**dict.fromkeys(("1", "true", "yes", "on"), True),
               **dict.fromkeys(("0", "false", "no", "off"), False)}


@dataclass(frozen=True)
class Range:
    """The values a numeric option may take: ``low`` to ``high`` (``math.inf`` when unbounded),
    each end included unless ``open_low`` / ``open_high``.

    >>> Range(0, math.inf, open_low=True).text(), Range(1, 5, open_high=True).text()
    ('(0, inf)', '[1, 5)')
    """

    low: float = -math.inf
    high: float = math.inf
    open_low: bool = False
    open_high: bool = False

    def text(self) -> str:
        """The range as an interval, e.g. ``[1, inf)``."""
        low = "(" if self.open_low or math.isinf(self.low) else "["
        high = ")" if self.open_high or math.isinf(self.high) else "]"
        return f"{low}{self.low:g}, {self.high:g}{high}"


@dataclass(frozen=True)
class Option:
    """One option of a metric: a keyword of its library function.

    ``choices``: a tuple, the import path of a library constant (``"nlgmetrics.bleu:SMOOTH_METHODS"``),
    or None (free value; a ``Literal`` annotation in the library signature still gives the choices).
    ``range``: the numbers the library accepts (it checks them; the front ends show them).
    ``signature_key``: the key of the result's signature that records the option, where one does
    (options that change no number, such as ``batch_size``, write none).
    ``words``: strings a number option also takes as they are (``token_budget="auto"``).
    ``offered``: whether the command line's ``--option`` and the demos' widgets offer it
    (``model``, ``device`` and ``progress`` have flags and boxes of their own; ``cache_dir`` a flag
    and no box).
    ``default`` and ``nullable`` are filled from the library signature by :meth:`MetricSpec.option`.
    """

    name: str
    kind: OptionKind
    help: str
    choices: tuple[Any, ...] | str | None = None
    range: Range | None = None
    signature_key: str | None = None
    offered: bool = True
    default: Any = FROM_LIBRARY
    words: tuple[str, ...] = ()
    #: whether None is a valid value (``none`` on the command line): a None default, or an
    #: annotation admitting None.
    nullable: bool = False

    def allowed(self) -> tuple[Any, ...] | None:
        """The valid values, or None when any value of the right type is allowed."""
        if isinstance(self.choices, str):
            return tuple(resolve(self.choices))
        return self.choices

    def parse(self, text: str) -> Any:
        """Convert a command-line string to this option's type (clear error when it does not fit).

        ``none``/``null`` is None where the library accepts None.

        >>> Option("lowercase", "bool", "lowercase").parse("yes"), Option("k", "float_list", "k").parse("1, 2")
        (True, [1.0, 2.0])
        >>> Option("token_budget", "int", "tokens", range=Range(1), words=("auto",)).parse("auto")
        'auto'
        """
        stripped = text.strip()
        if stripped.lower() in _NONE_WORDS and (self.nullable or self.default is None):
            return None
        if stripped in self.words:
            return stripped
        if self.kind == "bool":
            if stripped.lower() not in _BOOL_WORDS:
                raise ValueError(f"Option {self.name}={text!r}: expected true/false.")
            return _BOOL_WORDS[stripped.lower()]
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
        # a str as given; a token: an id (digits) or a token string; else a number
        value: Any = int(stripped) if self.kind == "token" and stripped.isdigit() else text
        if self.kind in {"int", "float"}:
            try:
                value = int(stripped) if self.kind == "int" else float(stripped)
            except ValueError:
                raise ValueError(f"Option {self.name}={text!r}: expected a number ({self.kind}).") from None
        allowed = self.allowed()
        if allowed is not None and value not in allowed:
            shown = [c for c in allowed if c is not None]
            raise ValueError(f"Option {self.name}={value!r}: choose one of {shown}.")
        return value


#: The switch of the text metrics that lowercase before scoring (BLEU, chrF): one name and signature key.
LOWERCASE = Option("lowercase", "bool", "lowercase before scoring", signature_key="case")

#: The options every LM metric shares: the same names, meaning and signature keys everywhere.
#: Declared once; each LM metric's protocol lists them after its own.
MODEL_OPTIONS: tuple[Option, ...] = (
    Option("model", "str", "Hub id, local directory, or the offline alias smollm2-135m",
           signature_key="model", offered=False),
    Option("model_tokenizer", "str", "the Hugging Face tokenizer of a model instance (default: its own)",
           signature_key="tokenizer", offered=False),
    Option("device", "str", "torch device (default: cuda when available, else cpu)", offered=False),
    # A model bigger than one device: passed to from_pretrained (engine.devices.check_placement).
    # No signature key: where each module runs does not change a number. Not offered as --option
    # or a demo widget: a dict does not fit a box.
    Option("device_map", "str", "where from_pretrained puts each module: 'auto' or a {module: device} dict "
           "('cpu', 'cuda:0', 'disk'); numbers unchanged", offered=False),
    Option("max_memory", "str", "the most each device may take under device_map='auto', e.g. "
           "{0: '20GiB', 'cpu': '60GiB'}", offered=False),
    Option("offload_folder", "str", "folder for weights device_map sends to the disk (when they must be "
           "re-saved)", offered=False),
    Option("max_length", "int", "tokens per sequence (none: the model's context; capped at it)",
           range=Range(1), signature_key="max_length"),
    Option("dtype", "str", "weights dtype: float32 (CPU default), bfloat16 or float16 (GPU)",
           (None, "float32", "bfloat16", "float16"), signature_key="dtype"),
    Option("revision", "str", "Hub revision (branch, tag or commit) of the model", signature_key="revision"),
    Option("batch_size", "int", "at most this many sequences per forward pass (numbers unchanged)",
           range=Range(1)),
    Option("token_budget", "int", "padded tokens per forward pass, or auto: the largest that fits the free "
           "memory (numbers unchanged)", range=Range(1), words=("auto",)),
    # No signature key: a stored value is only ever read under the key of everything that made it,
    # so the store saves time and never changes a number. Not offered as --option or a demo widget:
    # the command line has --cache-dir for every LM metric at once, and a demo server's folders are
    # not its visitors' to fill.
    Option("cache_dir", "str", "folder of the store that keeps what the model computed, reused by later "
           "calls and processes (default: $NLGMETRICS_CACHE_DIR; none: no store; numbers unchanged)",
           offered=False),
    Option("progress", "bool", "show a progress bar", offered=False),
)


@dataclass(frozen=True)
class Resampling:
    """How ``compare`` resamples a corpus-level metric (BLEU, chrF, TER), whose score is not the
    mean of per-example scores: per-example *sufficient statistics*, summed over a resample, then
    one corpus score from the sum, as sacrebleu's paired tests do.

    ``statistics``: import path of ``f(predictions, references, **options) -> ndarray (n, k)``,
    one row per example; ``from_statistics``: of ``f(summed, **options) -> float``; ``options``
    are the metric's own. ``bootstrap_dtype``: the dtype the paired bootstrap sums resampled rows
    in; ``float32`` is what sacrebleu does (``np.array(stats, dtype="float32")``), kept for equal
    numbers. Approximate randomization sums the rows as ``statistics`` returns them.
    """

    statistics_path: str
    from_statistics_path: str
    bootstrap_dtype: str = "float32"

    def statistics(self, predictions: Sequence[str], others: Sequence[Any], **options: Any) -> np.ndarray:
        """Per-example statistics, a 2-D array (one row per example)."""
        import numpy as np

        rows = np.asarray(resolve(self.statistics_path)(predictions, others, **options))
        if rows.ndim != 2 or rows.shape[0] != len(predictions):
            raise ValueError(
                f"{self.statistics_path} returned shape {rows.shape}; expected ({len(predictions)}, k): "
                f"one row of statistics per example. This is a bug in nlgmetrics, please report it."
            )
        return rows

    def score(self, summed: Any, **options: Any) -> float:
        """The corpus score of summed statistics."""
        return float(resolve(self.from_statistics_path)(summed, **options))


#: ``layout(result, options) -> {key: value}``: a module's output from the library's result and
#: the options the module passed (in the library's names).
Layout = Callable[["MetricResult", Mapping[str, Any]], dict[str, Any]]

#: The name evaluate gives each counterpart module, by the name it is loaded under
#: (``evaluate.load("chrf")``). evaluate names a module after its class
#: (``camelcase_to_snakecase(cls.__name__)``), not after its folder: the class of evaluate's
#: ``chrf`` is ``ChrF``, hence ``chr_f``. ``evaluate.combine`` prefixes a key that several modules
#: share with this name (``chr_f_score``), so a module answering to a counterpart takes it too.
#: One entry per counterpart a protocol declares (tests/unit/apps/test_evaluate_modules.py checks each
#: against evaluate's naming rule applied to the counterpart's class name).
EVALUATE_MODULE_NAMES: Mapping[str, str] = {
    "rouge": "rouge",  # class Rouge
    "sacrebleu": "sacrebleu",  # class Sacrebleu
    "chrf": "chr_f",  # class ChrF
    "ter": "ter",  # class Ter
}


@dataclass(frozen=True)
class EvaluateFace:
    """How a metric's evaluate module answers to its evaluate counterpart (``bleu`` to
    ``sacrebleu``): the counterpart's argument names and output keys, where they differ from the
    library's. A metric without a counterpart has none: its module takes the library's names and
    gives the library's headline numbers (:func:`nlgmetrics.apps.evaluate_adapter.evaluate_output`).

    - ``counterpart``: the name evaluate loads the counterpart under (``evaluate.load("chrf")``;
      also accepted by the Trainer hook for ours); :attr:`module_name` is the name evaluate then
      gives the loaded module, which ours takes;
    - ``renamed``: the counterpart's name of an option -> the library's;
    - ``none_is_default``: options for which the counterpart writes None to mean "the default";
    - ``inert``: the counterpart's switches that change nothing here (checked as booleans);
    - ``aggregated`` / ``per_example``: the default and the ``use_aggregator=False`` output;
    - ``details`` / ``per_example_details``: the module's own numbers beyond the counterpart's
      keys in the default and the ``use_aggregator=False`` output, given only on request
      (``return_details=True``), so that by default the output holds the counterpart's keys alone
      (ROUGE: precision and recall, aggregated also the confidence bounds); None: nothing held back.

    >>> EvaluateFace(counterpart="chrf").module_name
    'chr_f'
    """

    counterpart: str
    renamed: Mapping[str, str] = field(default_factory=dict)
    none_is_default: tuple[str, ...] = ()
    inert: tuple[str, ...] = ()
    aggregated: Layout | None = None
    per_example: Layout | None = None
    details: Layout | None = None
    per_example_details: Layout | None = None

    @property
    def module_name(self) -> str:
        """The name evaluate gives the counterpart module (:data:`EVALUATE_MODULE_NAMES`)."""
        return EVALUATE_MODULE_NAMES[self.counterpart]


def _option_parameters(function: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    """The keyword options of a library function (everything after the two inputs)."""
    parameters = list(inspect.signature(function).parameters.values())[2:]
    keywords = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return {p.name: p for p in parameters if p.kind in keywords}


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


def _literal_choices(hint: Any) -> tuple[Any, ...] | None:
    """The values of a ``Literal[...]`` (or ``Literal[...] | None``) annotation, if any."""
    arguments = (hint,) if typing.get_origin(hint) is Literal else typing.get_args(hint)
    values = tuple(v for a in arguments if typing.get_origin(a) is Literal for v in typing.get_args(a))
    if values and type(None) in arguments:
        values = (None, *values)
    return values or None


@dataclass(frozen=True)
class MetricSpec:
    """What one metric is, as data: a declaration the front ends read, not an interface a metric
    implements. A spec states:

    - ``name``, ``title``, ``description`` and ``citation`` (BibTeX, kept as data in the package's
      ``citation.bib``, :func:`read_citation`): what the metric is, shown by the evaluate module, the
      demo and the command line;
    - ``second_input``: what it reads besides the predictions, ``"references"`` or ``"sources"``;
    - ``compute``: the library function, as an import path ``"package.module:function"`` resolved on
      first use (an LM metric's package imports torch), called
      ``function(predictions, <second_input>=..., **options)``;
    - ``options``: the options the front ends offer (:class:`Option`: help, choices or range, the
      signature key it writes). Every default is read from the library signature, never restated
      (:meth:`MetricSpec.default`); the LM metrics share :data:`MODEL_OPTIONS`;
    - ``model_kinds``: the kinds of LM (``"masked"``, ``"causal"``) an LM metric's ``model`` option
      accepts, so that a front end knows, without loading a model, whether a causal one such as the
      offline alias ``smollm2-135m`` can run it;
    - the result columns, their directions and ranges, and the main column: declared by the result
      class the library function returns (its return annotation), which checks every result against
      them; the protocol reads them there (:attr:`MetricSpec.columns`, :attr:`MetricSpec.main`);
    - where a rule is specific to the metric: how to resample a corpus-level score from sufficient
      statistics (:class:`Resampling`, for ``compare``), and how its evaluate module answers to an
      evaluate counterpart (:class:`EvaluateFace`).

    >>> toy = MetricSpec(
    ...     name="toy_bleu", title="Toy", description="BLEU under another name.", citation="",
    ...     second_input="references", compute="nlgmetrics.bleu:bleu",
    ...     options=(Option("lowercase", "bool", "lowercase before scoring", signature_key="case"),))
    >>> toy.default("lowercase"), toy.uses_model, toy.main
    (False, False, 'bleu')
    >>> result = toy.run(["the cat sat on the mat"], [["the cat sat on the mat"]])
    >>> round(result.main_score, 6), result.higher_is_better
    (100.0, True)
    """

    name: str
    title: str
    description: str
    citation: str
    second_input: SecondInput
    #: ``"module:function"``: the library call, ``function(predictions, <second_input>=..., **options)``.
    compute: str
    options: tuple[Option, ...] = ()
    #: The kinds of LM the ``model`` option accepts, ``"masked"`` and/or ``"causal"`` (the engine's
    #: kinds); empty for a metric without a model. Declared, not detected: the library checks a
    #: loaded model's kind, this says beforehand which models are worth offering.
    model_kinds: tuple[str, ...] = ()
    #: Library functions the call forwards its ``**options`` to (BLANC: its two variants); their
    #: keywords are options of this metric too, with their defaults.
    forwards_to: tuple[str, ...] = ()
    resampling: Resampling | None = None
    evaluate: EvaluateFace | None = None
    codebase_urls: tuple[str, ...] = ()
    reference_urls: tuple[str, ...] = ()

    # ---- the library function and its signature

    def library_function(self) -> Callable[..., MetricResult]:
        return resolve(self.compute)

    def parameters(self) -> dict[str, inspect.Parameter]:
        """Every keyword option of the library call, then those of the functions it forwards its
        ``**options`` to (``forwards_to``)."""
        merged = _option_parameters(self.library_function())
        for path in self.forwards_to:
            for name, parameter in _option_parameters(resolve(path)).items():
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
        """Whether the metric runs a language model (it declares the shared ``model`` option)."""
        return any(option.name == "model" for option in self.options)

    @property
    def takes_offline_model(self) -> bool:
        """Whether the offline alias ``smollm2-135m`` (a causal LM) can run the metric: it accepts
        causal LMs (``model_kinds``). The demo offers the alias and the Space installs its wheel
        only then."""
        return "causal" in self.model_kinds

    @property
    def default_model(self) -> str | None:
        return self.default("model") if self.uses_model else None

    # ---- the result: columns, directions, ranges, the main column

    def result_class(self) -> type[MetricResult]:
        """The :class:`MetricResult` subclass the library call returns (its return annotation),
        which declares the columns (direction, range, meaning) and the main column
        (tests/contract/test_one_contract.py checks the annotation of every registered metric)."""
        return _annotation(self.library_function(), "return")

    @property
    def main(self) -> str | None:
        """The main score, the headline key of ``result.aggregate()``; None where the options
        choose it (ROUGE: the first type asked for), so that only a result knows it."""
        main = self.result_class().main
        return main if isinstance(main, str) and main else None

    @property
    def columns(self) -> Mapping[str, Column]:
        """The per-example columns: ``{name: Column(higher_is_better, minimum, maximum, description)}``."""
        return self.result_class().columns

    # ---- the options offered by the command line and the demos

    def option(self, name: str) -> Option:
        """Option ``name`` with its library default, choices (a ``Literal`` annotation's where the
        option declares none) and whether it takes None (clear error listing the offered options)."""
        option = next((option for option in self.options if option.name == name), None)
        if option is None:
            offered = [o.name for o in self.options if o.offered]
            extra = " (plus model, device)" if self.uses_model else ""
            raise ValueError(f"{self.name} has no option {name!r}; its options are {offered}{extra}.")
        hints = [_annotation(f, name) for f in (self.library_function(), *map(resolve, self.forwards_to))]
        choices = next(filter(None, (option.choices, *map(_literal_choices, hints))), None)
        default = self.default(name)
        return replace(option, default=default, choices=choices,
                       nullable=default is None or any(type(None) in typing.get_args(hint) for hint in hints))

    def resolved_options(self) -> tuple[Option, ...]:
        """Every offered option with its library default and choices."""
        return tuple(self.option(option.name) for option in self.options if option.offered)

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
        return self.library_function()(predictions, **{self.second_input: others}, **options)


#: The spec's first name, kept so that code importing it keeps working: it was never a
#: :class:`typing.Protocol`, which the name suggested.
MetricProtocol = MetricSpec
