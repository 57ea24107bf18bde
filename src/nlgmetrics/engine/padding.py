"""Right-padded causal batches without an attention mask, where the model allows it.

In a right-padded batch every real token comes before every pad, so a causal model's own causal
mask already keeps real tokens from seeing pads: the padding mask changes nothing at the
positions a metric scores. Leaving it out matters on a GPU: with a padding mask, transformers
builds an explicit ``[batch, 1, length, length]`` mask, so SDPA cannot use its causal kernel
(the one an unpadded batch-1 pass uses, which skips the blocks above the diagonal: about half
the attention work), and it first reads the mask's values to see whether it may drop it (a
host<->device synchronisation per forward pass, which stops the host from queueing the next
batch while the device works). On CPU the two forms give the same numbers and time.

The premise ("the model is causal, and positions come from the token index") is not true of
every ``*ForCausalLM`` (a prefix-LM, a bidirectional model registered as causal, positions
derived from the mask in some other way), so :func:`right_padding_needs_no_mask` checks it once
per model at load time: a right-padded batch without a mask must give, at its real positions,
the logits of each row run alone. Models failing the check keep the mask.

>>> from nlgmetrics.testing import build_random_model
>>> from transformers import AutoModelForCausalLM
>>> import tempfile
>>> model = AutoModelForCausalLM.from_pretrained(build_random_model("llama", tempfile.mkdtemp()))
>>> right_padding_needs_no_mask(model.eval())
True
"""

from __future__ import annotations

import torch

from nlgmetrics.engine.self_checks import probe_passes, probe_setting

# Probe rows of different lengths; the pad id differs from every real id, so a model that reads
# pads (bidirectional attention) changes the shorter row's logits.
_PROBE_LENGTHS = (8, 5)


def right_padding_needs_no_mask(model: torch.nn.Module) -> bool:
    """Whether ``model`` gives each row's logits at its real positions from a right-padded batch
    passed without ``attention_mask`` (checked against each row run alone, unpadded)."""
    if probe_setting(model) is None:
        return False

    def probe(candidate: torch.nn.Module) -> list[tuple[torch.Tensor, torch.Tensor]]:
        device, _, vocab = probe_setting(candidate)
        width = max(_PROBE_LENGTHS)
        rows = [[(7 * i + 3 * r + 5) % (vocab - 1) for i in range(n)] for r, n in enumerate(_PROBE_LENGTHS)]
        pad = vocab - 1  # never a real id above
        batch = torch.tensor([row + [pad] * (width - len(row)) for row in rows], device=device)
        padded = candidate(input_ids=batch, use_cache=False).logits.float()
        pairs = []
        for r, row in enumerate(rows):
            ids = torch.tensor([row], device=device)
            alone = candidate(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False).logits[0].float()
            pairs.append((padded[r, : len(row)], alone))
        return pairs

    return probe_passes(model, probe)
