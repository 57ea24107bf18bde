"""GGUF files as models: dequantized once into a cached ``save_pretrained`` folder.

transformers reads a GGUF file (``from_pretrained(folder, gguf_file=name)``) by dequantizing
every tensor (seconds to minutes, growing with the model), and a model loaded
that way refuses ``save_pretrained``. :func:`converted_dir` does it once: the float32 weights,
the config and the tokenizer read from the GGUF are written to an ordinary folder under
:func:`default_cache_dir`, with a record of the GGUF's sha256 (:data:`SOURCE_FILE`) that
identifies the weights whichever transformers version wrote ``config.json``. The offline
``smollm2-135m`` alias (``engine.smollm2``) and a ``.gguf`` path passed as ``model=`` share it;
a path gets ``<cache>/gguf/<sha256>``, so the same file under two names is converted once.

The converted folder costs float32 disk space (4 bytes a parameter: ~0.5 GB for 135M, ~28 GB
for 7B), and the conversion holds the dequantized model in memory once.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> gguf_file_of(folder / "model.gguf")
Traceback (most recent call last):
...
nlgmetrics.engine.errors.ModelNotFoundError: GGUF file '...model.gguf' does not exist...
>>> _ = (folder / "a.gguf").write_bytes(b""), (folder / "b.gguf").write_bytes(b"")
>>> gguf_file_of(folder)
Traceback (most recent call last):
...
nlgmetrics.engine.errors.ModelNotFoundError: Directory '...' holds 2 GGUF files (a.gguf, b.gguf)...
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from nlgmetrics.engine.errors import ModelNotFoundError
from nlgmetrics.engine.fingerprints import WEIGHT_SUFFIXES, file_digest

SOURCE_FILE = "nlgmetrics_source.json"  # written next to converted weights: where they came from
GGUF_SUFFIX = ".gguf"
#: Folder of the cache under which GGUF paths are converted, one subfolder per file's sha256.
GGUF_CACHE_NAME = "gguf"


def default_cache_dir() -> Path:
    """Where nlgmetrics keeps converted models: ``$NLGMETRICS_CACHE`` or ``~/.cache/nlgmetrics``."""
    return Path(os.environ.get("NLGMETRICS_CACHE", Path.home() / ".cache" / "nlgmetrics"))


def recorded_source(directory: str | os.PathLike) -> str | None:
    """The sha256 of the file a converted directory was made from, or ``None`` for other directories."""
    try:
        return json.loads((Path(directory) / SOURCE_FILE).read_text()).get("gguf_sha256")
    except (OSError, ValueError, AttributeError):
        return None


def gguf_file_of(name: str | os.PathLike) -> Path | None:
    """The GGUF file a ``model=`` path names: the path itself when it ends in ``.gguf``, or the one
    ``.gguf`` file of a directory holding no other weights; ``None`` for anything else (a
    checkpoint directory, a Hub id). Raises :class:`ModelNotFoundError` for a missing ``.gguf``
    path and for a directory holding several GGUF files (which one is meant cannot be guessed)."""
    path = Path(name)
    if path.name.lower().endswith(GGUF_SUFFIX) and not path.is_dir():
        if not path.is_file():
            raise ModelNotFoundError(
                f"GGUF file {os.fspath(name)!r} does not exist; pass the path of a .gguf file (one on the Hub: "
                "download it first, e.g. huggingface_hub.hf_hub_download(repo_id, filename))."
            )
        return path
    if not path.is_dir():
        return None
    files = sorted(p for p in path.iterdir() if p.is_file())
    ggufs = [p for p in files if p.name.lower().endswith(GGUF_SUFFIX)]
    if not ggufs or any(p.name.endswith(WEIGHT_SUFFIXES) and p not in ggufs for p in files):
        return None  # an ordinary checkpoint (a GGUF beside its safetensors is not what is read)
    if len(ggufs) > 1:
        raise ModelNotFoundError(
            f"Directory {os.fspath(name)!r} holds {len(ggufs)} GGUF files ({', '.join(p.name for p in ggufs)}) and no "
            f"other weights: pass the file to score, e.g. model={os.fspath(ggufs[0])!r}."
        )
    return ggufs[0]


def is_complete(directory: Path) -> bool:
    """Whether a conversion into ``directory`` finished (the source record is written last)."""
    return all((directory / name).exists() for name in ("config.json", "model.safetensors", "tokenizer.json", SOURCE_FILE))


def converted_dir(gguf: Path) -> Path:
    """The cached folder of ``gguf`` converted to float32 (:func:`convert_gguf`), under
    ``default_cache_dir()/gguf/<sha256 of the file>``; built on first use."""
    digest = file_digest(gguf)
    target = default_cache_dir() / GGUF_CACHE_NAME / digest
    if is_complete(target):
        return target
    return convert_gguf(gguf, target, description=f"{gguf.name} (GGUF, dequantized)", record={"gguf": gguf.name, "gguf_sha256": digest})


def _unreadable(gguf: Path, what: str, error: BaseException) -> ModelNotFoundError:
    cause = (str(error).strip().splitlines() or [""])[0]
    module, kind = type(error).__module__, type(error).__qualname__
    kind = kind if module == "builtins" else f"{module}.{kind}"  # struct.error reads better than error
    return ModelNotFoundError(
        f"Could not read the {what} of GGUF file {os.fspath(gguf)!r} ({kind}: {cause}). transformers reads "
        "GGUF files of the architectures it lists as GGUF-supported (Llama, Mistral, Qwen2, Gemma 3...) and needs the "
        "`gguf` package (`pip install gguf`); pass an intact GGUF of such a model, or its save_pretrained folder."
    )


def convert_gguf(
    gguf: Path, target: Path, *, description: str, record: dict[str, Any], tokenizer_dir: Path | None = None
) -> Path:
    """Write ``gguf``'s model dequantized to float32, its config (``_name_or_path`` set to
    ``description``) and its tokenizer (read from the GGUF, or from ``tokenizer_dir`` when that
    holds the same tokenizer already saved) to ``target``, then ``record`` as :data:`SOURCE_FILE`.

    Written to a temporary sibling and renamed, so a build that stops halfway leaves nothing a
    later load trusts, and a concurrent build's finished copy is kept. Raises
    :class:`ModelNotFoundError` in one line when transformers cannot read the file.
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    # gguf internals fail with any exception type (struct, numpy, KeyError on a missing field):
    # the user gets the file and the cause in one line, not their traceback.
    try:
        quantized = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    except Exception as error:  # noqa: BLE001
        raise _unreadable(gguf, "weights", error) from None
    try:
        if tokenizer_dir is not None and (tokenizer_dir / "tokenizer.json").exists():
            tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
        else:
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    except Exception as error:  # noqa: BLE001
        raise _unreadable(gguf, "tokenizer", error) from None
    # A model loaded from GGUF refuses save_pretrained (it is flagged as quantized); rebuild a plain
    # model from the same config without the quantization entry, sharing the dequantized tensors:
    # built on the meta device and assigned, it allocates and initialises nothing (its
    # non-persistent buffers stay on meta, which save_pretrained does not write).
    config_dict = {**quantized.config.to_dict(), "_name_or_path": description}
    config_dict.pop("quantization_config", None)
    config = AutoConfig.for_model(**config_dict)
    with torch.device("meta"):
        plain = type(quantized)(config)
    plain.load_state_dict(quantized.state_dict(), assign=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        plain.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
        (staging / SOURCE_FILE).write_text(json.dumps(record, indent=1))
        # mkdtemp makes a private (0700) directory; a cache may be shared between users.
        staging.chmod(0o755)
        for file in staging.iterdir():
            file.chmod(0o644)
        if not is_complete(target):  # else another process finished first: keep its copy, readers may use it
            shutil.rmtree(target, ignore_errors=True)  # an incomplete leftover of an interrupted build
            os.replace(staging, target)
    except OSError:
        if not is_complete(target):  # else another process won the race
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already once renamed
    return target
