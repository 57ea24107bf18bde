"""Token breakdowns (:mod:`nlgmetrics.core.explanations`) as self-contained HTML.

Each token of the user's text is shaded by its contribution with a diverging scale (blue adds to
the score, red subtracts from it, white is 0; the scale is symmetric around 0, its end the largest
magnitude), with a legend, the score, what a value means, and the signature. Where a score does
not decompose over tokens (``aggregation == "none"``, e.g. InfoLM's Fisher-Rao distance), tokens
are shaded by their weight in the bag instead, in one hue, and the legend says so.

All text is HTML-escaped; the fragment carries its own ``<style>`` (no external resource), so it
can go into a Gradio ``gr.HTML``, a notebook, or a page (:func:`render_page`).
Every token is a ``<span class="nlgm-tok">`` with ``data-index`` (its position in
``breakdown.spans``) and ``data-value`` (Python's ``repr`` of its value, every digit): a browser
test or a script reads the numbers back exactly.

>>> from nlgmetrics.core.explanations import TokenBreakdown, TokenSpan
>>> b = TokenBreakdown("toy", "toy", 0.25, {"document": "a <i>"},
...                    (TokenSpan("document", 0, 1), TokenSpan("document", 2, 5)), (0.5, -0.25), "sum",
...                    "a toy score", "toy|version:0")
>>> html = render_breakdown(b)
>>> 'data-value="-0.25"' in html, "&lt;i&gt;" in html, "<i>" in html
(True, True, False)
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from nlgmetrics.core.explanations import TokenBreakdown

#: Ends of the diverging scale (RGB): negative, positive; and the one hue of weights.
NEGATIVE = (214, 39, 40)
POSITIVE = (31, 119, 180)
WEIGHT = (148, 103, 189)

_STYLE = """<style>
.nlgm-explain{font-family:system-ui,sans-serif;line-height:1.9;margin:0.5em 0 1.2em 0}
.nlgm-explain h4{margin:0.2em 0}
.nlgm-explain .nlgm-text{white-space:pre-wrap;border:1px solid #ddd;border-radius:4px;padding:0.4em 0.6em;margin:0.3em 0}
.nlgm-explain .nlgm-tok{border-radius:3px;padding:0.05em 0;box-shadow:inset 0 -1px #ccc}
.nlgm-explain .nlgm-legend{display:flex;align-items:center;gap:0.5em;font-size:0.85em}
.nlgm-explain .nlgm-bar{width:12em;height:0.9em;border:1px solid #ccc}
.nlgm-explain code{font-size:0.8em;word-break:break-all}
.nlgm-explain .nlgm-note{font-size:0.85em;color:#555}
</style>"""


def _rgba(rgb: tuple[int, int, int], alpha: float) -> str:
    return f"rgba({rgb[0]},{rgb[1]},{rgb[2]},{alpha:.3f})"


def _shade(value: float, scale: float, diverging: bool) -> str:
    if scale <= 0:
        return "transparent"
    strength = min(1.0, abs(value) / scale) * 0.85
    if not diverging:
        return _rgba(WEIGHT, strength)
    return _rgba(POSITIVE if value > 0 else NEGATIVE, strength) if value else "transparent"


def _legend(scale: float, diverging: bool) -> str:
    if diverging:
        bar = (f"linear-gradient(to right,{_rgba(NEGATIVE, 0.85)},rgba(255,255,255,0),"
               f"{_rgba(POSITIVE, 0.85)})")
        low, high = (f"{-scale:.4g}", f"+{scale:.4g}") if scale else ("0", "0")
        note = "blue adds to the score, red subtracts from it"
    else:
        bar = f"linear-gradient(to right,rgba(255,255,255,0),{_rgba(WEIGHT, 0.85)})"
        low, high = "0", f"{scale:.4g}"
        note = "shade: the token's weight in its bag (this score does not decompose over tokens)"
    return (f'<div class="nlgm-legend"><span>{low}</span><span class="nlgm-bar" style="background:{bar}">'
            f'</span><span>{high}</span><span class="nlgm-note">{html.escape(note)}</span></div>')


def _shown(breakdown: TokenBreakdown) -> tuple[Sequence[float], bool]:
    """The numbers that shade the tokens, and whether they are contributions (diverging scale)."""
    if breakdown.values is not None:
        return breakdown.values, True
    weights = breakdown.columns.get("weight")
    return (tuple(float(w) for w in weights) if weights is not None else (0.0,) * len(breakdown.spans)), False


def _text_block(breakdown: TokenBreakdown, source: str, shown: Sequence[float], scale: float,
                diverging: bool) -> str:
    text = breakdown.texts[source]
    tokens = sorted((span.start, span.end, k) for k, span in enumerate(breakdown.spans) if span.source == source)
    parts, cursor = [], 0
    extra = {name: column for name, column in breakdown.columns.items() if name != "side"}
    for start, end, k in tokens:
        parts.append(html.escape(text[cursor:start]))  # the text before the token (if any)
        # Byte-level pieces of one character share its span: show the character once.
        piece = text[max(start, cursor) : end]
        cursor = max(cursor, end)
        details = "; ".join(f"{name}={column[k]!s:.12}" for name, column in extra.items())
        title = f"{breakdown.tokens[k]!r}: {shown[k]!r}" + (f" ({details})" if details else "")
        parts.append(f'<span class="nlgm-tok" data-index="{k}" data-value="{shown[k]!r}" '
                     f'style="background:{_shade(shown[k], scale, diverging)}" title="{html.escape(title)}">'
                     f"{html.escape(piece)}</span>")
    parts.append(html.escape(text[cursor:]))
    count = len(tokens)
    label = f"{source} ({count} token{'s' if count != 1 else ''} explained)" if count else f"{source} (context)"
    return f'<div><b>{html.escape(label)}</b><div class="nlgm-text" data-source="{html.escape(source)}">{"".join(parts)}</div></div>'


def render_breakdown(breakdown: TokenBreakdown, *, style: bool = True) -> str:
    """One breakdown as an HTML fragment (``<div class="nlgm-explain">``; see the module docstring)."""
    shown, diverging = _shown(breakdown)
    scale = max((abs(v) for v in shown), default=0.0)
    header = (
        f'<h4>{html.escape(breakdown.metric)}: <span class="nlgm-name">{html.escape(breakdown.name)}</span> = '
        f'<span class="nlgm-score" data-score="{breakdown.score!r}">{breakdown.score!r}</span></h4>'
        f'<div class="nlgm-note">{html.escape(breakdown.description)}'
        + (f" (tokens sum to {breakdown.total()!r})" if breakdown.values is not None else "") + "</div>"
    )
    blocks = "".join(_text_block(breakdown, source, shown, scale, diverging) for source in breakdown.texts)
    signature = f'<div class="nlgm-note">signature: <code class="nlgm-signature">{html.escape(breakdown.signature)}</code></div>'
    return (f'{_STYLE if style else ""}<div class="nlgm-explain" data-metric="{html.escape(breakdown.metric)}" '
            f'data-name="{html.escape(breakdown.name)}" data-aggregation="{breakdown.aggregation}">'
            f"{header}{_legend(scale, diverging)}{blocks}{signature}</div>")


def render_explanation(explanation: Mapping[str, TokenBreakdown], main: str | None = None) -> str:
    """Every breakdown of one example (``result.explanations[i]``), ``main`` first, as one fragment."""
    names = sorted(explanation, key=lambda name: name != main)  # a stable sort keeps the others' order
    return _STYLE + "".join(render_breakdown(explanation[name], style=False) for name in names)


def render_page(explanation: Mapping[str, TokenBreakdown], *, title: str = "nlgmetrics explanation",
                main: str | None = None) -> str:
    """A complete, self-contained HTML page of :func:`render_explanation`."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"</head><body>{render_explanation(explanation, main)}</body></html>\n")
