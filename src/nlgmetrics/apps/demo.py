"""Gradio demos of the metrics: each Hub Space's ``app.py`` (``metrics/<name>/app.py``) calls
``launch_demo("<name>")``.

evaluate's ``launch_gradio_widget`` uses ``gr.inputs`` / ``gr.outputs``, which Gradio 4 removed, so the
demos are built here with ``gr.Blocks``, from the metric's protocol (:mod:`nlgmetrics.registry`): a
text box for the prediction (or summary), one for the reference(s) (or source document), one widget
per option starting at the library's default (only options changed from it are passed), a button,
and the result.

Stable element ids (for the browser tests and anyone scripting the page): ``#prediction`` and
``#reference`` or ``#source`` (text boxes; Gradio puts a ``textarea`` inside); ``#options`` (the
closed accordion of option widgets); ``#option-<name>`` (``#option-model`` for an LM metric's
model); ``#submit``; ``#score`` (the main score as Python's ``repr``, every digit; its label names
the main score and its direction); ``#scores`` (every headline number, ``result.aggregate()``, as
JSON); ``#signature``; ``#explanation`` (LM metrics: the example's token breakdowns, from
:mod:`nlgmetrics.apps.explain_html`, one ``span.nlgm-tok`` per token with its ``data-value``).

>>> demo = build_demo("bleu")          # a gr.Blocks; launch_demo("bleu") also serves it
>>> type(demo).__name__
'Blocks'
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlgmetrics.apps.explain_html import render_explanation
from nlgmetrics.core.protocol import MetricSpec, Option
from nlgmetrics.registry import get_protocol

if TYPE_CHECKING:
    from nlgmetrics.core.result import MetricResult

# Several references in one text box are separated by a line holding only "---" (a plain newline
# cannot separate them: ROUGE-Lsum reads newlines as sentence boundaries).
REFERENCE_SEPARATOR = "---"

_EXAMPLES: dict[str, tuple[str, str]] = {
    "references": ("The cat sat on the mat.", "The cat was sitting on the mat.\n---\nA cat sat on a mat."),
    "sources": ("A storm closed the harbour on Monday.",
                "Fishing boats stayed in port on Monday after a storm closed the harbour. "
                "Officials said it would reopen on Tuesday once the winds dropped."),
}

_YAML_HEADER = re.compile(r"\A---\s*\n.*?\n---\s*\n", re.DOTALL)


def split_references(text: str) -> list[str]:
    """Split the reference box into references (separator: a line holding only ``---``).

    >>> split_references("a b\\n---\\nc d")
    ['a b', 'c d']
    >>> split_references("one reference\\nwith two lines")
    ['one reference\\nwith two lines']
    """
    parts = re.split(rf"(?m)^\s*{re.escape(REFERENCE_SEPARATOR)}\s*$", text)
    references = [part.strip("\n") for part in parts if part.strip()]
    return references or [text]


def _card_text(name: str, card_path: str | os.PathLike | None) -> str:
    """The model card of ``name`` without its YAML header, shown under the demo (as evaluate's widget does).

    ``card_path`` when given; otherwise the first ``README.md`` that is this metric's own card (it
    sits beside the module ``<name>.py``, as in every ``metrics/<name>`` folder and Space): next to
    the running script (``python metrics/bleu/app.py`` from any directory), in the working directory
    (a Space runs app.py in its own folder), or in the source checkout's ``metrics/<name>``.
    A README beside no ``<name>.py`` (the project's own README when a demo is started from the
    repository root) is never shown as the card. No card found: ``""`` (no panel).
    """
    if card_path is not None:
        candidates = [Path(card_path)]
    else:
        script = getattr(sys.modules.get("__main__"), "__file__", None)
        candidates = [Path(script).resolve().parent / "README.md"] if script else []
        checkout = Path(__file__).resolve().parents[3] / "metrics" / name
        candidates += [Path.cwd() / "README.md", checkout / "README.md"]
        candidates = [path for path in candidates if path.with_name(f"{name}.py").is_file()]
    card = next((path for path in candidates if path.is_file()), None)
    return "" if card is None else _YAML_HEADER.sub("", card.read_text(encoding="utf-8"), count=1)


def _option_widget(gr: Any, option: Option) -> Any:
    named = {"label": f"{option.name}: {option.help}", "elem_id": f"option-{option.name}"}
    allowed = option.allowed()
    if allowed is not None:
        return gr.Dropdown(choices=list(allowed), value=option.default, **named)
    if option.kind == "bool":
        return gr.Checkbox(value=bool(option.default), **named)
    # A rendered gr.Number cannot hold "no value": once the options are opened it sends 0, so a
    # numeric option whose library default is None (batch_size, max_length, ...) is a text box,
    # empty for the default (typed as on the command line, "none" included).
    if option.kind in {"int", "float"} and option.default is not None:
        return gr.Number(value=option.default, precision=0 if option.kind == "int" else None, **named)
    return gr.Textbox(value=_as_text(option.default), **named)


def _as_text(value: Any) -> str:
    """Option value as typed in a text box (lists comma-separated, as on the command line)."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return "" if value is None else str(value)


#: How a widget's value becomes the value of an option of each kind typed other than as text.
_FROM_WIDGET = {"int": int, "float": float, "bool": bool}


def _coerce(option: Option, value: Any) -> Any:
    """Widget value -> option value (Gradio numbers come back as float, empty text as '')."""
    if value is None or value == "":
        return option.default
    if option.kind in {"str_list", "float_list", "token"} or isinstance(value, str):
        return option.parse(str(value))  # typed as text, like on the command line
    return _FROM_WIDGET.get(option.kind, lambda same: same)(value)


def run_pair(protocol: MetricSpec, prediction: str, second: str, options: dict[str, Any]) -> MetricResult:
    """The library's result for one prediction and the second box (references split on ``---``)."""
    others: Any = [split_references(second)] if protocol.second_input == "references" else [second]
    return protocol.run([prediction], others, progress=False, **options)


def _same(value: Any, default: Any) -> bool:
    """Whether a widget value is the library default (a list equals the same tuple)."""
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return tuple(value) == tuple(default)
    return value == default


def columns_text(protocol: MetricSpec) -> str:
    """What the per-example columns mean, as the protocol's result class declares them (Markdown)."""
    lines = [f"- `{name}`: {column.description} ({'higher' if column.higher_is_better else 'lower'} is "
             f"better, range {column.range_text()})" for name, column in protocol.columns.items()]
    if protocol.main is not None:
        lines.insert(0, f"Main score: `{protocol.main}`.")
    return "\n".join(lines)


def build_demo(name: str, model: str | None = None, *, device: str | None = None,
               card_path: str | os.PathLike | None = None) -> Any:
    """Build (not launch) the ``gr.Blocks`` demo of metric ``name``.

    ``model`` pre-fills the model box of LM metrics (default: the metric's paper default, which
    needs the Hub; pass a local directory or ``smollm2-135m`` offline). ``device`` is passed to the
    library (default: CUDA when available).
    """
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    import gradio as gr

    protocol = get_protocol(name)
    with_references = protocol.second_input == "references"
    options_shown = protocol.resolved_options()
    explains = "explain" in protocol.accepted_options()  # LM metrics: where in the text the score comes from
    with gr.Blocks(title=f"nlgmetrics: {protocol.title}") as demo:
        # "<hash>", "<nlgmetrics version>" in a description are placeholders, not HTML tags
        description = protocol.description.replace("<", "&lt;")
        gr.Markdown(f"# {protocol.title}\n\n{description}\n\n{columns_text(protocol)}")
        with gr.Row():
            with gr.Column():
                prediction = gr.Textbox(label="Prediction" if with_references else "Summary", lines=3,
                                        elem_id="prediction")
                if with_references:
                    second = gr.Textbox(label="Reference(s): separate several with a line holding only "
                                        f"{REFERENCE_SEPARATOR}", lines=4, elem_id="reference")
                else:
                    second = gr.Textbox(label="Source document", lines=6, elem_id="source")
                with gr.Accordion("Options", open=False, elem_id="options"):
                    model_box = gr.Textbox(label=model_label(protocol), value=model or protocol.default_model
                                           or "", elem_id="option-model") if protocol.uses_model else None
                    widgets = [_option_widget(gr, option) for option in options_shown]
                submit = gr.Button("Compute", variant="primary", elem_id="submit")
            with gr.Column():
                score_box = gr.Textbox(label="Main score", elem_id="score", interactive=False)
                scores_box = gr.JSON(label="All scores", elem_id="scores")
                signature_box = gr.Textbox(label="Signature", elem_id="signature", interactive=False)
                explanation_box = gr.HTML(elem_id="explanation") if explains else None

        def run(prediction_text: str, second_text: str, *values: Any) -> tuple[Any, ...]:
            options: dict[str, Any] = {}
            if protocol.uses_model:
                model_value, *values = values  # type: ignore[assignment]
                if (model_value or "").strip():  # empty: the library's default model
                    options["model"] = model_value.strip()
                if device is not None:
                    options["device"] = device
            for option, value in zip(options_shown, values):
                value = _coerce(option, value)
                if not _same(value, option.default):  # library defaults apply otherwise
                    options[option.name] = value
            if explains:
                options["explain"] = True  # changes no number (not in the signature)
            try:
                result = run_pair(protocol, prediction_text or "", second_text or "", options)
            except (ValueError, OSError, ImportError) as error:
                # Shown to the user as a toast instead of a stack trace.
                raise gr.Error(str(error)) from error
            label = f"{result.main} ({'higher' if result.higher_is_better else 'lower'} is better)"
            explanation = [render_explanation(result.explanations[0], main=result.main)] if explains else []
            return (gr.update(value=repr(float(result.main_score)), label=label), result.aggregate(),
                    result.signature, *explanation)

        inputs = [box for box in (prediction, second, model_box, *widgets) if box is not None]
        outputs = [box for box in (score_box, scores_box, signature_box, explanation_box) if box is not None]
        submit.click(run, inputs=inputs, outputs=outputs, api_name="score")
        gr.Examples(examples=[list(_EXAMPLES[protocol.second_input])], inputs=[prediction, second])
        card = _card_text(name, card_path)
        if card:
            with gr.Accordion("Model card", open=False):
                gr.Markdown(card)
    return demo


def model_label(protocol: MetricSpec) -> str:
    """The model box's label: the kinds of LM the metric takes (its protocol's ``model_kinds``), and
    the offline alias only where it can run (a causal LM).

    >>> from nlgmetrics.registry import get_protocol
    >>> model_label(get_protocol("blanc")), model_label(get_protocol("fflm"))
    ('model (masked LM): Hub id or local directory', 'model (causal LM): Hub id, local directory, or smollm2-135m')
    """
    kinds = " or ".join(protocol.model_kinds)
    where = "Hub id, local directory, or smollm2-135m" if protocol.takes_offline_model else "Hub id or local directory"
    return f"model ({kinds} LM): {where}"


def launch_demo(name: str, model: str | None = None, server_port: int | None = None, *,
                server_name: str | None = None, device: str | None = None, block: bool = True,
                card_path: str | os.PathLike | None = None, **launch_kwargs: Any) -> Any:
    """Build the demo of ``name`` and serve it (what ``metrics/<name>/app.py`` calls).

    ``block=False`` returns right after the server starts (tests, notebooks); call ``.close()`` on
    the returned Blocks to stop it. Other keywords go to ``gr.Blocks.launch``.
    """
    demo = build_demo(name, model, device=device, card_path=card_path)
    import gradio as gr

    # The stock theme pulls Google Fonts, which an offline machine (or a sandboxed browser) cannot
    # reach: system fonts instead. Gradio 6 takes the theme in launch().
    theme = gr.themes.Default(font=["system-ui", "sans-serif"], font_mono=["ui-monospace", "monospace"])
    demo.launch(server_port=server_port, server_name=server_name, prevent_thread_lock=not block,
                **{"theme": theme, **launch_kwargs})
    return demo
