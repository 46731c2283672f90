#!/usr/bin/env bash
# SmolVLM VQAScore at HuggingFaceTB/SmolVLM-256M-Instruct's shapes (Idefics3: SigLIP base/16 at
# 512 without its head, pixel shuffle 4, SmolLM2-135M-shaped decoder; 256.5 M parameters, seeded
# random weights stored in bfloat16 as the real model.safetensors), Winoground-like inputs
# (JPEG photos of 1920x1280, 2 images and 2 captions per example, 4 pairs per example): winokit
# (bench_smolvlm) against the PyTorch transcription (bench/bench_smolvlm_torch.py, the same
# processor, tower and decoder as tests/fixtures/make_smolvlm_golden.py, in float32 with a KV
# cache) under Debian's python3-torch, same checkpoint, inputs and threads, each image encoded and
# its prompt prefix run once on both sides. Without image splitting (1 tile of 512 per image) and
# with it (1920x1280 -> 4 x 3 tiles + the global one). Prints both JSON lines per setting, the
# speed-up, the phases' shares (vision tower, prefix, per-caption suffix) and whether the scores
# agree, with the machine and its load, then the extrapolation to Winoground's 1,600 pairs over
# 800 images (a linear extrapolation of the measured per-image time: the work per image is the
# same for every image of that size).
# Usage: bench/run_smolvlm_bench.sh [build-dir] [images=8] [split-images=4] [threads=2] [runs=1]
#        [256m|500m] [bf16|f32]
set -euo pipefail
BUILD=${1:-build}
IMAGES=${2:-8}
SPLIT_IMAGES=${3:-4}
THREADS=${4:-2}
RUNS=${5:-1}
SHAPE=${6:-256m}
DTYPE=${7:-bf16}
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS
most=$(( IMAGES > SPLIT_IMAGES ? IMAGES : SPLIT_IMAGES ))
/usr/bin/python3 "$HERE/bench/bench_smolvlm_torch.py" setup "$WORK" "$most" "$SHAPE" "$DTYPE"
# OMP_WAIT_POLICY (both sides use libgomp) is passed through: on an oversubscribed machine
# `passive` keeps idle threads from spinning (docs/performance.md).
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; threads $THREADS; shape $SHAPE, weights stored in $DTYPE; OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}"
for mode in no-split split; do
  n=$IMAGES
  [ "$mode" = split ] && n=$SPLIT_IMAGES
  [ "$n" -gt 0 ] || continue
  echo "== $mode: $n images, $((2 * n)) pairs"
  echo "load before: $(uptime)"
  /usr/bin/time -v "$BUILD/bench/bench_smolvlm" "$WORK" "$n" "$mode" "$RUNS" "$THREADS" \
    >"$WORK/ours-$mode.json" 2>"$WORK/ours-$mode.time"
  echo "load between: $(uptime)"
  /usr/bin/time -v /usr/bin/python3 "$HERE/bench/bench_smolvlm_torch.py" bench "$WORK" "$n" "$mode" "$RUNS" \
    >"$WORK/ref-$mode.json" 2>"$WORK/ref-$mode.time"
  echo "load after: $(uptime)"
  /usr/bin/python3 - "$WORK" "$mode" <<'PY'
import json, re, sys
work, mode = sys.argv[1:3]
def rss(path):  # /usr/bin/time -v: the whole process, loading included
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(path).read()).group(1)) / 1024
a = json.load(open(f"{work}/ours-{mode}.json"))
b = json.load(open(f"{work}/ref-{mode}.json"))
for r in (a, b):
    print(json.dumps(r))
worst = max(abs(x - y) for x, y in zip(a["first_scores"], b["first_scores"]))
pa = {k: v / a["images"] for k, v in a["phase_seconds"].items()}
pb = {k: v / b["images"] for k, v in b["phase_seconds"].items()}
print(json.dumps({
    "mode": mode, "speedup": b["median_seconds"] / a["median_seconds"],
    "winokit_seconds": a["median_seconds"], "pytorch_seconds": b["median_seconds"],
    "winokit_peak_rss_mb": rss(f"{work}/ours-{mode}.time"), "pytorch_peak_rss_mb": rss(f"{work}/ref-{mode}.time"),
    "winokit_shares": {k: round(v / a["median_seconds"], 3) for k, v in a["phase_seconds"].items()},
    "pytorch_shares": {k: round(v / b["median_seconds"], 3) for k, v in b["phase_seconds"].items()},
    "winokit_seconds_per_image": {k: round(v, 3) for k, v in pa.items()},
    "pytorch_seconds_per_image": {k: round(v, 3) for k, v in pb.items()},
    "first_scores_max_abs_difference": worst,
    "extrapolated_800_images_1600_pairs_minutes": {
        "winokit": round(a["median_seconds"] / a["images"] * 800 / 60, 1),
        "pytorch": round(b["median_seconds"] / b["images"] * 800 / 60, 1)}}))
PY
done
