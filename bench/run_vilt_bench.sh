#!/usr/bin/env bash
# ViLT-B/32 shapes, seeded random weights, Winoground-like inputs (384 x 576 images, captions of
# 9-14 tokens; 4 pairs per example): winokit (bench_vilt) against the standalone reference of
# transformers' modeling_vilt.py under Debian's python3-torch, same weights and inputs, one run.
# Prints both JSON lines, the speed-up and whether the first scores agree, with the machine and
# its load. The default is all 1,600 Winoground pairs (400 examples); that takes long on a small
# machine (about 40 GFLOP per pair).
# Usage: bench/run_vilt_bench.sh [build-dir] [examples=400] [threads=2]
set -euo pipefail
BUILD=${1:-build}
EXAMPLES=${2:-400}
THREADS=${3:-2}
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS
/usr/bin/python3 "$HERE/tests/fixtures/vilt_reference.py" bench-setup "$WORK" "$EXAMPLES" >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; threads $THREADS"
echo "load before: $(uptime)"
ours=$("$BUILD/bench/bench_vilt" "$WORK" "$EXAMPLES" 1 8 "$THREADS")
echo "$ours"
echo "load between: $(uptime)"
ref=$(/usr/bin/python3 "$HERE/tests/fixtures/vilt_reference.py" bench "$WORK" "$EXAMPLES" 1)
echo "$ref"
echo "load after: $(uptime)"
/usr/bin/python3 - "$ours" "$ref" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sa, sb = a["scores_c0_i0_c0_i1_c1_i0_c1_i1"], b["scores_c0_i0_c0_i1_c1_i0_c1_i1"]
worst = max(abs(x - y) / max(abs(y), 1e-6) for x, y in zip(sa, sb))
print(json.dumps({"speedup": a["pairs_per_s"] / b["pairs_per_s"],
                  "winokit_pairs_per_s": a["pairs_per_s"], "reference_pairs_per_s": b["pairs_per_s"],
                  "cpu_time_ratio": b["cpu_seconds_per_pair"] / a["cpu_seconds_per_pair"],
                  "winokit_peak_rss_mb": a["peak_rss_mb"], "reference_peak_rss_mb": b["peak_rss_mb"],
                  "first_scores_max_relative_difference": worst}))
PY
