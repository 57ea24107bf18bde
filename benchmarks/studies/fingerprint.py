"""What fingerprinting a model's weights costs: the offline alias, its directory by path, a big checkpoint.

For each source, three timings of the key ``load_lm`` records in a signature: *cold* after the
files were evicted from the page cache (``posix_fadvise(DONTNEED)``), *page-cached* with the files
in memory but the in-process digests forgotten (a fresh process that just loaded the model), and
*memoised* (a second load in the same process, which reads no weights).

    python -m benchmarks.studies.fingerprint --directory /tmp/ckpt500

``--make-checkpoint MB`` first writes a safetensors file of about that size into ``--directory``.

``--objects`` times instead what a model *object* costs on every call that passes it: the engine
hashes its current values each time (a write through ``.data`` moves no version counter), so
SmolLM2-135M in float32 and bfloat16 and a random Llama of about 1.1 B parameters in float32 are
hashed (``module_fingerprint``: every parameter and buffer, and every module's attributes and
configs, timed apart) and passed to ``load_lm`` a second time (the whole per-call check: values
hashed, the load cache hit), median of ``--repeats``:

    python -m benchmarks.studies.fingerprint --objects --repeats 3
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import torch

from nlgmetrics.engine import fingerprints
from nlgmetrics.engine.smollm2 import recorded_source, smollm2_dir


def _evict(directory: Path) -> None:
    for path in directory.iterdir():
        if path.is_file():
            descriptor = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(descriptor)


def _seconds(key: Callable[[], str]) -> tuple[str, float]:
    start = time.perf_counter()
    value = key()
    return value, time.perf_counter() - start


def _make_checkpoint(directory: Path, megabytes: int) -> None:
    import torch
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator().manual_seed(0)
    rows = 1024 * 4  # 16 MiB of float32 per tensor
    tensors = {f"layer{i}.weight": torch.randn(1024, rows, generator=generator) for i in range(max(1, megabytes // 16))}
    save_file(tensors, str(directory / "model.safetensors"), metadata={"format": "pt"})
    (directory / "config.json").write_text("{}")


def _random_llama_1b() -> torch.nn.Module:
    """A Llama of TinyLlama-1.1B's shape with random float32 weights (4.4 GB): the size class of
    the smallest models people fine-tune and score."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32,
                         num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048)
    return LlamaForCausalLM(config).eval()


def time_objects(repeats: int) -> None:
    """Per-call cost of a model object: its values hashed, and a repeated ``load_lm`` (hash + cache hit)."""
    import statistics

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from nlgmetrics.engine import load_lm

    alias = smollm2_dir()
    tokenizer = AutoTokenizer.from_pretrained(alias)
    objects = [
        ("SmolLM2-135M float32", lambda: AutoModelForCausalLM.from_pretrained(alias, dtype=torch.float32).eval(), "float32"),
        ("SmolLM2-135M bfloat16", lambda: AutoModelForCausalLM.from_pretrained(alias, dtype=torch.bfloat16).eval(), "bfloat16"),
        ("random Llama 1.1B float32", _random_llama_1b, "float32"),
    ]
    for label, build, dtype in objects:
        model = build()
        params = sum(p.numel() for p in model.parameters())
        megabytes = sum(t.numel() * t.element_size() for t in model.state_dict().values()) / 1e6
        hashes = [_seconds(lambda: fingerprints.module_fingerprint(model))[1] for _ in range(repeats)]
        # The part beside the tensor values: every module's attributes and the configs they hold.
        records = [_seconds(lambda: str(len(fingerprints._module_records(model))))[1] for _ in range(repeats)]
        load_lm(model, "causal", model_tokenizer=tokenizer, dtype=dtype)  # the first load: prepares the model
        calls = [_seconds(lambda: load_lm(model, "causal", model_tokenizer=tokenizer, dtype=dtype).name)[1]
                 for _ in range(repeats)]
        hashed = statistics.median(hashes)
        print(f"{label}: {params / 1e6:.0f} M parameters, {megabytes:.0f} MB of state; module_fingerprint "
              f"{hashed:.3f} s ({megabytes / 1e3 / hashed:.2f} GB/s) [{', '.join(f'{t:.3f}' for t in hashes)}], "
              f"of which modules and configs {statistics.median(records) * 1e3:.1f} ms; "
              f"load_lm again {statistics.median(calls):.3f} s [{', '.join(f'{t:.3f}' for t in calls)}]")
        del model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", type=Path, help="a checkpoint directory to fingerprint")
    parser.add_argument("--make-checkpoint", type=int, metavar="MB", help="first write a safetensors file of this size there")
    parser.add_argument("--objects", action="store_true", help="time the per-call hash of model objects instead")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if args.objects:
        time_objects(args.repeats)
        return
    if args.directory is None:
        parser.error("--directory is needed (or --objects)")
    if args.make_checkpoint:
        _make_checkpoint(args.directory, args.make_checkpoint)
    alias = smollm2_dir()
    size = sum(p.stat().st_size for p in args.directory.iterdir() if p.is_file()) / 1e6
    sources = [
        ("smollm2-135m (the alias: its recorded GGUF sha256)", alias, lambda: recorded_source(alias)[:12]),
        ("the alias's directory by path (538 MB)", alias, lambda: fingerprints.directory_fingerprint(alias)),
        (f"{args.directory} ({size:.0f} MB)", args.directory, lambda: fingerprints.directory_fingerprint(args.directory)),
    ]
    for label, directory, key in sources:
        _evict(directory)
        fingerprints._DIGESTS.clear()
        value, cold = _seconds(key)
        fingerprints._DIGESTS.clear()
        _, cached = _seconds(key)
        _, memoised = _seconds(key)
        print(f"{label}: {value}  cold {cold:.3f} s  page-cached {cached:.3f} s  memoised {memoised * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
