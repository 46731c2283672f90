#!/usr/bin/env bash
# RN50 image tower side by side: openai/CLIP's code under Debian's PyTorch vs winokit, on the
# same seeded random RN50 weights (BatchNorm statistics perturbed), batch 32, 224x224, float32.
# Prints the machine, its load, every run and a summary (ms/image, share of the GEMM peak,
# ratio). One command:
#
#   bench/run_resnet_side_by_side.sh [BUILD_DIR] [RUNS]
#
# Needs python3-torch and libopenblas0-pthread (without it Debian's torch falls back to the
# reference BLAS, ~50x slower). CLIP_REPO: an openai/CLIP checkout or bare git dir (default
# /work/.mirror/openai+CLIP/repo); TOKENIZER: bpe_simple_vocab_16e6.txt.gz (default
# ../shared/golden/clip/vocab/). PyTorch runs twice: torch.set_num_threads(2), and
# torch.set_num_threads(1) with OPENBLAS_NUM_THREADS=2; the faster one is the comparison.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-$ROOT/build}")
RUNS=${2:-3}
BATCH=32
CLIP_REPO=${CLIP_REPO:-/work/.mirror/openai+CLIP/repo}
TOKENIZER=${TOKENIZER:-$ROOT/../shared/golden/clip/vocab/bpe_simple_vocab_16e6.txt.gz}
PY=/usr/bin/python3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if [ -f "$CLIP_REPO/clip/model.py" ]; then
  cp "$CLIP_REPO/clip/model.py" "$WORK/clip_model.py"
  CLIP_COMMIT=$(git -C "$CLIP_REPO" rev-parse HEAD 2>/dev/null || echo unknown)
else
  git --git-dir="$CLIP_REPO" show HEAD:clip/model.py > "$WORK/clip_model.py"
  CLIP_COMMIT=$(git --git-dir="$CLIP_REPO" rev-parse HEAD)
fi

echo "== machine"
date -u
grep -m1 "model name" /proc/cpuinfo
echo "cores: $(nproc)"
echo "load before: $(uptime)"
echo "openai/CLIP: $CLIP_COMMIT"
$PY -c "import torch; print('torch', torch.__version__, '| oneDNN (mkldnn):', torch.backends.mkldnn.is_available())"
dpkg -l libopenblas0-pthread 2>/dev/null | grep -q '^ii' && echo "libopenblas0-pthread: installed" || echo "libopenblas0-pthread: MISSING (torch will be ~50x slower)"

echo "== RN50 weights (openai/CLIP CLIP(), seeded, BatchNorm perturbed)"
OPENBLAS_NUM_THREADS=2 $PY "$ROOT/bench/bench_clip_resnet_torch.py" export "$WORK/clip_model.py" "$WORK/rn50"

echo "== winokit (threads 2, batch $BATCH)"
"$BUILD/winokit" bench --model "$WORK/rn50" --tokenizer "$TOKENIZER" --threads 2 \
  --batch-size $BATCH --images $((BATCH * 2)) --runs "$RUNS" --captions 32 --no-cache > "$WORK/winokit.json"
cat "$WORK/winokit.json"

echo "== PyTorch, torch.set_num_threads(2)"
$PY "$ROOT/bench/bench_clip_resnet_torch.py" time "$WORK/clip_model.py" "$WORK/rn50" 2 $BATCH "$RUNS" | tee "$WORK/torch2.json"
echo "== PyTorch, torch.set_num_threads(1), OPENBLAS_NUM_THREADS=2"
OPENBLAS_NUM_THREADS=2 $PY "$ROOT/bench/bench_clip_resnet_torch.py" time "$WORK/clip_model.py" "$WORK/rn50" 1 $BATCH "$RUNS" | tee "$WORK/torch1.json"
echo "load after: $(uptime)"

echo "== summary"
$PY - "$WORK/winokit.json" "$WORK/torch2.json" "$WORK/torch1.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
t2, t1 = (json.loads(open(p).read()) for p in sys.argv[2:4])
best = min(t2["ms_per_image_median"], t1["ms_per_image_median"])
print(f"RN50 224, batch {w['batch_size']}, float32")
print(f"  winokit            {w['image_ms_per_image_median']:8.1f} ms/image  "
      f"({w['image_gflops']:.0f} GFLOP/s = {100 * w['share_of_gemm_peak']:.0f}% of the "
      f"{w['gemm_peak_gflops']:.0f} GFLOP/s GEMM peak; {w['image_gflop_per_image']:.2f} GFLOP/image)")
print(f"  PyTorch 2 threads  {t2['ms_per_image_median']:8.1f} ms/image")
print(f"  PyTorch 1 thread + OpenBLAS 2 {t1['ms_per_image_median']:8.1f} ms/image")
print(f"  winokit is {best / w['image_ms_per_image_median']:.2f}x the faster PyTorch setting")
print(f"  target <= 75 ms/image: {'met' if w['image_ms_per_image_median'] <= 75 else 'NOT met'}")
PY
