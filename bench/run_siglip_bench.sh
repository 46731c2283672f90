#!/usr/bin/env bash
# SigLIP image tower, google/siglip-base-patch16-224's shapes (ViT-B/16 at 224: 196 patches,
# 12 layers, width 768, the attention pooling head), seeded random weights and pixels: winokit
# (bench_siglip) against the PyTorch transcription tests/fixtures/siglip_reference.py under
# Debian's python3-torch (libopenblas0-pthread), same weights and inputs, same threads. Both print
# ms per image (median of RUNS after a warm-up); then the speed-up and the largest feature
# difference, with the machine and its load.
# Usage: bench/run_siglip_bench.sh [build-dir] [images=16] [runs=5] [batch=8] [threads=2]
set -euo pipefail
BUILD=${1:-build}
IMAGES=${2:-16}
RUNS=${3:-5}
BATCH=${4:-8}
THREADS=${5:-2}
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS
/usr/bin/python3 "$HERE/bench/bench_siglip_torch.py" setup "$WORK" "$IMAGES"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; threads $THREADS; batch $BATCH"
echo "load before: $(uptime)"
"$BUILD/bench/bench_siglip" "$WORK" "$IMAGES" "$RUNS" "$BATCH" "$THREADS" >"$WORK/ours.json"
echo "load between: $(uptime)"
/usr/bin/python3 "$HERE/bench/bench_siglip_torch.py" bench "$WORK" "$IMAGES" "$RUNS" "$BATCH" "$THREADS" >"$WORK/ref.json"
echo "load after: $(uptime)"
/usr/bin/python3 - "$WORK/ours.json" "$WORK/ref.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for r in (a, b):
    print(json.dumps({k: v for k, v in r.items() if k != "features"}))
diff = max(abs(x - y) for x, y in zip(a["features"], b["features"]))
print(json.dumps({"speedup": b["ms_per_image"] / a["ms_per_image"],
                  "winokit_ms_per_image": a["ms_per_image"], "pytorch_ms_per_image": b["ms_per_image"],
                  "features_max_abs_difference": diff}))
PY
