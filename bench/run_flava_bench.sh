#!/usr/bin/env bash
# FLAVA (facebook/flava-full's shapes: ViT-B/16 image and BERT-base text encoders of 12 layers,
# a 6-layer multimodal encoder; or PRESET half: 6/6/3 layers), seeded random weights,
# Winoground-like inputs (224 x 224 images, captions of 9-14 tokens; 4 pairs per example):
# winokit (bench_flava) against the standalone reference of transformers' modeling_flava.py
# under Debian's python3-torch, same weights and inputs, one run. Both compute both heads (ITM
# and contrastive) of every pair. Prints both JSON lines, the speed-up and whether the first
# scores agree, with the machine and its load.
# Usage: bench/run_flava_bench.sh [build-dir] [examples=400] [threads=2] [preset=full]
set -euo pipefail
BUILD=${1:-build}
EXAMPLES=${2:-400}
THREADS=${3:-2}
PRESET=${4:-full}
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS
/usr/bin/python3 "$HERE/tests/fixtures/flava_reference.py" bench-setup "$WORK" "$EXAMPLES" "$PRESET" >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; threads $THREADS; preset $PRESET"
echo "load before: $(uptime)"
ours=$("$BUILD/bench/bench_flava" "$WORK" "$EXAMPLES" 1 8 "$THREADS")
echo "$ours"
echo "load between: $(uptime)"
ref=$(/usr/bin/python3 "$HERE/tests/fixtures/flava_reference.py" bench "$WORK" "$EXAMPLES" 1)
echo "$ref"
echo "load after: $(uptime)"
/usr/bin/python3 - "$ours" "$ref" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
def worst(key):
    return max(abs(x - y) / max(abs(y), 1e-6) for x, y in zip(a[key], b[key]))
print(json.dumps({"speedup": a["pairs_per_s"] / b["pairs_per_s"],
                  "winokit_pairs_per_s": a["pairs_per_s"], "reference_pairs_per_s": b["pairs_per_s"],
                  "cpu_time_ratio": b["cpu_seconds_per_pair"] / a["cpu_seconds_per_pair"],
                  "winokit_peak_rss_mb": a["peak_rss_mb"], "reference_peak_rss_mb": b["peak_rss_mb"],
                  "itm_first_scores_max_relative_difference": worst("itm_c0_i0_c0_i1_c1_i0_c1_i1"),
                  "contrastive_first_scores_max_relative_difference": worst("contrastive_c0_i0_c0_i1_c1_i0_c1_i1")}))
PY
