"""What a token budget costs in memory, and ``token_budget="auto"``: the largest that fits.

A forward pass of ``token_budget`` padded tokens holds, besides the weights, the activations of
one layer at a time, the keys and values of a pass behind a cached prefix, and the logits of its
head rows: at most ``min(vocabulary, LOGITS_VOCABULARY)`` per budget token, since the planner
(:mod:`nlgmetrics.engine.planning`) cuts a larger vocabulary's head rows in proportion; a sequence
longer than the budget runs alone and costs its own length. The cost model (:func:`pass_cost`),
bytes per budget token read from the loaded model's config and dtype, bounded a call's measured
memory at every budget but the smallest, where one lone pass went 3 % over
(``benchmarks/results/memory_budget/memory_budget.md``).

``"auto"`` (:func:`auto_token_budget`) takes :data:`AUTO_MEMORY_FRACTION` of the memory free on the
model's device when the call starts (CPU: ``MemAvailable``, within a cgroup's limit; CUDA:
``mem_get_info`` plus what torch's allocator holds unused), divides by the cost per token, and
rounds down to a power of two within [:data:`MIN_AUTO_BUDGET`, :data:`MAX_AUTO_BUDGET`] (so a
little more or less free memory leaves the plan as it was). It changes no float32 number; in
half precision a pass's batching can move the last bits, so "auto" can too.

>>> cost = PassCost(logits=196_608, activations=27_648, cache=46_080)
>>> cost.per_token, budget_for(cost, free_bytes=8 * 2**30)
(270336, 8192)
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from nlgmetrics.core.validation import AUTO_TOKEN_BUDGET
from nlgmetrics.engine.heads import output_embeddings
from nlgmetrics.engine.planning import LOGITS_VOCABULARY

#: The share of the free memory "auto" plans a pass into: the rest is for what the cost model
#: leaves out (attention scores, the metric's own arrays) and for other processes.
AUTO_MEMORY_FRACTION = 0.5
#: The bounds of an "auto" budget: below 512 a pass's fixed costs dominate; above 65,536 a pass
#: gains no speed and a single allocation grows past what a host frees promptly.
MIN_AUTO_BUDGET = 512
MAX_AUTO_BUDGET = 65_536
#: The budget "auto" falls back to where the free memory cannot be read (the default of most LM metrics).
UNKNOWN_MEMORY_BUDGET = 8192


@dataclass(frozen=True)
class PassCost:
    """Bytes per budget token of one forward pass: ``logits`` (the head's output and its float32
    copy), ``activations`` (one layer's, the largest set alive at once) and ``cache`` (keys and
    values of every layer, held by a pass behind a cached prefix)."""

    logits: int
    activations: int
    cache: int

    @property
    def per_token(self) -> int:
        return self.logits + self.activations + self.cache


def _positive_int(holder: Any, *names: str) -> int | None:
    """The first of ``holder``'s attributes ``names`` that is a positive int, else None."""
    for name in names:
        value = getattr(holder, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _text_config(model: torch.nn.Module) -> Any:
    config = getattr(model, "config", None)
    text = getattr(config, "text_config", None)  # multimodal configs keep the LM's sizes apart
    return text if text is not None else config


def logits_width(model: torch.nn.Module) -> int:
    """The number of logits per head row (the vocabulary the LM head scores), 0 where unknown.

    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> logits_width(GPT2LMHeadModel(GPT2Config(n_embd=8, n_layer=1, n_head=2, vocab_size=50)))
    50
    """
    # out_features, not the weight's shape: a quantized head's weight has another shape
    head = output_embeddings(model)
    return _positive_int(head, "out_features") or _positive_int(_text_config(model), "vocab_size") or 0


def pass_cost(model: torch.nn.Module, dtype: torch.dtype) -> PassCost:
    """The cost model of ``model`` run in ``dtype``, per budget token, from its config.

    - logits: ``min(vocabulary, LOGITS_VOCABULARY)`` values in ``dtype``, plus their float32 copy
      where ``dtype`` is not float32;
    - activations: four hidden-sized and three MLP-sized vectors (the residual, its norm, the
      attention's input and output; a gated MLP's two projections and their product);
    - cache: each layer's keys and values (``2 x key/value heads x head size``).
    """
    config = _text_config(model)
    size = torch.empty((), dtype=dtype).element_size()
    hidden = (_positive_int(config, "hidden_size", "n_embd", "d_model", "dim")
              or int(model.get_input_embeddings().weight.shape[-1]))
    intermediate = _positive_int(config, "intermediate_size", "n_inner", "ffn_dim", "hidden_dim") or 4 * hidden
    layers = _positive_int(config, "num_hidden_layers", "n_layer", "num_layers", "n_layers") or 1
    heads = _positive_int(config, "num_attention_heads", "n_head") or 1
    head_size = _positive_int(config, "head_dim") or max(hidden // heads, 1)
    kv_heads = _positive_int(config, "num_key_value_heads") or heads
    vocabulary = min(logits_width(model) or LOGITS_VOCABULARY, LOGITS_VOCABULARY)
    return PassCost(
        logits=vocabulary * (size + (0 if size == 4 else 4)),
        activations=size * (4 * hidden + 3 * intermediate),
        cache=size * layers * 2 * kv_heads * head_size,
    )


def _proc_mem_available(path: str = "/proc/meminfo") -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(path).read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return None


def _cgroup_room(root: str = "/sys/fs/cgroup") -> int | None:
    """What this process's cgroup (v2) may still take: ``memory.max - memory.current``; None without a limit."""
    with contextlib.suppress(OSError, ValueError):
        limit = Path(root, "memory.max").read_text().strip()
        if limit != "max":
            return max(int(limit) - int(Path(root, "memory.current").read_text().strip()), 0)
    return None


def host_available_memory() -> int | None:
    """Bytes the host can give this process without swapping: ``MemAvailable`` (psutil where there
    is no ``/proc``), within the cgroup's limit; None where neither can be read."""
    available = _proc_mem_available()
    if available is None:
        with contextlib.suppress(ImportError):
            import psutil  # optional: macOS and Windows have no /proc/meminfo

            available = int(psutil.virtual_memory().available)
    return min((known for known in (available, _cgroup_room()) if known is not None), default=None)


def free_memory(device: torch.device) -> int | None:
    """Bytes free for a pass on ``device``: an accelerator's ``mem_get_info`` plus what torch's
    caching allocator holds unused (CUDA), else the host's available memory (CPU; MPS shares it)."""
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device))
    mem_get_info = getattr(getattr(torch, device.type, None), "mem_get_info", None)
    if device.type != "cpu" and callable(mem_get_info):
        with contextlib.suppress(RuntimeError, TypeError):
            return int(mem_get_info(device)[0])
    return host_available_memory()


def budget_for(cost: PassCost, free_bytes: int | None) -> int:
    """The largest power-of-two budget whose pass fits :data:`AUTO_MEMORY_FRACTION` of
    ``free_bytes`` at ``cost``, within [:data:`MIN_AUTO_BUDGET`, :data:`MAX_AUTO_BUDGET`];
    :data:`UNKNOWN_MEMORY_BUDGET` where the free memory is unknown.

    >>> budget_for(PassCost(4, 0, 0), 10**12), budget_for(PassCost(4, 0, 0), 0)
    (65536, 512)
    """
    if free_bytes is None:
        return UNKNOWN_MEMORY_BUDGET
    fits = int(free_bytes * AUTO_MEMORY_FRACTION) // max(cost.per_token, 1)
    largest = 1 << (max(fits, 1).bit_length() - 1)  # the largest power of two <= fits
    return min(max(largest, MIN_AUTO_BUDGET), MAX_AUTO_BUDGET)


def auto_token_budget(lm: Any, free_bytes: int | None = None) -> int:
    """The budget ``token_budget="auto"`` runs ``lm`` (a :class:`~nlgmetrics.engine.loading.LoadedLM`)
    with: :func:`budget_for` its :func:`pass_cost` and the memory free on its device now (or
    ``free_bytes``)."""
    free = free_memory(lm.device) if free_bytes is None else free_bytes
    return budget_for(pass_cost(lm.model, lm.dtype), free)


def planned_budget(lm: Any, token_budget: int | str) -> int:
    """The token budget a call plans with: ``token_budget`` itself, or :func:`auto_token_budget` for "auto"."""
    auto = token_budget == AUTO_TOKEN_BUDGET
    return auto_token_budget(lm) if auto else token_budget  # type: ignore[return-value]


