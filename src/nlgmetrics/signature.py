"""Signatures: one string that records every option that changes a metric's number.

In the spirit of sacrebleu's ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x``:
two results with equal signatures were computed the same way and may be compared.

>>> make_signature("bleu", {"tok": "13a", "smooth": "exp", "nrefs": 1})
'bleu|nrefs:1|smooth:exp|tok:13a|version:0.1.0'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlgmetrics import __version__


def _format_value(value: Any) -> str:
    """Render an option value compactly and deterministically (no '|' or ':' inside)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, float):
        return format(value, "g")
    if isinstance(value, (list, tuple)):
        return ",".join(_format_value(v) for v in value)
    text = str(value)
    # '|' and ':' separate fields; keep the signature parseable.
    return text.replace("|", "/").replace(":", "=")


def make_signature(metric: str, options: Mapping[str, Any]) -> str:
    """Build ``metric|key:value|...|version:X`` with keys sorted for stability."""
    fields = [metric]
    for key in sorted(options):
        fields.append(f"{key}:{_format_value(options[key])}")
    fields.append(f"version:{__version__}")
    return "|".join(fields)


def parse_signature(signature: str) -> dict[str, str]:
    """Inverse of :func:`make_signature` (values come back as strings).

    >>> parse_signature("bleu|tok:13a|version:0.1.0")["tok"]
    '13a'
    """
    metric, *fields = signature.split("|")
    parsed = {"metric": metric}
    for field in fields:
        key, _, value = field.partition(":")
        parsed[key] = value
    return parsed
