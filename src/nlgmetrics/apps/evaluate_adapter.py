"""The one adapter between the library and the ``evaluate`` modules (metrics/<name>/<name>.py).

A module is a thin file: ``class Bleu(ProtocolModule, evaluate.Metric)`` with its metric's
protocol (:mod:`nlgmetrics.core.protocol`) and its inputs description. :class:`ProtocolModule`
gives it everything else from the protocol. Layout, in the order a call meets it:

- :class:`CheckedTextInputs`: checks and normalises the input columns before evaluate's own
  machinery sees them (why: its docstring);
- :func:`input_features`: the features a module declares; :func:`shared_args`: the argument lines
  its inputs description shares with other modules;
- :func:`module_options`: a module's options in the library's names
  (where the module answers to an evaluate counterpart, the protocol's
  :class:`~nlgmetrics.core.protocol.EvaluateFace` says how: argument names, keys, inert switches);
- :func:`module_output` / :func:`evaluate_output`: the one output rule for every module (a flat
  dict of numbers; ``use_aggregator``, ``return_details``, ``return_signature``), as the README
  states it ("Using a metric with `evaluate`");
- ``release_models=True`` (every module's switch): drop the cached scoring models after the call
  (metrics/engine.md, "Releasing models");
- ``evaluate.combine``'s key prefix is the module's name, which evaluate derives from its class
  name: the folder name, or the counterpart's (``rouge``, ``sacrebleu``, ``chr_f``, ``ter``:
  :attr:`~nlgmetrics.core.protocol.EvaluateFace.module_name`); the module's cache directory keeps
  its own name, so ours and evaluate's never share cache files.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Set
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from nlgmetrics.core.protocol import MetricSpec
from nlgmetrics.core.result import MetricResult
from nlgmetrics.core.validation import as_texts, check_bool, check_text


#: The argument lines that several modules' inputs descriptions share, written there as the key's
#: line and filled in by :func:`shared_args` (``{counterpart}``: the module's evaluate counterpart).
SHARED_ARGS = {
    "{references}": """\
    predictions (list of str): one hypothesis per example.
    references (list of str, or list of list of str): one or several references per example
        (the number may vary between examples, unlike evaluate's {counterpart}; a mix is fine).
""",
    "{big_model}": """\
    device_map (str or dict or None), max_memory (dict or None), offload_folder (str or None): a model
        bigger than one device, passed to from_pretrained (e.g. device_map="auto",
        max_memory={0: "20GiB", "cpu": "60GiB"}, or {module: "cpu" | "cuda:0" | "disk"}); same numbers.
""",
    "{lm_run}": """\
    progress (bool): show a progress bar. Default True, unless evaluate.disable_progress_bar()
        was called.
    cache_dir (str or None): a folder where what the model computed is kept and reused by later
        calls and processes, same numbers (default: $NLGMETRICS_CACHE_DIR, else no store; see the
        card's "Reusing work across calls"; `nlgmetrics cache info|clear DIR`).
    release_models (bool): after the call, drop every scoring model cached in this process and free
        their memory (nlgmetrics.engine.release()). Default False: they stay loaded for the next call.
""",
    "{output}": """\
    return_signature (bool): also return "signature" (a string; see the description). Default False.
    return_details (bool): accepted as by every nlgmetrics module, since evaluate.combine passes
        one set of options to all its modules; changes nothing here (the default output holds every number).
""",
}


def shared_args(protocol: MetricSpec, description: str) -> str:
    """A module's inputs description with the lines of :data:`SHARED_ARGS` filled in.

    >>> from nlgmetrics.registry import get_protocol
    >>> shared_args(get_protocol("bleu"), "Args:\\n{references}\\n").splitlines()[-1].strip()
    "(the number may vary between examples, unlike evaluate's sacrebleu; a mix is fine)."
    """
    for line, text in SHARED_ARGS.items():
        description = description.replace(f"{line}\n", text)
    if protocol.evaluate is not None:
        description = description.replace("{counterpart}", protocol.evaluate.counterpart)
    return description


@dataclass(frozen=True)
class OutputSwitches:
    """How a module's output is laid out: aggregated or per example, with or without the signature,
    with or without the numbers held back from the default output (``return_details``)."""

    use_aggregator: bool = True
    return_signature: bool = False
    return_details: bool = False


def pop_output_switches(options: dict[str, Any]) -> OutputSwitches:
    """Remove the output switches from a module's ``compute()`` options (checked before any
    scoring, so a bad value fails fast), leaving the options the library takes.

    >>> options = {"use_aggregator": False, "tokenize": "intl"}
    >>> pop_output_switches(options), options
    (OutputSwitches(use_aggregator=False, return_signature=False, return_details=False), {'tokenize': 'intl'})
    >>> pop_output_switches({"return_signature": "yes"})
    Traceback (most recent call last):
    ...
    ValueError: `return_signature` must be True or False, got 'yes'.
    """
    return OutputSwitches(**{field.name: check_bool(field.name, options.pop(field.name, field.default))
                             for field in fields(OutputSwitches)})


def _plain_number(key: str, value: Any) -> int | float:
    """A number of the output as a plain Python int or float (numpy scalars converted); anything
    else is a bug: the output holds numbers only."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"output key {key!r} is {type(value).__name__} ({value!r:.40}), not a number; "
                        f"this is a bug in nlgmetrics, please report it.")
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def evaluate_output(result: MetricResult, switches: OutputSwitches = OutputSwitches(),
                    values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``compute()`` output of a module (the rule: see the module docstring).

    ``values``: the output of a module that answers to an evaluate counterpart, in its layout
    (aggregated: the counterpart's keys, order and types first, then the module's extra numbers;
    ``use_aggregator=False``: a list per key). None: the library's numbers, aggregated
    ``result.aggregate()`` (main key first, as floats), else the per-example columns ``result.scores``.

    >>> from nlgmetrics.bleu import bleu
    >>> result = bleu(["the cat sat on the mat"], references=[["the cat sat on the mat"]])
    >>> evaluate_output(result, values={"score": result.bleu, "sys_len": result.sys_len})
    {'score': 100.0, 'sys_len': 6}
    >>> out = evaluate_output(result, OutputSwitches(use_aggregator=False, return_signature=True))
    >>> out["sentence_bleu"], out["signature"].split("|")[0]
    ([100.0], 'bleu')
    """
    if switches.use_aggregator:
        if values is None:
            headline = result.aggregate()
            values = {result.main: headline[result.main], **headline}
        output = {key: _plain_number(key, value) if not isinstance(value, (list, tuple, np.ndarray))
                  else [_plain_number(key, item) for item in value] for key, value in values.items()}
    else:
        columns = result.scores if values is None else values
        output = {key: [_plain_number(key, value) for value in column] for key, column in columns.items()}
    if switches.return_signature:
        output["signature"] = result.signature
    return output


def input_features(second_input: str) -> list[Any]:
    """The ``evaluate`` input features of a module: predictions and ``references`` (one string or a
    list of strings per example: both layouts) or ``sources`` (one string per example).

    >>> [sorted(f) for f in input_features("references")]
    [['predictions', 'references'], ['predictions', 'references']]
    >>> [sorted(f) for f in input_features("sources")]
    [['predictions', 'sources']]
    """
    import datasets

    text = datasets.Value("string", id="sequence")
    if second_input == "sources":
        return [datasets.Features({"predictions": text, "sources": text})]
    return [datasets.Features({"predictions": text, "references": datasets.Sequence(text)}),
            datasets.Features({"predictions": text, "references": text})]


def module_options(protocol: MetricSpec, options: Mapping[str, Any]) -> dict[str, Any]:
    """A module's ``compute()`` options (output switches removed) in the library's names, as its
    protocol's :class:`~nlgmetrics.core.protocol.EvaluateFace` says: the counterpart's inert
    switches checked and dropped, its None-means-default options dropped when None (evaluate's
    counterpart writes None for "the default": sacrebleu's ``tokenize``, rouge's ``rouge_types``),
    its names mapped to the library's (the library's name of a renamed option is refused, naming
    the module's: one name per option). Every default stays the library's.

    Then ``progress`` where the caller did not give it: the library's default (on for the LM
    metrics, whose calls take minutes) unless evaluate's own switch is off
    (``evaluate.disable_progress_bar()``, which also silences evaluate's bars); ``progress=False``
    in ``compute()`` silences one call. Metrics without a bar are left alone.

    >>> from nlgmetrics.registry import get_protocol
    >>> module_options(get_protocol("bleu"), {"use_effective_order": True, "tokenize": None, "force": True})
    {'effective_order': True}
    >>> module_options(get_protocol("bleu"), {"effective_order": True})
    Traceback (most recent call last):
    ...
    TypeError: This module has no option `effective_order`; it is named `use_effective_order` here, as in evaluate's sacrebleu: pass use_effective_order=True.
    >>> import evaluate
    >>> module_options(get_protocol("infolm"), {})["progress"] == evaluate.is_progress_bar_enabled()
    True
    >>> module_options(get_protocol("infolm"), {"progress": False})
    {'progress': False}
    """
    import evaluate

    given = dict(options)
    face = protocol.evaluate
    if face is not None:
        for name in face.inert:  # the counterpart's switch, which changes nothing here: checked only
            check_bool(name, given.pop(name, False))
        for module_name, library_name in face.renamed.items():  # one name per option: the module's
            if library_name in given:
                raise TypeError(f"This module has no option `{library_name}`; it is named `{module_name}` "
                                f"here, as in evaluate's {face.counterpart}: pass "
                                f"{module_name}={given[library_name]!r}.")
        given = {face.renamed.get(name, name): value for name, value in given.items()
                 if not (name in face.none_is_default and value is None)}
    if "progress" not in given and "progress" in protocol.accepted_options():
        given["progress"] = bool(protocol.default("progress")) and evaluate.is_progress_bar_enabled()
    return given


def module_output(protocol: MetricSpec, result: MetricResult, options: Mapping[str, Any],
                  switches: OutputSwitches) -> dict[str, Any]:
    """A module's ``compute()`` output (:func:`evaluate_output`), in its counterpart's layout
    where its protocol has one (``options``: those the library was called with), with the numbers
    its face holds back added after the default keys when ``return_details`` asks for them.

    >>> from nlgmetrics.registry import get_protocol
    >>> from nlgmetrics.rouge import rouge_family
    >>> result = rouge_family(["the cat sat"], ["the cat sat down"], rouge_types=["rouge1"], n_bootstrap=0)
    >>> protocol = get_protocol("rouge_family")
    >>> list(module_output(protocol, result, {}, OutputSwitches()))
    ['rouge1']
    >>> list(module_output(protocol, result, {}, OutputSwitches(return_details=True)))
    ['rouge1', 'rouge1_precision', 'rouge1_recall']
    >>> module_output(protocol, result, {}, OutputSwitches(use_aggregator=False))
    {'rouge1': [0.8571428571428571]}
    """
    face = protocol.evaluate
    if face is None:  # no counterpart: the library's numbers, nothing held back
        return evaluate_output(result, switches)
    if switches.use_aggregator:
        layout, details = face.aggregated, face.details
    else:
        layout, details = face.per_example, face.per_example_details
    values = None if layout is None else layout(result, options)
    if switches.return_details and details is not None:  # a face that holds numbers back has a layout
        values = {**values, **details(result, options)}  # type: ignore[dict-item]
    return evaluate_output(result, switches, values)


#: How the single-example ``add`` names its arguments (evaluate: ``prediction=``, ``reference=``).
_SINGULAR = {"predictions": "prediction", "references": "reference"}


def _list_columns(features: Any) -> set[str]:
    """Columns for which some declared feature format takes a list of strings per example (e.g.
    several references), rather than one string."""
    formats = features if isinstance(features, list) else [features]
    return {name for declared in formats if isinstance(declared, Mapping)
            for name, feature in declared.items() if getattr(feature, "dtype", None) != "string"}


def _is_pandas(value: Any, kind: str) -> bool:
    """Whether ``value`` is a pandas ``Series`` / ``DataFrame`` (without importing pandas)."""
    return type(value).__module__.startswith("pandas") and type(value).__name__ == kind


def _plain(item: Any) -> Any:
    """A numpy array or pandas Series item (several references) as a plain list."""
    return item.tolist() if isinstance(item, np.ndarray) or _is_pandas(item, "Series") else item


def as_input_column(name: str, column: Any) -> list[Any]:
    """One input column as a plain list, in positional order, or a clear error naming ``name``.

    Accepted: a list or tuple, a numpy array, a pandas Series (read by position: its index labels
    are ignored), a ``datasets`` column, a generator or any other one-pass iterable (read once;
    the list is what evaluate then stores). Refused with the fix: None, a single string, bytes, a
    number, a dict or set, a DataFrame (which iterates over its column *names*).

    >>> as_input_column("predictions", (t for t in ["a", "b"]))
    ['a', 'b']
    >>> as_input_column("predictions", 3)
    Traceback (most recent call last):
    ...
    ValueError: `predictions` is int (3), not a list of texts; pass a list with one string per example, e.g. predictions=['a text'].
    """
    if _is_pandas(column, "DataFrame"):
        raise ValueError(f"`{name}` is a pandas DataFrame (columns {list(column.columns)[:5]}); iterating "
                         "over it gives its column names. Pass one column as a list, e.g. "
                         f"{name}=df[\"{name}\"].tolist().")
    if isinstance(column, (bytes, bytearray)):
        raise ValueError(f"`{name}` is {type(column).__name__}; decode it (e.g. "
                         "data.decode('utf-8').splitlines()) and pass a list of strings, one per example.")
    if isinstance(column, (numbers.Number, np.generic)) or (isinstance(column, np.ndarray) and column.ndim == 0):
        raise ValueError(f"`{name}` is {type(column).__name__} ({column!r:.40}), not a list of texts; pass "
                         f"a list with one string per example, e.g. {name}=['a text'].")
    if column is None or isinstance(column, (str, Set, Mapping)) or not hasattr(column, "__iter__"):
        as_texts(name, column)  # raises the library's message (None, a single string, a set or dict, ...)
    return [_plain(item) for item in _plain(column)]


def check_text_item(label: str, item: Any, lists_allowed: bool) -> None:
    """One example of one column: a string, or (where the module takes several per example, e.g.
    references) a list or tuple of strings."""
    if lists_allowed and isinstance(item, (list, tuple)):
        for j, text in enumerate(item):
            check_text(f"{label}[{j}]", text)
    else:
        check_text(label, item)


def _check_series_alignment(batch: Mapping[str, Any]) -> None:
    """Two pandas Series with different indexes would be paired by position here, while pandas
    itself pairs by label: refuse rather than silently pair the wrong rows."""
    series = {name: column for name, column in batch.items() if _is_pandas(column, "Series")}
    names = list(series)
    for other in names[1:]:
        if not series[names[0]].index.equals(series[other].index):
            raise ValueError(f"`{names[0]}` and `{other}` are pandas Series with different indexes; their "
                             "rows are paired by position, not by index label. Align them first (e.g. "
                             f"{other} = {other}.loc[{names[0]}.index]) or call .reset_index(drop=True) on "
                             "both.")


def normalise_text_batch(batch: Mapping[str, Any], list_columns: set[str]) -> dict[str, list[Any]]:
    """Every column of a batch as a checked plain list (every item checked, not only the first
    row); the references of a module that takes several per example become lists of references.
    An empty batch is the library's "is empty" error, not evaluate's IndexError (and it would add
    nothing to a stream of batches anyway)."""
    _check_series_alignment(batch)
    normalised: dict[str, list[Any]] = {}
    for name, column in batch.items():
        items = as_input_column(name, column)
        for index, item in enumerate(items):
            check_text_item(f"{name}[{index}]", item, lists_allowed=name in list_columns)
        if not items:
            raise ValueError(f"`{name}` is empty; pass at least one example.")
        if name == "references" and name in list_columns:
            # evaluate picks the feature format from the first row: one format for every row.
            items = [[item] if isinstance(item, str) else list(item) for item in items]
        normalised[name] = items
    return normalised


class CheckedTextInputs:
    """Mixin for ``evaluate.Metric`` subclasses whose inputs are texts, placed before
    ``evaluate.Metric`` in the bases: ``class RougeFamily(CheckedTextInputs, evaluate.Metric)``.

    Its ``add_batch`` (which ``compute`` calls too) and ``add`` check every item with
    :mod:`nlgmetrics.core.validation` (the library functions' messages), then hand plain lists to
    evaluate, because evaluate 0.4 / datasets get these wrong before a module's ``_compute`` runs:
    the feature format (one reference or a list per example) is picked from the *first* row, so a
    mixed batch would reach the metric as the ``str()`` of a list (every reference is made a list
    first); an empty ``compute()`` is a bare ``IndexError``; only the first row's type is checked
    and later items are cast to ``str``; the first row is read as ``column[0]``, which fails on a
    generator or a re-indexed pandas Series, and a DataFrame iterates over its column names. So
    every column becomes a plain list (:func:`as_input_column`) or is refused with the fix. A plain
    class (not an ``evaluate.Metric``), so ``evaluate.load`` still finds the module's own class.

    >>> class Fake:  # stands in for evaluate.Metric: records what reaches it
    ...     features = {"predictions": None, "references": None}
    ...     def _feature_names(self):
    ...         return list(self.features)
    ...     def add_batch(self, **batch):
    ...         return "added"
    >>> class Module(CheckedTextInputs, Fake):
    ...     pass
    >>> Module().add_batch(predictions=["a", "b"], references=["a", "b"])
    'added'
    >>> Module().add_batch(predictions=["a", 3], references=["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: `predictions[1]` is int (3), not a string; convert every item to str (use '' for a missing text).
    >>> Module().add_batch(predictions=[], references=[])
    Traceback (most recent call last):
    ...
    ValueError: `predictions` is empty; pass at least one example.
    """

    def _text_inputs(self, given: dict[str, Any]) -> dict[str, Any] | None:
        """The module's feature columns, as evaluate will read them (``given``: the
        ``predictions``/``references`` keywords plus any other feature name, e.g. ``sources``)."""
        names = self._feature_names()  # type: ignore[attr-defined]
        if set(given) - {"predictions", "references"} - set(names):
            return None  # evaluate's own "Bad inputs for evaluation module" error is clear
        return {name: given.get(name) for name in names}

    # evaluate appends the module's inputs description to these docstrings: they must exist.
    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> Any:
        """Add a batch of examples (every item checked first; see :mod:`nlgmetrics.apps.evaluate_adapter`).
        """
        given = {"predictions": predictions, "references": references, **kwargs}
        batch = self._text_inputs(given)
        if batch is not None:  # the checked columns replace the ones given
            given |= normalise_text_batch(batch, _list_columns(self.features))  # type: ignore[attr-defined]
        return super().add_batch(**given)  # type: ignore[misc]

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> Any:
        """Add one example (checked first; see :mod:`nlgmetrics.apps.evaluate_adapter`).
        """
        example = self._text_inputs({"predictions": prediction, "references": reference, **kwargs})
        if example is not None:
            list_columns = _list_columns(self.features)  # type: ignore[attr-defined]
            for name, value in example.items():
                check_text_item(_SINGULAR.get(name, name), _plain(value), lists_allowed=name in list_columns)
            prediction, reference = _plain(prediction), _plain(reference)
            kwargs = {key: _plain(value) for key, value in kwargs.items()}
            if "references" in list_columns and isinstance(reference, str):
                reference = [reference]
        return super().add(prediction=prediction, reference=reference, **kwargs)  # type: ignore[misc]


class ProtocolModule(CheckedTextInputs):
    """Everything an evaluate module does, read from its metric's protocol: a module is
    ``class Bleu(ProtocolModule, evaluate.Metric)`` with ``protocol`` (the metric's
    :class:`~nlgmetrics.core.protocol.MetricSpec`) and ``inputs_description`` (its arguments,
    outputs and examples). Its description, citation, features, URLs, ``_compute`` and, where it
    answers to an evaluate counterpart, its name (the counterpart's) come from here; its inputs
    are checked by :class:`CheckedTextInputs`. A plain class (not an ``evaluate.Metric``), so that
    ``evaluate.load`` finds the module's own class."""

    protocol: ClassVar[MetricSpec]
    inputs_description: ClassVar[str] = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        # evaluate has named the module after its class and built its cache directory under that
        # name; a module answering to a counterpart now takes the counterpart's name, the prefix
        # evaluate.combine writes (chr_f_score), while its cache directory stays its own.
        face = self.protocol.evaluate
        if face is not None:
            self.info.module_name = face.module_name  # type: ignore[attr-defined]

    def _info(self) -> Any:
        import evaluate

        protocol = self.protocol
        return evaluate.MetricInfo(description=protocol.description, citation=protocol.citation,
                                   inputs_description=shared_args(protocol, self.inputs_description),
                                   features=input_features(protocol.second_input),
                                   codebase_urls=list(protocol.codebase_urls),
                                   reference_urls=list(protocol.reference_urls))

    def _compute(self, predictions: list[Any], **inputs_and_options: Any) -> dict[str, Any]:
        # evaluate passes the feature columns by name: the second one is the protocol's input.
        protocol = self.protocol
        others = inputs_and_options.pop(protocol.second_input)
        switches = pop_output_switches(inputs_and_options)
        release_models = check_bool("release_models", inputs_and_options.pop("release_models", False))
        options = module_options(protocol, inputs_and_options)
        try:
            result = protocol.library_function()(predictions, others, **options)
        finally:
            if release_models:
                from nlgmetrics.engine.loading import release  # torch only where a model was used

                release()
        return module_output(protocol, result, options, switches)
