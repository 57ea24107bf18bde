"""Random models of real shapes for the speed benchmarks, built once per machine and reused.

A 1B Llama takes tens of seconds to initialise and write (~4.3 GB), and a GPU run calls each
speed module once per dtype: the second call should pay only the load. Folders live under
``$NLGMETRICS_SPEED_MODELS`` (default ``$TMPDIR/nlgmetrics-speed-models``), one per
(architecture, size, transformers version), always seed 0, so a reused folder holds exactly the
weights of a fresh build. A build is written to a staging folder and renamed, so an interrupted
build is never reused.

>>> import os, tempfile
>>> os.environ["NLGMETRICS_SPEED_MODELS"] = tempfile.mkdtemp()
>>> path, reused = cached_random_model("gpt2", "tiny")
>>> reused, cached_random_model("gpt2", "tiny") == (path, True)
(False, True)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def cached_random_model(architecture: str, size: str) -> tuple[Path, bool]:
    """``nlgmetrics.testing.build_random_model(architecture, ..., size=size)``, built at most once
    per machine; returns ``(folder, reused)``."""
    import transformers

    from nlgmetrics.testing import build_random_model

    root = Path(os.environ.get("NLGMETRICS_SPEED_MODELS", Path(tempfile.gettempdir()) / "nlgmetrics-speed-models"))
    target = root / f"{architecture}-{size}-seed0-transformers{transformers.__version__}"
    if (target / "config.json").exists() and (target / "tokenizer.json").exists():
        return target, True
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=root))
    try:
        build_random_model(architecture, staging, size=size)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target, False
