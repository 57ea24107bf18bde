"""Adapters (PEFT): the model the engine runs for an adapted object, and the adapter it names.

A PEFT ``PeftModel`` wraps a transformers model whose layers it has replaced in place by adapted
ones (LoRA and the other tuners inject their weights into the wrapped model's modules). The
engine runs the wrapped model itself (:func:`scored_module`): its body and LM head are the ones
the head-gathering hook and the prefix cache expect (:mod:`nlgmetrics.engine.heads`), and the
adapted layers inside it still apply. Prompt-learning adapters (prompt / prefix tuning, P-tuning)
live in the wrapper's forward instead, and add virtual tokens the engine does not plan for: they
are refused.

Which adapters are active (and whether they are switched off) is state of the adapted layers that
the weights fingerprint does not read, so :func:`adapter_label` names it, for the signature's
``model`` field and the store's namespace.
"""

from __future__ import annotations

import sys

import torch


def scored_module(model: torch.nn.Module) -> torch.nn.Module:
    """The module the engine runs for ``model``: the wrapped model of a ``PeftModel`` (with its
    adapted layers), ``model`` itself otherwise. Raises ``ValueError`` for a prompt-learning adapter."""
    peft_model = getattr(sys.modules.get("peft"), "PeftModel", None)  # it exists only once peft is imported
    if peft_model is None or not isinstance(model, peft_model):
        return model
    configs = getattr(model, "peft_config", {}) or {}
    prompt = [name for name in model.active_adapters if getattr(configs.get(name), "is_prompt_learning", False)]
    if prompt:
        raise ValueError(
            f"The PeftModel's adapter {prompt[0]!r} is a prompt-learning adapter (prompt / prefix tuning, "
            "P-tuning), which adds virtual tokens the engine does not score: pass a LoRA-style adapter, or "
            "the base model."
        )
    return model.get_base_model()


def adapter_label(model: torch.nn.Module) -> str | None:
    """``"<tuner>(<active adapters>)"`` for a model holding adapted layers (``"lora(default)"``;
    ``"lora(default)-disabled"`` while they are switched off, ``-partly-disabled`` in some of
    them), ``None`` for a model without any."""
    # It exists only once peft is imported (as a PeftModel's own package is).
    layer_class = getattr(sys.modules.get("peft.tuners.tuners_utils"), "BaseTunerLayer", None)
    layers = [module for module in model.modules() if isinstance(module, layer_class)] if layer_class else []
    if not layers:
        return None
    # The tuner's name is its package (peft.tuners.lora.layer.Linear: "lora").
    kinds = sorted({type(layer).__module__.split(".")[2] if type(layer).__module__.startswith("peft.tuners.")
                    else type(layer).__name__ for layer in layers})
    names = sorted({name for layer in layers for name in layer.active_adapters})
    label = f"{'+'.join(kinds)}({','.join(names)})"
    disabled = sum(bool(layer.disable_adapters) for layer in layers)
    if disabled:
        label += "-disabled" if disabled == len(layers) else "-partly-disabled"
    return label
