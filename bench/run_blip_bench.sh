#!/usr/bin/env bash
# BLIP ITM at Salesforce/blip-itm-base-coco's shapes (ViT-B/16 at 384 pixels, BERT-base text with
# cross-attention), seeded random weights, Winoground-like inputs (2 images and 2 captions of 9-14
# tokens per example, 4 pairs): winokit (bench_blip) against the standalone reference
# (tests/fixtures/blip_reference.py) under Debian's python3-torch, same weights and inputs, each
# image encoded once on both sides. Prints both JSON lines, the speed-up and whether the first
# scores agree, with the machine and its load. The default is Winoground's 1,600 pairs over 800
# images (400 examples): about 130 GFLOP per image, long on a small machine; pass fewer examples
# for a proportional run (the work per pair is the same).
# Usage: bench/run_blip_bench.sh [build-dir] [examples=400] [threads=2] [runs=1]
set -euo pipefail
BUILD=${1:-build}
EXAMPLES=${2:-400}
THREADS=${3:-2}
RUNS=${4:-1}
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS
/usr/bin/python3 "$HERE/bench/bench_blip_torch.py" setup "$WORK" "$EXAMPLES" >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; threads $THREADS"
echo "load before: $(uptime)"
ours=$("$BUILD/bench/bench_blip" "$WORK" "$EXAMPLES" "$RUNS" 8 "$THREADS")
echo "$ours"
echo "load between: $(uptime)"
ref=$(/usr/bin/python3 "$HERE/bench/bench_blip_torch.py" bench "$WORK" "$EXAMPLES" "$RUNS")
echo "$ref"
echo "load after: $(uptime)"
/usr/bin/python3 - "$ours" "$ref" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sa, sb = a["scores_c0_i0_c0_i1_c1_i0_c1_i1"], b["scores_c0_i0_c0_i1_c1_i0_c1_i1"]
worst = max(abs(x - y) for x, y in zip(sa, sb))
print(json.dumps({"speedup": a["pairs_per_s"] / b["pairs_per_s"],
                  "winokit_pairs_per_s": a["pairs_per_s"], "reference_pairs_per_s": b["pairs_per_s"],
                  "cpu_time_ratio": b["cpu_seconds_per_pair"] / a["cpu_seconds_per_pair"],
                  "winokit_peak_rss_mb": a["peak_rss_mb"], "reference_peak_rss_mb": b["peak_rss_mb"],
                  "first_scores_max_abs_difference": worst}))
PY
