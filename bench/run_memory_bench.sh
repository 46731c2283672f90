#!/usr/bin/env bash
# Peak memory and wall time of `winokit eval --model` on a ViT-B/32-shaped float32 checkpoint
# (Hugging Face layout, seeded random weights, 605 MB) over 800 photo-like 1920x1280 JPEGs in a
# Winoground-layout dataset (both made by make_memory_bench_data, once, under WORK):
#   cold:   an empty cache folder (weights hashed, read and packed; every embedding computed);
#   cached: the same command again, every embedding in the cache (median of RUNS runs).
# Each run under /usr/bin/time -v; prints one JSON line per case. With BASELINE (another winokit
# binary, e.g. main's) the same two cases run with it too, back to back, for a ratio on one
# machine state.
#
#   bench/run_memory_bench.sh [build-dir] [work-dir] [runs]      (BASELINE=/path/to/winokit)
set -euo pipefail
BUILD=${1:-build}
WORK=${2:-/tmp/winokit-memory-bench}
RUNS=${3:-3}
WINOKIT=$(realpath "$BUILD/winokit")
GENERATOR=$(realpath "$BUILD/bench/make_memory_bench_data")
mkdir -p "$WORK"
"$GENERATOR" --out "$WORK" --examples 400 > /dev/null
DATA=$WORK/winoground-400
MODEL=$WORK/vit-b32-random-hf

# measure BINARY CACHE LABEL: one eval run; prints "peak_kb wall_s"
measure() {
  local out=$WORK/time-$3.txt
  /usr/bin/time -v -o "$out" "$1" eval --data "$DATA" --model "$MODEL" --cache-dir "$2" \
    --bootstrap 1000 --scores-out "$WORK/scores-$3.jsonl" --quiet > /dev/null
  local peak wall
  peak=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out" |
    awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
  echo "$peak $wall"
}

report() {  # report BINARY NAME
  local cache=$WORK/cache-$2
  rm -rf "$cache"
  local cold
  cold=$(measure "$1" "$cache" "$2-cold")
  echo "{\"bench\": \"memory\", \"binary\": \"$2\", \"case\": \"cold\", \"peak_rss_mb\": $(( ${cold% *} / 1024 )), \"wall_s\": ${cold#* }, \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
  local walls=() peaks=()
  for _ in $(seq "$RUNS"); do
    local r
    r=$(measure "$1" "$cache" "$2-cached")
    peaks+=("${r% *}")
    walls+=("${r#* }")
  done
  local mid=$((RUNS / 2))
  local wall peak
  wall=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "$((mid + 1))p")
  peak=$(printf '%s\n' "${peaks[@]}" | sort -n | sed -n "$((mid + 1))p")
  echo "{\"bench\": \"memory\", \"binary\": \"$2\", \"case\": \"cached\", \"runs\": $RUNS, \"median_peak_rss_mb\": $((peak / 1024)), \"median_wall_s\": $wall, \"walls_s\": \"${walls[*]}\", \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
  if ! cmp -s "$WORK/scores-$2-cold.jsonl" "$WORK/scores-$2-cached.jsonl"; then
    echo "cached scores differ from the cold run's ($2)" >&2
    exit 1
  fi
}

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; uptime: $(uptime)"
report "$WINOKIT" winokit
if [ -n "${BASELINE:-}" ]; then
  report "$(realpath "$BASELINE")" baseline
  if cmp -s "$WORK/scores-winokit-cold.jsonl" "$WORK/scores-baseline-cold.jsonl"; then
    echo "# scores identical to the baseline's"
  else
    echo "# scores DIFFER from the baseline's" >&2
    exit 1
  fi
fi
