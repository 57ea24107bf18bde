"""Signatures: one string that records every option that changes a metric's number.

In the spirit of sacrebleu's ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x``: two
results with equal signatures were computed the same way and may be compared.

One vocabulary for every metric. A signature reads

``<metric>|<shared model keys>|<metric keys, sorted>|<library versions>|version:<nlgmetrics>``

- ``<metric>``: the registered name; then, for LM metrics only, :data:`MODEL_KEYS` in this order:
  ``model`` (Hub id, directory or alias), ``weights`` (a hash of the weights loaded), ``tokenizer``
  (``own``, else a hash of the ``model_tokenizer=`` passed), ``revision`` (asked for; ``none``),
  ``dtype``, ``max_length`` (the limit the metric applies);
- the metric's keys, snake_case and sorted, never a shared name (that is a programming error);
- the library versions that change numbers (:data:`LM_LIBRARIES`), then nlgmetrics' ``version``.

>>> make_signature("bleu", {"tokenize": "13a", "smooth": "exp", "nrefs": 1})
'bleu|nrefs:1|smooth:exp|tokenize:13a|version:0.1.0'
>>> sig = make_signature("fflm", {"weights_abd": (0.25, 0.25, 0.5)},
...                      model={"model": "m", "weights": "ab12", "tokenizer": "own", "revision": None,
...                             "dtype": "float32", "max_length": 2048})
>>> sig.split("|")[:8]
['fflm', 'model:m', 'weights:ab12', 'tokenizer:own', 'revision:none', 'dtype:float32', 'max_length:2048', 'weights_abd:0.25,0.25,0.5']
>>> parse_signature(sig)["max_length"]
'2048'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import metadata
from typing import Any

from nlgmetrics import __version__

#: Shared keys of every LM metric's signature, in the order they are written.
MODEL_KEYS = ("model", "weights", "tokenizer", "revision", "dtype", "max_length")
#: Libraries whose version changes an LM metric's numbers (tokenization, model code).
LM_LIBRARIES = ("transformers", "tokenizers")
_RESERVED = frozenset(MODEL_KEYS) | frozenset(LM_LIBRARIES) | {"version"}
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")


def format_value(value: Any) -> str:
    """Render an option value compactly and deterministically (no '|' or ':' inside), as every
    signature field writes it (``compare`` adds its test's settings with it too)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, float):
        return format(value, "g")
    if isinstance(value, (list, tuple)):
        return ",".join(format_value(v) for v in value)
    return str(value).replace("|", "/").replace(":", "=")  # '|' and ':' separate fields


def _library_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "none"


def make_signature(
    metric: str, options: Mapping[str, Any], *, model: Mapping[str, Any] | None = None
) -> str:
    """Build a signature (see the module docstring).

    ``model``: the shared model fields (``LoadedLM.signature_fields(max_length)``) for an LM
    metric, ``None`` for a text metric. ``options``: the metric's own keys.
    """
    if not _KEY.match(metric):
        raise ValueError(f"metric name {metric!r} must be snake_case")
    for key in options:
        if not _KEY.match(key) or key in _RESERVED:
            raise ValueError(f"signature key {key!r} must be snake_case and not a shared key")
    fields = [metric]
    if model is not None:
        if set(model) != set(MODEL_KEYS):
            raise ValueError(f"model fields must be exactly {MODEL_KEYS}, got {sorted(model)}")
        fields += [f"{key}:{format_value(model[key])}" for key in MODEL_KEYS]
    fields += [f"{key}:{format_value(options[key])}" for key in sorted(options)]
    if model is not None:
        fields += [f"{name}:{_library_version(name)}" for name in LM_LIBRARIES]
    fields.append(f"version:{__version__}")
    return "|".join(fields)


def parse_signature(signature: str) -> dict[str, str]:
    """Inverse of :func:`make_signature` (values come back as strings).

    >>> parse_signature("bleu|tokenize:13a|version:0.1.0")["tokenize"]
    '13a'
    """
    metric, *fields = signature.split("|")
    return {"metric": metric} | {key: value for key, _, value in (field.partition(":") for field in fields)}
