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

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

SecondInput = Literal["references", "sources"]


@dataclass(frozen=True)
class OptionSpec:
    """One user-facing option of a metric (a keyword of its library function)."""

    name: str
    kind: Literal["str", "int", "float", "bool"]
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
        if self.kind == "str":
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
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
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
# Normalising library results.


def _to_plain(value: Any) -> Any:
    """Dataclass / mapping / numpy values -> plain Python (dicts, lists, floats)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _to_plain(v) for k, v in value.items()}
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_to_plain(v) for v in value]
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _flatten(prefix: str, value: Any, n: int, per_example: dict, aggregate: dict) -> None:
    """Sort a plain result into per-example lists (length n) and aggregate numbers."""
    if _is_number(value):
        aggregate[prefix] = float(value)
    elif isinstance(value, list) and len(value) == n and all(_is_number(v) for v in value):
        per_example[prefix] = [float(v) for v in value]
    elif isinstance(value, dict):
        for key, item in value.items():
            _flatten(f"{prefix}_{key}" if prefix else key, item, n, per_example, aggregate)


def report_from_result(metric: str, result: Any, n: int) -> ScoreReport:
    """Turn whatever the library returned into a :class:`ScoreReport`.

    Numbers become aggregates, lists of ``n`` numbers become per-example scores; a per-example
    score without an aggregate of the same name gets its mean (NaN-free: empty lists are skipped).
    """
    plain = _to_plain(result)
    if not isinstance(plain, dict):
        raise TypeError(f"{metric}: unexpected result type {type(result).__name__}.")
    signature = plain.pop("signature", None)
    if not isinstance(signature, str):
        raise TypeError(f"{metric}: the library result has no signature string.")
    per_example: dict[str, list[float]] = {}
    aggregate: dict[str, float] = {}
    _flatten("", plain, n, per_example, aggregate)
    for key, values in per_example.items():
        if key not in aggregate and values:
            aggregate[key] = math.fsum(values) / len(values)
    return ScoreReport(metric=metric, per_example=per_example, aggregate=aggregate, signature=signature)


# --------------------------------------------------------------------------------------------
# The table. Runners import the library lazily: `nlgmetrics --help` must not load torch.

_SPECS: dict[str, MetricSpec] = {}


def register(spec: MetricSpec) -> MetricSpec:
    _SPECS[spec.name] = spec
    return spec


def metric_names() -> list[str]:
    """Names of every metric, in the order of the design table."""
    _ensure_loaded()
    return list(_SPECS)


def get_spec(name: str) -> MetricSpec:
    """The spec of ``name`` (clear error listing the valid names)."""
    _ensure_loaded()
    if name not in _SPECS:
        raise ValueError(f"Unknown metric {name!r}; choose from {list(_SPECS)}.")
    return _SPECS[name]


def _ensure_loaded() -> None:
    if not _SPECS:
        from nlgmetrics import _registry_specs  # noqa: F401  (registers the six metrics)
