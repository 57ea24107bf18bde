"""What the engine page, the README and the cards say about the engine is what the engine does.

Each claim of metrics/engine.md's "How the engine runs a model" that code can check is checked here against the
running engine, from outside it (hooks on the model), not against the engine's own bookkeeping:

- a causal model's plain right-padded passes go without a padding mask (its causal attention keeps
  the pads out of view), unless its config turns causal attention off; passes behind a cached
  prefix carry transformers' 4-D segment mask where their rows are packed, their 2-D padding mask
  where not; masked-LM passes carry their 2-D padding mask;
- nothing is probed when a model loads (no forward pass inside ``load_lm``);
- the architecture count the engine page gives is the one ``tests/parity/test_architectures.py`` checks, and
  its count of families given packed rows is the engine's;
- statements of mechanisms that were removed are not made any more.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[3]
SOURCE = "The cat sat on the mat. It was warm there. The dog slept outside all day long."
SUMMARIES = ["A cat sat on a mat.", "The dog slept outside.", "A cat sat on a mat."]


def _engine_section() -> str:
    text = (ROOT / "metrics" / "engine.md").read_text(encoding="utf-8")
    start = text.index("## How the engine runs a model")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


class _PassWatcher:
    """Records, for every call of a model's base (transformer body), whether a 2-D padding mask came
    with it, how wide the pass was, how many rows it had and whether a KV cache came with it."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.passes: list[tuple[bool, int]] = []
        self.details: list[dict] = []
        body = getattr(model, model.base_model_prefix, model)
        self._handle = body.register_forward_pre_hook(self._seen, with_kwargs=True)

    def _seen(self, module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        mask = kwargs.get("attention_mask")
        masked = isinstance(mask, torch.Tensor) and mask.dim() == 2
        cache = kwargs.get("past_key_values", kwargs.get("cache"))
        self.passes.append((masked, int(ids.shape[-1])))
        self.details.append(dict(masked=masked, mask_dim=mask.dim() if isinstance(mask, torch.Tensor) else 0,
                                 width=int(ids.shape[-1]), rows=int(ids.shape[0]),
                                 cached=cache is not None and cache.get_seq_length() > 0,
                                 builds_cache=bool(kwargs.get("use_cache"))))

    def close(self) -> None:
        self._handle.remove()


def _watch_causal_metrics(lm, prefix_cache: bool) -> _PassWatcher:
    from nlgmetrics.fflm import fflm
    from nlgmetrics.shannon import shannon_score

    watcher = _PassWatcher(lm.model)
    try:
        shannon_score(SUMMARIES, [SOURCE] * 3, model=lm, progress=False, prefix_cache=prefix_cache)
        fflm(SUMMARIES, [SOURCE] * 3, model=lm, progress=False, prefix_cache=prefix_cache)
    finally:
        watcher.close()
    assert watcher.passes, "no pass was seen: the watcher is not on the model's body"
    return watcher


@pytest.mark.parametrize("prefix_cache, packed_rows", [(True, None), (True, False), (False, None)])
def test_plain_causal_passes_go_unmasked_and_cached_ones_carry_their_mask(tiny_gpt2_dir, prefix_cache, packed_rows):
    """Behind a cache: transformers' 4-D segment mask where rows are packed (GPT-2's config allows
    it), the 2-D padding mask where they are not."""
    import dataclasses

    from nlgmetrics.engine import load_lm

    lm = dataclasses.replace(load_lm(str(tiny_gpt2_dir), "causal"), packed_rows=packed_rows)
    details = _watch_causal_metrics(lm, prefix_cache).details
    plain = [d for d in details if not d["cached"] and not d["builds_cache"]]
    behind_a_cache = [d for d in details if d["cached"]]
    assert plain, details
    # Right-padded plain batches of several rows were among them (the case the mask would cover).
    assert any(d["rows"] > 1 for d in plain), details
    assert not any(d["mask_dim"] for d in plain), details
    assert all(d["mask_dim"] == (2 if packed_rows is False else 4) for d in behind_a_cache), details
    assert bool(behind_a_cache) == prefix_cache, details


@pytest.mark.parametrize("switch", ["is_causal", "use_bidirectional_attention"])
def test_a_config_without_causal_attention_keeps_every_padding_mask(tiny_gpt2_dir, switch):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from nlgmetrics.engine import load_lm

    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_dir)
    setattr(model.config, switch, switch != "is_causal")  # is_causal=False / use_bidirectional_attention=True
    lm = load_lm(model, "causal", model_tokenizer=AutoTokenizer.from_pretrained(tiny_gpt2_dir))
    details = _watch_causal_metrics(lm, prefix_cache=False).details
    assert any(d["rows"] > 1 for d in details), details
    assert all(d["masked"] for d in details), details


def test_every_masked_pass_carries_its_padding_mask(tiny_bert_dir):
    from nlgmetrics.blanc import blanc
    from nlgmetrics.engine import load_lm
    from nlgmetrics.infolm import infolm

    lm = load_lm(str(tiny_bert_dir), "masked")
    watcher = _PassWatcher(lm.model)
    try:
        infolm(SUMMARIES, [SOURCE] * 3, model=lm, progress=False)
        blanc(SUMMARIES, [SOURCE] * 3, model=lm, progress=False)
    finally:
        watcher.close()
    assert watcher.passes and all(masked for masked, _ in watcher.passes), watcher.passes


@pytest.mark.parametrize("kind", ["causal", "masked"])
def test_loading_a_model_runs_no_forward_pass(kind, tiny_gpt2_dir, tiny_bert_dir, monkeypatch):
    """No probe at load time: ``load_lm`` prepares a model without running it."""
    from nlgmetrics.engine import clear_cache, load_lm

    clear_cache()
    calls: list[str] = []
    real_call = torch.nn.Module.__call__

    def counting_call(self, *args, **kwargs):
        if hasattr(self, "config") and hasattr(self, "base_model_prefix"):  # a transformers model
            calls.append(type(self).__name__)
        return real_call(self, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "__call__", counting_call)
    lm = load_lm(str(tiny_gpt2_dir if kind == "causal" else tiny_bert_dir), kind)
    assert lm.kind == kind
    assert calls == []
    # The watcher works: a pass through the model is counted.
    with torch.inference_mode():
        lm.model(input_ids=torch.tensor([[1, 2, 3]]))
    assert calls


def test_the_engine_page_names_the_architectures_the_tests_check():
    spec = importlib.util.spec_from_file_location("architectures", ROOT / "tests" / "parity" / "test_architectures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = re.search(r"forward on (\d+) architectures \((\d+) causal, (\d+) masked\)", _engine_section())
    assert found, "metrics/engine.md no longer says how many architectures are checked"
    total, causal, masked = map(int, found.groups())
    assert (causal, masked) == (len(module.CAUSAL), len(module.MASKED))
    assert total == causal + masked


def test_the_engine_page_counts_the_families_given_packed_rows():
    from nlgmetrics.engine.packing import PACKABLE_MODEL_TYPES

    found = re.search(r"`engine\.packing\.packing_allowed`: (\d+) families", " ".join(_engine_section().split()))
    assert found, "metrics/engine.md no longer says how many families get packed rows"
    assert int(found.group(1)) == len(PACKABLE_MODEL_TYPES)


@pytest.mark.parametrize("path", ["README.md", "metrics/engine.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "metrics").glob("*/README.md"))])
def test_no_removed_engine_mechanism_is_described_as_current(path):
    """Mechanisms dropped in the consolidation: unmasked right padding, load-time checks, the
    allocator retune as a default (it is an opt-in now), packed rows on a mask of our own. A page may
    tell their history, not describe them as what runs."""
    text = (ROOT / path).read_text(encoding="utf-8")
    for stale in (
        r"checked per model at load time",
        r"before the engine bounded padding and packed",
        r"buffer reuse of the CPU engine",
        r"runs as SDPA's causal kernel",
    ):
        assert not re.search(stale, text), f"{path}: {stale!r}"
