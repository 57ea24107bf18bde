"""Run the reference Shannon score, PyPI ``blanc`` 0.3.4 ``Shannon.go``, on our weights (no pytest).

Used by tests/parity/test_shannon_parity.py (token-by-token parity) and benchmarks/speed/shannon.py
(speed, on CPU or CUDA, in float32 or bfloat16). It imports neither pytest nor test fixtures, so
the benchmark runs where only the runtime packages and blanc are installed.
"""

from __future__ import annotations

import contextlib
import inspect
from pathlib import Path
from typing import Any

import torch

from nlgmetrics.core.sentences import split_sentences


def _dynamic_cache(pairs: list[tuple[torch.Tensor, torch.Tensor]]):
    """A transformers ``DynamicCache`` holding ``(keys, values)`` per layer."""
    from transformers import DynamicCache

    try:
        return DynamicCache(ddp_cache_data=pairs)
    except TypeError:  # releases without the ``ddp_cache_data`` argument
        return DynamicCache.from_legacy_cache(tuple(pairs))


def _cache_layers(cache: Any) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``(keys, values)`` per layer of a transformers cache (layered, older lists, or legacy tuples)."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [(layer.keys, layer.values) for layer in layers]
    if hasattr(cache, "key_cache"):
        return list(zip(cache.key_cache, cache.value_cache))
    return [(layer[0], layer[1]) for layer in cache]


class PastTupleLM(torch.nn.Module):
    """Old-transformers calling convention expected by ``blanc.shannon`` (GPT-2 branch).

    blanc does ``logits, past = model(input_ids, past_key_values=past, ...)`` and, when a
    sequence outgrows the context, trims ``past`` with ``t[:, :, :, 1:, :]`` -- the GPT-2 cache
    format of transformers 2.x/3.x: one tensor ``[2, batch, heads, seq, head_dim]`` per layer
    (transformers 3 also stacked keys and values per call, so the stack is no extra work for blanc).

    The wrapped model's KV-cache argument is ``cache`` from transformers 5.2x on and
    ``past_key_values`` before (both forwards take ``**kwargs``, so the wrong name would be
    silently ignored): it is read from the signature, as nlgmetrics.engine.causal does.
    """

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model
        self.config = model.config
        parameters = inspect.signature(model.forward).parameters
        self.cache_argument = "cache" if "cache" in parameters else "past_key_values"

    def forward(self, input_ids, past_key_values=None, use_cache=None, position_ids=None,
                attention_mask=None, **_ignored):
        cache = None
        if past_key_values is not None:
            cache = _dynamic_cache([(layer[0], layer[1]) for layer in past_key_values])
        out = self.model(input_ids=input_ids, use_cache=True, **{self.cache_argument: cache})
        new_cache = out["cache"] if "cache" in out else out["past_key_values"]
        past = [torch.stack([keys, values]) for keys, values in _cache_layers(new_cache)]
        return out["logits"], past


def _blanc_device(device: str | torch.device) -> str:
    """blanc compares ``self.device == 'cuda'`` (it moves an empty context tensor with ``.cuda()``
    only then), so a CUDA device is passed to it as ``"cuda"``, made the current device first."""
    resolved = torch.device(device)
    if resolved.type != "cuda":
        return resolved.type
    if resolved.index is not None:
        torch.cuda.set_device(resolved.index)
    return "cuda"


class _Float64Softmax:
    """``torch.nn.functional`` for blanc's module, with ``softmax`` computed in float64.

    blanc scores a token as ``log(softmax(logits)[token])`` in the model's dtype. On this CPU
    (AVX-512) torch's float32 softmax kernel moves the probability of a rare token (p ~ 2e-7) by
    ~7e-6 relative, i.e. log p by ~1e-4, and by a different amount on AVX2 machines: the reference
    number would depend on the machine that runs it. With the softmax in float64 (the model and its
    logits unchanged) blanc's value is the exact log-softmax of its own logits, the same everywhere,
    and our float32 numbers must match it to the parity tolerance.
    """

    def __getattr__(self, name: str) -> Any:
        return getattr(torch.nn.functional, name)

    @staticmethod
    def softmax(logits: torch.Tensor, dim: int = -1, **kwargs: Any) -> torch.Tensor:
        return torch.nn.functional.softmax(logits.double(), dim=dim, **kwargs)


class BlancShannonHarness:
    """blanc's ``Shannon`` on a local model directory, with our sentence splitter.

    ``go(doc, summ)`` returns blanc's own output plus the recorded ``measure`` calls, three per
    sentence in blanc's order (base, help, full): ``(sentence_ids, prompt_ids, lls, success)``.

    ``device`` / ``dtype``: where blanc's model runs and in which precision (the model is loaded
    in float32 and cast, as ``nlgmetrics.engine.load_lm`` does; blanc's own code is unchanged: its
    softmax runs in the model's dtype unless ``softmax_float64``, see :class:`_Float64Softmax`;
    the parity tests set it, the speed benchmark runs blanc unchanged).
    """

    def __init__(self, model_dir: str | Path, splitter=split_sentences, num_upstream: int = 0,
                 device: str | torch.device = "cpu", dtype: str | torch.dtype | None = None,
                 softmax_float64: bool = False):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from tests.support.oracles.blanc_reference import import_blanc
        from nlgmetrics.engine.loading import resolve_dtype

        import_blanc()
        from blanc import shannon as reference

        self.reference = reference
        self.device = _blanc_device(device)
        self.dtype = resolve_dtype(dtype)
        model = AutoModelForCausalLM.from_pretrained(str(model_dir)).eval()
        model = model.to(device=torch.device(device), dtype=self.dtype)
        tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        wrapper = PastTupleLM(model)
        self.model = model
        max_input = int(model.config.n_positions)
        eos = int(model.config.eos_token_id)

        def get_model(name, size, device="cuda"):
            return wrapper, tokenizer, eos, max_input

        with self._patched(get_model=get_model):
            self.shannon = reference.Shannon(
                language_model="gpt2", device=self.device, num_upstream=num_upstream
            )
        self.splitter = splitter
        self.functional = _Float64Softmax() if softmax_float64 else reference.F
        self.calls: list[tuple[list[int], list[int], list[float], list[int]]] = []
        measure = self.shannon.measure

        def recording_measure(doc_tokens, prompt):
            lls, success = measure(doc_tokens, prompt)
            self.calls.append(
                (doc_tokens.tolist(), [] if prompt is None else prompt.tolist(),
                 [float(x) for x in lls], [int(x) for x in success])
            )
            return lls, success

        self.shannon.measure = recording_measure

    @contextlib.contextmanager
    def _patched(self, **attributes):
        saved = {name: getattr(self.reference, name) for name in attributes}
        for name, value in attributes.items():
            setattr(self.reference, name, value)
        try:
            yield
        finally:
            for name, value in saved.items():
                setattr(self.reference, name, value)

    def go(self, doc: str, summ: str):
        self.calls = []
        with self._patched(sent_tokenize=self.splitter, F=self.functional), torch.no_grad():
            output = self.shannon.go(doc, summ)
        return output, list(self.calls)
