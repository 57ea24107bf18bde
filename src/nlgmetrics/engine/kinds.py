"""Whether a model is a masked LM (fill-in-the-blank, BERT) or a causal LM (next token, GPT-2).

Decided from the config's ``architectures`` (the class that saved the checkpoint), else from the
model type; a model with neither head is refused, since loading it through an auto class would
silently put a randomly initialised head on top.

>>> kind_from_architectures(["BertForMaskedLM"]), kind_from_architectures(["GPT2LMHeadModel"])
('masked', 'causal')
>>> check_kind("gpt2", "causal", "masked", ["GPT2LMHeadModel"])
Traceback (most recent call last):
...
nlgmetrics.engine.errors.ModelKindError: Model 'gpt2' is a causal LM (next-token, e.g. GPT-2) (['GPT2LMHeadModel']), but this needs a masked LM (fill-in-the-blank, e.g. BERT). Pass a masked model instead.
"""

from __future__ import annotations

from typing import Any, Literal

from nlgmetrics.engine.errors import ModelKindError
from nlgmetrics.engine.smollm2 import SMOLLM2_ALIAS

Kind = Literal["masked", "causal"]
KINDS: tuple[Kind, ...] = ("masked", "causal")

# The class-name suffix of each LM head (``BertForMaskedLM``, ``LlamaForCausalLM``, ``GPT2LMHeadModel``).
_HEAD_SUFFIXES: dict[str, Kind] = {"ForMaskedLM": "masked", "ForCausalLM": "causal", "LMHeadModel": "causal"}
_WHAT = {"masked": "a masked LM (fill-in-the-blank, e.g. BERT)", "causal": "a causal LM (next-token, e.g. GPT-2)"}


def kind_from_architectures(architectures: list[str] | None) -> Kind | None:
    """The kind named by the first architecture with an LM head, else ``None``."""
    return next((kind for arch in architectures or [] for suffix, kind in _HEAD_SUFFIXES.items()
                 if arch.endswith(suffix)), None)


def kind_from_model_type(config: Any) -> Kind | None:
    """Fallback when ``config.architectures`` says nothing: which auto-class families know the type."""
    from transformers.models.auto import modeling_auto

    model_type = getattr(config, "model_type", None)
    masked = model_type in modeling_auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    causal = model_type in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    if masked and (not causal or not getattr(config, "is_decoder", False)):
        return "masked"
    return "causal" if causal else None


def detect_kind(config: Any) -> Kind | None:
    """The kind of a checkpoint from its config; ``None`` when it has no LM head."""
    architectures = list(getattr(config, "architectures", None) or [])
    # No architectures recorded, or a pre-training checkpoint (BertForPreTraining carries the MLM
    # head under the same weight names): the model type decides; a head that turns out to be
    # missing is caught by the loader's missing-weights check (e.g. ELECTRA discriminators).
    by_type = not architectures or any(a.endswith("ForPreTraining") for a in architectures)
    return kind_from_architectures(architectures) or (kind_from_model_type(config) if by_type else None)


def instance_kind(model: Any) -> Kind | None:
    """The kind of a model object: named by its class, else, when it has an output embedding, by
    its config's model type; ``None`` when it has no LM head."""
    detected = kind_from_architectures([type(model).__name__])
    output_embeddings = getattr(model, "get_output_embeddings", None)
    if detected is None and callable(output_embeddings) and output_embeddings() is not None:
        detected = kind_from_model_type(getattr(model, "config", None))
    return detected


def head_less_error(name: str, architectures: list[str] | None, kind: Kind | None) -> ModelKindError:
    """The error for a model without the LM head a metric needs (encoder-decoders named as such)."""
    if any(a.endswith("ForConditionalGeneration") for a in architectures or []):
        return ModelKindError(
            f"Model {name!r} is an encoder-decoder model ({architectures}); the engine scores masked LMs "
            "(e.g. 'bert-base-uncased') and decoder-only causal LMs (e.g. 'gpt2', the alias "
            f"{SMOLLM2_ALIAS!r})."
        )
    wanted = {"masked": "a masked LM head (e.g. BertForMaskedLM)", "causal": "a causal LM head (e.g. GPT2LMHeadModel)", None: "an LM head"}[kind]
    return ModelKindError(
        f"Model {name!r} has no LM head (architectures={architectures}); metrics need {wanted}. "
        "Pass a checkpoint saved with its head, such as 'bert-base-uncased' for masked metrics or "
        f"'gpt2' / the offline alias {SMOLLM2_ALIAS!r} for causal ones."
    )


def check_kind(name: str, detected: Kind | None, requested: Kind | None, architectures: list[str] | None) -> Kind:
    """The model's kind, after checking it has an LM head and serves the ``requested`` kind (one
    of :data:`KINDS` or ``None``: :func:`~nlgmetrics.engine.loading.load_lm` refuses others)."""
    if detected is None:
        raise head_less_error(name, architectures, requested)
    if requested is not None and requested != detected:
        raise ModelKindError(
            f"Model {name!r} is {_WHAT[detected]} ({architectures}), but this needs {_WHAT[requested]}. "
            f"Pass a {requested} model instead."
        )
    return detected


def keeps_causal_attention(model: Any) -> bool:
    """Whether a causal model's config leaves its attention causal: not turned off by transformers'
    ``is_causal`` switch or Gemma's ``use_bidirectional_attention``, on the config or its
    ``text_config``. Read from the config, nothing probed.

    >>> from types import SimpleNamespace as Config
    >>> keeps_causal_attention(Config(config=Config())), keeps_causal_attention(Config(config=Config(is_causal=False)))
    (True, False)
    """
    config = getattr(model, "config", None)
    configs = [config, getattr(config, "text_config", None)] if config is not None else []
    return not any(getattr(each, "is_causal", True) is False or getattr(each, "use_bidirectional_attention", None)
                   for each in filter(None, configs))
