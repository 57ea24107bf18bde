"""Hub Space of the rouge_family demo. Written by scripts/release.py from pyproject.toml ([tool.nlgmetrics.release]); do not edit.

Locally: `pip install -r requirements.txt`, then `python app.py`.
"""

from nlgmetrics.apps.demo import launch_demo

launch_demo("rouge_family")
