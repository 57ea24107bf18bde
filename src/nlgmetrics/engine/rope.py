"""Rotary scalings whose frequencies depend on the length of the forward pass, read from the config.

transformers (``modeling_rope_utils.dynamic_rope_update``) recomputes the rotary frequencies of
two families on every pass from the pass's longest position, ``max(position_ids) + 1``, one value
for every row of the batch:

- ``longrope`` (Phi-3-mini-128k, Phi-3.5-mini, PhiMoE): the long factors (and, in PhiMoE, the long
  attention scale) past ``original_max_position_embeddings``, the short ones up to it;
- ``dynamic`` (dynamic NTK, any rope type whose name holds ``"dynamic"``): past
  ``max_position_embeddings`` a base grown for that exact length, kept as module state until a
  pass shorter than the threshold resets it (a pass of exactly the threshold does not).

``linear``, ``yarn``, ``llama3``, ``proportional`` and ``default`` are computed once from the
config. So with the two above, a query batched with a longer row, packed beside others or scored
behind a prefix cached in a shorter pass gets other numbers than its own forward pass gives.
:func:`length_dependent_rope` says which configs do and from which length, and the engine plans
around it (:mod:`~nlgmetrics.engine.causal`, :mod:`~nlgmetrics.engine.masked`, Shannon's planning);
:func:`fresh_dynamic_rope` clears the dynamic state and
:func:`per_pass_rotary_state` names the state a fingerprint leaves out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class LengthDependentRope:
    """A config's length-dependent rotary scaling.

    A query whose whole sequence (prefix + target) holds at most ``threshold`` tokens is in the
    short regime: any pass whose positions all stay below ``threshold`` gives it its own numbers.
    A longer one needs a pass whose longest position is its own: with ``same_length_only`` (the
    frequencies follow the exact length, or layers disagree on the threshold) only queries of its
    exact length may share it; otherwise any queries past the threshold may.
    """

    rope_types: tuple[str, ...]
    threshold: int
    same_length_only: bool

    @property
    def stateful(self) -> bool:
        """Whether a pass leaves frequencies behind for the next (dynamic NTK): see :func:`fresh_dynamic_rope`."""
        return any("dynamic" in rope_type for rope_type in self.rope_types)

    def is_long(self, tokens: int) -> bool:
        """Whether a query whose whole sequence holds ``tokens`` tokens is in the long regime."""
        return tokens > self.threshold

    def pass_group(self, tokens: int) -> int:
        """Queries whose whole sequences (read from position 0, right-padded) get equal groups may
        share a pass as wide as the widest of them and each keep its own numbers: ``0`` for the
        short regime, the exact length where the frequencies follow it, ``-1`` for the rest of
        the long regime.

        >>> [LengthDependentRope(("dynamic",), 32, True).pass_group(n) for n in (5, 32, 33, 40)]
        [0, 0, 33, 40]
        >>> [LengthDependentRope(("longrope",), 32, False).pass_group(n) for n in (5, 32, 33, 40)]
        [0, 0, -1, -1]
        """
        if not self.is_long(tokens):
            return 0
        return tokens if self.same_length_only else -1

    def keeps_numbers(self, tokens: int, pass_tokens: int) -> bool:
        """Whether a query of ``tokens`` tokens, read as the first ``tokens`` positions of a pass
        over ``pass_tokens >= tokens`` (a longer query it begins, e.g. Shannon's base and full in
        one), gets the numbers of its own pass there.

        >>> longrope = LengthDependentRope(("longrope",), threshold=32, same_length_only=False)
        >>> longrope.keeps_numbers(20, 32), longrope.keeps_numbers(20, 33), longrope.keeps_numbers(33, 60)
        (True, False, True)
        >>> dynamic = LengthDependentRope(("dynamic",), threshold=32, same_length_only=True)
        >>> dynamic.keeps_numbers(20, 32), dynamic.keeps_numbers(33, 60), dynamic.keeps_numbers(40, 40)
        (True, False, True)
        """
        if not self.is_long(pass_tokens):
            return True
        if self.same_length_only:  # the frequencies follow the pass's exact length
            return tokens == pass_tokens
        return self.is_long(tokens)


def length_dependent_rope(config: Any) -> LengthDependentRope | None:
    """The length-dependent rotary scaling of ``config`` (or its ``text_config``), else ``None``.

    Reads ``rope_parameters`` (transformers 5) or ``rope_scaling`` (4.x), flat or nested by layer
    type, with the rope type under ``rope_type`` or ``type``.

    >>> from types import SimpleNamespace as Config
    >>> length_dependent_rope(Config(rope_parameters={"rope_type": "yarn", "factor": 4.0}, max_position_embeddings=64))
    >>> length_dependent_rope(Config(rope_scaling={"type": "dynamic", "factor": 2.0}, max_position_embeddings=64))
    LengthDependentRope(rope_types=('dynamic',), threshold=64, same_length_only=True)
    >>> length_dependent_rope(Config(rope_parameters={"rope_type": "longrope", "original_max_position_embeddings": 32},
    ...                              max_position_embeddings=256))
    LengthDependentRope(rope_types=('longrope',), threshold=32, same_length_only=False)
    """
    found = [scaling for each in (config, getattr(config, "text_config", None))
             for scaling in _scalings(each)]
    if not found:
        return None
    types = tuple(sorted({rope_type for rope_type, _ in found}))
    thresholds = {threshold for _, threshold in found}
    exact = any("dynamic" in rope_type for rope_type in types) or len(thresholds) > 1
    return LengthDependentRope(types, min(thresholds), exact)


def _scalings(config: Any) -> list[tuple[str, int]]:
    """``(rope_type, threshold)`` of each length-dependent entry of one config's rotary parameters."""
    parameters = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None)
    if not isinstance(parameters, Mapping):
        return []
    nested = [value for value in parameters.values() if isinstance(value, Mapping)]
    entries = nested if nested and not _rope_type(parameters) else [parameters]
    max_positions = getattr(config, "max_position_embeddings", None)
    found = []
    for entry in entries:
        rope_type = _rope_type(entry)
        if rope_type == "longrope":
            # transformers prefers the config's own field (Phi-3 keeps it there), as its
            # standardize_rope_params does, then the entry's, then the context length.
            original = getattr(config, "original_max_position_embeddings", None) if entry is parameters else None
            threshold = original or entry.get("original_max_position_embeddings") or max_positions
        elif "dynamic" in rope_type:  # transformers' own test: any type naming "dynamic"
            threshold = max_positions
        else:
            continue
        if not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 1:
            raise ValueError(
                f"rope_type {rope_type!r} needs a positive context length to scale from, got {threshold!r}; "
                "set max_position_embeddings (and original_max_position_embeddings for longrope) in the config."
            )
        found.append((rope_type, threshold))
    return found


def _rope_type(entry: Mapping) -> str:
    value = entry.get("rope_type", entry.get("type"))
    return value if isinstance(value, str) else ""


#: A dynamic-NTK rotary module, with the prefix of its attributes (``"full_attention_"`` for one
#: layer type of a module holding several, ``""`` otherwise).
DynamicRotary = tuple[torch.nn.Module, str]


def _scaled_rotaries(module: torch.nn.Module) -> list[tuple[str, str]]:
    """``(prefix, rope_type)`` of each length-dependent rotary of one module (or per-layer-type part
    of it, prefix ``"<layer type>_"``) that transformers updates per pass, found by the attributes
    its update reads; empty for other modules."""
    rope_type = getattr(module, "rope_type", None)
    if not hasattr(module, "original_max_seq_len") or not isinstance(rope_type, (str, Mapping)):
        return []
    parts = ([(f"{layer_type}_", each) for layer_type, each in rope_type.items()]
             if isinstance(rope_type, Mapping) else [("", rope_type)])
    return [(prefix, each) for prefix, each in parts if isinstance(each, str)
            and (each == "longrope" or "dynamic" in each) and hasattr(module, f"{prefix}original_inv_freq")]


def dynamic_rotary_modules(model: torch.nn.Module) -> list[DynamicRotary]:
    """Every rotary module (or per-layer-type part of one) that transformers updates as dynamic,
    found by the attributes its update reads; empty for other models. A walk over the modules:
    find them once per call, not per pass."""
    return [(module, prefix) for module in model.modules()
            for prefix, rope_type in _scaled_rotaries(module) if "dynamic" in rope_type]


def per_pass_rotary_state(module: torch.nn.Module) -> frozenset[str]:
    """The attributes of ``module`` (buffers and plain ones) that transformers rewrites during the
    passes of a length-dependent rotary scaling, from what it keeps beside them; empty for other
    modules.

    What a pass computes does not depend on them, only on the kept ``original_inv_freq`` and the
    config: ``inv_freq`` is grown for a long pass (dynamic NTK: the engine restores it and
    ``max_seq_len_cached`` before each unit, :func:`fresh_dynamic_rope`) or overwritten by every
    pass with the short or long factors (longrope, whose ``long_inv_freq`` transformers derives
    from the config on the first long pass). So a fingerprint leaves them out: a model object that
    ran a long pass computes what it computed before.
    """
    return frozenset(f"{prefix}{name}" for prefix, rope_type in _scaled_rotaries(module) for name in
                     ("inv_freq", "long_inv_freq" if rope_type == "longrope" else "max_seq_len_cached"))


@contextlib.contextmanager
def fresh_dynamic_rope(modules: list[DynamicRotary]) -> Iterator[None]:
    """Run passes with the dynamic-NTK rotary ``modules`` (:func:`dynamic_rotary_modules`) as
    freshly loaded, and leave them so.

    transformers keeps a grown base as module state: a later pass shorter than the last long one
    but past the threshold reuses the longer one's frequencies, and one of exactly the threshold is
    not reset. From the fresh state a pass within the threshold keeps the original frequencies and
    a longer one grows them for its own longest position; restoring after leaves no state behind
    that a later call, or the model's fingerprint, could see.
    """
    _restore(modules)
    try:
        yield
    finally:
        _restore(modules)


def _restore(modules: list[DynamicRotary]) -> None:
    for module, prefix in modules:
        current = getattr(module, f"{prefix}inv_freq")
        original = getattr(module, f"{prefix}original_inv_freq")
        # A copy: transformers' own reset makes the two one tensor, which a later update could write.
        module.register_buffer(f"{prefix}inv_freq", original.to(current.device).clone(), persistent=False)
        setattr(module, f"{prefix}max_seq_len_cached", module.original_max_seq_len)
