"""The main job: score a small built-in example with every metric this machine can run.

Run ``python scripts/example.py`` (``bash scripts/example.sh`` installs first); it is a user of the
installed package, not part of it. Every metric of the registry runs by default (ROUGE, BLEU, chrF,
TER, InfoLM, the Shannon score, BLANC, FFLM). Each prints its main score (``result.main``, with its
direction), the per-example values of that column where it is one (BLEU's, chrF's and TER's main
score is the corpus score: no per-example value), and its signature. LM metrics try the library's
default model first (``bert-base-uncased`` for InfoLM and BLANC and ``gpt2`` for the Shannon score,
as in their papers; ``HuggingFaceTB/SmolLM2-1.7B`` for FFLM, our choice: its paper used LLaMA-7B);
without network access they fall back to the offline SmolLM2-135M (alias ``smollm2-135m``) where
the metric accepts a causal LM, and are skipped with a one-line reason where it does not (BLANC
needs a masked LM): for each model tried, the whole first sentences of its error
(:func:`short_reason`), never a message cut mid-word.

>>> [len(EXAMPLE[key]) for key in ("predictions", "references", "documents")]
[3, 3, 3]
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nlgmetrics.core.result import MetricResult

OFFLINE_CAUSAL_ALIAS = "smollm2-135m"

#: A skip reason keeps whole sentences of the error's first line up to this many characters
#: (at least its first sentence, however long).
REASON_LENGTH = 200

# Written for this project: three short news-style documents, a reference summary for each and a
# system summary of varying quality (faithful, partly wrong, off-topic).
EXAMPLE: dict[str, list[Any]] = {
    "documents": [
        "The city council voted on Tuesday to build a new public library in the old market hall. "
        "The project will cost 12 million euros and open in 2028. "
        "Supporters said the town has lacked a modern library for decades.",
        "Heavy rain flooded several streets in the harbour district overnight. "
        "Firefighters pumped water from twenty basements, and nobody was hurt. "
        "The weather service expects more rain on Friday.",
        "A local bakery won the national bread award for its rye sourdough. "
        "The owners, two sisters, opened the shop ten years ago. "
        "They plan to use the prize money to train two apprentices.",
    ],
    "references": [
        "The council approved a 12 million euro library in the old market hall, opening in 2028.",
        ["Overnight rain flooded streets in the harbour district; no one was injured.",
         "Floods hit the harbour district overnight, but nobody was hurt."],
        "Two sisters' bakery won the national bread award for its rye sourdough.",
    ],
    "predictions": [
        "The city council approved a new library in the old market hall that will open in 2028.",
        "Heavy rain flooded the harbour district and injured twenty firefighters.",
        "The football club signed a new striker on Monday.",
    ],
}


def hub_reachable(host: str = "huggingface.co", timeout: float = 3.0) -> bool:
    """Whether the Hugging Face Hub answers on port 443 within ``timeout`` seconds."""
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def default_metrics() -> list[str]:
    """Every metric of the registry, in its order."""
    from nlgmetrics.registry import metric_names

    return metric_names()


def short_reason(error: BaseException, limit: int = REASON_LENGTH) -> str:
    """Why a model could not be used, in whole sentences: those of the error's first line that fit
    in ``limit`` characters, at least the first one (split with the library's offline splitter).

    >>> short_reason(ValueError("Model 'x' is a causal LM (e.g. GPT-2). Pass a masked model. More."), limit=45)
    "Model 'x' is a causal LM (e.g. GPT-2)."
    """
    from nlgmetrics.core.sentences import split_sentences

    lines = str(error).strip().splitlines()
    if not lines:
        return type(error).__name__
    sentences = split_sentences(lines[0]) or [lines[0].strip()]
    reason = sentences[0]
    for sentence in sentences[1:]:
        if len(reason) + 1 + len(sentence) > limit:
            break
        reason = f"{reason} {sentence}"
    return reason


def run_metric(name: str, model: str | None, progress: bool) -> tuple[MetricResult | None, str]:
    """Run one metric on the example; return (its result or None, note)."""
    from nlgmetrics.registry import get_protocol

    protocol = get_protocol(name)
    others = EXAMPLE["references"] if protocol.second_input == "references" else EXAMPLE["documents"]
    predictions = EXAMPLE["predictions"]
    if not protocol.uses_model:
        return protocol.run(predictions, others, progress=progress), ""
    candidates = [model] if model else [protocol.default_model, OFFLINE_CAUSAL_ALIAS]
    failures: list[str] = []
    for candidate in candidates:
        try:
            result = protocol.run(predictions, others, progress=progress, model=candidate)
        except (OSError, ValueError) as error:  # model not available, or wrong kind of model
            failures.append(f"{candidate}: {short_reason(error)}")
            continue
        note = "" if candidate == protocol.default_model else f"model {candidate} (the default {protocol.default_model} is not available offline)"
        return result, note
    return None, "skipped: " + " | ".join(failures)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python scripts/example.py",
        description="Score a small built-in example with every metric available on this machine.",
    )
    parser.add_argument("--metrics", default=",".join(default_metrics()),
                        help=f"comma-separated subset of metrics (default: all: {', '.join(default_metrics())})")
    parser.add_argument("--model", default=None,
                        help="model for every LM metric (Hub id, local directory or 'smollm2-135m'); "
                             "default: each metric's default model (the papers' for InfoLM, BLANC and the "
                             "Shannon score; HuggingFaceTB/SmolLM2-1.7B for FFLM, whose paper used LLaMA-7B), "
                             "else the offline SmolLM2")
    parser.add_argument("--progress", action="store_true", help="show progress bars")
    args = parser.parse_args(argv)

    # Without a network, huggingface_hub retries every download with back-off (~25 s per model).
    # Decide once, before it is imported, and say so.
    if not os.environ.get("HF_HUB_OFFLINE") and not hub_reachable():
        os.environ["HF_HUB_OFFLINE"] = "1"
        print("(the Hugging Face Hub is not reachable: offline mode, local models only)")

    print("nlgmetrics example: 3 predictions, their references and source documents\n")
    for name in [m.strip() for m in args.metrics.split(",") if m.strip()]:
        result, note = run_metric(name, args.model, args.progress)
        if result is None:
            print(f"{name:14s} {note}\n")
            continue
        values = result.scores.get(result.main) or []
        per_example = ", ".join(f"{v:.4f}" for v in values)
        direction = "higher" if result.higher_is_better else "lower"
        print(f"{name:14s} {result.main} = {result.main_score:.4f} ({direction} is better)"
              + (f"  per example: [{per_example}]" if values else ""))
        if note:
            print(f"{'':14s} {note}")
        print(f"{'':14s} signature: {result.signature}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
