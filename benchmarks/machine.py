"""What the speed reports record about the machine and the software: one copy for every benchmark.

>>> "logical CPUs" in machine()
True
>>> versions().startswith("python ")
True
>>> report_head("A title", "What it measures.", "python -m benchmarks.x")[:3]
['# A title', '', 'What it measures.']
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def machine() -> str:
    """OS, architecture, CPU model, logical CPUs, the vector/matrix flags that decide matmul speed,
    and the GPU where one is visible."""
    cpu = platform.processor() or "unknown CPU"
    flags = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                have = set(line.split(":", 1)[1].split())
                flags = ", ".join(f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in have) or "none"
                break
    except OSError:
        pass
    text = f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} logical CPUs; vector/matrix flags: {flags}"
    torch = sys.modules.get("torch")  # a GPU only where the run has imported torch (no import just for this line)
    if torch is not None and torch.cuda.is_available():
        text += f"; GPU {torch.cuda.get_device_name(0)}"
    return text


def git_commit() -> str:
    """Short commit of the checkout (``unknown`` outside git, e.g. a copy on a device machine)."""
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def versions(packages: tuple[str, ...] = ()) -> str:
    """python, torch (with its CPU capability), transformers, nlgmetrics, ``packages`` (e.g. the
    anchors) and the git commit."""
    import importlib.metadata as md

    parts = [f"python {platform.python_version()}"]
    try:
        import torch

        parts.append(f"torch {torch.__version__} (CPU capability {torch.backends.cpu.get_cpu_capability()})")
    except ImportError:
        parts.append("torch not installed")
    for package in ("transformers", "nlgmetrics", *packages):
        try:
            parts.append(f"{package} {md.version(package)}")
        except md.PackageNotFoundError:
            parts.append(f"{package} not installed")
    parts.append(f"git {git_commit()} + working tree")
    return ", ".join(parts)


def report_head(title: str, summary: str, command: str, packages: tuple[str, ...] = ()) -> list[str]:
    """The first lines of a markdown report: title, what it measures, the command that wrote it,
    the machine, the software (with ``packages``, e.g. the anchors) and the commit, so that every
    report records them the same way."""
    import datetime

    return [
        f"# {title}",
        "",
        summary,
        "",
        f"- command: `{command}`",
        f"- machine: {machine()}",
        f"- versions: {versions(packages)}",
        f"- commit: {git_commit()}; date: {datetime.date.today().isoformat()}",
    ]
