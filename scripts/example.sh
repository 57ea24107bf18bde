#!/usr/bin/env bash
# Install nlgmetrics, then score the built-in example with every metric this machine can run
# (ROUGE, BLEU, chrF, TER, and the LM metrics whose models it can get; the others say why not).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# shellcheck disable=SC1091
. .venv/bin/activate
exec python scripts/example.py "$@"
