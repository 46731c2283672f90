#!/usr/bin/env bash
# The dense kernels before and after, on one machine state: `winokit bench` (ViT-B/32 image
# tower at batch 32, the text tower on 800 Winoground-length captions, the GEMM peak) for this
# build and, with BASELINE, another winokit binary, alternating run by run; prints one JSON
# line per run and the medians. Records the CPU, its vector extensions, the kernel ISA and the
# load average.
#
#   bench/run_kernel_bench.sh [build-dir] [runs] [threads]     (BASELINE=/path/to/old/winokit)
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-3}
THREADS=${3:-2}
WINOKIT=$(realpath "$BUILD/winokit")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
binaries=("new=$WINOKIT")
[ -n "${BASELINE:-}" ] && binaries+=("baseline=$(realpath "$BASELINE")")
echo "{\"cpu\": \"$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)\", \"avx512f\": $(grep -qw avx512f /proc/cpuinfo && echo true || echo false), \"avx2\": $(grep -qw avx2 /proc/cpuinfo && echo true || echo false), \"threads\": $THREADS}"
for r in $(seq 1 "$RUNS"); do
  for b in "${binaries[@]}"; do
    name=${b%%=*}
    bin=${b#*=}
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$bin" bench --threads "$THREADS" --batch-size 32 --images 64 --runs 3 --captions 800 \
      --json "$OUT/$name-$r.json" > /dev/null
    python3 - "$OUT/$name-$r.json" "$name" "$load" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps({"binary": sys.argv[2], "load_before": float(sys.argv[3]),
                  "image_ms": round(j["image_ms_per_image_median"], 2),
                  "image_gflops": round(j["image_gflops"], 1),
                  "gemm_peak_gflops": round(j["gemm_peak_gflops"], 1),
                  "text_ms": round(j["text_ms_until_longest_eot"], 1),
                  "peak_rss_mb": round(j["peak_rss_mb"]),
                  "compute": j.get("compute", "oneDNN matmul")}))
PY
  done
done | tee "$OUT/lines.jsonl"
python3 - "$OUT/lines.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for name in sorted({r["binary"] for r in rows}):
    mine = [r for r in rows if r["binary"] == name]
    print(json.dumps({"binary": name, "runs": len(mine),
                      "image_ms_median": statistics.median(r["image_ms"] for r in mine),
                      "gemm_peak_median": statistics.median(r["gemm_peak_gflops"] for r in mine),
                      "text_ms_median": statistics.median(r["text_ms"] for r in mine)}))
PY
