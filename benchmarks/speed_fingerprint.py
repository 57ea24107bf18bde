"""What fingerprinting a model's weights costs: the offline alias, its directory by path, a big checkpoint.

For each source, three timings of the key ``load_lm`` records in a signature: *cold* after the
files were evicted from the page cache (``posix_fadvise(DONTNEED)``), *page-cached* with the files
in memory but the in-process digests forgotten (a fresh process that just loaded the model), and
*memoised* (a second load in the same process, which reads no weights).

    python -m benchmarks.speed_fingerprint --directory /tmp/ckpt500

``--make-checkpoint MB`` first writes a safetensors file of about that size into ``--directory``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", type=Path, required=True, help="a checkpoint directory to fingerprint")
    parser.add_argument("--make-checkpoint", type=int, metavar="MB", help="first write a safetensors file of this size there")
    args = parser.parse_args()
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
