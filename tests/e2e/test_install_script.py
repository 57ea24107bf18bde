"""scripts/install.sh installs torch's CPU build: the package index's Linux torch wheel is the CUDA
build, so without a local wheel the script must ask PyTorch's CPU index for it, and with a local
wheel (pip's find-links, as on an offline machine) it must not need any index.

The script runs for real in a copy of the repository's layout whose ``.venv`` puts stand-ins for
``python`` and ``pip`` first on the PATH: the stand-in pip records every call (nothing is installed)
and answers the script's local-wheel probe (``--dry-run --no-index``) as the case asks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
while not (REPO / "scripts" / "install.sh").is_file() and REPO != REPO.parent:
    REPO = REPO.parent  # the repository root, wherever this file sits under tests/
CPU_INDEX = "https://download.pytorch.org/whl/cpu"

FAKE_PYTHON = """#!/usr/bin/env bash
# `python -c "import torch"` succeeds only when the case says torch is installed.
[ "$FAKE_TORCH_INSTALLED" = 1 ] && exit 0
exit 1
"""

FAKE_PIP = """#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$PIP_CALLS"
case " $* " in
  *" --dry-run "*) [ "$FAKE_LOCAL_TORCH" = 1 ] && exit 0; exit 1 ;;
esac
exit 0
"""


def _pip_calls(tmp_path: Path, *, torch_installed: bool, local_wheel: bool, **env: str) -> list[str]:
    """The pip command lines ``bash scripts/install.sh`` runs (no flags) in a stand-in venv."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "install.sh", root / "scripts" / "install.sh")
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    for name, text in (("python", FAKE_PYTHON), ("pip", FAKE_PIP)):
        (fake_bin / name).write_text(text)
        (fake_bin / name).chmod(0o755)
    venv_bin = root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(fake_bin / "python")
    (venv_bin / "activate").write_text(f'export PATH="{fake_bin}:$PATH"\n')
    calls = tmp_path / "pip_calls.txt"
    calls.touch()
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "TORCH_"))}
    environment.update(PIP_CALLS=str(calls), FAKE_TORCH_INSTALLED=str(int(torch_installed)),
                       FAKE_LOCAL_TORCH=str(int(local_wheel)), **env)
    run = subprocess.run(["bash", str(root / "scripts" / "install.sh")], env=environment,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return calls.read_text().splitlines()


def _torch_installs(calls: list[str]) -> list[str]:
    return [call for call in calls if "torch==" in call and "--dry-run" not in call]


def test_without_a_local_wheel_torch_comes_from_the_cpu_index(tmp_path):
    calls = _pip_calls(tmp_path, torch_installed=False, local_wheel=False)
    installs = _torch_installs(calls)
    assert len(installs) == 1, calls
    words = installs[0].split()
    assert "torch==2.13.0" in words
    assert words[words.index("--index-url") + 1] == CPU_INDEX, installs[0]
    # torch first: the package's own requirement (torch>=2.1) then finds it installed
    assert calls.index(installs[0]) < next(i for i, call in enumerate(calls) if "-e .[" in call), calls


def test_a_local_wheel_is_installed_without_any_index(tmp_path):
    """Offline (find-links supply torch), the script must not depend on reaching an index."""
    calls = _pip_calls(tmp_path, torch_installed=False, local_wheel=True)
    installs = _torch_installs(calls)
    assert len(installs) == 1 and "torch==2.13.0" in installs[0].split(), calls
    assert "index-url" not in installs[0] and "download.pytorch.org" not in installs[0], installs[0]


def test_an_installed_torch_is_kept(tmp_path):
    """A CUDA torch installed before the script (a GPU machine) is never replaced."""
    calls = _pip_calls(tmp_path, torch_installed=True, local_wheel=False)
    assert not [call for call in calls if "torch==" in call], calls


def test_torch_index_url_picks_another_build(tmp_path):
    index = "https://download.pytorch.org/whl/cu126"
    calls = _pip_calls(tmp_path, torch_installed=False, local_wheel=False, TORCH_INDEX_URL=index)
    (install,) = _torch_installs(calls)
    words = install.split()
    assert words[words.index("--index-url") + 1] == index, install
