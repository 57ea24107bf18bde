#!/usr/bin/env bash
# Install everything the tests need, then run the whole test suite. Extra args go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --test
# shellcheck disable=SC1091
. .venv/bin/activate
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
status=0
python -m pytest "$@" || status=$?
# The Space builds (tests/e2e/test_space_build.py, marker space_build: the wheel, a fresh venv per
# distinct metrics/*/requirements.txt, every app.py in a browser; minutes) are deselected above and
# run here on their own: always for the full suite (no arguments, as CI calls it), or when
# NLGMETRICS_SPACE_BUILD=1; NLGMETRICS_SPACE_BUILD=0 skips them.
if [ "${NLGMETRICS_SPACE_BUILD:-$([ $# -eq 0 ] && echo 1 || echo 0)}" = 1 ]; then
  python -m pytest -m space_build tests/e2e/test_space_build.py || status=$?
fi
exit "$status"
